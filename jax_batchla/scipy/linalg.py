"""Drop-in mirror of :mod:`jax.scipy.linalg` backed by jax_batchla's batched kernels.

Every public name of ``jax.scipy.linalg`` exists here; the ones not accelerated yet forward to jax
and say so in their docstrings.
"""

from __future__ import annotations

from functools import partial

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax import lax

from .. import _api
from .. import linalg as _linalg
from .._ops import getrf, getrs, posv, potrf, potrs, trsm, unit_lower
from .._ops.qr import qr as _qr
from .._ops.qr import qr_complete, qr_r

_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


def _factor(a, lower: bool):
    """Cholesky factor of `a` reading only its lower (or upper) triangle, in that triangle."""
    l, _ = potrf(a if lower else _api.mT(a))
    return l if lower else _api.mT(l)


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Compute the Cholesky decomposition of a matrix.

    Mirrors :func:`jax.scipy.linalg.cholesky`: only the ``lower`` (or upper) triangle of ``a`` is
    read. float32/float64 run jax_batchla's kernels; other dtypes forward to jax.

    Args:
      a: array of shape ``(..., N, N)``, symmetric positive definite.
      lower: return the lower factor ``L`` (``a = L L^H``) if True, else the upper ``U``.
      overwrite_a, check_finite: unused, as in JAX.

    Returns:
      array of shape ``(..., N, N)``; NaN in the factor's triangle for a matrix that is not
      positive definite, the rest of the batch unaffected.
    """
    del overwrite_a, check_finite
    fname = "jax_batchla.scipy.linalg.cholesky"
    (a,) = _api.as_inexact_arrays(fname, a=a)
    _api.check_square(fname, "a", a)
    if not _api.accelerated(a):
        return jsl.cholesky(a, lower=lower)
    return _factor(a, lower)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Factorization for Cholesky-based linear solves; mirrors :func:`jax.scipy.linalg.cho_factor`.

    Returns:
      ``(c, lower)``: ``c`` of shape ``(..., N, N)`` holds the factor in the ``lower`` (or upper)
      triangle and zeros in the other; pass the tuple to :func:`cho_solve`.
    """
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` given the Cholesky factor of ``a``; mirrors
    :func:`jax.scipy.linalg.cho_solve`.

    Args:
      c_and_lower: ``(c, lower)`` as returned by :func:`cho_factor`; only the ``lower`` (or upper)
        triangle of ``c`` (shape ``(..., N, N)``) is read.
      b: right-hand side of shape ``(N,)`` or ``(..., N, K)`` (batch dims broadcast with ``c``).

    Returns:
      the solution, shaped like ``b`` (with broadcast batch dims).
    """
    del overwrite_b, check_finite
    fname = "jax_batchla.scipy.linalg.cho_solve"
    c, lower = c_and_lower
    c, b = _api.as_inexact_arrays(fname, c=c, b=b)
    fast = _api.accelerated(c, b)
    vector = _api.rhs_signature(fname, c, b, a_name="c", warn_deprecated_1d=fast)
    if not fast:
        return jsl.cho_solve((c, lower), b)
    return _api.vectorized_solve(partial(potrs, lower=bool(lower)), c, b, vector)


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve ``op(a) x = b`` for triangular ``a``; mirrors :func:`jax.scipy.linalg.solve_triangular`.

    Args:
      a: array of shape ``(..., N, N)``; only its ``lower`` (or upper) triangle is read.
      b: array of shape ``(N,)`` or ``(..., N, K)``.
      trans: 0 or ``'N'`` solves ``a x = b``; 1/``'T'`` solves ``a^T x = b``; 2/``'C'`` solves
        ``a^H x = b``.
      lower: use the lower triangle of ``a`` if True, else the upper.
      unit_diagonal: treat the diagonal of ``a`` as ones (it is not read).

    Returns:
      the solution, shaped like ``b``. A zero on the diagonal gives inf/NaN in that matrix's
      solution only.
    """
    del overwrite_b, debug, check_finite
    fname = "jax_batchla.scipy.linalg.solve_triangular"
    if trans not in _TRANS:
        raise ValueError(f"{fname}: invalid 'trans' value {trans!r}")
    a, b = _api.as_inexact_arrays(fname, a=a, b=b)
    fast = _api.accelerated(a, b)
    vector = _api.rhs_signature(fname, a, b, warn_deprecated_1d=fast)
    if not fast:
        return jsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    core = partial(trsm, lower=bool(lower), trans=_TRANS[trans], unit_diag=bool(unit_diagonal))
    return _api.vectorized_solve(core, a, b, vector)


_ASSUME_A = ("gen", "sym", "her", "pos")


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """Solve ``a x = b``; mirrors :func:`jax.scipy.linalg.solve`.

    ``assume_a='pos'`` runs the fused Cholesky factor + solve kernel (reading only the ``lower``
    or upper triangle of ``a``); ``'gen'``, ``'sym'`` and ``'her'`` run the fused LU factor + solve
    kernel on all of ``a`` (as jax does). Either way ``a`` and ``b`` are read once, and the
    gradient factors once and reuses the factors.

    Args:
      a: array of shape ``(..., N, N)``.
      b: array of shape ``(..., N)`` or ``(..., N, K)``.
      lower: which triangle of ``a`` to read when ``assume_a='pos'``.
      assume_a: ``'gen'``, ``'sym'``, ``'her'`` or ``'pos'``.

    Returns:
      the solution, shaped like ``b``: NaN for a matrix that is not positive definite
      (``assume_a='pos'``), inf/NaN for a singular one, the other matrices of the batch unaffected.
    """
    del overwrite_a, overwrite_b, debug, check_finite
    fname = "jax_batchla.scipy.linalg.solve"
    if assume_a not in _ASSUME_A:
        raise ValueError(f"{fname}: expected assume_a to be one of {list(_ASSUME_A)}; got {assume_a!r}")
    if assume_a != "pos":  # jax solves 'gen', 'sym' and 'her' alike, with jnp.linalg.solve's rules
        return _linalg.solve(a, b)
    a, b = _api.as_inexact_arrays(fname, a=a, b=b)
    if not _api.accelerated(a, b):
        return jsl.solve(a, b, lower=lower, assume_a=assume_a)
    _api.check_square(fname, "a", a)
    if not (b.ndim in (a.ndim, a.ndim - 1) and b.ndim >= 1 and b.shape[a.ndim - 2] == a.shape[-1]):
        raise ValueError(f"{fname}: arguments must have shapes a=(..., N, N) and b=(..., N) or "
                         f"(..., N, K); got a={a.shape} and b={b.shape}")
    vector = a.ndim == b.ndim + 1
    _api.check_rhs_batch(fname, a, b, vector)
    core = lambda a_, b_: posv(a_, b_, lower=bool(lower))[0]
    return _api.vectorized_solve(core, a, b, vector)


def _lu_operand(fname: str, a):
    """(a as an inexact array, whether our getrf takes it): square float32/float64 matrices are
    ours; non-square ones and other dtypes go to jax. Raises ValueError for rank < 2."""
    (a,) = _api.as_inexact_arrays(fname, a=a)
    if a.ndim < 2:
        raise ValueError(f"{fname}: argument a must have shape (..., M, N), got {a.shape}")
    return a, a.shape[-1] == a.shape[-2] and _api.accelerated(a)


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """Factorization for LU-based linear solves; mirrors :func:`jax.scipy.linalg.lu_factor`.

    Args:
      a: array of shape ``(..., N, N)`` (non-square ``(..., M, N)`` forwards to jax).

    Returns:
      ``(lu, piv)``: ``lu`` of shape ``(..., N, N)`` holds ``L`` (unit diagonal implied) below the
      diagonal and ``U`` on and above; ``piv`` int32 of shape ``(..., N)`` are LAPACK's 0-based
      pivots. A singular matrix gives a zero on ``U``'s diagonal, as in jax.
    """
    del overwrite_a, check_finite
    a, ours = _lu_operand("jax_batchla.scipy.linalg.lu_factor", a)
    if not ours:
        return jsl.lu_factor(a)
    lu, pivots, _, _ = getrf(a, permutation=False)
    return lu, pivots


def _pivots(fname: str, piv, n: int):
    """piv as int32, checked: integers of shape (..., K) with K <= N. Fewer than N pivots swap
    only the first K rows, as in jax (lax.linalg.lu_pivots_to_permutation)."""
    try:
        piv = jnp.asarray(piv)
    except TypeError as e:
        raise TypeError(f"{fname}: argument piv is not an array: {e}") from None
    if not jnp.issubdtype(piv.dtype, np.integer):
        raise TypeError(f"{fname}: argument piv must hold integer pivots, got dtype {piv.dtype}")
    if piv.ndim < 1 or piv.shape[-1] > n:
        raise ValueError(f"{fname}: argument piv must have shape (..., K) with K <= {n} (the N of "
                         f"lu), got {piv.shape}")
    return piv.astype(np.int32)


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False, check_finite: bool = True):
    """Solve a linear system from an LU factorization; mirrors :func:`jax.scipy.linalg.lu_solve`.

    Args:
      lu_and_piv: ``(lu, piv)`` as returned by :func:`lu_factor`: ``lu`` of shape
        ``(..., N, N)``, ``piv`` integer pivots of shape ``(..., K)``, ``K <= N`` (with fewer
        than ``N``, only the first ``K`` rows are swapped, as in jax).
      b: array of shape ``(N,)`` or ``(..., N, K)``; the batch dims of ``lu``, ``piv`` and ``b``
        broadcast.
      trans: 0 solves ``a x = b``; 1 ``a^T x = b``; 2 ``a^H x = b``.

    Returns:
      the solution, shaped like ``b`` with the broadcast batch dims.
    """
    del overwrite_b, check_finite
    fname = "jax_batchla.scipy.linalg.lu_solve"
    if trans not in (0, 1, 2):
        raise ValueError(f"{fname}: 'trans' value must be 0, 1, or 2, got {trans!r}")
    lu, piv = lu_and_piv
    lu, b = _api.as_inexact_arrays(fname, lu=lu, b=b)
    fast = _api.accelerated(lu, b)
    vector = _api.rhs_signature(fname, lu, b, a_name="lu", warn_deprecated_1d=fast)
    n = lu.shape[-1]
    piv = _pivots(fname, piv, n)
    b_batch = b.shape[:-1] if vector else b.shape[:-2]
    try:
        np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b_batch)
    except ValueError:
        raise ValueError(f"{fname}: the batch dims of argument piv {piv.shape[:-1]} do not broadcast "
                         f"with those of lu {lu.shape[:-2]} and b {b_batch}") from None
    if not fast:
        return jsl.lu_solve((lu, piv), b, trans=trans)
    perm = lax.linalg.lu_pivots_to_permutation(piv, n)
    core = lambda lu_, perm_, b_: getrs(lu_, perm_, b_, trans=trans != 0)
    if vector:
        return jnp.vectorize(lambda l_, p_, b_: core(l_, p_, b_[:, None])[:, 0],
                             signature="(n,n),(n),(n)->(n)")(lu, perm, b)
    return jnp.vectorize(core, signature="(n,n),(n),(n,k)->(n,k)")(lu, perm, b)


def _jax_lu(a, permute_l: bool):
    """jax.scipy.linalg.lu mapped over the batch dims: jax documents (..., M, N) but its
    function unpacks a.shape into (M, N), so it takes one matrix only."""
    return _api.over_batch(partial(jsl.lu, permute_l=permute_l), a.ndim - 2)(a)


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Compute the LU decomposition ``a = P L U``; mirrors :func:`jax.scipy.linalg.lu`.

    Args:
      a: array of shape ``(..., M, N)``; square float32/float64 matrices run our getrf, the
        others run jax's LU matrix by matrix (jax's own function takes no batch dims).
      permute_l: return ``(P @ L, U)`` instead of ``(P, L, U)``.

    Returns:
      ``(p, l, u)`` of ``a``'s dtype: the permutation matrix ``(..., M, M)``, unit lower
      triangular ``L`` ``(..., M, K)`` and upper triangular ``U`` ``(..., K, N)``,
      ``K = min(M, N)``; or ``(p @ l, u)`` if ``permute_l``.
    """
    del overwrite_a, check_finite
    a, ours = _lu_operand("jax_batchla.scipy.linalg.lu", a)
    if not ours:
        return _jax_lu(a, bool(permute_l))
    lu_, _, perm, _ = getrf(a)
    l, u = unit_lower(lu_), jnp.triu(lu_)
    if permute_l:  # row i of L goes to row perm[i]: a gather by the inverse permutation
        return jnp.take_along_axis(l, jnp.argsort(perm, axis=-1)[..., :, None], axis=-2), u
    rows = jnp.arange(a.shape[-1], dtype=perm.dtype)
    p = (perm[..., None, :] == rows[:, None]).astype(a.dtype)
    return p, l, u


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """Return the inverse of a square matrix; mirrors :func:`jax.scipy.linalg.inv` (see
    :func:`jax_batchla.linalg.inv`)."""
    del overwrite_a, check_finite
    return _linalg.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """Compute the determinant of a matrix; mirrors :func:`jax.scipy.linalg.det` (see
    :func:`jax_batchla.linalg.det`)."""
    del overwrite_a, check_finite
    return _linalg.det(a)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """Compute the QR decomposition of an array; mirrors :func:`jax.scipy.linalg.qr`.

    Householder QR with LAPACK's conventions (``R``'s diagonal signs are LAPACK's). float32 and
    float64 matrices with ``M >= N`` run jax_batchla's kernels; wide matrices, other dtypes and
    ``pivoting=True`` forward to jax.

    Args:
      a: array of shape ``(..., M, N)``.
      mode: ``'full'`` (default): ``Q`` of shape ``(..., M, M)`` and ``R`` of shape
        ``(..., M, N)``; ``'economic'``: ``Q`` of shape ``(..., M, K)`` and ``R`` of shape
        ``(..., K, N)``, ``K = min(M, N)``; ``'r'``: only ``R``, of shape ``(..., M, N)``.
      pivoting: compute the column-pivoted ``A[:, P] = Q R`` (forwards to jax).
      overwrite_a, lwork, check_finite: unused, as in JAX.

    Returns:
      ``(Q, R)``, or ``(Q, R, P)`` with ``pivoting``; for ``mode='r'`` the tuple ``(R,)`` (or
      ``(R, P)``). A zero or linearly dependent column gives a zero on ``R``'s diagonal and no NaN.
    """
    del overwrite_a, lwork, check_finite
    fname = "jax_batchla.scipy.linalg.qr"
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"{fname}: unsupported QR decomposition mode {mode!r}; expected 'full', "
                         "'r' or 'economic'")
    (a,) = _api.as_inexact_arrays(fname, a=a)
    if a.ndim < 2:
        raise ValueError(f"{fname}: argument a must have shape (..., M, N), got {a.shape}")
    m, n = a.shape[-2:]
    if pivoting or not _api.accelerated(a) or m < n:
        return jsl.qr(a, mode=mode, pivoting=pivoting)
    if mode == "r":  # R of the complete QR: (M, N), zero rows below N
        r = qr_r(a)
        return (jnp.pad(r, [(0, 0)] * (r.ndim - 2) + [(0, m - n), (0, 0)]),)
    if mode == "economic" or m == n:
        return tuple(_qr(a))
    return tuple(qr_complete(a))


__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "lu_factor",
           "lu_solve", "lu", "inv", "det", "qr"]
__all__ += _api.forward_missing(globals(), jsl, __name__)
