"""The LU family: getrf (factor), getrs (solve with the factors), and the fused on-chip kernels
gesv (factor + solve), inverse and slogdet, which never write the factors to memory."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.core import ShapedArray
from jax.interpreters import ad, mlir

from .. import _ffi, _reference
from .cholesky import _info_aval, _mT, _rhs, _square, _zero_info
from .primitive import (OpSpec, conditional_cuda_lowering, ffi_lowering, make_primitive,
                        sized_cuda_lowering)
from .triangular import trsm


def _vector_aval(a, dtype=np.int32):
    return ShapedArray(a.shape[:-1], np.dtype(dtype))


# ---- getrf: PA = LU -------------------------------------------------------------------------------
# `permutation=False` (lu_factor, which returns only the pivots) gives perm of shape (..., 0): the
# kernels then do not write it (at n = 2 it is 10 % of the bytes of a factorization).
def _getrf_shape(a, *, permutation):
    n = _square("batchla_getrf", "a", a)
    perm = ShapedArray(a.shape[:-2] + (n if permutation else 0,), np.dtype(np.int32))
    return ShapedArray(a.shape, a.dtype), _vector_aval(a), perm, _info_aval(a)


def _drop_perm(outs, permutation):
    lu, pivots, perm, info = outs
    return lu, pivots, perm if permutation else perm[..., :0], info


def _getrf_reference(a, *, permutation):
    return _drop_perm(_reference.getrf(a), permutation)


def _getrf_via_jax(a, *, permutation):
    """jax's own (cuSOLVER) LU with our info, for n past our kernels' size classes."""
    lu, pivots, perm = lax.linalg.lu(a)
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    info = jnp.where(jnp.any(zero, axis=-1), jnp.argmax(zero, axis=-1) + 1, 0).astype(np.int32)
    return _drop_perm((lu, pivots, perm, info), permutation)


getrf_p = make_primitive(OpSpec(
    name="batchla_getrf", operands=("a",), shape_rule=_getrf_shape,
    reference=_getrf_reference, multiple_results=True,
    cuda_lowering=sized_cuda_lowering("batchla_getrf", _ffi.getrf_max_n, _getrf_via_jax)))


def getrf(a, *, permutation: bool = True):
    """(lu, pivots, perm, info) of square matrices a (..., n, n): PA = LU with LAPACK's partial
    pivoting. lu holds L (unit diagonal implied) below the diagonal and U on and above; pivots are
    0-based LAPACK ipiv, perm[i] is the row of a that ends in row i (both int32 (..., n); perm is
    (..., 0), not computed, when `permutation` is False); info is the 1-based index of the first
    exactly-zero pivot, else 0."""
    return getrf_p.bind(a, permutation=bool(permutation))


def unit_lower(lu):
    """The unit lower triangle (trapezoid, for a tall (..., m, n)) of packed factors."""
    return jnp.tril(lu, -1) + jnp.eye(*lu.shape[-2:], dtype=lu.dtype)


def _getrf_jvp(primals, tangents, *, permutation):
    # P A = L U  =>  L^-1 P dA U^-1 = L^-1 dL + dU U^-1: the strictly lower part gives dL, the
    # upper part dU (the first is unit lower triangular's tangent, the second upper).
    (a,), (da,) = primals, tangents
    lu, pivots, perm, info = getrf(a)
    da = ad.instantiate_zeros(da)
    x = trsm(lu, _reference._rows_of(da, perm), lower=True, unit_diag=True)  # L^-1 P dA
    x = _mT(trsm(lu, _mT(x), lower=False, trans=True))  # ... U^-1
    dlu = unit_lower(lu) @ jnp.tril(x, -1) + jnp.triu(x) @ jnp.triu(lu)
    outs = _drop_perm((lu, pivots, perm, info), permutation)
    return outs, (dlu, *[_zero_info(t) for t in outs[1:]])


ad.primitive_jvps[getrf_p] = _getrf_jvp


# ---- getrs: op(A) X = B from the factors ------------------------------------------------------------
def _getrs_shape(lu, perm, b, *, trans):
    n = _square("batchla_getrs", "lu", lu)
    _rhs("batchla_getrs", n, b)
    if perm.shape[-1] != n:
        raise ValueError(f"batchla_getrs: perm must have {n} entries, got shape {perm.shape}")
    return (ShapedArray(b.shape, b.dtype),)


getrs_p = make_primitive(OpSpec(
    name="batchla_getrs", operands=("lu", "perm", "b"), shape_rule=_getrs_shape,
    reference=_reference.getrs, fold_rhs_batch=True, index_operands=("perm",)))


def getrs(lu, perm, b, *, trans: bool = False):
    """X = op(A)^-1 B with A = P^T L U given by getrf's lu and perm; op(A) = A^T if `trans`."""
    return getrs_p.bind(lu, perm, b, trans=bool(trans))


