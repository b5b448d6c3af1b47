"""lstsq through the public function: least-squares residuals against float64 NumPy, jnp's outputs
(shapes, dtypes, rank, singular values, numpy_resid), the fallback to jnp's SVD algorithm for
rank-deficient and wide input, and the transforms (jit, vmap, jvp, grad)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import DTYPES, THRESHOLD, eps, gpu_devices, norm1
from jax.test_util import check_grads

from jax_batchla._lstsq import lstsq
from jax_batchla._ops import lstsq as lstsq_ops
from jax_batchla._ops import qr_blocked

# (m, n, k); (600, 128, 2) takes the blocked form on CUDA (_ops/lstsq.py blocked_wins)
SHAPES = [(5, 5, 1), (8, 3, 2), (64, 16, 1), (300, 17, 3), (1024, 32, 1), (600, 128, 2)]


def tall(rng, shape, m, n, dtype, cond=100.0):
    """Random (m, n) matrices, m >= n, with singular values from 1 down to 1/cond."""
    u, _ = np.linalg.qr(rng.standard_normal((*shape, m, n)))
    v, _ = np.linalg.qr(rng.standard_normal((*shape, n, n)))
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    return ((u * s[..., None, :]) @ v).astype(dtype)


def normal_equations_residual(a, x, b, dtype):
    """max over the batch of ||A^T (b - A x)||_1 / (||A||_1 (||A||_1 ||x||_1 + ||b||_1) m eps) in
    float64: small iff x solves the least-squares problem to working precision."""
    a64, x64, b64 = (np.asarray(v, np.float64) for v in (a, x, b))
    at = np.swapaxes(a64, -1, -2)
    scale = norm1(a64) * (norm1(a64) * norm1(x64) + norm1(b64)) * a64.shape[-2] * eps(dtype)
    return float(np.max(norm1(at @ (b64 - a64 @ x64)) / scale, initial=0.0))


def jnp_lstsq(a, b, rcond=None):
    """jnp.linalg.lstsq on every matrix of a batch."""
    f = lambda a_, b_: jnp.linalg.lstsq(a_, b_, rcond)  # noqa: E731
    for _ in range(np.ndim(a) - 2):
        f = jax.vmap(f)
    return f(a, b)


def assert_same_as_jnp(ours, ref, rtol):
    """The four outputs agree with jnp's in shape, dtype and value."""
    for name, o, r in zip(("x", "resid", "rank", "s"), ours, ref):
        assert o.shape == r.shape and o.dtype == r.dtype, (name, o.shape, o.dtype, r.shape, r.dtype)
        scale = max(float(np.max(np.abs(r), initial=0.0)), 1.0)
        np.testing.assert_allclose(np.asarray(o), np.asarray(r), rtol=rtol, atol=rtol * scale,
                                   err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_least_squares_residuals(device, m, n, k, dtype):
    rng = np.random.default_rng(m + n + k)
    a = tall(rng, (2,), m, n, dtype)
    b = rng.standard_normal((2, m, k)).astype(dtype)
    x, resid, rank, s = jax.jit(lstsq)(a, b)
    assert x.shape == (2, n, k) and x.dtype == dtype
    assert normal_equations_residual(a, x, b, dtype) <= THRESHOLD
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    x_ref = np.stack([np.linalg.lstsq(a64[i], b64[i], rcond=None)[0] for i in range(2)])
    # cond(A) = 100 and |b - A x| ~ |b|: x is accurate to about cond^2 eps
    np.testing.assert_allclose(np.asarray(x, np.float64), x_ref,
                               atol=1e4 * 30 * eps(dtype) * np.abs(x_ref).max())
    r64 = np.sum((b64 - a64 @ x_ref) ** 2, axis=-2)
    np.testing.assert_allclose(np.asarray(resid, np.float64), r64, rtol=30 * m * eps(dtype),
                               atol=30 * m * eps(dtype) * np.sum(b64 ** 2, axis=-2).max())
    np.testing.assert_array_equal(np.asarray(rank), [n, n])
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a64, compute_uv=False),
                               rtol=30 * n * eps(dtype))
    xv = lstsq(a[0], b[0, :, 0])[0]  # 1-D b, one matrix
    assert xv.shape == (n,) and normal_equations_residual(a[0], xv[:, None], b[0, :, :1], dtype) <= THRESHOLD


