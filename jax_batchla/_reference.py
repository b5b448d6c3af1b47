"""Pure jnp/lax reference algorithms of the FFI targets (bindings/TARGETS.md).

They have exactly the semantics of the CPU and CUDA kernels (which triangle is read, `info`, NaN on
failure, per-matrix isolation) and serve two purposes: the lowering on every platform that has no
native kernel (via `mlir.lower_fun`), and a test oracle. They use no jnp.linalg, jax.scipy.linalg
or lax.linalg. Each is written for one matrix with `lax.fori_loop` and batched over any leading
dims with `jnp.vectorize`; O(n) sequential steps, so they are correct rather than fast.

Shapes: a, c (..., n, n); b (..., n, k); info int32 (...); the QR family takes a (..., m, n) with
m >= n. n = 0 and empty batches are legal.
"""

from __future__ import annotations

from functools import partial

import jax.numpy as jnp
from jax import lax

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)  # full precision on every backend


def _potrf1(a):
    # Left-looking Cholesky by columns: L[:, j] = (A[:, j] - L L[j, :]^T) scaled by the pivot;
    # columns >= j of L are still zero, so the product only sums over k < j.
    n = a.shape[-1]
    if n == 0:  # the loop body is traced even for zero trips, and cannot index an empty matrix
        return a, jnp.int32(0)
    rows = jnp.arange(n)
    a = jnp.tril(a)  # only the lower triangle is read (tril selects, so NaN above never leaks)

    def step(j, carry):
        l, info = carry
        v = a[:, j] - _dot(l, l[j])
        d = v[j]
        info = jnp.where((info == 0) & ~(d > 0), j + 1, info)  # NaN pivots fail too
        ljj = jnp.sqrt(d)
        col = jnp.where(rows > j, v / ljj, jnp.where(rows == j, ljj, 0))
        return l.at[:, j].set(col), info

    l, info = lax.fori_loop(0, n, step, (jnp.zeros_like(a), jnp.int32(0)))
    failed = jnp.where(rows[:, None] >= rows[None, :], jnp.nan, 0).astype(a.dtype)
    return jnp.where(info > 0, failed, l), info


def _trsm1(a, b, lower, trans, unit_diag):
    n = a.shape[-1]
    if n == 0:
        return b
    t = jnp.tril(a) if lower else jnp.triu(a)  # the triangle read; the other is never touched
    if unit_diag:
        t = jnp.where(jnp.eye(n, dtype=bool), jnp.ones_like(t), t)
    if trans:
        t = t.T
    forward = lower != trans  # op(A) lower: substitute from the top, else from the bottom

    def step(s, x):  # rows of x not yet solved are zero, so the full row product is exact
        i = s if forward else n - 1 - s
        return x.at[i].set((b[i] - _dot(t[i], x)) / t[i, i])

    return lax.fori_loop(0, n, step, jnp.zeros_like(b))


def potrf(a, *, symmetrize=False):
    """(L, info): A = L L^T from the lower triangle of `a` (of (a + a^T) / 2 if `symmetrize`);
    L has zeros above the diagonal.

    info = 0 on success, else the 1-based index of the first pivot that is not > 0 (NaN
    included); then that matrix's lower triangle (with diagonal) is NaN, its strict upper 0.
    """
    if symmetrize:
        a = (a + jnp.swapaxes(a, -1, -2)) / 2
    return jnp.vectorize(_potrf1, signature="(n,n)->(n,n),()")(a)


def trsm(a, b, *, lower, trans=False, unit_diag=False):
    """X with op(A) X = B (left side); A the `lower` (or upper) triangle of `a`, op(A) = A^T if
    `trans`; `unit_diag` takes the diagonal as ones without reading it. Zero pivots give inf/NaN."""
    f = partial(_trsm1, lower=bool(lower), trans=bool(trans), unit_diag=bool(unit_diag))
    return jnp.vectorize(f, signature="(n,n),(n,k)->(n,k)")(a, b)


def potrs(c, b, *, lower):
    """X with A X = B, A = L L^T (L = lower triangle of c) if `lower`, else A = U^T U (U upper)."""
    if lower:
        return trsm(c, trsm(c, b, lower=True), lower=True, trans=True)
    return trsm(c, trsm(c, b, lower=False, trans=True), lower=False)


