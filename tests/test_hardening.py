"""Hardening (issue 7), every op family on CPU and GPU:

- bad numbers (NaN, Inf, zeros, denormals, huge values, non-SPD / singular / rank-deficient
  matrices, a NaN right-hand side) mixed into a batch leave every other matrix's results
  bit-identical to a clean run of the same batch;
- the same input gives bit-identical output on every run;
- several Python threads calling the ops at once (on every device present) get exactly the
  results of sequential calls.

Batches above 2^31 elements and XLA command buffers have their own GPU tests below.
"""

import concurrent.futures
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import gpu_devices, lower_triangular, spd

import jax_batchla.interleaved as il
import jax_batchla.linalg as bla
import jax_batchla.scipy.linalg as bsl


def _il_solve(a, b):
    return il.from_interleaved(il.solve(il.to_interleaved(a, 32), il.to_interleaved(b, 32)))


# name -> (function of (a, b), input kind). Kinds: 'spd' and 'gen' are n x n, 'tall' (n + 3) x n,
# 'tri' lower triangular; b always has two columns.
OPS = {
    "cholesky": (lambda a, b: bla.cholesky(a), "spd"),
    "cho_solve": (lambda a, b: bsl.cho_solve(bsl.cho_factor(a, lower=True), b), "spd"),
    "solve_pos": (lambda a, b: bsl.solve(a, b, assume_a="pos"), "spd"),
    "il_cholesky": (lambda a, b: il.from_interleaved(il.cholesky(il.to_interleaved(a, 32))), "spd"),
    "il_solve": (_il_solve, "spd"),
    "solve_triangular": (lambda a, b: bsl.solve_triangular(a, b, lower=True, trans=1), "tri"),
    "solve": (lambda a, b: bla.solve(a, b), "gen"),
    "inv": (lambda a, b: bla.inv(a), "gen"),
    "slogdet": (lambda a, b: tuple(bla.slogdet(a)), "gen"),
    "lu_factor": (lambda a, b: bsl.lu_factor(a), "gen"),
    "lu_solve": (lambda a, b: bsl.lu_solve(bsl.lu_factor(a), b, trans=1), "gen"),
    "qr": (lambda a, b: tuple(bla.qr(a)), "tall"),
    "qr_r": (lambda a, b: bla.qr(a, mode="r"), "tall"),
    "geqrf": (lambda a, b: bla.qr(a, mode="raw"), "tall"),
    "lstsq": (lambda a, b: bla.lstsq(a, b)[:2], "tall"),
}
IL_MAX_N = 64  # the interleaved layout is for tiny matrices

# Size classes: CPU keeps to two sizes; on GPU one n per kernel size class of each family
# (register / warp / block / blocked-medium / large kernels and the composed paths).
CPU_SIZES = [2, 9]
GPU_SIZES = [3, 12, 33, 100, 256, 512]


def _inputs(kind, n, batch, dtype, seed=0):
    """(a, b) of `kind`, well conditioned (conftest's generators where it has one)."""
    rng = np.random.default_rng(seed)
    m = n + 3 if kind == "tall" else n
    if kind == "spd":
        a = spd(rng, (batch,), n, dtype)
    elif kind == "tri":
        a = lower_triangular(rng, (batch,), n, dtype)
    else:
        a = (rng.standard_normal((batch, m, n)) + (np.sqrt(n) * np.eye(m, n) if kind == "gen" else 0)).astype(dtype)
    return a, rng.standard_normal((batch, m, 2)).astype(dtype)


