"""The three lowerings compute the same thing: the pure-jnp reference (used on platforms we have no
kernels for), the C++ CPU handlers and, on a GPU, the CUDA kernels."""

import types

import jax
import numpy as np
import pytest
import scipy.linalg as sla
from conftest import DEVICES, THRESHOLD, lower_triangular, potrf_residual, solve_residual, spd

from jax_batchla import _ops, _reference

SIZES = [1, 2, 3, 5, 8, 13, 16, 31, 32, 33, 48, 64, 65, 100, 128, 129, 200, 256, 300, 512]


def _inputs(n, dtype, batch=2):
    rng = np.random.default_rng(n)
    a = spd(rng, (batch,), n, dtype)
    l = lower_triangular(rng, (batch,), n, dtype)
    b = rng.standard_normal((batch, n, 2)).astype(dtype)
    return a, l, b


def _general(n, dtype, batch):
    """Nonsymmetric, well-conditioned, pivoting needed (rows shuffled)."""
    rng = np.random.default_rng(1000 + n)
    g = rng.standard_normal((batch, n, n)) + 2 * np.sqrt(n) * np.eye(n)
    return g[:, rng.permutation(n)].astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 5, 16, 33, 64])
def test_reference_residuals(n, dtype):
    a, l, b = _inputs(n, dtype)
    lf, info = jax.jit(_reference.potrf)(a)
    assert potrf_residual(a, lf) <= THRESHOLD and not np.any(info)
    for lower in (True, False):
        for trans in (False, True):
            m = l if lower else np.swapaxes(l, -1, -2)
            x = _reference.trsm(m, b, lower=lower, trans=trans, unit_diag=False)
            op = np.swapaxes(m, -1, -2) if trans else m
            assert solve_residual(op, x, b, dtype) <= THRESHOLD
        c = np.linalg.cholesky(a.astype(np.float64)).astype(dtype)
        x = _reference.potrs(c if lower else np.swapaxes(c, -1, -2), b, lower=lower)
        assert solve_residual(a, x, b, dtype) <= THRESHOLD
        x, info = _reference.posv(a, b, lower=lower)
        assert solve_residual(a, x, b, dtype) <= THRESHOLD and not np.any(info)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 5, 16, 33, 64])
def test_reference_lu_family(n, dtype):
    a = _general(n, dtype, 2)
    _, _, b = _inputs(n, dtype)
    lu, pivots, perm, info = jax.jit(_reference.getrf)(a)
    assert not np.any(info)
    for m in range(2):
        ref_lu, ref_piv = sla.lu_factor(a[m].astype(np.float64))
        np.testing.assert_array_equal(np.asarray(pivots[m]), ref_piv)
        np.testing.assert_allclose(np.asarray(lu[m]), ref_lu, rtol=1e-3 if dtype == np.float32 else 1e-10,
                                   atol=1e-4 if dtype == np.float32 else 1e-12)
    for trans in (False, True):
        x = _reference.getrs(lu, perm, b, trans=trans)
        assert solve_residual(np.swapaxes(a, -1, -2) if trans else a, x, b, dtype) <= THRESHOLD
    x, info = _reference.gesv(a, b)
    assert solve_residual(a, x, b, dtype) <= THRESHOLD
    sign, logdet = _reference.slogdet(a)
    ref_sign, ref_logdet = np.linalg.slogdet(a.astype(np.float64))
    np.testing.assert_array_equal(np.asarray(sign), ref_sign)
    np.testing.assert_allclose(np.asarray(logdet), ref_logdet, rtol=1e-4, atol=1e-4)


def test_reference_failure_semantics():
    a, _, b = _inputs(6, np.float64, batch=3)
    a[1, 3, 3] = -1.0
    lf, info = _reference.potrf(a)
    assert list(np.asarray(info)) == [0, 4, 0]
    assert np.all(np.isnan(np.asarray(lf)[1][np.tril_indices(6)]))
    x, info = _reference.posv(a, b, lower=True)
    assert np.all(np.isnan(np.asarray(x)[1])) and np.all(np.isfinite(np.asarray(x)[[0, 2]]))