def posv(a, b, *, lower):
    """(X, info): A X = B for SPD A read from its lower (or upper) triangle only.

    info as `potrf`; a matrix whose factorization fails gets X = NaN, all of it.
    """
    l, info = potrf(a if lower else jnp.swapaxes(a, -1, -2))  # upper U = L^T
    x = potrs(l, b, lower=True)
    return jnp.where(info[..., None, None] > 0, jnp.nan, x).astype(x.dtype), info


# ---- LU family -------------------------------------------------------------------------------
def _getrf1(a):
    # Right-looking LU with LAPACK getf2's partial pivoting: the pivot is the first row r >= j of
    # largest |a(r, j)| in the current (swapped) order; a zero pivot is recorded in info and its
    # (all-zero) column is left unscaled; elimination continues.
    n = a.shape[-1]
    if n == 0:
        return a, jnp.zeros((0,), jnp.int32), jnp.zeros((0,), jnp.int32), jnp.int32(0)
    rows = jnp.arange(n)

    def step(j, carry):
        a, pivots, perm, info = carry
        p = jnp.argmax(jnp.where(rows >= j, jnp.abs(a[:, j]), -1)).astype(jnp.int32)
        swap = jnp.where(rows == j, p, jnp.where(rows == p, j, rows))
        a, perm = a[swap], perm[swap]
        d = a[j, j]
        info = jnp.where((info == 0) & (d == 0), j + 1, info)
        below = rows > j
        col = jnp.where(below & (d != 0), a[:, j] / d, a[:, j])
        a = a.at[:, j].set(col)
        update = below[:, None] & below[None, :]  # masked, so inf/NaN never leak into other rows
        a = jnp.where(update, a - col[:, None] * a[j][None, :], a)
        return a, pivots.at[j].set(p), perm, info

    init = (a, jnp.zeros((n,), jnp.int32), jnp.arange(n, dtype=jnp.int32), jnp.int32(0))
    return lax.fori_loop(0, n, step, init)


def getrf(a):
    """(lu, pivots, perm, info): PA = LU with LAPACK partial pivoting (L unit lower strictly below
    the diagonal, U on and above); pivots 0-based LAPACK ipiv; perm[i] the original row that ends
    in row i; info the 1-based index of the first exactly-zero pivot, else 0."""
    return jnp.vectorize(_getrf1, signature="(n,n)->(n,n),(n),(n),()")(a)


def _rows_of(x, index):
    """x[..., index[..., i], :] for every i (a row gather per matrix)."""
    return jnp.take_along_axis(x, index[..., :, None], axis=-2)


def getrs(lu, perm, b, *, trans=False):
    """X with op(A) X = B, A = P^T L U from getrf's lu and perm; op(A) = A^T if `trans`."""
    if not trans:  # L U X = P B
        y = trsm(lu, _rows_of(b, perm), lower=True, unit_diag=True)
        return trsm(lu, y, lower=False)
    z = trsm(lu, trsm(lu, b, lower=False, trans=True), lower=True, trans=True, unit_diag=True)
    return _rows_of(z, jnp.argsort(perm, axis=-1))  # X = P^T Z


def gesv(a, b):
    """(X, info): A X = B through getrf + getrs; a singular matrix gives inf/NaN in its X only."""
    lu, _, perm, info = getrf(a)
    return getrs(lu, perm, b), info


def inverse(a):
    """(A^-1, info): gesv against the identity."""
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return gesv(a, eye)


def slogdet_from_lu(lu, pivots):
    """(sign, logabsdet) as jnp.linalg.slogdet computes them from getrf's lu and pivots:
    sign = (-1)^#swaps * prod sign(U_jj), logabsdet = sum log|U_jj|; any U_jj == 0 gives sign 0 and
    logabsdet -inf; a NaN on the diagonal gives logabsdet NaN (the sign from the formula)."""
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    swaps = jnp.count_nonzero(pivots != jnp.arange(lu.shape[-1], dtype=jnp.int32), axis=-1)
    negative = swaps + jnp.count_nonzero(diag < 0, axis=-1)
    singular = jnp.any(diag == 0, axis=-1)
    sign = jnp.where(singular, 0, 1 - 2 * (negative % 2)).astype(lu.dtype)
    logabsdet = jnp.where(singular, -jnp.inf, jnp.sum(jnp.log(jnp.abs(diag)), axis=-1))
    return sign, logabsdet.astype(lu.dtype)


