"""Bad input raises a clear Python error at trace time that names the argument."""

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
    (lambda: bsl.cho_solve((np.ones((3, 2)), True), B), "argument a .*square"),
    (lambda: bsl.cho_solve((A, True), np.ones((4, 2))), "argument b must have 3 rows"),
    (lambda: bsl.solve_triangular(A, np.ones((2, 2))), "argument b must have 3 rows"),
    (lambda: bsl.solve_triangular(A, np.float64(1.0)), "argument b must have rank"),
    (lambda: bsl.solve(A, np.ones((4,)), assume_a="pos"), "shapes a="),
    (lambda: bsl.solve(A, B, assume_a="spd"), "assume_a"),
    (lambda: bsl.solve_triangular(A, B, trans=3), "trans"),
    (lambda: bsl.cho_solve((np.ones((2, 3, 3)), True), np.ones((4, 3, 2))), "shape|broadcast|incompatible"),
])
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call", [
    lambda: bla.cholesky(np.array([["a", "b"], ["c", "d"]])),
    lambda: bsl.solve_triangular(A, np.array([["x"] * 2] * 3)),
    lambda: bsl.cho_solve((A, True), "not an array"),
])
def test_type_errors_name_the_argument(call):
    with pytest.raises(TypeError, match="argument (a|b)"):
        call()


def test_errors_happen_at_trace_time():
    with pytest.raises(ValueError, match="argument a"):
        jax.jit(bla.cholesky).lower(jax.ShapeDtypeStruct((4, 3), np.float32))
