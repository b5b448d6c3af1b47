"""Pure jnp/lax reference algorithms of the FFI targets (bindings/TARGETS.md).

They have exactly the semantics of the CPU and CUDA kernels (which triangle is read, `info`, NaN on
failure, per-matrix isolation) and serve two purposes: the lowering on every platform that has no
native kernel (via `mlir.lower_fun`), and a test oracle. They use no jnp.linalg, jax.scipy.linalg
or lax.linalg. Each is written for one matrix with `lax.fori_loop` and batched over any leading
dims with `jnp.vectorize`; O(n) sequential steps, so they are correct rather than fast.

Shapes: a, c (..., n, n); b (..., n, k); info int32 (...). n = 0 and empty batches are legal.
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
