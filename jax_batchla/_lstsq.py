"""jax_batchla.linalg.lstsq: least squares by our batched QR kernels, with jnp's SVD algorithm as
the fallback for rank-deficient and wide matrices.

How the fallback is chosen inside the program: the QR kernel always runs and also returns R's
diagonal; a `lax.cond` on one predicate for the whole batch ("every matrix has full rank") keeps
its solution, or also runs jnp's algorithm and takes its result for the matrices that fail the
rank test (the others keep theirs, bit for bit). Under a user's `jax.vmap` such a
predicate would become batched and jax would then run both branches (an SVD every time), so the
solver is a `custom_vmap` whose rule calls the natively batched solver: the predicate stays one
scalar for the whole vmapped batch. `custom_vmap` has no reverse mode, so a `custom_jvp` wraps it;
its rule picks the QR tangent or the differentiated jnp path with the same scalar predicate and is
built from transposable, differentiable operations, so `jax.grad` and higher derivatives work too.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap

from . import _api
from ._ops.lstsq import lstsq_p
from ._ops.qr import qr_p
from ._ops.triangular import trsm

_HIGHEST = lax.Precision.HIGHEST  # jnp's lstsq uses it too; no TF32 (DESIGN.md)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Return the least-squares solution to a linear equation.

    Mirrors :func:`jax.numpy.linalg.lstsq` (same signature, results and dtypes). Full-rank
    float32/float64 matrices with ``M >= N`` are solved by a Householder QR (one fused kernel on
    GPU); a matrix that is rank deficient by the test below gets jnp's SVD solution (computed only
    when the call has such a matrix), and when ``M < N`` or the dtype is another one (complex,
    half) the whole call uses jnp's SVD algorithm, so the results are then jnp's exactly. One bad
    matrix never changes the results of the others.

    As an extension, ``a`` and ``b`` may carry leading batch dimensions (which broadcast); every
    matrix is solved independently with jnp's per-matrix semantics. The choice of path is made
    once per call inside the program (one ``lax.cond``; XLA's GPU conditional may read that one
    predicate on the host), also over the batch of a ``jax.vmap``. ``x`` and
    ``resid`` are differentiable to any order with respect to ``a`` and ``b``, on either path.

    Args:
      a: array of shape ``(..., M, N)``, the coefficient matrices.
      b: array of shape ``(..., M)`` (``b.ndim == a.ndim - 1``: one right-hand side per matrix)
        or ``(..., M, K)`` (``b.ndim == a.ndim``).
      rcond: cut-off ratio for small singular values, as in jnp: ``None`` means
        ``eps * max(M, N)``, a negative value means ``eps``. A matrix counts as rank deficient
        for the QR path when ``min_j |R_jj| <= rcond * max_j |R_jj|``; as that ratio of R's
        diagonal can exceed the ratio of extreme singular values, a matrix just past jnp's
        cut-off may still be solved by QR (and ``rank`` then reports jnp's smaller rank).
      numpy_resid: if True, ``resid`` is empty when ``M <= N`` or any matrix has rank < N, as
        NumPy returns it; this needs the rank on the host, so it does not work under ``jit``.

    Returns:
      Tuple ``(x, resid, rank, s)``:

      - ``x``: shape ``(..., N)`` or ``(..., N, K)``, the least-squares solutions.
      - ``resid``: shape ``(..., 1)`` for a vector ``b`` (as jnp), else ``(..., K)``: the sum of
        squared residuals ``||b - a x||^2`` per column (on the QR path from the last M - N rows
        of ``Q^T b``: 0 when M == N, where jnp returns rounding noise).
      - ``rank``: shape ``(...)``, integer: jnp's numerical rank from the singular values.
      - ``s``: shape ``(..., min(M, N))``: the singular values.

      ``s`` and ``rank`` cost an SVD; under ``jit`` it is removed when neither is used. A matrix
      holding NaN/Inf gives NaN in its own results only.
    """
    fname = "jax_batchla.linalg.lstsq"
    a, b = _api.as_inexact_arrays(fname, a=a, b=b)
    a, b, vector = _check_and_broadcast(fname, a, b)
    m, n = a.shape[-2:]
    rc = jnp.broadcast_to(_effective_rcond(fname, rcond, a.dtype, m, n), a.shape[:-2])
    if _api.accelerated(a) and m >= n >= 1:
        x, resid, _ = _solve(a, b, rc)
        s = jnp.linalg.svd(a, compute_uv=False)
        rank = _rank(s, rc)
    else:
        x, resid, rank, s = _jnp_lstsq(a, b, rc)
    if numpy_resid and (m <= n or bool(jnp.any(rank < n))):
        resid = jnp.empty(a.shape[:-2] + (0,))  # jnp.asarray([])'s dtype, batched
    return (x[..., 0] if vector else x), resid, rank, s


