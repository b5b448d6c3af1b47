"""The QR family through the public API and the primitives: scaled residuals for square and tall
matrices, LAPACK's reflectors exactly (geqrf / orgqr / ormqr), every mode of jnp.linalg.qr and
jax.scipy.linalg.qr, rank-deficient and non-finite inputs, batch shapes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg as sla
from conftest import DTYPES, THRESHOLD, batch_for, eps, gpu_devices, norm1

import jax_batchla.linalg as bla
import jax_batchla.scipy.linalg as bsl
from jax_batchla import _compat
from jax_batchla._ops import lstsq as lstsq_ops
from jax_batchla._ops import qr as qr_ops
from jax_batchla._ops import qr_blocked

SQUARE_SIZES = [1, 2, 3, 5, 8, 10, 11, 12, 13, 16, 17, 27, 32, 33, 40, 64, 100, 128, 256, 512]
TALL_SHAPES = [(2, 1), (7, 3), (64, 8), (150, 33), (300, 17), (1024, 32), (4096, 64)]


def qr_residuals(a, q, r):
    """(||A - QR||_1 / (n ||A||_1 eps), ||I - Q^T Q||_1 / (n eps)), maxima over the batch, in
    float64 (n = a's columns, eps of a's dtype)."""
    a64, q64, r64 = (np.asarray(x, np.float64) for x in (a, q, r))
    n = max(a64.shape[-1], 1)
    fact = norm1(a64 - q64 @ r64) / (n * np.maximum(norm1(a64), 1e-300) * eps(a.dtype))
    eye = np.eye(q64.shape[-1])
    orth = norm1(eye - np.swapaxes(q64, -1, -2) @ q64) / (n * eps(a.dtype))
    return float(np.max(fact, initial=0.0)), float(np.max(orth, initial=0.0))


def check_qr(a, q, r):
    fact, orth = qr_residuals(a, q, r)
    assert fact <= THRESHOLD and orth <= THRESHOLD, (fact, orth)
    np.testing.assert_array_equal(np.asarray(r), np.triu(np.asarray(r)))


def random(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SQUARE_SIZES)
def test_square_residuals(device, n, dtype):
    rng = np.random.default_rng(n)
    a = random(rng, (batch_for(n), n, n), dtype)
    q, r = jax.jit(bla.qr)(a)
    assert q.dtype == r.dtype == dtype and q.shape == r.shape == a.shape
    check_qr(a, q, r)
    # R's diagonal signs are LAPACK's, hence jnp's, exactly
    np.testing.assert_array_equal(np.sign(np.diagonal(np.asarray(r), axis1=-2, axis2=-1)),
                                  np.sign(np.diagonal(np.asarray(jnp.linalg.qr(a)[1]), axis1=-2, axis2=-1)))
    r_only = jax.jit(lambda x: bla.qr(x, mode="r"))(a)
    tol = 50 * n * eps(dtype) * float(np.max(np.abs(np.asarray(r)), initial=1.0))
    np.testing.assert_allclose(np.asarray(r_only), np.asarray(r), atol=tol, rtol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n", TALL_SHAPES)
def test_tall_residuals(device, m, n, dtype):
    rng = np.random.default_rng(m + n)
    batch = 1 if m * n > 10_000 else 3
    a = random(rng, (batch, m, n), dtype)
    q, r = bla.qr(a)
    assert q.shape == (batch, m, n) and r.shape == (batch, n, n)
    check_qr(a, q, r)
    np.testing.assert_array_equal(np.sign(np.diagonal(np.asarray(r), axis1=-2, axis2=-1)),
                                  np.sign(np.diagonal(np.asarray(jnp.linalg.qr(a)[1]), axis1=-2, axis2=-1)))
    if m <= 300:  # the complete Q: m x m
        qc, rc = bla.qr(a, mode="complete")
        assert qc.shape == (batch, m, m) and rc.shape == (batch, m, n)
        check_qr(a, qc, rc)


@pytest.mark.parametrize("m,n", [(1, 1), (4, 4), (9, 5), (33, 17), (40, 40), (100, 70), (128, 70)])
def test_geqrf_orgqr_ormqr_match_lapack(device, m, n):
    rng = np.random.default_rng(10 * m + n)
    a = rng.standard_normal((2, m, n))
    h, taus = qr_ops.geqrf(a)
    assert h.shape == a.shape and taus.shape == (2, n)
    jh, jtaus = _compat.geqrf(a)
    np.testing.assert_allclose(np.asarray(h), np.asarray(jh), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(taus), np.asarray(jtaus), rtol=1e-10, atol=1e-12)
    for b in range(2):
        (ref_h, ref_taus), _ = sla.qr(a[b], mode="raw")
        np.testing.assert_allclose(np.asarray(h[b]), ref_h, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(taus[b]), ref_taus, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(qr_ops.orgqr(h, taus)),
                               np.asarray(jax.lax.linalg.householder_product(jh, jtaus)), atol=1e-12)
    k = max(n - 1, 0)  # fewer reflectors than columns
    np.testing.assert_allclose(np.asarray(qr_ops.orgqr(h, taus[:, :k])),
                               np.asarray(jax.lax.linalg.householder_product(jh, jtaus[:, :k])),
                               atol=1e-12)
    q_full = np.stack([sla.qr(x)[0] for x in a])  # m x m
    c = rng.standard_normal((2, m, 3))
    np.testing.assert_allclose(np.asarray(qr_ops.ormqr(h, taus, c)), q_full @ c, atol=1e-12)
    np.testing.assert_allclose(np.asarray(qr_ops.ormqr(h, taus, c, trans=True)),
                               np.swapaxes(q_full, -1, -2) @ c, atol=1e-12)


def test_orgqr_ignores_the_upper_triangle(device):
    rng = np.random.default_rng(1)
    h, taus = qr_ops.geqrf(rng.standard_normal((2, 6, 4)))
    poisoned = np.asarray(h) + np.triu(np.full((6, 4), np.nan))
    np.testing.assert_array_equal(np.asarray(qr_ops.orgqr(poisoned, taus)),
                                  np.asarray(qr_ops.orgqr(h, taus)))


@pytest.mark.parametrize("shape", [(7, 4), (4, 4), (2, 5, 3), (3, 1, 1), (4, 6), (2, 3, 5)])
def test_every_mode_matches_jnp_and_scipy(device, shape):
    rng = np.random.default_rng(len(shape) + shape[-1])
    a = rng.standard_normal(shape)
    for mode in ("reduced", "complete", "r", "raw", "full"):
        ours, ref = bla.qr(a, mode=mode), jnp.linalg.qr(a, mode=mode)
        assert type(ours) is type(ref), mode
        for x, y in zip(jax.tree.leaves(ours), jax.tree.leaves(ref)):
            assert x.shape == y.shape, mode
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12,
                                       err_msg=mode)
    for mode in ("full", "r", "economic"):
        ours, ref = bsl.qr(a, mode=mode), jax.scipy.linalg.qr(a, mode=mode)
        assert type(ours) is tuple and len(ours) == len(ref), mode
        for x, y in zip(ours, ref):
            assert x.shape == y.shape, mode
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12,
                                       err_msg=mode)
    if len(shape) == 2:  # scipy itself on a single matrix
        for mode in ("full", "economic"):
            for x, y in zip(bsl.qr(a, mode=mode), sla.qr(a, mode=mode)):
                np.testing.assert_allclose(np.asarray(x), y, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(bsl.qr(a, mode="r")[0]), sla.qr(a, mode="r")[0],
                                   rtol=1e-10, atol=1e-12)


def test_pivoting_complex_and_integers_follow_jax(device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 3))
    for x, y in zip(bsl.qr(a, pivoting=True), jax.scipy.linalg.qr(a, pivoting=True)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)
    z = a + 1j * rng.standard_normal((5, 3))
    for x, y in zip(bla.qr(z), jnp.linalg.qr(z)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)
    ints = np.arange(12).reshape(4, 3) % 5
    q, r = bla.qr(ints)
    assert q.dtype == r.dtype == jnp.linalg.qr(ints)[0].dtype
    np.testing.assert_allclose(np.asarray(q @ r), ints, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rank_deficient_and_zero_columns(device, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 9, 6)).astype(dtype)
    a[0, :, 2] = 0  # a zero column
    a[1, :, 4] = a[1, :, 0] - 2 * a[1, :, 1]  # a dependent column
    a[2] = 0  # all zero
    a[3, :, 3:] = a[3, :, :3]  # rank 3
    h, taus = qr_ops.geqrf(a)
    assert np.all(np.isfinite(np.asarray(h))) and np.all(np.isfinite(np.asarray(taus)))
    assert np.asarray(taus)[0, 2] == 0 and np.all(np.asarray(taus)[2] == 0)  # no reflection
    q, r = bla.qr(a)
    assert np.all(np.isfinite(np.asarray(q))) and np.all(np.isfinite(np.asarray(r)))
    check_qr(a, q, r)
    assert np.asarray(r)[0, 2, 2] == 0
    np.testing.assert_array_equal(np.asarray(q)[2], np.eye(9, 6, dtype=dtype))  # all taus 0


# Powers of two whose squares underflow dlarfg's safe range or overflow the dtype: every reflector
# of such a matrix takes the rescaled branch (cuda/qr_small.cuh, QrSmallRescue; launch.h).
EXTREME_SCALES = {np.float32: (2.0**-64, 2.0**64), np.float64: (2.0**-500, 2.0**520)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n", [(5, 5), (24, 24), (32, 32), (48, 48), (100, 100), (200, 200),
                                 (600, 40)])
def test_tiny_and_huge_scales(device, m, n, dtype):
    rng = np.random.default_rng(m + n + 7)
    base = random(rng, (3, m, n), dtype)
    for scale in EXTREME_SCALES[np.dtype(dtype).type]:
        a = (base * dtype(scale)).astype(dtype)
        q, r = jax.jit(bla.qr)(a)
        check_qr(a, q, r)
        r_only = jax.jit(lambda x: bla.qr(x, mode="r"))(a)
        tol = 50 * n * eps(dtype) * float(np.max(np.abs(np.asarray(r))))
        np.testing.assert_allclose(np.asarray(r_only), np.asarray(r), atol=tol, rtol=0)
        # the same R as the unscaled matrix, scaled (exact powers of two)
        r_base = np.asarray(jax.jit(lambda x: bla.qr(x, mode="r"))(base), np.float64) * scale
        np.testing.assert_allclose(np.asarray(r_only, np.float64), r_base, atol=tol, rtol=0)


# 32 x 32 float64: the tile class's early-dots kernel and its square twin (cuda/tuning.h).
@pytest.mark.parametrize("m,n,dtype", [(10, 6, np.float32), (32, 32, np.float64)])
def test_nonfinite_does_not_touch_neighbours(device, m, n, dtype):
    rng = np.random.default_rng(4)
    clean = rng.standard_normal((7, m, n)).astype(dtype)
    bad = clean.copy()
    bad[1, 3, 2] = np.nan
    bad[4] = np.inf
    good = [0, 2, 3, 5, 6]
    for fn in (lambda x: bla.qr(x)[0], lambda x: bla.qr(x)[1], lambda x: bla.qr(x, mode="r"),
               lambda x: bla.qr(x, mode="complete")[0], lambda x: bla.qr(x, mode="raw")[0]):
        ours_clean, ours_bad = np.asarray(fn(clean)), np.asarray(fn(bad))
        np.testing.assert_array_equal(ours_bad[good], ours_clean[good])  # bit-identical
        assert not np.all(np.isfinite(ours_bad[1])) and not np.all(np.isfinite(ours_bad[4]))


@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (0,), (0, 3)])
def test_batch_shapes(device, shape):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((*shape, 6, 4))
    q, r = bla.qr(a)
    assert q.shape == (*shape, 6, 4) and r.shape == (*shape, 4, 4)
    assert bla.qr(a, mode="complete")[0].shape == (*shape, 6, 6)
    assert bla.qr(a, mode="r").shape == (*shape, 4, 4)
    h, taus = bla.qr(a, mode="raw")
    assert h.shape == (*shape, 4, 6) and taus.shape == (*shape, 4)
    if a.size:
        check_qr(a, q, r)


def test_empty_matrices(device):
    for shape in ((3, 0, 0), (2, 4, 0)):
        a = np.zeros(shape)
        for mode in ("reduced", "complete", "r", "raw"):
            ours, ref = bla.qr(a, mode=mode), jnp.linalg.qr(a, mode=mode)
            for x, y in zip(jax.tree.leaves(ours), jax.tree.leaves(ref)):
                assert x.shape == y.shape
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_lstsq_primitive_matches_numpy(device):
    rng = np.random.default_rng(6)
    for m, n, k in ((9, 4, 2), (5, 5, 1), (40, 17, 3), (7, 3, 0)):
        a, b = rng.standard_normal((2, m, n)), rng.standard_normal((2, m, k))
        x, rdiag, resid = lstsq_ops.lstsq(a, b)
        assert x.shape == (2, n, k) and rdiag.shape == (2, n) and resid.shape == (2, k)
        np.testing.assert_allclose(np.asarray(rdiag),
                                   np.diagonal(np.linalg.qr(a)[1], axis1=-2, axis2=-1), rtol=1e-10)
        for i in range(2):
            ref_x = np.linalg.lstsq(a[i], b[i], rcond=None)[0]
            np.testing.assert_allclose(np.asarray(x[i]), ref_x, rtol=1e-9, atol=1e-10)
            np.testing.assert_allclose(np.asarray(resid[i]), np.sum((b[i] - a[i] @ ref_x) ** 2, 0),
                                       rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("n", [27, 28, 32])
def test_r_of_a_large_batch(device, n):
    """mode 'r' on 20,011 float64 matrices: on CUDA each block of the tile class then factors
    many chunks, each read from a stage that one bulk copy refilled, and a partial last chunk.
    Every 97th matrix and the last three against LAPACK's R (signs included)."""
    rng = np.random.default_rng(n)
    a = random(rng, (20_011, n, n), np.float64)
    r = np.asarray(jax.jit(lambda x: bla.qr(x, mode="r"))(a))
    idx = np.r_[0:len(a):97, len(a) - 3:len(a)]
    ref = np.linalg.qr(a[idx], mode="r")
    tol = 30 * n * eps(np.float64) * np.abs(ref).max(axis=(-2, -1), keepdims=True)
    assert np.all(np.abs(r[idx] - ref) <= tol)
    assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_blocked_r_factor_is_lapacks(device, dtype):
    """qr_blocked.r_factor (qr mode 'r' for large m <= 512 on CUDA; called directly here, so on
    every device): R with LAPACK's signs, a short last panel (36 columns), a zero column, and a NaN
    matrix that leaves its neighbours bit-identical."""
    rng = np.random.default_rng(23)
    a = random(rng, (3, 300, 100), dtype)
    r_clean = np.asarray(jax.jit(qr_blocked.r_factor)(a))
    bad = a.copy()
    bad[1, :, 40] = 0.0
    bad[2, 5, 7] = np.nan
    r = np.asarray(jax.jit(qr_blocked.r_factor)(bad))
    np.testing.assert_array_equal(r[0], r_clean[0])
    for i in (0, 1):
        ref = np.linalg.qr(bad[i].astype(np.float64), mode="r")
        tol = 30 * 300 * eps(dtype) * np.abs(ref).max()
        np.testing.assert_allclose(r[i], ref, atol=tol)  # signs included
        assert np.all(np.tril(r[i], -1) == 0)
    assert r[1, 40, 40] == 0 and not np.any(np.isfinite(r[2, 7:, 7:].diagonal()))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_devices(), reason="no GPU")
def test_qr_r_lowering_follows_the_blocked_rule():
    def hlo(shape, dtype):
        with jax.default_device(gpu_devices()[0]):
            return jax.jit(qr_ops.qr_r).lower(jax.ShapeDtypeStruct(shape, dtype)).as_text()

    cases = [((64, 256, 256), np.float32, True), ((64, 256, 128), np.float64, True),
             ((64, 200, 160), np.float32, True), ((64, 128, 128), np.float32, False),
             ((64, 160, 160), np.float64, False), ((8, 64, 64), np.float64, False),
             ((64, 96, 96), np.float32, False)]
    for shape, dtype, blocked in cases:
        assert qr_ops._qr_r_blocked_wins(dtype, *shape[-2:]) == blocked
        assert ("batchla_qr_r" not in hlo(shape, dtype)) == blocked, (shape, dtype, blocked)
