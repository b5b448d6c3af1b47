"""The QR family (m >= n): geqrf (Householder factor), orgqr (form Q), ormqr (apply Q) and the
fused on-chip qr / qr_r (least squares: lstsq.py). Wide matrices never get here: the public layer
sends them to jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.core import ShapedArray
from jax.interpreters import ad

from .. import _compat, _ffi, _reference
from .cholesky import _mT
from .lu import gesv
from .primitive import OpSpec, conditional_cuda_lowering, make_primitive
from .triangular import trsm


def _tall(name, what, aval):
    m, n = aval.shape[-2:]
    if m < n:
        raise ValueError(f"{name}: {what} must have at least as many rows as columns (m >= n), "
                         f"got shape {aval.shape}")
    return m, n


def _reflectors(name, a, taus):
    """Checks reflector storage a (..., m, n) with taus (..., k), k <= n <= m."""
    m, n = _tall(name, "a", a)
    if taus.shape[-1] > n:
        raise ValueError(f"{name}: taus must have at most {n} entries (a's columns), got shape "
                         f"{taus.shape}")
    return m, n


def _cuda_lowering(target, size_test, fallback):
    """Our CUDA `target` where the module has it and size_test(dtype, m, n) holds for the first
    operand a (..., m, n); else `fallback`."""
    def fits(a, *others, **params):
        return _ffi.has_cuda_target(target) and size_test(a.dtype, *a.shape[-2:])

    return conditional_cuda_lowering(target, fits, fallback)


def _no_jvp(name, what):
    def rule(primals, tangents, **params):
        raise NotImplementedError(
            f"{name}: differentiation with respect to {what} is not implemented (jax defines none "
            "for its Householder primitives either); differentiate jax_batchla.linalg.qr instead")

    return rule


# ---- geqrf: A = Q R in Householder form ----------------------------------------------------------
def _geqrf_shape(a):
    _, n = _tall("batchla_geqrf", "a", a)
    return ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (n,), a.dtype)


geqrf_p = make_primitive(OpSpec(
    name="batchla_geqrf", operands=("a",), shape_rule=_geqrf_shape,
    reference=_reference.geqrf, multiple_results=True,
    cuda_lowering=_cuda_lowering("batchla_geqrf", _ffi.qr_supported, lambda a: _compat.geqrf(a))))


def geqrf(a):
    """(qr, taus): Householder QR of a (..., m, n), m >= n, as LAPACK geqrf: R on and above the
    diagonal of qr (R's diagonal signs are LAPACK's, hence jnp's), the reflectors' v_j below it
    (v_j(j) = 1 implied), taus (..., n); A = H_0 ... H_{n-1} R, H_j = I - tau_j v_j v_j^T."""
    return geqrf_p.bind(a)


ad.primitive_jvps[geqrf_p] = _no_jvp("batchla_geqrf", "its input")


# ---- orgqr: the first n columns of Q -------------------------------------------------------------
def _orgqr_shape(a, taus):
    _reflectors("batchla_orgqr", a, taus)
    return (ShapedArray(a.shape, a.dtype),)


orgqr_p = make_primitive(OpSpec(
    name="batchla_orgqr", operands=("a", "taus"), shape_rule=_orgqr_shape,
    reference=_reference.orgqr, vector_operands=("taus",),
    cuda_lowering=_cuda_lowering("batchla_orgqr", _ffi.qr_supported,
                                 lambda a, taus: [lax.linalg.householder_product(a, taus)])))


def orgqr(a, taus):
    """The first n columns of Q = H_0 ... H_{k-1} from the reflectors below the diagonal of
    a (..., m, n) and taus (..., k), k <= n <= m (LAPACK orgqr, jax's householder_product)."""
    return orgqr_p.bind(a, taus)


ad.primitive_jvps[orgqr_p] = _no_jvp("batchla_orgqr", "its reflectors")


# ---- ormqr: Q c or Q^T c without forming Q -------------------------------------------------------
def _ormqr_shape(a, taus, c, *, trans):
    m, _ = _reflectors("batchla_ormqr", a, taus)
    if c.shape[-2] != m:
        raise ValueError(f"batchla_ormqr: c must have {m} rows to match a, got shape {c.shape}")
    return (ShapedArray(c.shape, c.dtype),)


def _ormqr_via_complete_q(a, taus, c, *, trans):
    """Q (m x m) from jax's householder_product of the reflectors padded with zero columns."""
    m, n = a.shape[-2:]
    square = jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, m - n)])
    q = lax.linalg.householder_product(square, taus)
    return [jnp.matmul(_mT(q) if trans else q, c, precision=lax.Precision.HIGHEST)]


