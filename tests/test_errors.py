"""Bad input raises a clear Python error at trace time that names the argument."""

import types

import jax
import numpy as np
import pytest

import jax_batchla.linalg as bla
import jax_batchla.scipy.linalg as bsl

A = np.eye(3)
B = np.ones((3, 2))


@pytest.mark.parametrize("call, match", [
    (lambda: bla.cholesky(np.ones(3)), "argument a .*square"),
    (lambda: bla.cholesky(np.ones((2, 3))), "argument a .*square"),
    (lambda: bsl.cholesky(np.ones((4, 2, 3))), "argument a .*square"),
    (lambda: bsl.cho_solve((np.ones((3, 2)), True), B), "argument c .*square"),
    (lambda: bsl.cho_solve((A, True), np.ones((4, 2))), "argument b must have 3 rows"),
    (lambda: bsl.solve_triangular(A, np.ones((2, 2))), "argument b must have 3 rows"),
    (lambda: bsl.solve_triangular(A, np.float64(1.0)), "argument b must have rank"),
    (lambda: bsl.solve(A, np.ones((4,)), assume_a="pos"), "shapes a="),
    (lambda: bsl.solve(A, B, assume_a="spd"), "assume_a"),
    (lambda: bsl.solve_triangular(A, B, trans=3), "trans"),
    (lambda: bsl.cho_solve((np.ones((2, 3, 3)), True), np.ones((4, 3, 2))), "batch dims of argument b .*argument c"),
    (lambda: bla.solve(np.ones(3), np.ones(3)), "argument a"),
    (lambda: bla.solve(np.ones((3, 2)), np.ones(3)), "argument a .*square"),
    (lambda: bla.solve(A, np.ones((4, 2))), "argument b"),
    (lambda: bla.solve(A, np.ones(4)), "argument b"),
    (lambda: bla.solve(np.ones((2, 3, 3)), np.ones((4, 3, 2))), "batch dims of argument b .*argument a"),
    (lambda: bsl.solve(A, np.ones((4,))), "argument b"),
    (lambda: bla.inv(np.ones((2, 3))), "argument a .*square"),
    (lambda: bla.det(np.ones(3)), "argument a .*square"),
    (lambda: bla.slogdet(np.ones((3, 4))), "argument a .*square"),
    (lambda: bla.slogdet(A, method="svd"), "method"),
    (lambda: bsl.lu_factor(np.ones(3)), "argument a"),
    (lambda: bsl.lu(np.ones(3)), "argument a"),
    (lambda: bsl.lu_solve((A, np.zeros(3, np.int32)), np.ones((4, 2))), "argument b must have 3 rows"),
    (lambda: bsl.lu_solve((A, np.zeros(4, np.int32)), B), "argument piv .*K <= 3"),  # more than N
    (lambda: bsl.lu_solve((A, np.int32(0)), B), "argument piv .*shape"),
    (lambda: bsl.lu_solve((A, np.zeros((2, 3), np.int32)), np.ones((4, 3, 2))),
     "batch dims of argument piv"),
    (lambda: bsl.lu_solve((np.ones(3), np.zeros(3, np.int32)), np.ones(3)), "argument lu .*square"),
    (lambda: bsl.lu_solve((np.ones(3, np.complex64), np.zeros(3, np.int32)), np.ones(3)),
     "argument lu .*square"),  # the dtypes that forward to jax are checked too
    (lambda: bsl.lu_solve((A, np.zeros(3, np.int32)), B, trans=3), "trans"),
    (lambda: bsl.lu_solve((A, np.zeros(3, np.int32)), B, trans="N"), "trans"),
    (lambda: bsl.solve(np.ones((0, 0, 0, 0)), np.ones((3, 3, 0)), assume_a="pos"),
     "batch dims of argument b"),
])
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call", [
    lambda: bla.cholesky(np.array([["a", "b"], ["c", "d"]])),
    lambda: bsl.solve_triangular(A, np.array([["x"] * 2] * 3)),
    lambda: bsl.cho_solve((A, True), "not an array"),
    lambda: bla.solve(A, np.array([["x"] * 2] * 3)),
    lambda: bla.inv(np.array([["a", "b"], ["c", "d"]])),
    lambda: bla.det(np.array([["a", "b"], ["c", "d"]])),
])
def test_type_errors_name_the_argument(call):
    with pytest.raises(TypeError, match="argument (a|b)"):
        call()