def _spoil(kind, how, a, b):
    """Makes matrix a (and b) numerically bad in place, in a way every op of `kind` reads."""
    n = a.shape[-1]
    tiny, huge = (1e-41, 1e38) if a.dtype == np.float32 else (1e-310, 1e300)
    if how in ("nan", "inf"):
        a[-1, 0] = np.nan if how == "nan" else np.inf  # lower triangle: every op reads it
    elif how == "zero":
        a[:] = 0
    elif how == "denormal":
        a *= tiny
    elif how == "huge":
        a *= huge
    elif how == "fail" and kind == "spd":
        a[:] = -a  # negative definite: potrf fails at the first pivot
    elif how == "fail" and kind == "tri":
        a[n // 2, n // 2] = 0  # singular triangle
    elif how == "fail":
        a[:, -1] = a[:, 0]  # two equal columns: singular / rank deficient
    elif how == "rhs_nan":
        b[0, 0] = np.nan
    else:
        raise AssertionError(how)


BAD = ["nan", "inf", "zero", "denormal", "huge", "fail", "rhs_nan"]


def _spoiled_batch(kind, n, dtype):
    """(clean a, clean b, spoiled a, spoiled b, indices of the untouched matrices): one bad matrix
    of each kind, each between clean ones."""
    batch = 3 * len(BAD) + 2
    a, b = _inputs(kind, n, batch, dtype)
    bad_a, bad_b = a.copy(), b.copy()
    spoiled = [2 + 3 * i for i in range(len(BAD))]
    for i, how in zip(spoiled, BAD):
        _spoil(kind, how, bad_a[i], bad_b[i])
    clean = np.setdiff1d(np.arange(batch), spoiled)
    return a, b, bad_a, bad_b, clean


def _leaves(out):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(out)]


def _cases(sizes):
    return [(name, n, dtype) for name in OPS for n in sizes
            for dtype in (np.float32, np.float64) if not (name.startswith("il_") and n > IL_MAX_N)]


def _case_id(case):
    name, n, dtype = case
    return f"{name}-n{n}-{np.dtype(dtype).name}"


def _params(cases_cpu, cases_gpu):
    gpu_marks = [pytest.mark.gpu, pytest.mark.skipif(not gpu_devices(), reason="no GPU")]
    return ([pytest.param("cpu", *c, id="cpu-" + _case_id(c)) for c in cases_cpu]
            + [pytest.param("gpu", *c, id="gpu-" + _case_id(c), marks=gpu_marks) for c in cases_gpu])


@pytest.mark.parametrize("platform,name,n,dtype", _params(_cases(CPU_SIZES), _cases(GPU_SIZES)))
def test_bad_numbers_stay_in_their_matrix_and_runs_repeat(platform, name, n, dtype):
    fn, kind = OPS[name]
    a, b, bad_a, bad_b, clean = _spoiled_batch(kind, n, dtype)
    with jax.default_device(jax.devices(platform)[0]):
        f = jax.jit(fn)
        ref = _leaves(f(a, b))
        again = _leaves(f(a, b))
        spoiled = _leaves(f(bad_a, bad_b))
        spoiled_again = _leaves(f(bad_a, bad_b))
    for r, r2, s, s2 in zip(ref, again, spoiled, spoiled_again):
        assert np.all(np.isfinite(r)), f"{name}: the clean batch has non-finite results"
        np.testing.assert_array_equal(r2, r, err_msg=f"{name}: two runs on the clean batch differ")
        np.testing.assert_array_equal(s2, s, err_msg=f"{name}: two runs on the spoiled batch differ")
        np.testing.assert_array_equal(
            s[clean], r[clean], err_msg=f"{name}: a bad matrix changed the results of its neighbours")


@pytest.mark.parametrize("platform", ["cpu", pytest.param("gpu", marks=[
    pytest.mark.gpu, pytest.mark.skipif(not gpu_devices(), reason="no GPU")])])
def test_threads_and_devices_at_once(platform):
    """8 threads, each calling every op on its own inputs on device (thread % #devices), get
    bit-identical results to the same calls made one after another."""
    devices = jax.devices(platform)
    jobs = [(name, n, np.float64 if t % 2 else np.float32, t)
            for t in range(8) for name in OPS for n in (5, 40) if not (name.startswith("il_") and n > IL_MAX_N)]
    fns = {name: jax.jit(fn) for name, (fn, _) in OPS.items()}

    def run(job):
        name, n, dtype, t = job
        a, b = _inputs(OPS[name][1], n, 4, dtype, seed=t)
        dev = devices[t % len(devices)]
        out = fns[name](jax.device_put(a, dev), jax.device_put(b, dev))
        return _leaves(jax.block_until_ready(out))

    sequential = [run(job) for job in jobs]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        concurrent_ = list(pool.map(run, jobs))
    for job, seq, con in zip(jobs, sequential, concurrent_):
        for s, c in zip(seq, con):
            np.testing.assert_array_equal(c, s, err_msg=f"{job}: concurrent call differs")