ormqr_p = make_primitive(OpSpec(
    name="batchla_ormqr", operands=("a", "taus", "c"), shape_rule=_ormqr_shape,
    reference=_reference.ormqr, vector_operands=("taus",), fold_rhs_batch=True,
    cuda_lowering=_cuda_lowering("batchla_ormqr", _ffi.qr_supported, _ormqr_via_complete_q)))


def ormqr(a, taus, c, *, trans: bool = False):
    """Q^T c if `trans` else Q c, Q = H_0 ... H_{k-1} (m x m) from a (..., m, n) and taus
    (..., k) as `orgqr`; c (..., m, p) (LAPACK ormqr, left side)."""
    return ormqr_p.bind(a, taus, c, trans=bool(trans))


def _ormqr_jvp(primals, tangents, *, trans):
    # Linear in c: d(Q c) = Q dc. The reflectors' tangents have no rule (as in jax).
    a, taus, c = primals
    da, dtaus, dc = tangents
    if type(da) is not ad.Zero or type(dtaus) is not ad.Zero:
        _no_jvp("batchla_ormqr", "its reflectors")(primals, tangents)
    return ormqr(a, taus, c, trans=trans), ormqr(a, taus, ad.instantiate_zeros(dc), trans=trans)


def _ormqr_transpose(ct, a, taus, c, *, trans):
    # Q is orthogonal: the adjoint of c -> Q c is c -> Q^T c.
    assert not ad.is_undefined_primal(a) and ad.is_undefined_primal(c)
    if type(ct) is ad.Zero:
        return [None, None, ad.Zero(c.aval)]
    return [None, None, ormqr(a, taus, ct, trans=not trans)]


ad.primitive_jvps[ormqr_p] = _ormqr_jvp
ad.primitive_transposes[ormqr_p] = _ormqr_transpose


# ---- qr / qr_r: fused on-chip reduced QR -------------------------------------------------------
def _qr_shape(a):
    _, n = _tall("batchla_qr", "a", a)
    return ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (n, n), a.dtype)


def _upper_square(h):
    return jnp.triu(h[..., :h.shape[-1], :])


def _qr_unfused(a):
    """geqrf + orgqr where our CUDA kernels take the size, else jax's own QR."""
    m, n = a.shape[-2:]
    if _ffi.qr_supported(a.dtype, m, n):
        h, taus = geqrf(a)
        return orgqr(h, taus), _upper_square(h)
    return lax.linalg.qr(a, full_matrices=False)


qr_p = make_primitive(OpSpec(
    name="batchla_qr", operands=("a",), shape_rule=_qr_shape,
    reference=_reference.qr, multiple_results=True,
    cuda_lowering=_cuda_lowering("batchla_qr", _ffi.qr_fused_fits, _qr_unfused)))


def qr(a):
    """(q, r): reduced QR of a (..., m, n), m >= n: q (..., m, n) with orthonormal columns,
    r (..., n, n) upper triangular with LAPACK's (jnp's) diagonal signs."""
    return qr_p.bind(a)


def _qr_tangents(q, r, da):
    """(dq, dr) of the reduced QR a = q r (m >= n, r invertible).

    da = dq r + q dr. With C = q^T da r^-1 and Omega = q^T dq (skew-symmetric, as q^T q = I):
    C = Omega + dr r^-1, whose second term is upper triangular, so Omega's strict lower part is
    C's: Omega = tril(C, -1) - tril(C, -1)^T. Then dr = (C - Omega) r and, with the part of dq
    outside span(q) being (I - q q^T) da r^-1, dq = q (Omega - C) + da r^-1."""
    da_rinv = _mT(trsm(r, _mT(da), lower=False, trans=True))  # da r^-1 = (r^-T da^T)^T
    c = _mT(q) @ da_rinv
    low = jnp.tril(c, -1)
    omega = low - _mT(low)
    return q @ (omega - c) + da_rinv, (c - omega) @ r


