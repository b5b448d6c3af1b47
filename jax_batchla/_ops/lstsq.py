"""lstsq: least squares by Householder QR (m >= n), one primitive with three CUDA lowerings:

- the fused kernel (cuda/qr*.cuh) where [A | b] fits on chip, one thread block per matrix;
- geqrf + ormqr + trsm where it does not (each picks our kernel or jax's by size);
- for larger matrices (`blocked_wins`), the blocked QR of qr_blocked.py on [A | b] (Q^T b comes
  out of its trailing updates), then one triangular solve.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.core import ShapedArray

from .. import _ffi, _reference
from . import qr_blocked
from .primitive import OpSpec, conditional_cuda_lowering, make_primitive
from .qr import _tall, geqrf, ormqr
from .triangular import trsm


def _lstsq_shape(a, b):
    m, n = _tall("batchla_lstsq", "a", a)
    if b.shape[-2] != m:
        raise ValueError(f"batchla_lstsq: b must have {m} rows to match a, got shape {b.shape}")
    batch, k = a.shape[:-2], b.shape[-1]
    return (ShapedArray(batch + (n, k), a.dtype), ShapedArray(batch + (n,), a.dtype),
            ShapedArray(batch + (k,), a.dtype))


def blocked_wins(dtype, m: int, n: int) -> bool:
    """Where the blocked QR is the faster lowering (qr_blocked.wins; a hook for bench A/Bs)."""
    return qr_blocked.wins("lstsq", dtype, m, n)


def _composed(a, b):
    """geqrf, Q^T b, back substitution; each primitive picks our kernel or jax's by size."""
    n = a.shape[-1]
    h, taus = geqrf(a)
    c = ormqr(h, taus, b, trans=True)
    x = trsm(h[..., :n, :], c[..., :n, :], lower=False)
    rdiag = jnp.diagonal(h, axis1=-2, axis2=-1)
    return x, rdiag, jnp.sum(c[..., n:, :] ** 2, axis=-2)


def _use_blocked(a):
    return blocked_wins(a.dtype, *a.shape[-2:])


def _fused_fits(a, b):
    return (_ffi.has_cuda_target("batchla_lstsq") and not _use_blocked(a)
            and _ffi.qr_fused_fits(a.dtype, a.shape[-2], a.shape[-1] + b.shape[-1]))


def _unfused(a, b):
    return qr_blocked.lstsq(a, b) if _use_blocked(a) else _composed(a, b)


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
