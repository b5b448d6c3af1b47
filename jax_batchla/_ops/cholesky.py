"""The Cholesky family: potrf (factor), potrs (solve with a factor), posv (fused factor + solve)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.core import ShapedArray
from jax.interpreters import ad

from .. import _ffi, _reference
from .primitive import OpSpec, make_primitive, sized_cuda_lowering
from .triangular import trsm


def _square(name, what, aval):
    if aval.shape[-2] != aval.shape[-1]:
        raise ValueError(f"{name}: {what} must be square, got shape {aval.shape}")
    return aval.shape[-1]


def _rhs(name, n, b):
    if b.shape[-2] != n:
        raise ValueError(f"{name}: b must have {n} rows to match the matrix, got shape {b.shape}")


def _info_aval(a):
    return ShapedArray(a.shape[:-2], np.dtype(np.int32))


def _zero_info(info):
    return ad.Zero(ShapedArray(info.shape, info.dtype).to_tangent_aval())


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


# ---- potrf: L = chol(A), lower triangle of A read (or of (A + A^T)/2 when symmetrize) -------
def _potrf_shape(a, *, symmetrize):
    _square("batchla_potrf", "a", a)
    return ShapedArray(a.shape, a.dtype), _info_aval(a)


def _potrf_via_jax(a, *, symmetrize):
    """jax's own (cuSOLVER) Cholesky with our info, for n past our kernels' size classes."""
    l = lax.linalg.cholesky(a, symmetrize_input=symmetrize)
    bad = jnp.isnan(jnp.diagonal(l, axis1=-2, axis2=-1))
    info = jnp.where(jnp.any(bad, axis=-1), jnp.argmax(bad, axis=-1) + 1, 0).astype(np.int32)
    return l, info


potrf_p = make_primitive(OpSpec(
    name="batchla_potrf", operands=("a",), shape_rule=_potrf_shape,
    reference=_reference.potrf, multiple_results=True, cuda_lowering=sized_cuda_lowering("batchla_potrf", _ffi.potrf_max_n, _potrf_via_jax)))


def potrf(a, *, symmetrize: bool = False):
    """(L, info): lower Cholesky factor of the symmetric matrix whose lower triangle is `a`
    (of (a + a^T) / 2 when `symmetrize`: fused into the kernel's load, no extra pass)."""
    return potrf_p.bind(a, symmetrize=bool(symmetrize))


def _symmetric_from_lower(x):
    """The symmetric matrix potrf actually factors: tril(x) mirrored."""
    return jnp.tril(x) + _mT(jnp.tril(x, -1))


def _potrf_jvp(primals, tangents, *, symmetrize):
    # Murray 2016, "Differentiation of the Cholesky decomposition":
    # dL = L Phi(L^-1 dA L^-T), Phi = lower triangle with the diagonal halved.
    (a,), (da,) = primals, tangents
    l, info = potrf(a, symmetrize=symmetrize)
    da = ad.instantiate_zeros(da)
    da = (da + _mT(da)) / 2 if symmetrize else _symmetric_from_lower(da)
    s = trsm(l, _mT(trsm(l, da, lower=True)), lower=True)  # L^-1 dA L^-T (dA symmetric)
    phi = jnp.tril(s) * (1 - 0.5 * jnp.eye(s.shape[-1], dtype=s.dtype))
    return (l, info), (l @ phi, _zero_info(info))


ad.primitive_jvps[potrf_p] = _potrf_jvp


# ---- potrs: X = A^-1 B from a Cholesky factor --------------------------------------------------
def _potrs_shape(c, b, *, lower):
    _rhs("batchla_potrs", _square("batchla_potrs", "c", c), b)
    return (ShapedArray(b.shape, b.dtype),)


potrs_p = make_primitive(OpSpec(
    name="batchla_potrs", operands=("c", "b"), shape_rule=_potrs_shape,
    reference=_reference.potrs, fold_rhs_batch=True))


def potrs(c, b, *, lower: bool):
    """A^-1 b with A = L L^T (L = tril(c)) if lower, else A = U^T U (U = triu(c))."""
    return potrs_p.bind(c, b, lower=bool(lower))


def _lower_factor(c, lower):
    return jnp.tril(c) if lower else _mT(jnp.triu(c))


def _potrs_jvp(primals, tangents, *, lower):
    # A = L L^T  =>  dx = A^-1 (db - (dL L^T + L dL^T) x), dL from the triangle of dc.
    c, b = primals
    dc, db = tangents
    x = potrs(c, b, lower=lower)
    rhs = ad.instantiate_zeros(db)
    if type(dc) is not ad.Zero:
        l, dl = _lower_factor(c, lower), _lower_factor(dc, lower)
        rhs = rhs - (dl @ (_mT(l) @ x) + l @ (_mT(dl) @ x))
    return x, potrs(c, rhs, lower=lower)


def _potrs_transpose(ct, c, b, *, lower):
    # Linear in b; A^-1 is symmetric, so it is its own adjoint.
    assert not ad.is_undefined_primal(c) and ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    return [None, potrs(c, ct, lower=lower)]


ad.primitive_jvps[potrs_p] = _potrs_jvp
ad.primitive_transposes[potrs_p] = _potrs_transpose


# ---- posv: fused factor + solve ------------------------------------------------------------------
def _posv_shape(a, b, *, lower):
    _rhs("batchla_posv", _square("batchla_posv", "a", a), b)
    return ShapedArray(b.shape, b.dtype), _info_aval(a)


def _posv_unfused(a, b, *, lower):
    l, info = potrf(a if lower else _mT(a))
    return potrs(l, b, lower=True), info


posv_p = make_primitive(OpSpec(
    name="batchla_posv", operands=("a", "b"), shape_rule=_posv_shape,
    reference=_reference.posv, multiple_results=True, fold_rhs_batch=True,
    # the fused kernel keeps the matrix on chip; beyond that size, factor then solve
    cuda_lowering=sized_cuda_lowering("batchla_posv", _ffi.posv_max_fused_n, _posv_unfused)))


def posv(a, b, *, lower: bool):
    """(x, info): A^-1 b for SPD A given by its lower (or upper) triangle, factored on the fly."""
    return posv_p.bind(a, b, lower=bool(lower))


def _posv_jvp(primals, tangents, *, lower):
    # Under differentiation factor once and reuse L for the tangent: dx = A^-1 (db - dA x).
    a, b = primals
    da, db = tangents
    l, info = potrf(a if lower else _mT(a))
    x = potrs(l, b, lower=True)
    rhs = ad.instantiate_zeros(db)
    if type(da) is not ad.Zero:
        da = da if lower else _mT(da)
        rhs = rhs - _symmetric_from_lower(da) @ x
    return (x, info), (potrs(l, rhs, lower=True), _zero_info(info))


ad.primitive_jvps[posv_p] = _posv_jvp
