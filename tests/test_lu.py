"""The LU family through the public API: scaled residuals for every n, pivoting exactly as LAPACK,
ill-conditioned and singular inputs, jnp semantics of solve / inv / det / slogdet / lu_*."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg as sla
from conftest import DEVICES, DTYPES, SIZES, THRESHOLD, batch_for, eps, norm1, solve_residual

import jax_batchla.linalg as bla
import jax_batchla.scipy.linalg as bsl

LU_SIZES = SIZES + [48, 57, 72, 80, 300]  # 48, 57: the GPU tile class on two rows a lane, 72, 80: three


def general(rng, shape, n, dtype, cond=100.0):
    """Random square matrices with condition number `cond` (float64 rounded to `dtype`)."""
    u, _ = np.linalg.qr(rng.standard_normal((*shape, n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((*shape, n, n)))
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    return ((u * s[..., None, :]) @ v).astype(dtype)


def pivot_every_step(rng, n, dtype):
    """A = P M with M = L U (|l_ij| < 1, so M needs no pivoting) and P a cyclic shift of the rows:
    partial pivoting must swap row j with row n - 1 at every step j < n - 1. Off-diagonals scaled
    by 1/sqrt(n) keep A well conditioned."""
    s = 1 / np.sqrt(n)
    l = np.tril(rng.uniform(-s, s, (n, n)), -1) + np.eye(n)
    u = np.triu(rng.uniform(-s, s, (n, n)), 1) + np.diag(rng.uniform(1, 2, n))
    return np.roll(l @ u, -1, axis=0).astype(dtype)


def lu_residual(a, lu, perm):
    """max over the batch of ||PA - LU||_1 / (n ||A||_1 eps), in float64."""
    a64, lu64 = np.asarray(a, np.float64), np.asarray(lu, np.float64)
    n = a64.shape[-1]
    l = np.tril(lu64, -1) + np.eye(n)
    pa = np.take_along_axis(a64, np.asarray(perm)[..., :, None], axis=-2)
    r = norm1(pa - l @ np.triu(lu64)) / (n * norm1(a64) * eps(a.dtype))
    return float(np.max(r, initial=0.0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LU_SIZES)
def test_lu_and_solve_residuals(device, n, dtype):
    rng = np.random.default_rng(n)
    a = general(rng, (batch_for(n),), n, dtype)
    lu, piv = jax.jit(bsl.lu_factor)(a)
    p, l, u = bsl.lu(a)
    perm = np.argmax(np.asarray(p), axis=-2)  # p[perm[i], i] = 1
    assert lu.dtype == dtype and piv.dtype == np.int32 and piv.shape == a.shape[:-1]
    assert lu_residual(a, lu, perm) <= THRESHOLD
    np.testing.assert_array_equal(np.asarray(l), np.tril(np.asarray(lu), -1) + np.eye(n, dtype=dtype))
    np.testing.assert_array_equal(np.asarray(u), np.triu(np.asarray(lu)))
    b = rng.standard_normal((batch_for(n), n, 3)).astype(dtype)
    x = jax.jit(bla.solve)(a, b)
    assert x.dtype == dtype and solve_residual(a, x, b, dtype) <= THRESHOLD
    xs = bsl.lu_solve((lu, piv), b)
    assert solve_residual(a, xs, b, dtype) <= THRESHOLD
    xt = bsl.lu_solve((lu, piv), b, trans=1)
    assert solve_residual(np.swapaxes(a, -1, -2), xt, b, dtype) <= THRESHOLD
    inv = np.asarray(jax.jit(bla.inv)(a), np.float64)
    eye = np.broadcast_to(np.eye(n), a.shape)
    assert solve_residual(a, inv, eye, dtype) <= THRESHOLD


@pytest.mark.parametrize("dtype,cond", [(np.float32, 1e6), (np.float64, 1e12)])
@pytest.mark.parametrize("n", [5, 16, 32, 33, 64, 128])
def test_ill_conditioned(device, n, dtype, cond):
    rng = np.random.default_rng(100 + n)
    a = general(rng, (3,), n, dtype, cond=cond)
    b = rng.standard_normal((3, n, 1)).astype(dtype)
    lu, piv = bsl.lu_factor(a)
    perm = np.asarray(jax.lax.linalg.lu_pivots_to_permutation(piv, n))
    assert lu_residual(a, lu, perm) <= THRESHOLD
    assert solve_residual(a, bla.solve(a, b), b, dtype) <= THRESHOLD


@pytest.mark.parametrize("n", [2, 3, 7, 16, 31, 32, 33, 64, 100, 129, 300])
def test_pivots_match_lapack(device, n):
    rng = np.random.default_rng(n)
    a = np.stack([general(rng, (), n, np.float64), pivot_every_step(rng, n, np.float64)])
    lu, piv = bsl.lu_factor(a)
    for m in range(2):
        ref_lu, ref_piv = sla.lu_factor(a[m])
        np.testing.assert_array_equal(np.asarray(piv[m]), ref_piv)
        np.testing.assert_allclose(np.asarray(lu[m]), ref_lu, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(piv[1]), [n - 1] * n)


@pytest.mark.parametrize("n", [8, 24, 32, 40, 64])
def test_pivot_ties_match_lapack(device, n):
    """Entries in {-2, ..., 2}: most columns hold several rows of equal |a| at every step, so the
    pivot search must pick LAPACK's first maximum in the current row order (the GPU kernels' tie
    paths: equal keys, then the smallest position)."""
    rng = np.random.default_rng(7 + n)
    a = rng.integers(-2, 3, (4, n, n)).astype(np.float64)
    lu, piv = bsl.lu_factor(a)
    for m in range(a.shape[0]):
        ref_lu, ref_piv = sla.lu_factor(a[m], check_finite=False)
        np.testing.assert_array_equal(np.asarray(piv[m]), ref_piv)
        np.testing.assert_allclose(np.asarray(lu[m]), ref_lu, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [2, 3, 9, 33, 100, 256])  # tiny, small, warp, the left class's two bands
def test_lu_factor_skips_the_permutation(device, n, dtype):
    """lu_factor returns no permutation, so its getrf call asks for none (perm of shape (..., 0))
    and the kernels do not write it; lu and pivots are those of the full getrf."""
    from jax_batchla._ops import lu as luops
    if device == "cpu" and n > 33:
        pytest.skip("the size classes are GPU kernels")
    a = general(np.random.default_rng(n), (3,), n, dtype)
    text = jax.jit(bsl.lu_factor).lower(a).as_text()
    assert "batchla_getrf" in text and f"tensor<3x0xi32>" in text
    lu, piv = bsl.lu_factor(a)
    full = luops.getrf(a)
    np.testing.assert_array_equal(np.asarray(lu), np.asarray(full[0]))
    np.testing.assert_array_equal(np.asarray(piv), np.asarray(full[1]))
    assert luops.getrf(a, permutation=False)[2].shape == (3, 0)
    assert lu_residual(a, lu, full[2]) <= THRESHOLD


@pytest.mark.parametrize("dtype", DTYPES)
# 80 / 88: the float64 tile class's last n for getrf and slogdet and the left class past it
@pytest.mark.parametrize("n", [32, 64, 80, 88, 96, 100, 128, 129, 200, 256])
@pytest.mark.parametrize("platform", [p for p in DEVICES if p.id == "gpu"])
def test_fused_or_composed_as_the_table_picks(platform, n, dtype):
    """solve / inv / slogdet lower to their fused kernel where lu_fused_wins says it is faster,
    else to getrf + getrs (or getrf's diagonal); both give the same answers to rounding."""
    from jax_batchla import _ffi
    rng = np.random.default_rng(n)
    a = general(rng, (3,), n, dtype)
    b = rng.standard_normal((3, n, 1)).astype(dtype)
    with jax.default_device(jax.devices(platform)[0]):
        for name, fn, args, target in (("solve", bla.solve, (a, b), "batchla_gesv"),
                                        ("inverse", bla.inv, (a,), "batchla_inverse"),
                                        ("slogdet", bla.slogdet, (a,), "batchla_slogdet")):
            hlo = jax.jit(fn).lower(*args).as_text()
            fused = _ffi.lu_fused_wins(dtype, name, n)
            assert (target in hlo) == fused and (("batchla_getrf" in hlo) != fused), name
        assert solve_residual(a, bla.solve(a, b), b, dtype) <= THRESHOLD
        eye = np.broadcast_to(np.eye(n), a.shape)
        assert solve_residual(a, np.asarray(bla.inv(a), np.float64), eye, dtype) <= THRESHOLD
        sign, logdet = bla.slogdet(a)
        ref_sign, ref_logdet = np.linalg.slogdet(a.astype(np.float64))
        np.testing.assert_array_equal(np.asarray(sign), ref_sign)
        np.testing.assert_allclose(np.asarray(logdet), ref_logdet, rtol=0, atol=n * 50 * eps(dtype))


def test_ties_pick_the_first_row(device):
    a = np.array([[[1.0, 2.0], [-1.0, 3.0]], [[0.0, 1.0], [0.0, 2.0]]])
    lu, piv = bsl.lu_factor(a)
    np.testing.assert_array_equal(np.asarray(piv), [[0, 1], [0, 1]])
    np.testing.assert_array_equal(np.asarray(lu), np.asarray(jax.scipy.linalg.lu_factor(a)[0]))


@pytest.mark.parametrize("dtype", DTYPES)
# 72: the tile class on three rows a lane; 96 / 100: the left class's float64 split panels (a warp
# per 32 rows / four warps) and slogdet keeping L by input row
@pytest.mark.parametrize("n", [12, 72, 96, 100])
def test_singular_and_nonfinite_do_not_touch_neighbours(device, n, dtype):
    rng = np.random.default_rng(3)
    clean = general(rng, (9,), n, dtype)
    bad = clean.copy()
    bad[1, :, 4] = 0.0  # exactly singular: a zero column
    bad[2, 5] = bad[2, 7]  # exactly singular: two equal rows
    bad[4] = np.inf
    bad[7, 3, 2] = np.nan
    b = rng.standard_normal((9, n, 2)).astype(dtype)
    good = [0, 3, 5, 6, 8]
    for fn in (lambda a: bsl.lu_factor(a)[0], lambda a: bla.solve(a, b), bla.inv, bla.det,
               lambda a: bla.slogdet(a)[1]):
        ours_clean, ours_bad = np.asarray(fn(clean)), np.asarray(fn(bad))
        np.testing.assert_array_equal(ours_bad[good], ours_clean[good])  # bit-identical
    assert np.asarray(bla.det(bad))[1] == 0
    sign, logdet = bla.slogdet(bad)
    assert sign[1] == 0 and logdet[1] == -np.inf
    x = np.asarray(bla.solve(bad, b))
    assert not np.all(np.isfinite(x[1])) and not np.all(np.isfinite(x[4]))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9, 33, 100])