@pytest.mark.parametrize("m,n", [(6, 3), (4, 4), (3, 5)])
@pytest.mark.parametrize("vector", [True, False])
def test_outputs_match_jnp(m, n, vector):
    rng = np.random.default_rng(m * n)
    a = rng.standard_normal((m, n))
    b = rng.standard_normal((m,) if vector else (m, 2))
    assert_same_as_jnp(lstsq(a, b), jnp.linalg.lstsq(a, b), rtol=1e-10)
    assert_same_as_jnp(lstsq(a, b, numpy_resid=True), jnp.linalg.lstsq(a, b, numpy_resid=True),
                       rtol=1e-10)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    assert_same_as_jnp(lstsq(a32, b32), jnp.linalg.lstsq(a32, b32), rtol=1e-4)


def test_batched_outputs_match_jnp(device):
    rng = np.random.default_rng(7)
    a = tall(rng, (2, 3), 7, 4, np.float64)
    for b in (rng.standard_normal((2, 3, 7)), rng.standard_normal((2, 3, 7, 2)),
              rng.standard_normal((1, 3, 7, 2))):  # batch dims broadcast
        bb = np.broadcast_to(b, a.shape[:-1] + b.shape[a.ndim - 1:])
        assert_same_as_jnp(lstsq(a, b), jnp_lstsq(a, bb), rtol=1e-10)


def test_rank_deficient_matrix_gets_jnps_solution(device):
    rng = np.random.default_rng(11)
    a = tall(rng, (3,), 9, 4, np.float64)
    a[1, :, 3] = a[1, :, 0]  # rank 3: the QR solution would be inf/NaN or huge
    b = rng.standard_normal((3, 9, 2))
    ours, ref = lstsq(a, b), jnp_lstsq(a, b)
    assert_same_as_jnp(ours, ref, rtol=1e-12)
    assert np.asarray(ours[2]).tolist() == [4, 3, 4]
    assert np.all(np.isfinite(np.asarray(ours[0])))
    x, resid, _, _ = jax.jit(jax.vmap(lstsq))(a, b)  # the same under vmap
    assert_same_as_jnp((x, resid), ref[:2], rtol=1e-12)


def test_fallback_in_chunks_equals_one_call(monkeypatch):
    """The SVD fallback runs _FALLBACK_CHUNK matrices at a time (the last chunk overlapping the one
    before): values, forward and reverse derivatives equal those of one unchunked call."""
    import jax_batchla._lstsq as impl
    rng = np.random.default_rng(12)
    a = tall(rng, (11,), 6, 3, np.float64)
    a[[2, 9], :, 2] = a[[2, 9], :, 0]  # rank deficient: the fallback runs
    b = rng.standard_normal((11, 6, 2))
    loss = lambda a_, b_: jnp.sum(lstsq(a_, b_)[0] ** 2)  # noqa: E731
    whole = lstsq(a, b)[:2], jax.grad(loss, (0, 1))(a, b)
    monkeypatch.setattr(impl, "_FALLBACK_CHUNK", 4)  # 3 chunks: rows 0-3, 4-7, 7-10
    chunked = lstsq(a, b)[:2], jax.grad(loss, (0, 1))(a, b)
    for x, y in zip(jax.tree.leaves(chunked), jax.tree.leaves(whole)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12, atol=1e-13)


def test_wide_and_empty_inputs_use_jnp():
    rng = np.random.default_rng(12)
    for a, b in ((rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 3, 2))),
                 (np.zeros((4, 0)), rng.standard_normal((4, 2))),
                 (np.zeros((0, 3)), np.zeros((0, 1)))):
        assert_same_as_jnp(lstsq(a, b), jnp_lstsq(a, b), rtol=1e-12)


