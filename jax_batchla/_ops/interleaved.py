"""The Cholesky family in the interleaved layout: il_potrf, il_potrs, il_posv, il_trsm.

Operands have shape (..., rows, cols, c): element (i, j) of matrix l of a chunk is at
[..., i, j, l], so c consecutive matrices sit side by side and one GPU thread per matrix reads
coalesced (bindings/TARGETS.md, "Interleaved layout"). Per-matrix outputs (info) are (..., c).
The leading dims are batch dims (core_rank 3 in primitive.py), so sharding and vmap work exactly
as for the standard ops. The JVPs are those of cholesky.py and triangular.py, written in this
layout: matrix products contract over the matrix axes per lane, never leaving the layout.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.core import ShapedArray
from jax.interpreters import ad

from .. import _ffi, _reference
from .primitive import OpSpec, conditional_cuda_lowering, make_primitive

CORE_RANK = 3  # (rows, cols, c)


# ---- layout helpers: the standard matrix operations, per lane --------------------------------
def il_mT(x):
    """The transpose of every matrix of the interleaved x."""
    return jnp.swapaxes(x, -3, -2)


def il_matmul(x, y):
    """x @ y for every pair of matrices of the interleaved x (..., n, k, c) and y (..., k, m, c)."""
    return jnp.einsum("...ikc,...kjc->...ijc", x, y, precision=lax.Precision.HIGHEST)


def _mask(x, keep):
    """Zeros where the (n, n) boolean `keep` is False (a select, so NaN/Inf there never leak)."""
    return jnp.where(keep[:, :, None], x, jnp.zeros((), x.dtype))


def il_tril(x, k=0):
    n, m = x.shape[-3], x.shape[-2]
    return _mask(x, jnp.tri(n, m, k, dtype=bool))


def il_triu(x, k=0):
    n, m = x.shape[-3], x.shape[-2]
    return _mask(x, ~jnp.tri(n, m, k - 1, dtype=bool))


def _square(name, what, aval):
    if aval.shape[-3] != aval.shape[-2]:
        raise ValueError(f"{name}: {what} must hold square matrices (..., n, n, c), got shape {aval.shape}")
    return aval.shape[-3]


def _rhs(name, n, a, b):
    if b.shape[-3] != n or b.shape[-1] != a.shape[-1]:
        raise ValueError(f"{name}: b must have shape (..., {n}, k, {a.shape[-1]}) to match the matrix "
                         f"of shape {a.shape}, got {b.shape}")


def _info_aval(a):
    return ShapedArray(a.shape[:-3] + a.shape[-1:], np.dtype(np.int32))


def _zero_info(info):
    return ad.Zero(ShapedArray(info.shape, info.dtype).to_tangent_aval())


def _spec(name, operands, shape_rule, reference, **kw):
    return OpSpec(name=name, operands=operands, shape_rule=shape_rule, reference=reference,
                  core_rank=CORE_RANK, **kw)


# ---- il_potrf ----------------------------------------------------------------------------------
def _potrf_shape(a, *, symmetrize):
    _square("batchla_il_potrf", "a", a)
    return ShapedArray(a.shape, a.dtype), _info_aval(a)


il_potrf_p = make_primitive(_spec("batchla_il_potrf", ("a",), _potrf_shape, _reference.il_potrf,
                                  multiple_results=True))


def il_potrf(a, *, symmetrize: bool = False):
    """(L, info) per matrix of the interleaved a (..., n, n, c): as cholesky.potrf."""
    return il_potrf_p.bind(a, symmetrize=bool(symmetrize))


def _symmetric_from_lower(x):
    return il_tril(x) + il_mT(il_tril(x, -1))


def _potrf_jvp(primals, tangents, *, symmetrize):
    # As cholesky._potrf_jvp (Murray 2016): dL = L Phi(L^-1 dA L^-T).
    (a,), (da,) = primals, tangents
    l, info = il_potrf(a, symmetrize=symmetrize)
    da = ad.instantiate_zeros(da)
    da = (da + il_mT(da)) / 2 if symmetrize else _symmetric_from_lower(da)
    s = il_trsm(l, il_mT(il_trsm(l, da, lower=True)), lower=True)
    n = s.shape[-3]
    phi = il_tril(s) * (1 - 0.5 * jnp.eye(n, dtype=s.dtype))[:, :, None]
    return (l, info), (il_matmul(l, phi), _zero_info(info))


ad.primitive_jvps[il_potrf_p] = _potrf_jvp


# ---- il_potrs ----------------------------------------------------------------------------------
def _potrs_shape(c, b, *, lower):
    _rhs("batchla_il_potrs", _square("batchla_il_potrs", "c", c), c, b)
    return (ShapedArray(b.shape, b.dtype),)


il_potrs_p = make_primitive(_spec("batchla_il_potrs", ("c", "b"), _potrs_shape, _reference.il_potrs,
                                  fold_rhs_batch=True))


def il_potrs(c, b, *, lower: bool):
    """A^-1 b per matrix, A = L L^T (L = tril(c)) if lower else U^T U (U = triu(c))."""
    return il_potrs_p.bind(c, b, lower=bool(lower))


def _lower_factor(c, lower):
    return il_tril(c) if lower else il_mT(il_triu(c))


def _potrs_jvp(primals, tangents, *, lower):
    # As cholesky._potrs_jvp: dx = A^-1 (db - (dL L^T + L dL^T) x).
    c, b = primals
    dc, db = tangents
    x = il_potrs(c, b, lower=lower)
    rhs = ad.instantiate_zeros(db)
    if type(dc) is not ad.Zero:
        l, dl = _lower_factor(c, lower), _lower_factor(dc, lower)
        rhs = rhs - (il_matmul(dl, il_matmul(il_mT(l), x)) + il_matmul(l, il_matmul(il_mT(dl), x)))
    return x, il_potrs(c, rhs, lower=lower)


def _potrs_transpose(ct, c, b, *, lower):
    # Linear in b; A^-1 is symmetric, its own adjoint.
    assert not ad.is_undefined_primal(c) and ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    return [None, il_potrs(c, ct, lower=lower)]


ad.primitive_jvps[il_potrs_p] = _potrs_jvp
ad.primitive_transposes[il_potrs_p] = _potrs_transpose


# ---- il_posv -----------------------------------------------------------------------------------
def _posv_shape(a, b, *, lower):
    _rhs("batchla_il_posv", _square("batchla_il_posv", "a", a), a, b)
    return ShapedArray(b.shape, b.dtype), _info_aval(a)


def _posv_composed(a, b, *, lower):
    """il_potrf + il_potrs: the CUDA lowering where the tuned posv kernel would need the factor
    in global memory (the fused kernels keep it in registers or shared memory)."""
    l, info = il_potrf(a if lower else il_mT(a))
    return il_potrs(l, b, lower=True), info


def _posv_fused_fits(a, b, *, lower):
    return _ffi.il_posv_fused(a.dtype, a.shape[-2])


il_posv_p = make_primitive(_spec("batchla_il_posv", ("a", "b"), _posv_shape, _reference.il_posv,
                                 multiple_results=True, fold_rhs_batch=True,
                                 cuda_lowering=conditional_cuda_lowering("batchla_il_posv", _posv_fused_fits,
                                                                         _posv_composed, CORE_RANK)))


def il_posv(a, b, *, lower: bool):
    """(x, info) per matrix: A^-1 b for SPD A read from its lower (or upper) triangle."""
    return il_posv_p.bind(a, b, lower=bool(lower))


def _posv_jvp(primals, tangents, *, lower):
    # As cholesky._posv_jvp: factor once, dx = A^-1 (db - dA x).
    a, b = primals
    da, db = tangents
    l, info = il_potrf(a if lower else il_mT(a))
    x = il_potrs(l, b, lower=True)  # NaN for a failed matrix, as the fused kernel's x
    rhs = ad.instantiate_zeros(db)
    if type(da) is not ad.Zero:
        da = da if lower else il_mT(da)
        rhs = rhs - il_matmul(_symmetric_from_lower(da), x)
    return (x, info), (il_potrs(l, rhs, lower=True), _zero_info(info))


ad.primitive_jvps[il_posv_p] = _posv_jvp


# ---- il_trsm -----------------------------------------------------------------------------------
def _trsm_shape(a, b, *, lower, trans, unit_diag):
    _rhs("batchla_il_trsm", _square("batchla_il_trsm", "a", a), a, b)
    return (ShapedArray(b.shape, b.dtype),)


il_trsm_p = make_primitive(_spec("batchla_il_trsm", ("a", "b"), _trsm_shape, _reference.il_trsm,
                                 fold_rhs_batch=True))


def il_trsm(a, b, *, lower: bool, trans: bool = False, unit_diag: bool = False):
    """X = op(A)^-1 B per matrix, A the lower (or upper) triangle of the interleaved a."""
    return il_trsm_p.bind(a, b, lower=bool(lower), trans=bool(trans), unit_diag=bool(unit_diag))


def il_triangle(a, *, lower: bool, unit_diag: bool = False):
    """The part of the interleaved a that il_trsm reads."""
    return il_tril(a, -1 if unit_diag else 0) if lower else il_triu(a, 1 if unit_diag else 0)


def _trsm_jvp(primals, tangents, *, lower, trans, unit_diag):
    # As triangular._trsm_jvp: dx = op(A)^-1 (db - op(dA) x), dA restricted to the triangle read.
    a, b = primals
    da, db = tangents
    x = il_trsm(a, b, lower=lower, trans=trans, unit_diag=unit_diag)
    rhs = ad.instantiate_zeros(db)
    if type(da) is not ad.Zero:
        dtri = il_triangle(da, lower=lower, unit_diag=unit_diag)
        rhs = rhs - il_matmul(il_mT(dtri) if trans else dtri, x)
    return x, il_trsm(a, rhs, lower=lower, trans=trans, unit_diag=unit_diag)


def _trsm_transpose(ct, a, b, *, lower, trans, unit_diag):
    # Linear in b only: the adjoint of op(A)^-1 is op(A)^-T.
    assert not ad.is_undefined_primal(a) and ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    return [None, il_trsm(a, ct, lower=lower, trans=not trans, unit_diag=unit_diag)]


ad.primitive_jvps[il_trsm_p] = _trsm_jvp
ad.primitive_transposes[il_trsm_p] = _trsm_transpose


# ---- from_interleaved --------------------------------------------------------------------------
# x (..., chunks, rows, cols, c) -> (..., count, rows, cols): the one interleaved op whose result
# is in the standard layout. The leading dims (vmap's) are its batch dims, so core rank 4. Used
# where count is not a multiple of c; for whole chunks XLA's own transpose is as fast and fuses.
FROM_CORE_RANK = 4


def _from_interleaved_shape(x, *, count):
    *lead, chunks, rows, cols, c = x.shape
    if c % 32:
        raise ValueError(f"batchla_from_interleaved: the chunk (last dim of {x.shape}) must be a "
                         "multiple of 32")
    if not 0 <= count <= chunks * c:
        raise ValueError(f"batchla_from_interleaved: count must be in [0, {chunks * c}] for data of "
                         f"shape {x.shape}, got {count}")
    return (ShapedArray((*lead, count, rows, cols), x.dtype),)


from_interleaved_p = make_primitive(OpSpec(name="batchla_from_interleaved", operands=("x",),
                                           shape_rule=_from_interleaved_shape,
                                           reference=_reference.from_interleaved,
                                           core_rank=FROM_CORE_RANK))


def from_interleaved(x, *, count: int):
    """The first `count` matrices of the interleaved x (..., chunks, rows, cols, c), row-major."""
    return from_interleaved_p.bind(x, count=int(count))


def _from_interleaved_transpose(ct, x, *, count):
    # The adjoint of dropping the padding and moving the lanes: zeros for the padding, lanes back.
    *lead, chunks, rows, cols, c = x.aval.shape
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    padded = jnp.pad(ct, [(0, 0)] * len(lead) + [(0, chunks * c - count), (0, 0), (0, 0)])
    return [jnp.moveaxis(padded.reshape(*lead, chunks, c, rows, cols), -3, -1)]


ad.deflinear2(from_interleaved_p, _from_interleaved_transpose)
