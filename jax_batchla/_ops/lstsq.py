"""lstsq: least squares by Householder QR (m >= n), one primitive with three CUDA lowerings:

- the fused kernel (cuda/qr*.cuh) where [A | b] fits on chip, one thread block per matrix;
- geqrf + ormqr + trsm where it does not (each picks our kernel or jax's by size);
- for larger matrices (`blocked_wins`), a right-looking blocked Householder QR whose panels run on
  our geqrf kernel and whose trailing updates are XLA matrix products over the whole batch.

The one-block-per-matrix kernels are slow on large tall matrices: one SM streams the whole matrix
(a 4096 x 32 geqrf took 4.1 ms, 512 x 32 0.15 ms), and a small batch leaves SMs idle (8 matrices
of 4096 x 512: 141 ms on 8 of 132 SMs; bench/NOTES.md, "Blocked least squares"). The blocked form
factors NB columns at a time, each panel as a tree (TSQR) of 512-row blocks so that one matrix's
panel spreads over SMs too; the update of everything right of the panel, b's columns included (so
Q^T b comes out of the same loop), is three GEMMs per level of the tree:

    C <- Q^T C = C - V T^T (V^T C),   Q = H_0 ... H_{NB-1} = I - V T V^T

with T from the UT transform (Joffrain, Low, Quintana-Orti, van de Geijn 2006):
T = (D^-1 + striu(V^T V))^-1 = (I + D striu(V^T V))^-1 D, D = diag(tau). Written this way the
matrix to invert is unit upper triangular, so tau = 0 (H = I, a zero column) needs no special case.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax
from jax.core import ShapedArray

from .. import _ffi, _reference
from .cholesky import _mT
from .primitive import OpSpec, conditional_cuda_lowering, make_primitive
from .qr import _tall, geqrf, ormqr
from .triangular import trsm

PANEL = 32  # columns per panel of the blocked form: the geqrf kernel's reflector block
ROWS_PER_BLOCK = 512  # rows of one leaf of a panel's tree: geqrf keeps 512 x 32 on chip (f64 too)
_HIGHEST = lax.Precision.HIGHEST  # no TF32 (DESIGN.md)


def _lstsq_shape(a, b):
    m, n = _tall("batchla_lstsq", "a", a)
    if b.shape[-2] != m:
        raise ValueError(f"batchla_lstsq: b must have {m} rows to match a, got shape {b.shape}")
    batch, k = a.shape[:-2], b.shape[-1]
    return (ShapedArray(batch + (n, k), a.dtype), ShapedArray(batch + (n,), a.dtype),
            ShapedArray(batch + (k,), a.dtype))


def blocked_wins(dtype, m: int, n: int) -> bool:
    """True where the blocked form beat the one-block-per-matrix kernels on an H100 at every batch
    measured (8 to 512; bench/NOTES.md, "Blocked least squares"): from m n = 2^16 (float32: n = 128,
    m = 512 2.0x; n = 64, m = 512 0.9x) or 2^15 (float64: n = 64, m = 512 2.2x; n = 128, m = 256
    2.0x; n = 64, m = 256 1.0x), and at least two panels."""
    return n >= 2 * PANEL and m * n >= (1 << 15 if jnp.dtype(dtype).itemsize == 8 else 1 << 16)


def _composed(a, b):
    """geqrf, Q^T b, back substitution; each primitive picks our kernel or jax's by size."""
    n = a.shape[-1]
    h, taus = geqrf(a)
    c = ormqr(h, taus, b, trans=True)
    x = trsm(h[..., :n, :], c[..., :n, :], lower=False)
    rdiag = jnp.diagonal(h, axis1=-2, axis2=-1)
    return x, rdiag, jnp.sum(c[..., n:, :] ** 2, axis=-2)


def _wy_factor(v, taus):
    """T (..., w, w) upper triangular with H_0 ... H_{w-1} = I - V T V^T (v: ..., rows, w)."""
    w = v.shape[-1]
    gram = jnp.matmul(_mT(v), v, precision=_HIGHEST)
    unit = jnp.eye(w, dtype=v.dtype) + taus[..., :, None] * jnp.triu(gram, 1)
    return trsm(unit, taus[..., :, None] * jnp.eye(w, dtype=v.dtype), lower=False, unit_diag=True)


def _apply_qt(h, taus, c):
    """Q^T c for the reflectors of geqrf's h (..., rows, w) and taus (..., w): three GEMMs."""
    v = jnp.tril(h, -1) + jnp.eye(h.shape[-2], h.shape[-1], dtype=h.dtype)
    prod = jnp.matmul(_mT(v), c, precision=_HIGHEST)
    prod = jnp.matmul(_mT(_wy_factor(v, taus)), prod, precision=_HIGHEST)
    return c - jnp.matmul(v, prod, precision=_HIGHEST)