def slogdet(a):
    """(sign, logabsdet) of a through getrf (see slogdet_from_lu)."""
    return slogdet_from_lu(*getrf(a)[:2])


def det_closed(a):
    """det of 2 x 2 / 3 x 3 matrices by jnp's closed forms (jnp.linalg.det's own path there)."""
    if a.shape[-1] not in (2, 3):
        raise ValueError(f"det_closed: 2 x 2 or 3 x 3 matrices only, got {a.shape}")
    return jnp.linalg.det(a)


# ---- QR family (m >= n) ----------------------------------------------------------------------
# Householder reflectors as LAPACK stores them: Q = H_0 ... H_{k-1}, H_j = I - tau_j v_j v_j^T,
# v_j(i) = 0 for i < j, v_j(j) = 1 (implied), v_j(i > j) below the diagonal of column j.
def _reflector(a, taus, j):
    """v_j of the m x n reflector storage `a` (column j, unit at j, zeros above) and tau_j."""
    rows = jnp.arange(a.shape[0])
    v = jnp.where(rows > j, a[:, j], (rows == j).astype(a.dtype))
    return v, taus[j]


def _apply_reflector(v, tau, c):
    """H c = c - tau v (v^T c) for c (m, p)."""
    return c - tau * jnp.outer(v, _dot(v, c))


def _norm2(x):
    """||x||_2 scaled by max |x|, so it neither overflows nor underflows (as LAPACK's dnrm2);
    NaN/Inf in x give a non-finite norm, so the matrix's results are non-finite too."""
    scale = jnp.max(jnp.abs(x), initial=0.0)
    safe = jnp.where(scale == 0, 1, scale)
    return jnp.where(scale == 0, 0, scale * jnp.sqrt(_dot(x / safe, x / safe))).astype(x.dtype)


def _geqrf1(a):
    # Unblocked LAPACK geqr2 with dlarfg's reflector: alpha = A(j, j), x = A(j+1:, j);
    # ||x|| == 0 -> tau = 0, R(j, j) = alpha (no reflection); else beta = -sign(alpha) hypot(alpha,
    # ||x||), tau = (beta - alpha) / beta, v = x / (alpha - beta), R(j, j) = beta.
    m, n = a.shape
    if n == 0:
        return a, jnp.zeros((0,), a.dtype)
    rows, cols = jnp.arange(m), jnp.arange(n)

    def step(j, carry):
        a, taus = carry
        below = rows > j
        alpha, x = a[j, j], jnp.where(below, a[:, j], 0)
        xnorm = _norm2(x)
        reflect = xnorm != 0
        beta = -jnp.copysign(jnp.hypot(alpha, xnorm), alpha)
        tau = jnp.where(reflect, (beta - alpha) / jnp.where(reflect, beta, 1), 0)
        v = jnp.where(below, x / jnp.where(reflect, alpha - beta, 1), (rows == j).astype(a.dtype))
        updated = _apply_reflector(v, tau, a)  # the trailing columns; column j is replaced below
        a = jnp.where(cols[None, :] > j, updated, a)
        col = jnp.where(below, v, jnp.where(rows == j, jnp.where(reflect, beta, alpha), a[:, j]))
        return a.at[:, j].set(col), taus.at[j].set(tau)

    return lax.fori_loop(0, n, step, (a, jnp.zeros((n,), a.dtype)))


def _ormqr1(a, taus, c, trans):
    # Q c = H_0 (H_1 (... H_{k-1} c)): the last reflector first; Q^T c the other way round.
    k = taus.shape[0]
    if k == 0:
        return c

    def step(s, c):
        v, tau = _reflector(a, taus, s if trans else k - 1 - s)
        return _apply_reflector(v, tau, c)

    return lax.fori_loop(0, k, step, c)


def geqrf(a):
    """(qr, taus): Householder QR of a (..., m, n), m >= n, exactly as LAPACK geqrf: R on and
    above the diagonal of qr, the reflectors' v_j below it; taus (..., n). A zero (or already
    reduced) column gives tau = 0 and no reflection, so rank-deficient input gives no NaN."""
    return jnp.vectorize(_geqrf1, signature="(m,n)->(m,n),(n)")(a)