def _check_and_broadcast(fname, a, b):
    """(a (..., M, N), b (..., M, K), vector) with broadcast batch dims; errors name the argument."""
    if a.ndim < 2:
        raise TypeError(f"{fname}: argument a must have shape (..., M, N), got {a.shape}")
    if b.ndim not in (a.ndim - 1, a.ndim):
        raise TypeError(f"{fname}: argument b must have shape (..., M) or (..., M, K) with as many "
                        f"batch dims as a of shape {a.shape}; got {b.shape}")
    vector = b.ndim == a.ndim - 1
    if vector:
        b = b[..., None]
    if b.shape[-2] != a.shape[-2]:
        raise ValueError(f"{fname}: argument b must have {a.shape[-2]} rows to match a of shape "
                         f"{a.shape}; got {b.shape[:-1] if vector else b.shape}")
    try:
        batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"{fname}: the batch dims of a {a.shape} and b "
                         f"{b.shape[:-1] if vector else b.shape} do not broadcast") from None
    return jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:]), vector


def _effective_rcond(fname, rcond, dtype, m, n):
    """jnp's rule: None -> eps * max(M, N); a negative rcond -> eps."""
    real = jnp.finfo(dtype).dtype
    eps = float(jnp.finfo(dtype).eps)
    if rcond is None:
        return jnp.asarray(eps * max(m, n), real)
    rcond = jnp.asarray(rcond, real)
    if rcond.ndim:
        raise ValueError(f"{fname}: argument rcond must be a scalar, got shape {rcond.shape}")
    return jnp.where(rcond < 0, jnp.asarray(eps, real), rcond)


def _rank(s, rc):
    """jnp's numerical rank: the singular values above 0 and at least rcond * the largest."""
    mask = (s > 0) & (s >= rc[..., None] * s[..., :1])
    return mask.sum(axis=-1)


def _jnp_lstsq(a, b, rc):
    """jnp.linalg.lstsq on every matrix: (x, resid, rank, s) with x (..., N, K)."""
    return _api.over_batch(jnp.linalg.lstsq, a.ndim - 2)(a, b, rc)


# The fallback's SVD runs on this many matrices at a time: its buffers are allocated whether or not
# the branch runs, and for the whole batch they would be several times the input (about 69 GB of
# temporaries for 2^27 matrices of 7 x 4).
_FALLBACK_CHUNK = 1 << 16


def _jnp_lstsq_where(use, a, b, rc):
    """(x, resid) of jnp.linalg.lstsq for the matrices where `use` (...), _FALLBACK_CHUNK at a
    time; the others are replaced by zeros inside each chunk, so LAPACK's SVD never sees them
    (jnp.linalg.lstsq does not return on CPU for some inputs holding Inf)."""
    def solve(a, b, rc, use):
        keep = lambda x: jnp.where(use, x, jnp.zeros((), x.dtype))  # noqa: E731
        return jnp.linalg.lstsq(keep(a), keep(b), rc)[:2]

    batch = a.shape[:-2]
    flat = (a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:]), rc.reshape(-1), use.reshape(-1))
    out = _in_chunks(solve, flat, _FALLBACK_CHUNK)
    return tuple(o.reshape(batch + o.shape[1:]) for o in out)