def _unpermute_rows(y, perm):
    """P^T y: row i of y goes to row perm[i]."""
    return _reference._rows_of(y, jnp.argsort(perm, axis=-1))


def _getrs_jvp(primals, tangents, *, trans):
    # A = P^T M with M = L U, dM = dL U + L dU (dL, dU the parts of dlu that getrs reads);
    # x = op(A)^-1 b  =>  dx = op(A)^-1 (db - op(dA) x).
    lu, perm, b = primals
    dlu, _, db = tangents
    x = getrs(lu, perm, b, trans=trans)
    rhs = ad.instantiate_zeros(db)
    if type(dlu) is not ad.Zero:
        l, u = unit_lower(lu), jnp.triu(lu)
        dl, du = jnp.tril(dlu, -1), jnp.triu(dlu)
        if trans:  # dA^T x = dM^T (P x)
            px = _reference._rows_of(x, perm)
            rhs = rhs - (_mT(u) @ (_mT(dl) @ px) + _mT(du) @ (_mT(l) @ px))
        else:  # dA x = P^T dM x
            rhs = rhs - _unpermute_rows(dl @ (u @ x) + l @ (du @ x), perm)
    return x, getrs(lu, perm, rhs, trans=trans)


def _getrs_transpose(ct, lu, perm, b, *, trans):
    # Linear in b: the adjoint of op(A)^-1 is op(A)^-T.
    assert not ad.is_undefined_primal(lu) and ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, None, ad.Zero(b.aval)]
    return [None, None, getrs(lu, perm, ct, trans=not trans)]


ad.primitive_jvps[getrs_p] = _getrs_jvp
ad.primitive_transposes[getrs_p] = _getrs_transpose


# ---- gesv: fused factor + solve -------------------------------------------------------------------
def _gesv_shape(a, b):
    _rhs("batchla_gesv", _square("batchla_gesv", "a", a), b)
    return ShapedArray(b.shape, b.dtype), _info_aval(a)


def _gesv_composed(a, b):
    lu, _, perm, info = getrf(a)
    return getrs(lu, perm, b), info


def _gesv_fused_fits(a, b):
    """The fused kernel keeps each matrix on chip and walks its k columns in one group of
    threads; when the columns far outnumber the matrices (a vmapped batch of right-hand sides
    folded into k), factor once and let getrs split the columns over the whole GPU instead."""
    batch, k = int(np.prod(a.shape[:-2])), b.shape[-1]
    few_matrices_many_columns = k >= 4096 and k >= 32 * max(batch, 1)
    return _ffi.lu_fused_wins(a.dtype, "solve", a.shape[-1]) and not few_matrices_many_columns


gesv_p = make_primitive(OpSpec(
    name="batchla_gesv", operands=("a", "b"), shape_rule=_gesv_shape,
    reference=_reference.gesv, multiple_results=True, fold_rhs_batch=True,
    cuda_lowering=conditional_cuda_lowering("batchla_gesv", _gesv_fused_fits, _gesv_composed)))


def gesv(a, b):
    """(x, info): A^-1 b for square a (..., n, n), b (..., n, k), factored on the fly."""
    return gesv_p.bind(a, b)


def _gesv_jvp(primals, tangents):
    # Differentiated, factor once and keep the factors: x = A^-1 b, dx = A^-1 (db - dA x). The
    # tangent is linear in (da, db) through getrs, whose transpose is one more getrs: reverse mode
    # costs one extra solve, never a second factorization.
    a, b = primals
    da, db = tangents
    lu, _, perm, info = getrf(a)
    x = getrs(lu, perm, b)
    rhs = ad.instantiate_zeros(db)
    if type(da) is not ad.Zero:
        rhs = rhs - da @ x
    return (x, info), (getrs(lu, perm, rhs), _zero_info(info))


ad.primitive_jvps[gesv_p] = _gesv_jvp