# ---- batches of more than 2^31 elements (GPU: about 60 GB of device memory) ----------------------
BIG_OPS = {  # name -> (function, kind, n, dtype, matrices): each input has more than 2^31 elements
    "cholesky-f32": ("cholesky", 4, np.float32, 2**27 + 4099),
    "cholesky-f64-n64": ("cholesky", 64, np.float64, 2**19 + 1001),
    "cholesky-f32-n128": ("cholesky", 128, np.float32, 2**17 + 33),  # potrf left class, n <= 128 band
    "cholesky-f64-n256": ("cholesky", 256, np.float64, 2**15 + 7),  # its 256-thread band
    "solve_pos-f32": ("solve_pos", 4, np.float32, 2**27 + 4099),
    "il_solve-f32": ("il_solve", 4, np.float32, 2**27 + 4099),
    "il_cholesky-f32": ("il_cholesky", 4, np.float32, 2**27 + 4099),  # from_interleaved's kernel
    "il_solve-f32-n24": ("il_solve", 24, np.float32, 2**22 + 33),  # staged lane-group form
    "solve_triangular-f32": ("solve_triangular", 4, np.float32, 2**27 + 4099),
    "solve-f32": ("solve", 4, np.float32, 2**27 + 4099),
    "lu_factor-f32": ("lu_factor", 4, np.float32, 2**27 + 4099),
    "lu_factor-f32-n128": ("lu_factor", 128, np.float32, 2**17 + 33),  # getrf left class, n <= 128 band
    "solve-f64-n256": ("solve", 256, np.float64, 2**15 + 7),  # its 4-pass band + getrs
    "lu_factor-f32-n512": ("lu_factor", 512, np.float32, 2**13 + 5),  # its 8-pass band
    "lu_solve-f64-n64": ("lu_solve", 64, np.float64, 2**19 + 1001),
    "inv-f32-n64": ("inv", 64, np.float32, 2**19 + 1001),
    "inv-f32-n96": ("inv", 96, np.float32, 2**18 + 33),  # getrf + getri (its scratch result)
    "qr-f32": ("qr", 4, np.float32, 2**27 + 4099),  # 7 x 4 matrices
    "lstsq-f32": ("lstsq", 4, np.float32, 2**27 + 4099),
    "geqrf-f64-n64": ("geqrf", 64, np.float64, 2**19 + 1001),
}


# Each test below holds ~60 GiB of device memory, and a process keeps what its allocator took after
# the test ends: under pytest-xdist they share one worker (conftest.py: -n runs loadgroup), since
# two workers each running one at once go out of memory (seen at -n 6 on an H200).
BIG_MEMORY = pytest.mark.xdist_group("device_memory_60gib")


def _enough_device_memory(gib):
    devs = gpu_devices()
    try:
        stats = devs[0].memory_stats() if devs else None
    except Exception:  # noqa: BLE001 -- a backend without memory stats
        stats = None
    return bool(stats) and stats.get("bytes_limit", 0) >= gib * 2**30


@BIG_MEMORY
@pytest.mark.gpu
@pytest.mark.skipif(not _enough_device_memory(60), reason="needs a GPU with >= 60 GiB")
@pytest.mark.parametrize("case", list(BIG_OPS))
def test_more_than_2_31_elements(case):
    """The huge batch is generated on the device; its first, last and every 4097th matrix must
    equal (bit for bit) the results of the same matrices solved as small batches."""
    name, n, dtype, count = BIG_OPS[case]
    fn, kind = OPS[name]
    m = n + 3 if kind == "tall" else n
    assert count * m * n > 2**31
    key_a, key_b = jax.random.split(jax.random.key(7))

    @jax.jit
    def make(idx):  # matrices idx of the batch, each a pure function of its index
        g = jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(key_a, i), (m, n), dtype))(idx)
        rhs = jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(key_b, i), (m, 2), dtype))(idx)
        if kind == "spd":
            g = g @ jnp.swapaxes(g, -1, -2) / n + jnp.eye(n, dtype=dtype)
        elif kind == "tri":
            g = jnp.tril(g) / np.sqrt(n) + 2 * jnp.eye(n, dtype=dtype)
        elif kind == "gen":
            g = g + np.sqrt(n) * jnp.eye(n, dtype=dtype)
        return g, rhs

    picks = np.unique(np.concatenate([np.arange(2048), np.arange(0, count, 4097), count - 2048 + np.arange(2048)]))
    f = jax.jit(fn)
    small = _leaves(f(*make(jnp.asarray(picks))))
    big = f(*make(jnp.arange(count)))
    taken = _leaves(jax.tree_util.tree_map(lambda x: x[jnp.asarray(picks)], big))
    del big
    for s, t in zip(small, taken):
        np.testing.assert_array_equal(t, s, err_msg=f"{case}: the big batch differs from small batches")