def _all_ops(a, l, b):
    asym = a + 1e-3 * np.triu(np.ones_like(a), 1)  # not symmetric: symmetrize must average
    out = {"potrf": _ops.potrf(a), "potrf_sym": _ops.potrf(asym, symmetrize=True),
           "posv": _ops.posv(a, b, lower=True),
           "potrs": _ops.potrs(np.linalg.cholesky(a.astype(np.float64)).astype(a.dtype), b, lower=True)}
    for lower, trans, unit in [(True, False, False), (True, True, True), (False, False, True), (False, True, False)]:
        m = l if lower else np.swapaxes(l, -1, -2)
        out[f"trsm{lower:d}{trans:d}{unit:d}"] = _ops.trsm(m, b, lower=lower, trans=trans, unit_diag=unit)
    g = _general(a.shape[-1], a.dtype, a.shape[0])
    lu, pivots, perm, info = out["getrf"] = _ops.getrf(g)
    out["getrs"] = _ops.getrs(lu, perm, b)
    out["getrs_t"] = _ops.getrs(lu, perm, b, trans=True)
    out["gesv"] = _ops.gesv(g, b)
    out["inverse"] = _ops.inverse(g)
    out["slogdet"] = _ops.slogdet(g)
    return jax.tree.map(np.asarray, out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("platform", [p for p in DEVICES if p.id == "gpu"])
def test_cuda_matches_cpu(platform, n, dtype):
    a, l, b = _inputs(n, dtype, batch=3)
    with jax.default_device(jax.devices("cpu")[0]):
        cpu = _all_ops(a, l, b)
    with jax.default_device(jax.devices(platform)[0]):
        gpu = _all_ops(a, l, b)
    tol = 50 * n * np.finfo(dtype).eps
    for name in cpu:
        for c, g in zip(jax.tree.leaves(cpu[name]), jax.tree.leaves(gpu[name])):
            if c.dtype == np.int32:
                np.testing.assert_array_equal(g, c, err_msg=name)
            else:
                scale = max(1.0, float(np.max(np.abs(c))))
                np.testing.assert_allclose(g, c, atol=tol * scale, rtol=tol, err_msg=f"{name} n={n}")


# ---- QR family ---------------------------------------------------------------------------------
QR_SHAPES = [(1, 1), (2, 1), (5, 3), (8, 8), (16, 16), (33, 17), (40, 40), (64, 64), (100, 7), (128, 128)]
# GPU only: the size-class edges and the shapes beyond our kernels (jax's QR / the composition)
QR_GPU_SHAPES = QR_SHAPES + [(256, 256), (512, 512), (1024, 32), (4096, 64), (5000, 8), (600, 520)]


def _primitives():
    """The QR-family primitives (qr.py, and lstsq in lstsq.py) under the reference's names."""
    from jax_batchla._ops import lstsq, qr

    return types.SimpleNamespace(**{name: getattr(qr, name) for name in ("geqrf", "orgqr", "ormqr", "qr", "qr_r")},
                                 lstsq=lstsq.lstsq)


def _rdiag_magnitudes(x, rdiag, resid):
    # lstsq's rdiag signs are the tree's on the blocked lowering (_ops/lstsq.py): compare |R(j, j)|
    return x, abs(rdiag), resid


def _qr_ops(ops, a, c):
    """Every QR-family entry point of `ops` (_primitives() or the reference), in one jit."""

    def run(a, c):
        h, taus = ops.geqrf(a)
        return {"geqrf": (h, taus), "orgqr": ops.orgqr(h, taus), "ormqr": ops.ormqr(h, taus, c),
                "ormqr_t": ops.ormqr(h, taus, c, trans=True), "qr": ops.qr(a), "qr_r": ops.qr_r(a),
                "lstsq": _rdiag_magnitudes(*ops.lstsq(a, c))}

    return jax.tree.map(np.asarray, jax.jit(run)(a, c))


def _qr_inputs(m, n, dtype, batch):
    rng = np.random.default_rng(m * 1000 + n)
    return rng.standard_normal((batch, m, n)).astype(dtype), rng.standard_normal((batch, m, 2)).astype(dtype)


def _assert_close(ours, ref, dtype, size, what):
    tol = 50 * size * np.finfo(dtype).eps
    for name in ref:
        for x, y in zip(jax.tree.leaves(ours[name]), jax.tree.leaves(ref[name])):
            scale = max(1.0, float(np.max(np.abs(y), initial=0.0)))
            np.testing.assert_allclose(x, y, atol=tol * scale, rtol=tol, err_msg=f"{name} {what}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,n", QR_SHAPES)
def test_cpu_qr_matches_reference(m, n, dtype):
    qr_ops = _primitives()

    a, c = _qr_inputs(m, n, dtype, batch=2)
    with jax.default_device(jax.devices("cpu")[0]):
        ours = _qr_ops(qr_ops, a, c)
        ref = _qr_ops(_reference, a, c)
    _assert_close(ours, ref, dtype, m, f"m={m} n={n}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,n", QR_GPU_SHAPES)
@pytest.mark.parametrize("platform", [p for p in DEVICES if p.id == "gpu"])
def test_cuda_qr_matches_cpu(platform, m, n, dtype):
    qr_ops = _primitives()

    a, c = _qr_inputs(m, n, dtype, batch=3 if m * n <= 64 * 64 else 1)
    with jax.default_device(jax.devices("cpu")[0]):
        cpu = _qr_ops(qr_ops, a, c)
    with jax.default_device(jax.devices(platform)[0]):
        gpu = _qr_ops(qr_ops, a, c)
    _assert_close(gpu, cpu, dtype, m, f"m={m} n={n}")


def test_reference_qr_failure_semantics():
    rng = np.random.default_rng(7)
    clean = rng.standard_normal((4, 7, 5))
    clean[3, :, 1] = 0  # a zero column: tau = 0, no NaN
    bad = clean.copy()
    bad[1, 4, 0] = np.nan
    bad[2, 0, 3] = np.inf
    run = jax.jit(lambda a: (_reference.geqrf(a), _reference.qr(a)))
    ours_clean, ours_bad = (jax.tree.map(np.asarray, run(x)) for x in (clean, bad))
    for c, b in zip(jax.tree.leaves(ours_clean), jax.tree.leaves(ours_bad)):
        np.testing.assert_array_equal(b[[0, 3]], c[[0, 3]])
        assert np.all(np.isfinite(c)) and not np.all(np.isfinite(b[1])) and not np.all(np.isfinite(b[2]))
    assert ours_clean[0][1][3, 1] == 0