@pytest.mark.parametrize("rcond", [None, -1.0, 1e-4, 1e-2])
def test_rcond(device, rcond):
    # A = Q diag(d): R's diagonal is +-d, the singular values are d. rcond = 1e-2 cuts the last one.
    rng = np.random.default_rng(13)
    q, _ = np.linalg.qr(rng.standard_normal((2, 10, 3)))
    a = q * np.array([1.0, 0.5, 1e-3])
    b = rng.standard_normal((2, 10, 1))
    ours, ref = lstsq(a, b, rcond), jnp_lstsq(a, b, rcond)
    assert_same_as_jnp(ours, ref, rtol=1e-10)
    assert np.asarray(ours[2]).tolist() == ([2, 2] if rcond == 1e-2 else [3, 3])
    assert_same_as_jnp(jax.jit(lstsq)(a, b, rcond), ref, rtol=1e-10)  # rcond traced


def test_vmap_equals_batched_call(device):
    rng = np.random.default_rng(14)
    a = tall(rng, (3, 2), 8, 3, np.float64)
    b = rng.standard_normal((3, 2, 8, 2))
    x, resid, rank, s = lstsq(a, b)
    for f, args, want in (
            (jax.vmap(lstsq), (a, b), x),
            (jax.vmap(jax.vmap(lstsq)), (a, b), x),
            (jax.vmap(lstsq, in_axes=(None, 0)), (a[0], b), lstsq(np.broadcast_to(a[0], a.shape), b)[0]),
            (jax.vmap(lstsq, in_axes=(1, None)), (a, b[:, 0]), jnp.moveaxis(lstsq(a, b[:, :1])[0], 1, 0)),
            (jax.vmap(lambda a_, b_: lstsq(a_, b_, rcond=0.0)[:1], in_axes=(0, 2), out_axes=1),
             (a[:, 0], jnp.moveaxis(b[:, 0], 0, 2)), jnp.moveaxis(x[:, 0], 0, 1))):
        np.testing.assert_allclose(np.asarray(jax.jit(f)(*args)[0]), np.asarray(want), rtol=1e-12, atol=1e-12)


def test_vmap_keeps_one_branch():
    # Under vmap the full-rank test stays one scalar for the whole batch: the compiled program
    # keeps a conditional (a batched predicate would turn it into a select of both branches).
    rng = np.random.default_rng(15)
    a, b = tall(rng, (4,), 8, 3, np.float64), rng.standard_normal((4, 8, 2))
    for f in (jax.vmap(lambda a_, b_: lstsq(a_, b_)[0]),
              jax.vmap(jax.grad(lambda a_, b_: lstsq(a_, b_)[0].sum())),
              jax.vmap(lambda a_, b_: jax.jvp(lambda t: lstsq(t, b_)[0], (a_,), (a_,))[1])):
        assert "stablehlo.case" in jax.jit(f).lower(a, b).as_text()


def test_unused_svd_is_removed_under_jit():
    # s (and rank) need an SVD of their own; the only SVD left when just x is used is the one in
    # the fallback branch.
    rng = np.random.default_rng(16)
    a, b = tall(rng, (2,), 8, 3, np.float64), rng.standard_normal((2, 8, 1))

    def svd_calls(f):
        hlo = jax.jit(f).lower(a, b).compile().as_text()
        return len(re.findall(r'custom_call_target="[^"]*(?:gesdd|gesvd|svd)[^"]*"', hlo, re.I))

    assert svd_calls(lambda a_, b_: lstsq(a_, b_)) == svd_calls(lambda a_, b_: lstsq(a_, b_)[0]) + 1