def test_det_slogdet_match_jnp(device, n):
    rng = np.random.default_rng(n)
    a = general(rng, (5,), n, np.float64) * 3
    a[0] = 0.0  # singular
    np.testing.assert_allclose(np.asarray(bla.det(a)), np.asarray(jnp.linalg.det(a)), rtol=1e-10,
                               atol=1e-300)
    s, l = bla.slogdet(a)
    rs, rl = jnp.linalg.slogdet(a)
    np.testing.assert_array_equal(np.asarray(s), np.asarray(rs))
    np.testing.assert_allclose(np.asarray(l), np.asarray(rl), rtol=1e-10)
    assert type(bla.slogdet(a)).__name__ == "SlogdetResult"
    s_qr, _ = bla.slogdet(a[1:], method="qr")
    np.testing.assert_array_equal(np.asarray(s_qr), np.asarray(rs[1:]))


def det_closed_numpy(m):
    """jnp.linalg.det's closed forms evaluated by numpy: every product and sum rounded on its own,
    in jnp's order (what batchla_det computes, bit for bit)."""
    e = lambda i, j: m[..., i, j]  # noqa: E731
    if m.shape[-1] == 2:
        return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0)
    return (e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0) + e(0, 2) * e(1, 0) * e(2, 1)
            - e(0, 2) * e(1, 1) * e(2, 0) - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [2, 3])