# ---- inverse ------------------------------------------------------------------------------------------
def _inverse_shape(a):
    _square("batchla_inverse", "a", a)
    return ShapedArray(a.shape, a.dtype), _info_aval(a)


def _inverse_composed(a):
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return _gesv_composed(a, eye)


def _inverse_cuda_lowering(ctx, a):
    """Our CUDA inverse where it wins, else getrf + getrs against the identity. The CUDA handler
    takes a third result, (..., 2n) int32 of scratch for getrf's pivots and perm where it composes
    getrf + getri on the device (n = 65..128); it is dropped here."""
    aval = ctx.avals_in[0]
    if not _ffi.lu_fused_wins(aval.dtype, "inverse", aval.shape[-1]):
        return mlir.lower_fun(_inverse_composed, multiple_results=True)(ctx, a)
    scratch = ShapedArray(aval.shape[:-2] + (2 * aval.shape[-1],), np.dtype(np.int32))
    outs = ffi_lowering("batchla_inverse")(ctx.replace(avals_out=[*ctx.avals_out, scratch]), a)
    return outs[:2]


inverse_p = make_primitive(OpSpec(
    name="batchla_inverse", operands=("a",), shape_rule=_inverse_shape,
    reference=_reference.inverse, multiple_results=True, cuda_lowering=_inverse_cuda_lowering))


def inverse(a):
    """(A^-1, info) of square matrices a (..., n, n)."""
    return inverse_p.bind(a)


def _inverse_jvp(primals, tangents):
    # d(A^-1) = -A^-1 dA A^-1
    (a,), (da,) = primals, tangents
    inv, info = inverse(a)
    return (inv, info), (-(inv @ ad.instantiate_zeros(da) @ inv), _zero_info(info))


ad.primitive_jvps[inverse_p] = _inverse_jvp


# ---- slogdet ------------------------------------------------------------------------------------------
def _slogdet_shape(a):
    _square("batchla_slogdet", "a", a)
    return ShapedArray(a.shape[:-2], a.dtype), ShapedArray(a.shape[:-2], a.dtype)


def _slogdet_composed(a):
    return _reference.slogdet_from_lu(*getrf(a)[:2])


def _slogdet_cuda_lowering(ctx, a):
    """Our CUDA slogdet where it wins, else getrf + a reduction of its diagonal. The CUDA handler
    takes a third result, (..., _ffi.slogdet_scratch_elems(n)) of a's dtype: the factors of the
    left-looking getrf class (n >= 65), which writes the slogdet itself; it is dropped here."""
    aval = ctx.avals_in[0]
    n = aval.shape[-1]
    if not _ffi.lu_fused_wins(aval.dtype, "slogdet", n):
        return mlir.lower_fun(_slogdet_composed, multiple_results=True)(ctx, a)
    scratch = ShapedArray(aval.shape[:-2] + (_ffi.slogdet_scratch_elems(aval.dtype, n),), aval.dtype)
    outs = ffi_lowering("batchla_slogdet")(ctx.replace(avals_out=[*ctx.avals_out, scratch]), a)
    return outs[:2]


slogdet_p = make_primitive(OpSpec(
    name="batchla_slogdet", operands=("a",), shape_rule=_slogdet_shape,
    reference=_reference.slogdet, multiple_results=True, cuda_lowering=_slogdet_cuda_lowering))


def slogdet(a):
    """(sign, logabsdet) of square matrices a (..., n, n), as jnp.linalg.slogdet computes them
    from the LU; a singular matrix gives sign 0 and logabsdet -inf."""
    return slogdet_p.bind(a)


def _slogdet_jvp(primals, tangents):
    # d log|det A| = tr(A^-1 dA); the sign is piecewise constant. The tangent goes through getrs,
    # which is linear in its rhs with a transpose rule, so reverse mode works.
    (a,), (da,) = primals, tangents
    sign, logabsdet = slogdet(a)
    lu, _, perm, _ = getrf(a)
    x = getrs(lu, perm, ad.instantiate_zeros(da))
    return (sign, logabsdet), (jnp.zeros_like(sign), jnp.trace(x, axis1=-2, axis2=-1))


ad.primitive_jvps[slogdet_p] = _slogdet_jvp


