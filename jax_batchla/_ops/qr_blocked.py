"""The blocked Householder QR of a few or large tall matrices (bench/NOTES.md, "Blocked least
squares"): 32-column panels, each factored as a tree (TSQR) of 512-row blocks by our geqrf kernel,
and the columns right of a panel updated by three XLA GEMMs per level of the tree,

    C <- Q^T C = C - V T^T (V^T C),   Q = H_0 ... H_{NB-1} = I - V T V^T

with T from the UT transform (Joffrain, Low, Quintana-Orti, van de Geijn 2006):
T = (D^-1 + striu(V^T V))^-1 = (I + D striu(V^T V))^-1 D, D = diag(tau). Written this way the
matrix to invert is unit upper triangular, so tau = 0 (H = I, a zero column) needs no special case.

Used where the one-block-per-matrix kernels are slow (one SM streams a whole large matrix: a
4096 x 32 geqrf took 4.1 ms, 512 x 32 0.15 ms): lstsq (lstsq.py) and, for m <= 512, qr mode 'r'.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .cholesky import _mT
from .lu import unit_lower
from .qr import _upper_square, geqrf
from .triangular import trsm

PANEL = 32  # columns per panel: the geqrf kernel's reflector block
# qr mode 'r' (m <= 512, one geqrf a panel): 64-column panels, half the launches and glue of 32
# (H100, bench/qr_panel_ab.py: f32 n = 128 / 256 / 512 3.18 / 4.18 / 6.72 -> 2.93 / 3.93 / 5.46 ms,
# f64 3.04 / 3.79 / 6.08 -> 2.85 / 3.82 / 5.19; 96 and 128 slower at every n: the kernel's geqrf
# of wider panels costs more than the glue they save; bench/NOTES.md "Blocked qr mode 'r'").
R_PANEL = 64
ROWS_PER_BLOCK = 512  # rows of one leaf of a panel's tree: geqrf keeps 512 x 32 on chip (f64 too)
_HIGHEST = lax.Precision.HIGHEST  # no TF32 (DESIGN.md)

# Where the blocked form beat the one-block-per-matrix kernels (H100 A/B, both lowerings in one
# process; bench/NOTES.md "Blocked least squares", "Blocked QR for qr mode 'r'"): (op, itemsize)
# -> (least n, least m n). lstsq won at every batch tried (8..512) from there: f32 n = 128, m = 512
# 2.0x but n = 64, m = 512 0.9x; f64 n = 64, m = 512 2.2x, n = 128, m = 256 2.0x, n = 64, m = 256
# 1.0x. qr mode 'r' (square, the bench's batch): f32 n = 128 0.99x, 256 2.07x; f64 n = 128 1.48x.
# qr mode 'r' with R_PANEL: f32 n = 128 2.93 ms blocked vs 3.19 kernel, f64 2.85 vs 3.10 (smaller n
# not measured: the kernel keeps them). Since the QR panel class (cuda/qr_panel.cuh, m <= 160 =
# tuning.h kQrPanelMaxM) the kernel wins again up to m = 160: f32 n = 128 1.18 ms, f64 2.23 (H100,
# check_qr, v8; bench/NOTES.md "Panel class"). (op, itemsize) -> (least n, least m n, least m).
_WINS_FROM = {("lstsq", 4): (2 * PANEL, 1 << 16, 0), ("lstsq", 8): (2 * PANEL, 1 << 15, 0),
              ("qr_r", 4): (128, 0, 161), ("qr_r", 8): (128, 0, 161)}


def wins(op: str, dtype, m: int, n: int) -> bool:
    """True where the blocked form of `op` ("lstsq" or "qr_r") is the faster lowering for m x n."""
    min_n, min_mn, min_m = _WINS_FROM[op, jnp.dtype(dtype).itemsize]
    return n >= min_n and m * n >= min_mn and m >= min_m


def _wy_factor(v, taus):
    """T (..., w, w) upper triangular with H_0 ... H_{w-1} = I - V T V^T (v: ..., rows, w)."""
    w = v.shape[-1]
    gram = jnp.matmul(_mT(v), v, precision=_HIGHEST)
    unit = jnp.eye(w, dtype=v.dtype) + taus[..., :, None] * jnp.triu(gram, 1)
    return trsm(unit, taus[..., :, None] * jnp.eye(w, dtype=v.dtype), lower=False, unit_diag=True)


def _apply_qt(h, taus, c):
    """Q^T c for the reflectors of geqrf's h (..., rows, w) and taus (..., w): three GEMMs."""
    v = unit_lower(h)
    prod = jnp.matmul(_mT(v), c, precision=_HIGHEST)
    prod = jnp.matmul(_mT(_wy_factor(v, taus)), prod, precision=_HIGHEST)
    return c - jnp.matmul(v, prod, precision=_HIGHEST)


