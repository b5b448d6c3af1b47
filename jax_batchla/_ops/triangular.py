"""trsm: batched triangular solve op(A) X = B (left side)."""

from __future__ import annotations

import jax.numpy as jnp
from jax.core import ShapedArray
from jax.interpreters import ad

from .. import _reference
from .primitive import OpSpec, make_primitive


def _trsm_shape(a, b, *, lower, trans, unit_diag):
    n = a.shape[-1]
    if a.shape[-2] != n:
        raise ValueError(f"batchla_trsm: a must be square, got shape {a.shape}")
    if b.shape[-2] != n:
        raise ValueError(f"batchla_trsm: b must have {n} rows to match a, got shape {b.shape}")
    return (ShapedArray(b.shape, b.dtype),)


trsm_p = make_primitive(OpSpec(
    name="batchla_trsm", operands=("a", "b"), shape_rule=_trsm_shape,
    reference=_reference.trsm, fold_rhs_batch=True))


def trsm(a, b, *, lower: bool, trans: bool = False, unit_diag: bool = False):
    """X = op(A)^-1 B with A the lower (or upper) triangle of `a`; shapes (..., n, n), (..., n, k)."""
    return trsm_p.bind(a, b, lower=bool(lower), trans=bool(trans), unit_diag=bool(unit_diag))


def triangle(a, *, lower: bool, unit_diag: bool = False):
    """The part of `a` that trsm reads: its lower/upper triangle (strict when unit_diag)."""
    return jnp.tril(a, -1 if unit_diag else 0) if lower else jnp.triu(a, 1 if unit_diag else 0)


def _trsm_jvp(primals, tangents, *, lower, trans, unit_diag):
    # x = op(A)^-1 b  =>  dx = op(A)^-1 (db - op(dA) x), dA restricted to the triangle read.
    a, b = primals
    da, db = tangents
    x = trsm(a, b, lower=lower, trans=trans, unit_diag=unit_diag)
    rhs = ad.instantiate_zeros(db)
    if type(da) is not ad.Zero:
        dtri = triangle(da, lower=lower, unit_diag=unit_diag)
        rhs = rhs - (jnp.swapaxes(dtri, -1, -2) if trans else dtri) @ x
    return x, trsm(a, rhs, lower=lower, trans=trans, unit_diag=unit_diag)


def _trsm_transpose(ct, a, b, *, lower, trans, unit_diag):
    # Linear in b only: the adjoint of op(A)^-1 is op(A)^-T.
    assert not ad.is_undefined_primal(a) and ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    return [None, trsm(a, ct, lower=lower, trans=not trans, unit_diag=unit_diag)]


ad.primitive_jvps[trsm_p] = _trsm_jvp
ad.primitive_transposes[trsm_p] = _trsm_transpose