# ---- det of 2 x 2 and 3 x 3 matrices: jnp's closed forms in one streaming kernel -----------------
def _det_closed_shape(a):
    n = _square("batchla_det", "a", a)
    if n not in (2, 3):
        raise ValueError(f"batchla_det: a must hold 2 x 2 or 3 x 3 matrices (the closed forms), got "
                         f"{a.shape}")
    return (ShapedArray(a.shape[:-2], a.dtype),)


# The CUDA kernel of batchla_det (cuda/det_closed.cu) streams at 0.94-0.96 of the copy roofline on
# an H200, 2.3x (float32) / 2.7x (float64) jnp's fusion at n = 2 (bench/NOTES.md "det of 2 x 2 and
# 3 x 3 matrices"). JAX_BATCHLA_DET_CLOSED_KERNEL=0 at import lowers to jnp's closed form instead,
# for A/Bs.
DET_CLOSED_CUDA_KERNEL = os.environ.get("JAX_BATCHLA_DET_CLOSED_KERNEL", "1") == "1"

det_closed_p = make_primitive(OpSpec(
    name="batchla_det", operands=("a",), shape_rule=_det_closed_shape, reference=_reference.det_closed,
    cuda_lowering=conditional_cuda_lowering(
        "batchla_det", fits=lambda a: DET_CLOSED_CUDA_KERNEL, fallback=lambda a: (_reference.det_closed(a),))))


def det_closed(a):
    """det(a) of (..., 2, 2) or (..., 3, 3) a by jnp's closed forms: the same products and sums in
    the same order, each rounded (no FMA), so values are jnp's up to how XLA compiles jnp's."""
    return det_closed_p.bind(a)


def _det_closed_jvp(primals, tangents):
    # The closed form is a polynomial in a's entries: its tangent is jnp's, linear in da (so reverse
    # mode transposes it), and finite at singular matrices.
    (a,), (da,) = primals, tangents
    _, t = jax.jvp(_reference.det_closed, (a,), (ad.instantiate_zeros(da),))
    return det_closed(a), t


ad.primitive_jvps[det_closed_p] = _det_closed_jvp


# ---- det: sign * exp(logabsdet), with a JVP that holds at singular matrices -----------------------
def _det_and_cofactor_solve(a, b):
    """(det(a), adj(a) @ b), well defined for singular a (rank n - 1 or less): the adjugate is
    det(a) A^-1 = det(a) U^-1 L^-1 P. The last pivot u_nn is the one that vanishes at rank n - 1, and
    det(a) / u_nn = sign * prod_{j<n} u_jj, so u_nn is replaced by the inverse of that partial
    product and det(a) is applied to every row of L^-1 P b but the last. Matrices of rank < n - 1
    have adj = 0 (detected as a non-finite back substitution)."""
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, perm, _ = getrf(a)
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    swaps = jnp.count_nonzero(pivots != jnp.arange(n, dtype=pivots.dtype), axis=-1)
    partial = jnp.cumprod(diag, axis=-1) * (1 - 2 * (swaps % 2)).astype(a.dtype)[..., None]
    det_a = partial[..., -1]
    lu = lu.at[..., -1, -1].set(1 / partial[..., -2])
    probe = trsm(lu, jnp.ones(a.shape[:-1] + (1,), a.dtype), lower=False)
    low_rank = ~jnp.all(jnp.isfinite(probe), axis=(-2, -1))[..., None, None]
    x = jnp.where(low_rank, 0, jnp.take_along_axis(b, perm[..., :, None], axis=-2))
    x = trsm(lu, x, lower=True, unit_diag=True)
    x = jnp.concatenate([x[..., :-1, :] * det_a[..., None, None], x[..., -1:, :]], axis=-2)
    x = trsm(lu, x, lower=False)
    return det_a, jnp.where(low_rank, 0, x)


@jax.custom_jvp
def det(a):
    """det(a) = sign * exp(logabsdet) from the slogdet kernel (as jnp computes it for n > 3), with
    the adjugate JVP so singular matrices get finite derivatives."""
    sign, logabsdet = slogdet(a)
    return sign * jnp.exp(logabsdet)


@det.defjvp
def _det_jvp(primals, tangents):
    # d det(A) = tr(adj(A) dA), through the cofactor solve so singular matrices get finite
    # derivatives (as jnp's).
    (a,), (da,) = primals, tangents
    det_a, adj_da = _det_and_cofactor_solve(a, da)
    return det_a, jnp.trace(adj_da, axis1=-2, axis2=-1)
