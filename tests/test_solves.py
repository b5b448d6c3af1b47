"""trsm, potrs (cho_solve) and posv (solve(assume_a='pos')) through the public API."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import DTYPES, SIZES, THRESHOLD, batch_for, lower_triangular, solve_residual, spd

import jax_batchla.scipy.linalg as bsl


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_solve_triangular_residual(device, n, dtype):
    rng = np.random.default_rng(n)
    l = lower_triangular(rng, (batch_for(n),), n, dtype)
    b = rng.standard_normal((batch_for(n), n, 3)).astype(dtype)
    for lower in (True, False):
        a = l if lower else np.swapaxes(l, -1, -2)
        for trans, unit in [(0, False), (1, False), ("N", True), ("T", True)]:
            x = np.asarray(bsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit))
            op = np.tril(a) if lower else np.triu(a)
            if unit:
                op = op.copy()
                op[..., np.arange(n), np.arange(n)] = 1
            if trans in (1, "T"):
                op = np.swapaxes(op, -1, -2)
            assert solve_residual(op, x, b, dtype) <= THRESHOLD, (lower, trans, unit)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_cho_solve_and_posv_residual(device, n, dtype):
    rng = np.random.default_rng(n + 1000)
    a = spd(rng, (batch_for(n),), n, dtype)
    b = rng.standard_normal((batch_for(n), n, 2)).astype(dtype)
    for lower in (True, False):
        c, _ = bsl.cho_factor(a, lower=lower)
        x = np.asarray(jax.jit(lambda c, b: bsl.cho_solve((c, lower), b))(c, b))
        assert solve_residual(a, x, b, dtype) <= THRESHOLD
        x = np.asarray(jax.jit(lambda a, b: bsl.solve(a, b, lower=lower, assume_a="pos"))(a, b))
        assert solve_residual(a, x, b, dtype) <= THRESHOLD


@pytest.mark.parametrize("b_shape", [(6,), (6, 1), (6, 4), (3, 6, 4), (2, 3, 6, 4), (1, 6, 2)])
def test_rhs_shapes_and_broadcasting_match_jax(device, b_shape):
    rng = np.random.default_rng(5)
    a = spd(rng, (3,), 6, np.float64)
    l = np.linalg.cholesky(a)
    b = rng.standard_normal(b_shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        pairs = [
            (bsl.cho_solve((l, True), b), jax.scipy.linalg.cho_solve((l, True), b)),
            (bsl.solve_triangular(l, b, lower=True), jax.scipy.linalg.solve_triangular(l, b, lower=True)),
        ]
    if b.ndim in (a.ndim, a.ndim - 1) and b.shape[a.ndim - 2] == 6:  # jax's shape rule for solve
        # (we also broadcast batch dims of size 1, where jax's 'pos' path refuses them)
        pairs.append((bsl.solve(a, b, assume_a="pos"), jax.scipy.linalg.solve(a, b)))
    else:
        with pytest.raises(ValueError, match="shapes"):
            bsl.solve(a, b, assume_a="pos")
    for ours, ref in pairs:
        assert ours.shape == ref.shape
        np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-9, atol=1e-9)


def test_unbatched_factor_batched_rhs(device):
    rng = np.random.default_rng(6)
    a = spd(rng, (), 5, np.float64)
    b = rng.standard_normal((4, 7, 5, 2))
    x = bsl.cho_solve((np.linalg.cholesky(a), True), b)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-9)


def test_posv_failure_is_per_matrix(device):
    rng = np.random.default_rng(7)
    a = spd(rng, (6,), 9, np.float32)
    b = rng.standard_normal((6, 9, 2)).astype(np.float32)
    bad = a.copy()
    bad[2, 5, 5] = -3.0
    bad[4, 1, 0] = bad[4, 0, 1] = np.nan
    x_clean = np.asarray(bsl.solve(a, b, assume_a="pos"))
    x_bad = np.asarray(bsl.solve(bad, b, assume_a="pos"))
    good = [0, 1, 3, 5]
    np.testing.assert_array_equal(x_bad[good], x_clean[good])
    assert np.all(np.isnan(x_bad[[2, 4]]))
    ref = np.asarray(jax.scipy.linalg.solve(bad, b, assume_a="pos"))
    np.testing.assert_array_equal(np.isnan(x_bad), np.isnan(ref))


def test_singular_triangular_gives_inf_nan_per_matrix(device):
    rng = np.random.default_rng(8)
    l = lower_triangular(rng, (3,), 4, np.float64)
    b = rng.standard_normal((3, 4, 1))
    l_bad = l.copy()
    l_bad[1, 2, 2] = 0.0
    x = np.asarray(bsl.solve_triangular(l_bad, b, lower=True))
    np.testing.assert_array_equal(x[[0, 2]], np.asarray(bsl.solve_triangular(l, b, lower=True))[[0, 2]])
    assert not np.all(np.isfinite(x[1]))


def test_other_assume_a_forward_to_jax(device):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2, 5, 5))
    a = a + np.swapaxes(a, -1, -2)
    b = rng.standard_normal((2, 5, 1))
    for assume_a in ("gen", "sym"):
        np.testing.assert_allclose(np.asarray(bsl.solve(a, b, assume_a=assume_a)),
                                   np.asarray(jnp.linalg.solve(a, b)), rtol=1e-8)


def test_beyond_the_tuned_sizes(device):
    """n past the kernels' size classes still works (the CUDA lowering falls back where needed)."""
    rng = np.random.default_rng(10)
    n = 800  # past the CUDA potrf kernels for float64 (768): jax Cholesky fallback
    a = spd(rng, (1,), n, np.float64)
    b = rng.standard_normal((1, n, 2))
    l = np.asarray(jax.jit(lambda a: jnp.linalg.cholesky(a))(a))
    ours = np.asarray(jax.jit(bsl.cholesky, static_argnames="lower")(a, lower=True))
    np.testing.assert_allclose(ours, l, rtol=1e-8, atol=1e-10)
    x = np.asarray(bsl.solve(a, b, assume_a="pos"))
    assert solve_residual(a, x, b, np.float64) <= THRESHOLD
    x = np.asarray(bsl.cho_solve((ours, True), b))
    assert solve_residual(a, x, b, np.float64) <= THRESHOLD
    x = np.asarray(bsl.solve_triangular(ours, b, lower=True, trans=1))
    assert solve_residual(np.swapaxes(ours, -1, -2), x, b, np.float64) <= THRESHOLD