def _in_chunks(f, xs, chunk):
    """vmap(f)(*xs) over the leading axis, `chunk` rows at a time in a loop that slices its inputs
    and writes its outputs in place (lax.map's batch_size would first copy the inputs into
    (steps, chunk, ...) blocks). The last chunk ends at the last row and may redo some rows."""
    rows = xs[0].shape[0]
    if rows <= chunk:
        return jax.vmap(f)(*xs)
    shapes = jax.eval_shape(jax.vmap(f), *(x[:chunk] for x in xs))

    def step(i, outs):
        start = jnp.minimum(i * chunk, rows - chunk)
        part = jax.vmap(f)(*(lax.dynamic_slice_in_dim(x, start, chunk) for x in xs))
        return tuple(lax.dynamic_update_slice_in_dim(o, p, start, 0) for o, p in zip(outs, part))

    init = tuple(jnp.zeros((rows,) + s.shape[1:], s.dtype) for s in shapes)
    return lax.fori_loop(0, -(-rows // chunk), step, init)


def _qr_suffices(rdiag, rc):
    """Per matrix (...): it passes the rank test on R's diagonal, or it holds NaN/Inf (its result
    is NaN on either path, and sending the batch to the SVD because of it would only cost time)."""
    mag = jnp.abs(rdiag)
    full = jnp.min(mag, axis=-1) > rc * jnp.max(mag, axis=-1)
    finite = jnp.all(jnp.isfinite(rdiag), axis=-1)
    return full | ~finite


@custom_vmap
def _solve_batched(a, b, rc):
    """(x, resid, fast) for a (..., M, N), M >= N, b (..., M, K), rc (...): fast says every
    matrix passes the QR rank test. Each matrix that passes gets the QR solution, the others jnp's
    (computed only when some matrix needs it): a bad matrix never changes its neighbours' results."""
    x, rdiag, resid = lstsq_p.bind(a, b)
    qr_ok = _qr_suffices(rdiag, rc)
    fast = jnp.all(qr_ok)

    def mixed(x, resid, a, b, rc):
        x_svd, resid_svd = _jnp_lstsq_where(~qr_ok, a, b, rc)
        return (jnp.where(qr_ok[..., None, None], x, x_svd),
                jnp.where(qr_ok[..., None], resid, resid_svd))

    x, resid = lax.cond(fast, lambda x, resid, *_: (x, resid), mixed, x, resid, a, b, rc)
    return x, resid, fast


@_solve_batched.def_vmap
def _solve_batched_vmap(axis_size, in_batched, a, b, rc):
    # The vmapped axis becomes one more batch dim of the natively batched solver, so `fast` stays
    # one unbatched scalar and lax.cond runs one branch.
    if tuple(in_batched) == (False, True, False):  # one a, many b: the mapped axis joins b's columns
        cols = jnp.moveaxis(b, 0, -1)  # (..., M, K, B)
        x, resid, fast = _solve_batched(a, cols.reshape(cols.shape[:-2] + (-1,)), rc)
        x = jnp.moveaxis(x.reshape(x.shape[:-1] + cols.shape[-2:]), -1, 0)
        resid = jnp.moveaxis(resid.reshape(resid.shape[:-1] + cols.shape[-2:]), -1, 0)
        return (x, resid, fast), (True, True, False)
    a, b, rc = (x if batched else jnp.broadcast_to(x, (axis_size,) + x.shape)
                for x, batched in zip((a, b, rc), in_batched))
    return _solve_batched(a, b, rc), (True, True, False)


@jax.custom_jvp
def _solve(a, b, rc):
    """(x, resid, fast) of `_solve_batched`, differentiable in a and b to any order."""
    return _solve_batched(a, b, rc)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    a, b, rc = primals
    da, db, _ = tangents  # rcond only moves the rank decision: piecewise constant
    # The primal through _solve itself, so that higher derivatives come back to this rule (the
    # kernel behind it has no JVP of its own); the tangents use differentiable primitives only.
    x, resid, fast = _solve(a, b, rc)
    dx, dresid = lax.cond(fast, _qr_tangents, _jnp_tangents, a, b, rc, x, da, db)
    # zeros_like keeps the primal's varying manual axes (shard_map); np.zeros would drop them
    return (x, resid, fast), (dx, dresid, jnp.zeros_like(fast, dtype=jax.dtypes.float0))


def _qr_tangents(a, b, rc, x, da, db):
    # x = A^+ b with A = Q R of full column rank, r = b - A x (A^T r = 0). Differentiating the
    # normal equations A^T A x = A^T b: A^T A dx = A^T (db - dA x) + dA^T r, and with A^T A = R^T R,
    # A^T = R^T Q^T: dx = R^-1 (Q^T (db - dA x) + R^-T dA^T r). resid = ||r||^2 per column:
    # dresid = 2 r^T (db - dA x - A dx) = 2 r^T (db - dA x).
    del rc
    q, r = qr_p.bind(a)
    res = b - jnp.matmul(a, x, precision=_HIGHEST)
    e = db - jnp.matmul(da, x, precision=_HIGHEST)
    rhs = jnp.matmul(_api.mT(q), e, precision=_HIGHEST) + trsm(
        r, jnp.matmul(_api.mT(da), res, precision=_HIGHEST), lower=False, trans=True)
    return trsm(r, rhs, lower=False), 2 * jnp.sum(res * e, axis=-2)


def _jnp_tangents(a, b, rc, x, da, db):
    # Matrices holding NaN/Inf are kept from the SVD (see _jnp_lstsq_where); their tangents are NaN.
    del x
    finite = jnp.all(jnp.isfinite(a), axis=(-2, -1)) & jnp.all(jnp.isfinite(b), axis=(-2, -1))
    dx, dresid = jax.jvp(lambda a, b: _jnp_lstsq_where(finite, a, b, rc), (a, b), (da, db))[1]
    nan = jnp.asarray(jnp.nan, dx.dtype)
    return jnp.where(finite[..., None, None], dx, nan), jnp.where(finite[..., None], dresid, nan)


__all__ = ["lstsq"]