@pytest.mark.parametrize("m,n,k,vector", [(6, 3, 2, False), (4, 4, 1, True)])
def test_gradients_full_rank(device, m, n, k, vector):
    rng = np.random.default_rng(17 + m)
    a = tall(rng, (2,), m, n, np.float64, cond=5.0)
    b = rng.standard_normal((2, m) if vector else (2, m, k))
    check_grads(lambda a_, b_: lstsq(a_, b_)[:2], (a, b), order=1, modes=("fwd", "rev"))
    g = jax.grad(lambda a_, b_: jnp.sum(lstsq(a_, b_)[0] ** 2), argnums=(0, 1))
    gv = jax.vmap(g)(a, b)
    for x, y in zip(g(a, b), gv):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)


def test_second_derivatives_match_jnp():
    rng = np.random.default_rng(21)
    a, b = tall(rng, (), 6, 3, np.float64), rng.standard_normal(6)
    hess = lambda f: jax.hessian(lambda a_: jnp.sum(f(a_, b)[0] ** 3))(a)  # noqa: E731
    np.testing.assert_allclose(np.asarray(hess(lstsq)), np.asarray(hess(jnp.linalg.lstsq)),
                               rtol=1e-9, atol=1e-10)


def test_gradients_on_the_fallback_are_jnps(device):
    rng = np.random.default_rng(18)
    a = tall(rng, (2,), 7, 3, np.float64)
    a[0, :, 2] = a[0, :, 1]
    b = rng.standard_normal((2, 7, 2))
    da, db = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    ours = jax.jvp(lambda a_, b_: lstsq(a_, b_)[:2], (a, b), (da, db))
    ref = jax.jvp(lambda a_, b_: jnp_lstsq(a_, b_)[:2], (a, b), (da, db))
    for x, y in zip(jax.tree.leaves(ours), jax.tree.leaves(ref)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)
    loss = lambda f: lambda a_, b_: jnp.sum(f(a_, b_)[0] ** 2)  # noqa: E731
    for x, y in zip(jax.grad(loss(lstsq), (0, 1))(a, b), jax.grad(loss(jnp_lstsq), (0, 1))(a, b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonfinite_matrix_does_not_touch_neighbours(device, dtype):
    rng = np.random.default_rng(19)
    clean = tall(rng, (5,), 12, 4, dtype)
    b = rng.standard_normal((5, 12, 2)).astype(dtype)
    bad = clean.copy()
    bad[1, 3, 2] = np.nan
    bad[3] = np.inf
    good = [0, 2, 4]
    x_clean, x_bad = np.asarray(lstsq(clean, b)[0]), np.asarray(lstsq(bad, b)[0])
    np.testing.assert_array_equal(x_bad[good], x_clean[good])  # fast path: bit-identical
    assert not np.any(np.isfinite(x_bad[1])) and not np.any(np.isfinite(x_bad[3]))
    # With a rank-deficient matrix in the batch as well, everything goes to jnp's SVD per matrix:
    # the finite matrices still get their own (jnp's) solutions.
    bad[4, :, 1] = 0.0
    x_fb, x_ref = np.asarray(lstsq(bad, b)[0]), np.asarray(jnp_lstsq(bad, b)[0])
    tol = 1e3 * 30 * eps(dtype)
    np.testing.assert_allclose(x_fb, x_ref, rtol=tol, atol=tol)  # NaN where jnp has NaN
    np.testing.assert_allclose(x_fb[[0, 2]], x_clean[[0, 2]], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows_per_block", [512, 64])
def test_blocked_form(device, dtype, rows_per_block):
    """The blocked form (few large matrices on CUDA; called directly here, so on every device),
    with one block of rows or a tree of three (150 rows padded to 192): a last panel of 6 columns,
    a zero column (tau = 0, R(j, j) = 0), NaN in one matrix, and the other matrices bit-identical
    to a batch without the bad ones."""
    blocked = jax.jit(lambda a, b: qr_blocked.lstsq(a, b, rows_per_block=rows_per_block))
    rng = np.random.default_rng(22)
    m, n, k = 150, 70, 2
    a = tall(rng, (3,), m, n, dtype)
    b = rng.standard_normal((3, m, k)).astype(dtype)
    x_clean = np.asarray(blocked(a, b)[0])
    bad = a.copy()
    bad[1, :, 40] = 0.0
    bad[2, 7, 9] = np.nan
    x, rdiag, resid = (np.asarray(v) for v in blocked(bad, b))
    assert x.shape == (3, n, k) and rdiag.shape == (3, n) and resid.shape == (3, k)
    np.testing.assert_array_equal(x[0], x_clean[0])
    assert normal_equations_residual(a[:1], x[:1], b[:1], dtype) <= THRESHOLD
    a64, b64 = a[0].astype(np.float64), b[0].astype(np.float64)
    np.testing.assert_allclose(np.abs(rdiag[0]), np.abs(np.diagonal(np.linalg.qr(a64)[1])),
                               rtol=30 * m * eps(dtype))
    x_ref = np.linalg.lstsq(a64, b64, rcond=None)[0]
    np.testing.assert_allclose(resid[0], np.sum((b64 - a64 @ x_ref) ** 2, axis=0),
                               rtol=30 * m * eps(dtype), atol=30 * m * eps(dtype) * np.sum(b64 ** 2))
    assert rdiag[1, 40] == 0 and not np.all(np.isfinite(x[1]))
    assert not np.any(np.isfinite(x[2]))
    # through the public function the zero column goes to jnp's SVD, as on the fused path
    np.testing.assert_allclose(np.asarray(lstsq(bad[1], b[1])[0]), np.asarray(jnp_lstsq(bad[1], b[1])[0]),
                               rtol=1e3 * 30 * eps(dtype), atol=1e3 * 30 * eps(dtype))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_devices(), reason="no GPU")
def test_large_matrices_lower_to_the_blocked_form():
    def hlo(batch, m, n):
        shapes = (jax.ShapeDtypeStruct((batch, m, n), np.float32),
                  jax.ShapeDtypeStruct((batch, m, 1), np.float32))
        with jax.default_device(gpu_devices()[0]):
            return jax.jit(lstsq_ops.lstsq).lower(*shapes).as_text()

    large = hlo(4, 512, 128)  # the blocked form: one geqrf per 32-column panel (one 512-row block)
    assert "batchla_lstsq" not in large and large.count("@batchla_geqrf(") == 4, large
    assert "batchla_lstsq" in hlo(1024, 256, 64)  # below blocked_wins: the fused kernel


def test_other_dtypes_follow_jnp():
    rng = np.random.default_rng(20)
    a = rng.standard_normal((6, 3)) + 1j * rng.standard_normal((6, 3))
    b = rng.standard_normal((6, 2)) + 1j * rng.standard_normal((6, 2))
    assert_same_as_jnp(lstsq(a, b), jnp.linalg.lstsq(a, b), rtol=1e-12)
    ai, bi = np.arange(12).reshape(4, 3) ** 2, np.arange(4)  # integers promote as in jnp
    assert_same_as_jnp(lstsq(ai, bi), jnp.linalg.lstsq(ai, bi), rtol=1e-8)
    a32, b64 = rng.standard_normal((5, 2)).astype(np.float32), rng.standard_normal(5)
    assert lstsq(a32, b64)[0].dtype == jnp.linalg.lstsq(a32, b64)[0].dtype


def test_errors_name_the_argument():
    a, b = np.ones((4, 3)), np.ones((4, 2))
    with pytest.raises(TypeError, match="argument a"):
        lstsq(np.ones(4), b)
    with pytest.raises(TypeError, match="argument b"):
        lstsq(a, np.ones((1, 1, 4, 2)))
    with pytest.raises(ValueError, match="argument b must have 4 rows"):
        lstsq(a, np.ones((5, 2)))
    with pytest.raises(ValueError, match="argument rcond"):
        lstsq(a, b, rcond=np.ones(2))
    with pytest.raises(ValueError, match="batch dims"):
        lstsq(np.ones((2, 4, 3)), np.ones((3, 4, 2)))
    with pytest.raises(TypeError, match="argument b"):
        lstsq(a, np.array(["x"] * 4))