# (2500,): two whole tiles of the CUDA kernel's 16-byte path and a partial one (scalar path)
@pytest.mark.parametrize("shape", [(), (0,), (3, 5), (2500,)])
def test_det_closed_forms(device, n, dtype, shape):
    """det of 2 x 2 / 3 x 3 matrices: our kernel, bit for bit jnp's closed forms as written (XLA may
    contract jnp's own into FMAs: within one rounding of each product there); NaN / inf / singular
    matrices give what the formula gives, only in their own result; jnp's gradients; vmap."""
    rng = np.random.default_rng(10 * n + len(shape))
    a = rng.standard_normal(shape + (n, n)).astype(dtype)
    if shape == (2500,):
        a[3], a[4, 0, 0], a[5], a[1700, 1] = np.nan, np.inf, 0.0, a[1700, 0]  # the last: singular
    from jax_batchla._ops.lu import DET_CLOSED_CUDA_KERNEL
    ours = device == "cpu" or DET_CLOSED_CUDA_KERNEL  # else XLA's fusion of jnp's expressions runs
    det = jax.jit(bla.det)
    assert ("batchla_det" in det.lower(a).as_text()) == ours
    got = np.asarray(det(a))
    assert got.shape == shape and got.dtype == dtype
    if ours:
        np.testing.assert_array_equal(got, det_closed_numpy(a))
    products = np.abs(a).max(axis=(-2, -1), initial=0.0) ** n * (2 if n == 2 else 6)
    ref = np.asarray(jnp.linalg.det(a))
    finite = np.isfinite(ref)
    assert np.all(np.abs(got[finite] - ref[finite]) <= 4 * eps(dtype) * products[finite])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    if shape == (2500,):
        assert got[5] == 0 and np.isnan(got[3]) and (got[1700] == 0 or not ours)
        small = a[:8]
        tol = 50 * eps(dtype)
        np.testing.assert_allclose(np.asarray(jax.grad(lambda x: bla.det(x).sum())(small[6:])),
                                   np.asarray(jax.grad(lambda x: jnp.linalg.det(x).sum())(small[6:])),
                                   rtol=tol, atol=tol)
        mapped = np.asarray(jax.vmap(bla.det)(a.reshape(50, 50, n, n))).ravel()
        if ours:
            np.testing.assert_array_equal(mapped, got)
        else:  # XLA compiles the two shapes' fusions on its own
            np.testing.assert_allclose(mapped, got, rtol=tol, atol=tol)