# One matrix, a huge vmapped batch of right-hand sides: the vmap rule folds the batch into the
# columns of one call, so n * k (or m * k) itself passes 2^31 (kernels that index columns).
FOLD_OPS = {  # name -> (function of (a, b), kind, n)
    "potrs": (lambda a, b: bsl.cho_solve((bla.cholesky(a), True), b), "spd", 32),
    "posv": (lambda a, b: bsl.solve(a, b, assume_a="pos"), "spd", 32),
    "trsm": (lambda a, b: bsl.solve_triangular(a, b, lower=True), "tri", 33),
    "getrs": (lambda a, b: bsl.lu_solve(bsl.lu_factor(a), b), "gen", 32),
    "gesv": (lambda a, b: bla.solve(a, b), "gen", 32),
    "ormqr": (lambda a, b: bla.lstsq(a, b)[0], "tall", 61),  # 64 x 61: geqrf + ormqr + trsm
}


@BIG_MEMORY
@pytest.mark.gpu
@pytest.mark.skipif(not _enough_device_memory(60), reason="needs a GPU with >= 60 GiB")
@pytest.mark.parametrize("name", list(FOLD_OPS))
def test_rhs_batch_folded_past_2_31_elements(name):
    fn, kind, n = FOLD_OPS[name]
    a, _ = _inputs(kind, n, 1, np.float32)
    m = a.shape[-2]
    count = 2**31 // m + 4099
    f = jax.jit(jax.vmap(lambda b: fn(a[0], b)))
    picks = np.unique(np.concatenate([np.arange(2048), np.arange(0, count, 4097), count - 2048 + np.arange(2048)]))
    make = jax.jit(lambda idx: jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(jax.random.key(3), i),
                                                                    (m,), jnp.float32))(idx))
    small = np.asarray(f(make(jnp.asarray(picks))))
    big = f(make(jnp.arange(count)))
    taken = np.asarray(big[jnp.asarray(picks)])
    del big
    np.testing.assert_array_equal(taken, small, err_msg=f"{name}: the folded big batch differs")


# ---- XLA command buffers (CUDA graphs) ------------------------------------------------------------
COMMAND_BUFFER_FLAGS = "--xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL,WHILE,CONDITIONAL --xla_gpu_graph_min_graph_size=1"


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_devices(), reason="no GPU")
def test_command_buffers():
    """tests/command_buffer_check.py runs every op inside a jitted lax.fori_loop, once with XLA's
    command buffers forced on for fusions, custom calls and loops and once with them off (two
    processes: the flags are per process); the results must be bit-identical, and our handlers
    must have been captured into the command buffers' graphs with the flags on and run directly
    with them off (they count it: JAX_BATCHLA_COUNT_LAUNCHES)."""
    script = os.path.join(os.path.dirname(__file__), "command_buffer_check.py")
    outs = {}
    for mode, flags in (("on", COMMAND_BUFFER_FLAGS), ("off", "--xla_gpu_enable_command_buffer=")):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"batchla_cmdbuf_{mode}_{os.getpid()}.npz")
        env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " " + flags).strip(),
                   JAX_BATCHLA_COUNT_LAUNCHES="1")
        proc = subprocess.run([sys.executable, script, mode, path], env=env, capture_output=True, text=True,
                              timeout=900)
        assert os.path.exists(path), proc.stdout[-4000:] + proc.stderr[-4000:]
        with np.load(path) as z:
            outs[mode] = (dict(z), proc)
        os.remove(path)
    (on, _), (off, _) = outs["on"], outs["off"]
    assert on.keys() == off.keys() and on
    for key in on:
        np.testing.assert_array_equal(on[key], off[key], err_msg=key)
    for mode, (_, proc) in outs.items():
        assert proc.returncode == 0, f"{mode}: " + proc.stdout[-4000:] + proc.stderr[-4000:]