def orgqr(a, taus):
    """The first n columns of Q = H_0 ... H_{k-1} (LAPACK orgqr) from the reflectors below the
    diagonal of a (..., m, n) and taus (..., k), k <= n <= m; a's upper triangle is not read."""
    def one(a, taus):
        eye = jnp.eye(a.shape[0], a.shape[1], dtype=a.dtype)
        return _ormqr1(a, taus, eye, trans=False)

    return jnp.vectorize(one, signature="(m,n),(k)->(m,n)")(a, taus)


def ormqr(a, taus, c, *, trans=False):
    """Q^T c if `trans` else Q c, Q = H_0 ... H_{k-1} (m x m) from a (..., m, n) and taus
    (..., k) as `orgqr`; c (..., m, p) (LAPACK ormqr, left side)."""
    f = partial(_ormqr1, trans=bool(trans))
    return jnp.vectorize(f, signature="(m,n),(k),(m,p)->(m,p)")(a, taus, c)


def _upper_square(qr):
    """R (n x n) of geqrf's (..., m, n) output: its top rows, zeros below the diagonal."""
    n = qr.shape[-1]
    return jnp.triu(qr[..., :n, :])


def qr(a):
    """(q, r): reduced QR of a (..., m, n), m >= n: q (..., m, n) = orgqr of geqrf's reflectors,
    r (..., n, n) = geqrf's R with zeros below the diagonal (R's diagonal signs are LAPACK's)."""
    h, taus = geqrf(a)
    return orgqr(h, taus), _upper_square(h)


def qr_r(a):
    """R (..., n, n) of geqrf(a), zeros below the diagonal."""
    return _upper_square(geqrf(a)[0])


def lstsq(a, b):
    """(x, rdiag, resid): least squares by QR for a (..., m, n), m >= n, b (..., m, k). With
    c = Q^T b: x (..., n, k) = R^-1 c[:n], rdiag (..., n) = R's diagonal, resid (..., k) the sum of
    squares of c[n:] per column. A zero R(j, j) gives inf/NaN in that matrix's x only."""
    n = a.shape[-1]
    h, taus = geqrf(a)
    c = ormqr(h, taus, b, trans=True)
    x = trsm(_upper_square(h), c[..., :n, :], lower=False)
    rdiag = jnp.diagonal(h, axis1=-2, axis2=-1)
    return x, rdiag, jnp.sum(c[..., n:, :] ** 2, axis=-2)


# ---- Interleaved layout (jax_batchla.interleaved) -----------------------------------------------
# Operands (..., rows, cols, c): the lane axis c moves in front of the matrix dims, the standard
# algorithm above runs, and the result moves back; per-matrix info (..., c) needs no move.
def _lanes_first(x):
    return jnp.moveaxis(x, -1, -3)


def _lanes_last(x):
    return jnp.moveaxis(x, -3, -1)


def il_potrf(a, *, symmetrize=False):
    """`potrf` per matrix of the interleaved a (..., n, n, c): (L (..., n, n, c), info (..., c))."""
    l, info = potrf(_lanes_first(a), symmetrize=symmetrize)
    return _lanes_last(l), info


def il_potrs(c, b, *, lower):
    """`potrs` per matrix of the interleaved c (..., n, n, c) and b (..., n, k, c)."""
    return _lanes_last(potrs(_lanes_first(c), _lanes_first(b), lower=lower))


def il_posv(a, b, *, lower):
    """`posv` per matrix of the interleaved a (..., n, n, c), b (..., n, k, c): (x, info (..., c))."""
    x, info = posv(_lanes_first(a), _lanes_first(b), lower=lower)
    return _lanes_last(x), info


def il_trsm(a, b, *, lower, trans=False, unit_diag=False):
    """`trsm` per matrix of the interleaved a (..., n, n, c) and b (..., n, k, c)."""
    x = trsm(_lanes_first(a), _lanes_first(b), lower=lower, trans=trans, unit_diag=unit_diag)
    return _lanes_last(x)


def from_interleaved(x, *, count):
    """The first `count` matrices of the interleaved x (..., chunks, rows, cols, c), row-major:
    (..., count, rows, cols); the rest of x is padding."""
    *lead, chunks, rows, cols, c = x.shape
    flat = _lanes_first(x).reshape(*lead, chunks * c, rows, cols)
    return flat[..., :count, :, :]