def test_det_closed_refuses_other_sizes():
    from jax_batchla._ops import det_closed
    with pytest.raises(ValueError, match="2 x 2 or 3 x 3"):
        det_closed(np.zeros((2, 4, 4)))


def test_solve_shapes_match_jnp(device):
    rng = np.random.default_rng(5)
    a = general(rng, (2, 3), 4, np.float64)
    for b in (rng.standard_normal(4), rng.standard_normal((4, 2)), rng.standard_normal((3, 4, 5)),
              rng.standard_normal((2, 3, 4, 1))):
        ours, ref = bla.solve(a, b), jnp.linalg.solve(a, b)
        assert ours.shape == ref.shape
        np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-10)
    for assume_a in ("gen", "sym", "her"):
        s = a + np.swapaxes(a, -1, -2)
        b = rng.standard_normal((4, 2))
        np.testing.assert_allclose(np.asarray(bsl.solve(s, b, assume_a=assume_a)),
                                   np.asarray(jax.scipy.linalg.solve(s, b, assume_a=assume_a)),
                                   rtol=1e-10)


@pytest.mark.parametrize("permute_l", [False, True])
def test_scipy_lu_matches_jax(device, permute_l):
    rng = np.random.default_rng(6)
    a = general(rng, (), 6, np.float64)
    for ours, ref in zip(bsl.lu(a, permute_l=permute_l), jax.scipy.linalg.lu(a, permute_l=permute_l)):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-12, atol=1e-14)
    rect = rng.standard_normal((5, 3))  # non-square forwards to jax
    for ours, ref in zip(bsl.lu(rect), jax.scipy.linalg.lu(rect)):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(ref))


def test_lu_solve_broadcasts_and_matches_jax(device):
    rng = np.random.default_rng(7)
    a = general(rng, (3,), 5, np.float64)
    lu_piv = bsl.lu_factor(a)
    ref_lu_piv = jax.scipy.linalg.lu_factor(a)
    for b in (rng.standard_normal(5), rng.standard_normal((5, 2)), rng.standard_normal((4, 3, 5, 2))):
        for trans in (0, 1, 2):
            ours = bsl.lu_solve(lu_piv, b, trans=trans)
            ref = jax.scipy.linalg.lu_solve(ref_lu_piv, b, trans=trans)
            assert ours.shape == ref.shape
            np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-10)


@pytest.mark.parametrize("shape", [(), (7,), (2, 3), (0,), (0, 3)])
def test_batch_shapes(device, shape):
    rng = np.random.default_rng(8)
    a = general(rng, shape, 5, np.float64)
    b = rng.standard_normal((*shape, 5, 2))
    assert bla.solve(a, b).shape == b.shape
    assert bla.inv(a).shape == a.shape
    assert bla.det(a).shape == shape and bla.slogdet(a)[0].shape == shape
    lu, piv = bsl.lu_factor(a)
    assert lu.shape == a.shape and piv.shape == (*shape, 5)
    if a.size:
        np.testing.assert_allclose(np.asarray(bla.inv(a)), np.linalg.inv(a), rtol=1e-9, atol=1e-12)


def test_empty_matrices(device):
    a = np.zeros((3, 0, 0))
    assert bla.solve(a, np.zeros((3, 0, 2))).shape == (3, 0, 2)
    assert bla.inv(a).shape == (3, 0, 0)
    np.testing.assert_array_equal(np.asarray(bla.det(a)), np.ones(3))
    np.testing.assert_array_equal(np.asarray(bla.slogdet(a)[1]), np.zeros(3))
