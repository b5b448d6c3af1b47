"""potrf through the public API: scaled residuals for every n, batch shapes, failure semantics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import DTYPES, SIZES, THRESHOLD, batch_for, potrf_residual, spd

import jax_batchla.linalg as bla
import jax_batchla.scipy.linalg as bsl


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_cholesky_residual(device, n, dtype):
    rng = np.random.default_rng(n)
    a = spd(rng, (batch_for(n),), n, dtype)
    l = np.asarray(jax.jit(bla.cholesky)(a))
    assert l.dtype == dtype and l.shape == a.shape
    assert np.all(np.triu(l, 1) == 0), "strict upper triangle must be zero"
    assert potrf_residual(a, l) <= THRESHOLD


@pytest.mark.parametrize("shape", [(), (7,), (2, 3), (0,), (0, 3)])
def test_cholesky_batch_shapes(device, shape):
    rng = np.random.default_rng(1)
    a = spd(rng, shape, 5, np.float64)
    l = np.asarray(bla.cholesky(a))
    assert l.shape == a.shape
    if a.size:
        np.testing.assert_allclose(l, np.linalg.cholesky(a), rtol=1e-10, atol=1e-12)


def test_cholesky_matches_jnp_semantics(device):
    rng = np.random.default_rng(2)
    a = spd(rng, (4,), 6, np.float64)
    a[1, 2, 2] = -5.0  # not positive definite
    a[3, 0, 0] = np.nan
    for kw in [{}, {"upper": True}, {"symmetrize_input": False}]:
        ours, ref = np.asarray(bla.cholesky(a, **kw)), np.asarray(jnp.linalg.cholesky(a, **kw))
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_failures_do_not_touch_neighbours(device):
    rng = np.random.default_rng(3)
    clean = spd(rng, (9,), 12, np.float32)
    bad = clean.copy()
    bad[1, 4, 4] = -1.0
    bad[4] = np.inf
    bad[7, 3, 2] = np.nan
    bad[7, 2, 3] = np.nan
    l_clean, l_bad = np.asarray(bla.cholesky(clean)), np.asarray(bla.cholesky(bad))
    good = [0, 2, 3, 5, 6, 8]
    np.testing.assert_array_equal(l_bad[good], l_clean[good])  # bit-identical
    for i in (1, 4, 7):
        assert np.all(np.isnan(l_bad[i][np.tril_indices(12)])) and np.all(np.triu(l_bad[i], 1) == 0)


@pytest.mark.parametrize("lower", [True, False])
def test_scipy_cholesky_reads_one_triangle(device, lower):
    rng = np.random.default_rng(4)
    a = spd(rng, (3,), 7, np.float64)
    garbage = a.copy()
    other = np.triu_indices(7, 1) if lower else np.tril_indices(7, -1)
    garbage[:, other[0], other[1]] = 1e6
    c = np.asarray(bsl.cholesky(garbage, lower=lower))
    ref = np.asarray(jax.scipy.linalg.cholesky(a, lower=lower))
    np.testing.assert_allclose(c, ref, rtol=1e-10, atol=1e-12)
    cf, low = bsl.cho_factor(garbage, lower=lower)
    assert low is lower
    np.testing.assert_allclose(np.asarray(cf), ref, rtol=1e-10, atol=1e-12)


def test_integer_input_promotes_like_jnp(device):
    a = np.array([[4, 2], [2, 3]], dtype=np.int32)
    ours, ref = bla.cholesky(a), jnp.linalg.cholesky(a)
    assert ours.dtype == ref.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-6)


def test_complex_forwards_to_jax(device):
    a = np.array([[4, 1j], [-1j, 3]], dtype=np.complex64)
    np.testing.assert_allclose(np.asarray(bla.cholesky(a)), np.asarray(jnp.linalg.cholesky(a)), rtol=1e-6)