@pytest.mark.parametrize("piv", [np.array(["x"] * 3), np.zeros(3), np.zeros(3, bool), "piv"])
def test_lu_solve_pivots_must_be_integers(piv):
    with pytest.raises(TypeError, match="argument piv"):
        bsl.lu_solve((A, piv), B)


def test_errors_happen_at_trace_time():
    with pytest.raises(ValueError, match="argument a"):
        jax.jit(bla.cholesky).lower(jax.ShapeDtypeStruct((4, 3), np.float32))


def test_lu_errors_happen_at_trace_time():
    for fn in (bla.inv, bla.det, bla.slogdet):
        with pytest.raises(ValueError, match="argument a"):
            jax.jit(fn).lower(jax.ShapeDtypeStruct((4, 3), np.float32))


# ---- QR family ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call, match", [
    (lambda: bla.qr(np.ones(3)), "argument a must have shape"),
    (lambda: bla.qr(np.float64(1.0)), "argument a must have shape"),
    (lambda: bla.qr(A, mode="economic"), "mode"),
    (lambda: bsl.qr(np.ones(3)), "argument a must have shape"),
    (lambda: bsl.qr(A, mode="raw"), "mode"),
    (lambda: bsl.qr(A, mode="reduced"), "mode"),
])
def test_qr_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call", [
    lambda: bla.qr(np.array([["a", "b"], ["c", "d"]])),
    lambda: bsl.qr(np.array([["a", "b"], ["c", "d"]])),
    lambda: bla.qr("not an array"),
])
def test_qr_type_errors_name_the_argument(call):
    with pytest.raises(TypeError, match="argument a"):
        call()


def test_qr_errors_happen_at_trace_time():
    for fn in (bla.qr, bsl.qr):
        with pytest.raises(ValueError, match="argument a"):
            jax.jit(fn).lower(jax.ShapeDtypeStruct((4,), np.float32))


@pytest.mark.parametrize("bind, match", [
    (lambda q: q.geqrf(np.ones((2, 3))), "batchla_geqrf: a must have at least as many rows"),
    (lambda q: q.qr(np.ones((2, 3))), "batchla_qr: a must have at least as many rows"),
    (lambda q: q.qr_r(np.ones((2, 3))), "batchla_qr_r: a must have at least as many rows"),
    (lambda q: q.orgqr(np.ones((4, 3)), np.ones(4)), "batchla_orgqr: taus must have at most 3"),
    (lambda q: q.ormqr(np.ones((4, 3)), np.ones(3), np.ones((3, 2))), "batchla_ormqr: c must have 4 rows"),
    (lambda q: q.lstsq(np.ones((4, 3)), np.ones((3, 2))), "batchla_lstsq: b must have 4 rows"),
    (lambda q: q.lstsq(np.ones((2, 3)), np.ones((2, 2))), "batchla_lstsq: a must have at least"),
])
def test_qr_primitive_shape_rules_name_the_operand(bind, match):
    from jax_batchla._ops import lstsq
    from jax_batchla._ops import qr as qr_ops

    with pytest.raises(ValueError, match=match):
        bind(types.SimpleNamespace(**vars(qr_ops), lstsq=lstsq.lstsq))


def test_qr_primitive_vector_operand_checks():
    from jax_batchla._ops import qr as qr_ops

    with pytest.raises(TypeError, match="batchla_orgqr: taus must be float64 of shape"):
        qr_ops.orgqr(np.ones((2, 4, 3)), np.ones((3, 3)))  # batch dims differ
    with pytest.raises(TypeError, match="batchla_orgqr: taus must be float64"):
        qr_ops.orgqr(np.ones((4, 3)), np.ones(3, np.float32))
