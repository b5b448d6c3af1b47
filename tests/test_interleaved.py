"""jax_batchla.interleaved: layout round trip, residuals, failure isolation, agreement with the
standard API, the reference and (on a GPU) the CUDA kernels, and jit / vmap / grad / scan."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import DEVICES, DTYPES, THRESHOLD, lower_triangular, potrf_residual, solve_residual, spd
from jax.test_util import check_grads

import jax_batchla.interleaved as il
import jax_batchla.scipy.linalg as bsl
from jax_batchla import _ffi, _reference
from jax_batchla._ops import interleaved as ilops

CI_SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 64]
GPU = [p for p in DEVICES if p.id == "gpu"]


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _inputs(n, dtype, batch, seed=None):
    rng = np.random.default_rng(n if seed is None else seed)
    a = spd(rng, (batch,), n, dtype)
    l = lower_triangular(rng, (batch,), n, dtype)
    b = rng.standard_normal((batch, n, 2)).astype(dtype)
    return a, l, b


@partial(jax.jit, static_argnames="chunk")
def _all_ops(a, l, b, chunk):
    """Every public interleaved op on standard inputs, in one jit (one compile per shape)."""
    A, L = il.to_interleaved(a, chunk), il.to_interleaved(l, chunk)
    U = il.to_interleaved(jnp.swapaxes(l, -1, -2), chunk)
    b1 = il.to_interleaved(b[..., 0], chunk, vector=True)
    factor = il.cholesky(A)
    out = {
        "cholesky": il.from_interleaved(factor),
        "cholesky_upper": il.from_interleaved(il.cholesky(A, upper=True)),
        "solve": il.solve(A, b),
        "solve_upper_vector": il.from_interleaved(il.solve(A, b1, lower=False)),
        "cho_solve": il.cho_solve((factor, True), b),
    }
    for trans in (0, 1):
        out[f"trsm_lower_{trans}"] = il.solve_triangular(L, b, trans=trans, lower=True)
        out[f"trsm_upper_{trans}"] = il.solve_triangular(U, b, trans=trans, lower=False)
    return out


def _check_residuals(out, a, l, b, dtype):
    assert potrf_residual(a, out["cholesky"]) <= THRESHOLD
    assert np.all(np.triu(out["cholesky"], 1) == 0)
    assert potrf_residual(a, _mT(out["cholesky_upper"])) <= THRESHOLD
    assert solve_residual(a, out["solve"], b, dtype) <= THRESHOLD
    assert solve_residual(a, out["solve_upper_vector"][..., None], b[..., :1], dtype) <= THRESHOLD
    assert solve_residual(a, out["cho_solve"], b, dtype) <= THRESHOLD
    for trans in (0, 1):
        for name, m in (("lower", l), ("upper", _mT(l))):
            op = _mT(m) if trans else m
            assert solve_residual(op, out[f"trsm_{name}_{trans}"], b, dtype) <= THRESHOLD, (name, trans)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", CI_SIZES)
def test_residuals(device, n, dtype):
    a, l, b = _inputs(n, dtype, batch=37)  # 2 chunks of 32, the second padded
    out = jax.tree.map(np.asarray, _all_ops(a, l, b, chunk=32))
    assert out["solve"].shape == b.shape and out["solve"].dtype == dtype
    _check_residuals(out, a, l, b, dtype)


@pytest.mark.parametrize("shape", [(), (7,), (2, 3), (0,), (0, 3), (33,), (65,)])
@pytest.mark.parametrize("chunk", [32, 64])
@pytest.mark.parametrize("vector", [False, True])
def test_round_trip_is_exact(device, shape, chunk, vector):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((*shape, 5) if vector else (*shape, 5, 3))
    if x.size:
        x.flat[0], x.flat[-1] = np.nan, -0.0
    t = il.to_interleaved(x, chunk, vector=vector)
    count = int(np.prod(shape))
    assert t.data.shape == (-(-count // chunk), 5, 1 if vector else 3, chunk)
    assert t.shape == x.shape and t.batch_shape == shape and t.chunk == chunk
    assert t.padded_batch % chunk == 0 and t.padded_batch - count < chunk
    back = np.asarray(il.from_interleaved(t))
    assert back.shape == x.shape and back.dtype == x.dtype
    np.testing.assert_array_equal(back.view(np.uint64), x.view(np.uint64))  # bit-identical
    if count:  # element (i, j) of matrix m at [m // c, i, j, m % c]
        flat, m = x.reshape(count, 5, -1), count - 1
        np.testing.assert_array_equal(np.asarray(t.data)[m // chunk, :, :, m % chunk].view(np.uint64),
                                      flat[m].view(np.uint64))


# (rows, cols, chunk, count): the CUDA kernel's three tile plans: whole chunks per tile (rows *
# cols * chunk <= 2048), all elements x a multiple of 32 lanes, and 64 elements x 32 lanes (rows *
# cols > 64, here with element and lane edges); count leaves a partial last chunk, or none at all.
FROM_CASES = [(2, 2, 32, 33), (1, 1, 32, 1), (3, 5, 32, 100), (4, 4, 64, 130), (5, 3, 256, 300),
              (8, 8, 96, 97), (9, 9, 32, 40), (17, 5, 64, 65), (64, 64, 32, 33), (3, 3, 32, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols,chunk,count", FROM_CASES)
def test_from_interleaved_kernel_is_exact(device, rows, cols, chunk, count, dtype):
    rng = np.random.default_rng(rows * cols + count)
    chunks = max(1, -(-count // chunk))
    x = rng.standard_normal((2, chunks, rows, cols, chunk)).astype(dtype)  # a vmap-like lead dim
    x.flat[0], x.flat[-1] = np.nan, -0.0
    want = np.moveaxis(x, -1, -3).reshape(2, chunks * chunk, rows, cols)[:, :count]
    f = jax.jit(partial(ilops.from_interleaved, count=count))
    assert "batchla_from_interleaved" in f.lower(x).as_text()
    got = np.asarray(f(x))
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))  # bit-identical
    got_vmap = np.asarray(jax.jit(jax.vmap(f, in_axes=2))(np.moveaxis(x, 0, 2)))  # mapped axis inside
    np.testing.assert_array_equal(got_vmap.view(np.uint8), want.view(np.uint8))


def test_from_interleaved_partial_chunk_uses_the_kernel_and_differentiates():
    x = np.random.default_rng(1).standard_normal((37, 3, 2))
    t = il.to_interleaved(x, 32)
    assert "batchla_from_interleaved" in jax.jit(il.from_interleaved).lower(t).as_text()
    full = il.to_interleaved(x[:32], 32)  # whole chunks: XLA's transpose, no custom call
    assert "batchla_from_interleaved" not in jax.jit(il.from_interleaved).lower(full).as_text()
    w = np.random.default_rng(2).standard_normal(x.shape)
    loss = lambda y: jnp.sum(il.from_interleaved(il.to_interleaved(y, 32)) ** 2 * w)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(x)), 2 * x * w, rtol=1e-12)
    check_grads(lambda d: ilops.from_interleaved(d, count=37), (t.data,), order=2, modes=("fwd", "rev"))
    with pytest.raises(ValueError, match="count must be in"):
        ilops.from_interleaved(t.data, count=65)
    with pytest.raises(ValueError, match="multiple of 32"):
        ilops.from_interleaved(jnp.zeros((2, 3, 3, 48)), count=5)


def test_padding_is_identity_for_square_and_zero_otherwise():
    a = np.ones((3, 4, 4), np.float32)
    data = np.asarray(il.to_interleaved(a, 32).data)
    np.testing.assert_array_equal(data[0, :, :, 3:], np.broadcast_to(np.eye(4)[:, :, None], (4, 4, 29)))
    b = np.ones((3, 4, 4), np.float32)
    data = np.asarray(il.to_interleaved(b[..., 0], 32, vector=True).data)
    assert not np.any(data[0, :, :, 3:])


@pytest.mark.parametrize("chunk", [0, 16, 48, -32, 1.5, "32"])
def test_bad_chunk(chunk):
    with pytest.raises(ValueError, match="chunk"):
        il.to_interleaved(np.eye(3)[None], chunk)


def test_default_chunk():
    c = il.to_interleaved(np.eye(3)[None]).chunk
    assert c == _ffi.il_default_chunk(np.float64, 3) and c > 0 and c % 32 == 0
    if not hasattr(_ffi._cuda, "il_default_chunk"):
        assert c == 32


def test_errors_name_the_argument():
    a = il.to_interleaved(spd(np.random.default_rng(0), (5,), 3, np.float64))
    with pytest.raises(TypeError, match="argument a"):
        il.to_interleaved(np.ones((2, 3, 3), np.int32))
    with pytest.raises(ValueError, match="argument a"):
        il.to_interleaved(np.ones(3))
    with pytest.raises(ValueError, match="argument a"):
        il.to_interleaved(np.float64(1.0), vector=True)
    with pytest.raises(TypeError, match="argument a"):
        il.cholesky(np.eye(3))
    with pytest.raises(ValueError, match="argument a"):
        il.cholesky(il.to_interleaved(np.ones((5, 3, 2))))
    with pytest.raises(ValueError, match="argument a"):
        il.solve(il.to_interleaved(np.ones((5, 3)), vector=True), np.ones((5, 3)))
    for bad_b in (np.ones((5, 4)), np.ones((4, 3)), np.ones((5, 3, 2, 1)), np.ones((3,))):
        with pytest.raises(ValueError, match="argument b"):
            il.solve(a, bad_b)
    with pytest.raises(TypeError, match="argument b"):
        il.cho_solve((a, True), np.ones((5, 3), np.float32))
    with pytest.raises(ValueError, match="argument b"):  # another chunk
        il.solve_triangular(a, il.to_interleaved(np.ones((5, 3)), 64, vector=True))
    with pytest.raises(ValueError, match="argument b"):  # another batch
        il.solve(a, il.to_interleaved(np.ones((6, 3)), vector=True))
    with pytest.raises(ValueError, match="assume_a"):
        il.solve(a, np.ones((5, 3)), assume_a="gen")
    with pytest.raises(ValueError, match="trans"):
        il.solve_triangular(a, np.ones((5, 3)), trans="X")


@pytest.mark.parametrize("shape", [(), (7,), (2, 3), (0,), (0, 3)])
def test_batch_shapes_match_standard_api(device, shape):
    rng = np.random.default_rng(1)
    a = spd(rng, shape, 5, np.float64)
    b = rng.standard_normal((*shape, 5, 2))
    A = il.to_interleaved(a)
    l = il.from_interleaved(il.cholesky(A))
    x = il.solve(A, b)
    xv = il.solve(A, b[..., 0])
    assert l.shape == a.shape and x.shape == b.shape and xv.shape == b.shape[:-1]
    np.testing.assert_allclose(np.asarray(l), np.asarray(bsl.cholesky(a, lower=True)), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(x), np.asarray(bsl.solve(a, b, assume_a="pos")), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(xv), np.asarray(x[..., 0]), rtol=1e-12, atol=1e-13)


def test_matches_standard_api_and_reads_one_triangle(device):
    rng = np.random.default_rng(2)
    n, batch = 7, 40
    a = spd(rng, (batch,), n, np.float64)
    b = rng.standard_normal((batch, n, 3))
    l = lower_triangular(rng, (batch,), n, np.float64)
    tril, triu = np.tril_indices(n, -1), np.triu_indices(n, 1)
    for lower in (True, False):
        garbage = a.copy()
        other = triu if lower else tril
        garbage[:, other[0], other[1]] = 1e6  # never read
        G = il.to_interleaved(garbage)
        c, low = il.cho_factor(G, lower=lower)
        assert low is lower
        np.testing.assert_allclose(np.asarray(il.from_interleaved(c)), np.asarray(bsl.cholesky(a, lower=lower)),
                                   rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(np.asarray(il.cho_solve((c, lower), b)),
                                   np.asarray(bsl.cho_solve(bsl.cho_factor(a, lower=lower), b)), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(il.solve(G, b, lower=lower)),
                                   np.asarray(bsl.solve(garbage, b, lower=lower, assume_a="pos")), rtol=1e-10)
        tri = l if lower else _mT(l)
        T = il.to_interleaved(tri + (1e6 * _mT(np.tril(l, -1)) if lower else 1e6 * np.tril(l, -1)))
        for trans in (0, 1, 2, "N", "T", "C"):
            for unit in (False, True):
                ours = il.solve_triangular(T, b, trans=trans, lower=lower, unit_diagonal=unit)
                ref = bsl.solve_triangular(tri, b, trans=trans, lower=lower, unit_diagonal=unit)
                np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-10, err_msg=f"{trans} {unit}")
    for kw in ({}, {"upper": True}, {"symmetrize_input": False}):
        ours = il.from_interleaved(il.cholesky(il.to_interleaved(a), **kw))
        np.testing.assert_allclose(np.asarray(ours), np.asarray(jnp.linalg.cholesky(a, **kw)), rtol=1e-12,
                                   atol=1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [6, 24, 32, 40, 64])  # on the GPU 24, 32: lane groups (kGroup); 40, 64: kBlock
def test_failures_do_not_touch_neighbours(device, dtype, n):
    a, _, b = _inputs(n, dtype, batch=40, seed=3)
    bad = a.copy()
    bad[1, 4, 4] = -1.0
    bad[33] = np.inf
    bad[38, 3, 2] = bad[38, 2, 3] = np.nan
    failed, good = [1, 33, 38], [m for m in range(40) if m not in (1, 33, 38)]

    def run(a):
        A = il.to_interleaved(a, 32)
        return il.from_interleaved(il.cholesky(A)), il.solve(A, b), il.cho_solve((il.cholesky(A), True), b)

    clean, dirty = (jax.tree.map(np.asarray, run(x)) for x in (a, bad))
    for c, d in zip(clean, dirty):
        np.testing.assert_array_equal(d[good], c[good])  # bit-identical
    l, x, _ = dirty
    for m in failed:
        assert np.all(np.isnan(l[m][np.tril_indices(n)])) and np.all(np.triu(l[m], 1) == 0)
        assert np.all(np.isnan(x[m]))


@pytest.mark.parametrize("chunk", [32, 64])
def test_chunk_size_does_not_change_results(device, chunk):
    a, l, b = _inputs(9, np.float64, batch=70)
    ref = jax.tree.map(np.asarray, _all_ops(a, l, b, chunk=32))
    out = jax.tree.map(np.asarray, _all_ops(a, l, b, chunk=chunk))
    for name in ref:
        np.testing.assert_allclose(out[name], ref[name], rtol=1e-13, atol=1e-14, err_msg=name)


def test_empty_batch(device):
    a = np.zeros((0, 4, 4))
    b = np.zeros((0, 4, 2))
    A = il.to_interleaved(a)
    assert A.data.shape == (0, 4, 4, A.chunk)
    out = jax.tree.map(np.asarray, _all_ops(a, a, b, chunk=32))
    assert out["cholesky"].shape == (0, 4, 4) and out["solve"].shape == (0, 4, 2)


def _primitive_cases(n, dtype, c=32):
    """Interleaved operands for the primitives, with failing matrices in the batch."""
    rng = np.random.default_rng(n)
    a = spd(rng, (2 * c,), n, dtype)
    a[3, n - 1, n - 1] = -1.0
    a[c + 5, 0, 0] = np.nan
    l = lower_triangular(rng, (2 * c,), n, dtype)
    b = rng.standard_normal((2 * c, n, 3)).astype(dtype)
    to = lambda x: np.asarray(il.to_interleaved(x, c).data)
    return to(a), to(l), to(_mT(l)), to(b)


def _primitive_runs(ops, a, l, u, b):
    out = {}
    for sym in (False, True):
        out[f"potrf_{sym}"] = ops.il_potrf(a, symmetrize=sym)
    for lower, f in ((True, l), (False, u)):
        out[f"potrs_{lower}"] = ops.il_potrs(f, b, lower=lower)
        out[f"posv_{lower}"] = ops.il_posv(a, b, lower=lower)
        for trans in (False, True):
            for unit in (False, True):
                out[f"trsm_{lower}_{trans}_{unit}"] = ops.il_trsm(f, b, lower=lower, trans=trans, unit_diag=unit)
    return out


def _assert_agree(ours, ref, n, dtype):
    tol = 50 * n * np.finfo(dtype).eps
    for name in ref:
        for x, y in zip(jax.tree.leaves(ours[name]), jax.tree.leaves(ref[name])):
            if y.dtype == np.int32:
                np.testing.assert_array_equal(x, y, err_msg=name)
            else:
                scale = max(1.0, float(np.nanmax(np.abs(y), initial=0.0)))
                np.testing.assert_allclose(x, y, atol=tol * scale, rtol=tol, err_msg=f"{name} n={n}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 4, 9, 17])
def test_cpu_handler_agrees_with_reference(n, dtype):
    args = _primitive_cases(n, dtype)
    with jax.default_device(jax.devices("cpu")[0]):
        hlo = jax.jit(partial(_primitive_runs, ilops)).lower(*args).as_text()
        ours = jax.tree.map(np.asarray, jax.jit(partial(_primitive_runs, ilops))(*args))
        ref = jax.tree.map(np.asarray, jax.jit(partial(_primitive_runs, _reference))(*args))
    assert all(f"batchla_il_{op}" in hlo for op in ("potrf", "potrs", "posv", "trsm")), "not the C++ handlers"
    assert ours["potrf_False"][1][0, 3] == n and ours["posv_True"][1][1, 5] == 1  # info (chunk, lane)
    _assert_agree(ours, ref, n, dtype)


def test_primitive_shape_errors():
    a = jnp.zeros((2, 3, 3, 32))
    with pytest.raises(ValueError, match="square"):
        ilops.il_potrf(jnp.zeros((2, 3, 4, 32)))
    with pytest.raises(ValueError, match="b must have shape"):
        ilops.il_posv(a, jnp.zeros((2, 3, 1, 64)), lower=True)
    with pytest.raises(ValueError, match="rank >= 3"):
        ilops.il_potrf(jnp.zeros((3, 3)))
    with pytest.raises(TypeError, match="float32 or float64"):
        ilops.il_potrf(jnp.zeros((2, 3, 3, 32), jnp.int32))


def test_jit_and_vmap(device):
    rng = np.random.default_rng(4)
    a = spd(rng, (2, 3, 35), 4, np.float64)  # 2 x 3 stacks of 35 matrices
    b = rng.standard_normal((2, 3, 35, 4, 2))
    A = jax.vmap(jax.vmap(lambda x: il.to_interleaved(x, 32)))(a)
    B = jax.vmap(jax.vmap(lambda x: il.to_interleaved(x, 32)))(b)
    assert A.data.shape == (2, 3, 2, 4, 4, 32) and A.batch_shape == (35,)
    want = np.linalg.solve(a, b)
    # nested vmap, both operands interleaved
    x = jax.jit(jax.vmap(jax.vmap(il.solve)))(A, B)
    np.testing.assert_allclose(np.asarray(il.from_interleaved(x)), want, rtol=1e-10)
    # in_axes != 0 on the data: stack along axis 1 of the data, map over it
    A1 = il.Interleaved(jnp.moveaxis(A.data[0], 0, 1), A.batch_shape)
    l = jax.vmap(il.cholesky, in_axes=1)(A1)
    np.testing.assert_allclose(np.asarray(il.from_interleaved(l)), np.linalg.cholesky(a[0]), rtol=1e-10)
    # the matrix unbatched, standard right-hand sides batched (and vice versa)
    A0 = il.to_interleaved(a[0, 0], 32)
    xs = jax.vmap(il.solve, in_axes=(None, 0))(A0, b[0])
    np.testing.assert_allclose(np.asarray(xs), np.linalg.solve(a[0, 0], b[0]), rtol=1e-10)
    xt = jax.vmap(lambda L: il.solve_triangular(L, b[0, 0], lower=True))(il.cholesky(il.Interleaved(A.data[0], (35,))))
    np.testing.assert_allclose(np.asarray(xt), np.linalg.solve(np.linalg.cholesky(a[0]), b[0, 0]), rtol=1e-10)


@pytest.mark.parametrize("axis", [0, 2, 4])
def test_vmap_over_the_rhs_only_folds_into_columns(device, axis):
    a, l, u, b = _primitive_cases(5, np.float64)
    a = np.asarray(il.to_interleaved(spd(np.random.default_rng(7), (64,), 5, np.float64), 32).data)
    bs = np.stack([b, 2 * b, -b], axis=axis)  # 3 right-hand sides (2, 5, 3, 32) stacked along `axis`
    ops = {"potrs": (partial(ilops.il_potrs, lower=True), l),
           "posv": (lambda a, b: ilops.il_posv(a, b, lower=False)[0], a),
           "trsm": (partial(ilops.il_trsm, lower=False, trans=True), u)}
    for name, (op, m) in ops.items():
        fn = jax.vmap(op, in_axes=(None, axis))
        assert "broadcast_in_dim" not in str(jax.make_jaxpr(fn)(m, bs)), f"{name}: the matrix was copied"
        want = np.stack([np.asarray(op(m, np.take(bs, i, axis))) for i in range(3)])
        np.testing.assert_allclose(np.asarray(fn(m, bs)), want, rtol=1e-13, atol=1e-14, err_msg=name)


def _spd_fn(x):
    n = x.shape[-1]
    return x @ jnp.swapaxes(x, -1, -2) + n * jnp.eye(n, dtype=x.dtype)


def test_grads(device):
    rng = np.random.default_rng(5)
    g = rng.standard_normal((3, 3, 3))
    l = lower_triangular(rng, (3,), 3, np.float64)
    b = rng.standard_normal((3, 3, 2))
    to = il.to_interleaved
    kw = dict(order=2, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    check_grads(lambda x: il.from_interleaved(il.cholesky(to(_spd_fn(x)))), (g,), **kw)
    check_grads(lambda x: il.from_interleaved(il.cholesky(to(_spd_fn(x)), symmetrize_input=False)), (g,), **kw)
    for lower in (True, False):
        check_grads(lambda x, b: il.solve(to(_spd_fn(x)), b, lower=lower), (g, b), **kw)
        check_grads(lambda x, b: il.solve(to(_spd_fn(x)), to(b), lower=lower).data, (g, b), **kw)
        check_grads(lambda x, b: il.cho_solve(il.cho_factor(to(_spd_fn(x)), lower=lower), b), (g, b), **kw)
        f = l if lower else _mT(l)
        for trans in (0, 1):
            check_grads(lambda m, b: il.solve_triangular(to(m), b, trans=trans, lower=lower), (f, b), **kw)
    # grad with respect to an Interleaved argument gives an Interleaved cotangent
    A = to(spd(rng, (3,), 3, np.float64))
    gA = jax.grad(lambda A: jnp.sum(il.solve(A, b)))(A)
    assert isinstance(gA, il.Interleaved) and gA.data.shape == A.data.shape


def test_scan_kalman_filter(device):
    """Covariance P and state x stay interleaved across the steps of a lax.scan (a Kalman filter
    with identity dynamics and observation: S = P + R, K = P S^-1)."""
    rng = np.random.default_rng(6)
    batch, n, steps = 37, 3, 4
    p0 = spd(rng, (batch,), n, np.float64)
    r = spd(rng, (batch,), n, np.float64)
    ys = rng.standard_normal((steps, batch, n))
    to = partial(il.to_interleaved, chunk=32)
    R = to(r)

    def step(carry, y):
        P, x = carry
        S = jax.tree.map(jnp.add, P, R)
        innovation = jax.tree.map(jnp.subtract, y, x)
        gain_x = il.solve(S, innovation)  # S^-1 (y - x)
        gain_p = il.solve(S, P)  # S^-1 P
        x = il.Interleaved(x.data + ilops.il_matmul(P.data, gain_x.data), x.batch_shape, vector=True)
        P = il.Interleaved(P.data - ilops.il_matmul(P.data, gain_p.data), P.batch_shape)
        return (P, x), il.from_interleaved(x)

    Y = jax.vmap(partial(to, vector=True))(jnp.asarray(ys))
    (P, x), xs = jax.jit(lambda c, ys: jax.lax.scan(step, c, ys))((to(p0), to(np.zeros((batch, n)), vector=True)), Y)
    p, xr = p0, np.zeros((batch, n))
    for t in range(steps):
        k = p @ np.linalg.inv(p + r)
        xr = xr + (k @ (ys[t] - xr)[..., None])[..., 0]
        p = p - k @ p
        np.testing.assert_allclose(np.asarray(xs[t]), xr, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(il.from_interleaved(P)), p, rtol=1e-9, atol=1e-12)


# ---- GPU: the CUDA kernels against the CPU handlers ----------------------------------------------
@pytest.mark.parametrize("chunk", [32, 64, 128])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("platform", GPU)
def test_cuda_matches_cpu(platform, dtype, chunk):
    for n in range(1, 65):
        a, l, b = _inputs(n, dtype, batch=2 * chunk + 5)  # the last chunk padded
        with jax.default_device(jax.devices("cpu")[0]):
            cpu = jax.tree.map(np.asarray, _all_ops(a, l, b, chunk=chunk))
        with jax.default_device(jax.devices(platform)[0]):
            gpu = jax.tree.map(np.asarray, _all_ops(a, l, b, chunk=chunk))
        _check_residuals(gpu, a, l, b, dtype)
        _assert_agree(gpu, cpu, n, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 5, 8, 16, 17, 24, 28, 32, 33, 48, 64])
@pytest.mark.parametrize("platform", GPU)
def test_cuda_primitives_match_cpu(platform, n, dtype):
    args = _primitive_cases(n, dtype)
    with jax.default_device(jax.devices("cpu")[0]):
        cpu = jax.tree.map(np.asarray, jax.jit(partial(_primitive_runs, ilops))(*args))
    with jax.default_device(jax.devices(platform)[0]):
        hlo = jax.jit(partial(_primitive_runs, ilops)).lower(*args).as_text()
        gpu = jax.tree.map(np.asarray, jax.jit(partial(_primitive_runs, ilops))(*args))
    assert all(f"batchla_il_{op}" in hlo for op in ("potrf", "potrs", "trsm")), "not the CUDA kernels"
    # posv: the fused kernel where it keeps the factor on chip, else il_potrf + il_potrs
    assert ("batchla_il_posv" in hlo) == _ffi.il_posv_fused(dtype, n), "posv: not the kernel the table picks"
    _assert_agree(gpu, cpu, n, dtype)