def _qr_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    q, r = qr(a)
    return (q, r), _qr_tangents(q, r, ad.instantiate_zeros(da))


ad.primitive_jvps[qr_p] = _qr_jvp


def _qr_r_shape(a):
    _, n = _tall("batchla_qr_r", "a", a)
    return (ShapedArray(a.shape[:-2] + (n, n), a.dtype),)


def _qr_r_blocked_wins(dtype, m, n):
    """Where qr_blocked.r_factor is the faster lowering (qr_blocked.wins), with one block of rows
    (m <= ROWS_PER_BLOCK), where it keeps LAPACK's signs of R."""
    from . import qr_blocked  # it builds on this module's geqrf

    return m <= qr_blocked.ROWS_PER_BLOCK and qr_blocked.wins("qr_r", dtype, m, n)


def _qr_r_fused(dtype, m, n):
    return _ffi.qr_fused_fits(dtype, m, n) and not _qr_r_blocked_wins(dtype, m, n)


def _qr_r_unfused(a):
    """The blocked QR where it wins, else geqrf's upper triangle."""
    if _qr_r_blocked_wins(a.dtype, *a.shape[-2:]):
        from . import qr_blocked

        return [qr_blocked.r_factor(a)]
    return [_upper_square(geqrf(a)[0])]


qr_r_p = make_primitive(OpSpec(
    name="batchla_qr_r", operands=("a",), shape_rule=_qr_r_shape, reference=_reference.qr_r,
    cuda_lowering=_cuda_lowering("batchla_qr_r", _qr_r_fused, _qr_r_unfused)))


def qr_r(a):
    """R (..., n, n) of the QR of a (..., m, n), m >= n, zeros below the diagonal; Q is never
    formed (nor, on chip, written)."""
    return qr_r_p.bind(a)


def _qr_r_jvp(primals, tangents):
    # dr needs q: differentiated, run the full QR once.
    (a,), (da,) = primals, tangents
    q, r = qr(a)
    return r, _qr_tangents(q, r, ad.instantiate_zeros(da))[1]


ad.primitive_jvps[qr_r_p] = _qr_r_jvp


# ---- complete Q (m x m) ---------------------------------------------------------------------------
def _complete_q(h, taus):
    """Q = H_0 ... H_{n-1} (m x m): orgqr of the reflectors padded with zero columns."""
    m, n = h.shape[-2:]
    return orgqr(jnp.pad(h, [(0, 0)] * (h.ndim - 1) + [(0, m - n)]), taus)


@jax.custom_jvp
def qr_complete(a):
    """(q, r): complete QR of a (..., m, n), m >= n: q (..., m, m) orthogonal, r (..., m, n)
    upper triangular (zero rows below n), as jnp.linalg.qr(a, mode='complete')."""
    h, taus = geqrf(a)
    return _complete_q(h, taus), jnp.triu(h)


@qr_complete.defjvp
def _qr_complete_jvp(primals, tangents):
    # q = [q1 q2] with q1 the reduced Q: (dq1, dr) as for the reduced QR (dr's last m - n rows stay
    # zero). q2's tangent follows arXiv:2409.13374 (the derivation jax's qr_jvp_rule uses):
    # with Z = q1[n:] (q1[:n] - I)^-1,
    # dq2 = dq1 Z^T - (q1 + q2 Z)(dq1[n:] - Z dq1[:n])^T.
    (a,), (da,) = primals, tangents
    q, r = qr_complete(a)
    m, n = a.shape[-2:]
    q1, q2 = q[..., :n], q[..., n:]
    dq1, dr = _qr_tangents(q1, r[..., :n, :], ad.instantiate_zeros(da))
    eye = jnp.eye(n, dtype=a.dtype)
    z_t, _ = gesv(_mT(q1[..., :n, :] - eye), _mT(q1[..., n:, :]))  # Z^T, (n, m - n)
    dq2 = dq1 @ z_t - (q1 + q2 @ _mT(z_t)) @ _mT(dq1[..., n:, :] - _mT(z_t) @ dq1[..., :n, :])
    dr = jnp.concatenate([dr, jnp.zeros(dr.shape[:-2] + (m - n, n), dr.dtype)], axis=-2)
    return (q, r), (jnp.concatenate([dq1, dq2], axis=-1), dr)