def _panel(p, rest, rows_per_block):
    """One panel step: (r_block (..., w, w), top (..., w, cols), rest), where [r_block top] are the
    panel's rows of [R | Q^T c] and `rest` the rows still to reduce of the columns right of the
    panel, after Q^T.

    rows_per_block None: the panel is one geqrf (on chip up to 512 rows) and its w rows leave
    `rest`, as in LAPACK's blocked geqrf. Otherwise the rows (a multiple of rows_per_block) are
    factored as a tree (TSQR): geqrf of each block of rows_per_block rows, batched over the blocks,
    then geqrf of the blocks' stacked R factors; a 4096 x 32 panel took 4.1 ms as one geqrf and
    ~0.15 ms as eight blocks (bench/NOTES.md, "Blocked least squares"). The rows r_block came from
    are zeroed instead of removed, so the blocks keep their shape: zero rows change no
    least-squares solution, and a reflector leaves a zero row zero unless it is its pivot row."""
    w = p.shape[-1]
    if rows_per_block is None:
        h, taus = geqrf(p)
        rest = _apply_qt(h, taus, rest)
        return _upper_square(h), rest[..., :w, :], rest[..., w:, :]
    *batch, rows, _ = p.shape
    nblk = rows // rows_per_block
    blocks = lambda x: x.reshape(*batch, nblk, rows_per_block, x.shape[-1])  # noqa: E731
    stack = lambda x: x[..., :w, :].reshape(*batch, nblk * w, x.shape[-1])  # noqa: E731
    h, taus = geqrf(blocks(p))
    rest = _apply_qt(h, taus, blocks(rest))
    h2, taus2 = geqrf(stack(_upper_square(h)))  # the blocks' R factors, stacked
    tops = _apply_qt(h2, taus2, stack(rest))  # the blocks' top rows, block by block
    top = tops[..., :w, :]
    tops = tops.at[..., :w, :].set(0).reshape(*batch, nblk, w, -1)
    rest = rest.at[..., :w, :].set(tops)
    return _upper_square(h2), top, rest.reshape(*batch, rows, -1)


def factor(c, n: int, panel: int = PANEL, rows_per_block: int = ROWS_PER_BLOCK):
    """Blocked Householder QR of the first n columns of c (..., m, n + k), applied to all of them:
    ([R | (Q^T c)[:n, n:]] (..., n, n + k), the rows of Q^T c[:, n:] past the first n, in some
    order and with zero rows added (their column sums of squares are the least-squares residuals)).
    With one block of rows (m <= rows_per_block) R is LAPACK's, signs included (each panel is
    geqrf's, as in LAPACK's blocked geqrf); a tree gives R up to the signs of its rows."""
    m = c.shape[-2]
    batch = c.shape[:-2]
    if not panel <= rows_per_block:
        raise ValueError(f"blocked QR: rows_per_block {rows_per_block} < panel {panel}")
    if m > rows_per_block:  # whole blocks of rows for the panels' tree; zero rows are inert
        rows = -(-m // rows_per_block) * rows_per_block
        c = jnp.pad(c, [(0, 0)] * len(batch) + [(0, rows - m), (0, 0)])
    else:
        rows_per_block = None  # one geqrf per panel
    r_rows = []
    for j in range(0, n, panel):
        w = min(panel, n - j)
        r_block, top, c = _panel(c[..., :w], c[..., w:], rows_per_block)
        left = jnp.zeros(batch + (w, j), c.dtype)
        r_rows.append(jnp.concatenate([left, r_block, top], axis=-1))
    return jnp.concatenate(r_rows, axis=-2), c


def lstsq(a, b, rows_per_block: int = ROWS_PER_BLOCK):
    """(x, rdiag, resid) as lstsq.lstsq: a (..., m, n), m >= n, b (..., m, k)."""
    n = a.shape[-1]
    r_and_c, rest = factor(jnp.concatenate([a, b], axis=-1), n, rows_per_block=rows_per_block)
    x = trsm(r_and_c[..., :n], r_and_c[..., n:], lower=False)
    return x, jnp.diagonal(r_and_c, axis1=-2, axis2=-1), jnp.sum(rest * rest, axis=-2)


def r_factor(a):
    """R (..., n, n) of a (..., m, n), m >= n (LAPACK's signs where m <= ROWS_PER_BLOCK)."""
    return factor(a, a.shape[-1], panel=R_PANEL)[0]