def _panel(p, rest, rows_per_block):
    """One panel step on the active rows: (r_block (..., w, w), rest_top (..., w, cols), rest)
    where [r_block rest_top] are the panel's rows of [R | Q^T b] and `rest` the columns right of the
    panel after Q^T, with the rows r_block came from zeroed (zero rows change no least-squares
    solution, and the next panels' reflectors leave a zero row zero unless it is a pivot row).

    The active rows (a multiple of rows_per_block) are factored as a tree (TSQR): geqrf of each
    block of rows_per_block rows, batched over the blocks, then geqrf of the blocks' stacked R
    factors. A single block's panel is one on-chip geqrf; one matrix's 4096 x 32 panel took 4.1
    ms as one block and ~0.15 ms as eight (bench/NOTES.md, "Blocked least squares")."""
    *batch, rows, w = p.shape
    nblk = rows // rows_per_block
    blocks = lambda x: x.reshape(*batch, nblk, rows_per_block, x.shape[-1])  # noqa: E731
    h, taus = geqrf(blocks(p))
    rest = _apply_qt(h, taus, blocks(rest))
    if nblk == 1:
        top = rest[..., 0, :w, :]
        rest = rest.at[..., 0, :w, :].set(0)
        return jnp.triu(h[..., 0, :w, :]), top, rest.reshape(*batch, rows, -1)
    stack = lambda x: x[..., :w, :].reshape(*batch, nblk * w, x.shape[-1])  # noqa: E731
    h2, taus2 = geqrf(stack(jnp.triu(h[..., :w, :])))  # the blocks' R factors, stacked
    tops = _apply_qt(h2, taus2, stack(rest))  # rows of the stacked tops, block by block
    top = tops[..., :w, :]
    tops = tops.at[..., :w, :].set(0).reshape(*batch, nblk, w, -1)
    rest = rest.at[..., :w, :].set(tops)
    return jnp.triu(h2[..., :w, :]), top, rest.reshape(*batch, rows, -1)


def blocked(a, b, panel: int = PANEL, rows_per_block: int = ROWS_PER_BLOCK):
    """(x, rdiag, resid) as `lstsq`, by the blocked form (module docstring)."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    c = jnp.concatenate([a, b], axis=-1)  # [A | b]; rows of R are zeroed as they are produced
    if not panel <= rows_per_block:
        raise ValueError(f"lstsq blocked form: rows_per_block {rows_per_block} < panel {panel}")
    if m > rows_per_block:  # whole blocks of rows for the panels' tree; zero rows are inert
        rows = -(-m // rows_per_block) * rows_per_block
        c = jnp.pad(c, [(0, 0)] * len(batch) + [(0, rows - m), (0, 0)])
    else:
        rows_per_block = m
    r_rows, rdiag = [], []
    for j in range(0, n, panel):
        w = min(panel, n - j)
        r_block, top, c = _panel(c[..., :w], c[..., w:], rows_per_block)
        left = jnp.zeros(batch + (w, j), a.dtype)
        r_rows.append(jnp.concatenate([left, r_block, top], axis=-1))
        rdiag.append(jnp.diagonal(r_block, axis1=-2, axis2=-1))
    r_and_c = jnp.concatenate(r_rows, axis=-2)  # (n, n + k): [R | (Q^T b)[:n]]
    x = trsm(r_and_c[..., :n], r_and_c[..., n:], lower=False)
    return x, jnp.concatenate(rdiag, axis=-1), jnp.sum(c * c, axis=-2)


def _use_blocked(a):
    return blocked_wins(a.dtype, *a.shape[-2:])


def _fused_fits(a, b):
    return (_ffi.has_cuda_target("batchla_lstsq") and not _use_blocked(a)
            and _ffi.qr_fused_fits(a.dtype, a.shape[-2], a.shape[-1] + b.shape[-1]))


def _unfused(a, b):
    return blocked(a, b) if _use_blocked(a) else _composed(a, b)


lstsq_p = make_primitive(OpSpec(
    name="batchla_lstsq", operands=("a", "b"), shape_rule=_lstsq_shape,
    reference=_reference.lstsq, multiple_results=True,
    cuda_lowering=conditional_cuda_lowering("batchla_lstsq", _fused_fits, _unfused)))


def lstsq(a, b):
    """(x, rdiag, resid) for a (..., m, n), m >= n, b (..., m, k): with c = Q^T b,
    x (..., n, k) = R^-1 c[:n], rdiag (..., n) = R's diagonal (for the caller's rank test; its
    signs are LAPACK's on the kernels, the tree's on the blocked form: use |rdiag|),
    resid (..., k) = sum of c[n:]^2 per column (= ||b - a x||^2 in exact arithmetic). A zero
    R(j, j) gives inf/NaN in that matrix's x only. No JVP here: the public lstsq defines it."""
    return lstsq_p.bind(a, b)
