"""Shared test helpers: devices, matrix generators, LAPACK-style scaled residuals (DESIGN.md)."""

import shutil
import subprocess

import jax
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

THRESHOLD = 30.0  # LAPACK's test threshold for scaled residuals
SIZES = list(range(1, 41)) + [64, 100, 128, 256, 512]
DTYPES = [np.float32, np.float64]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`pytest -n auto` (README): two worker processes where no GPU is present (CI's two cores run
    the suite in about half the time); none (the tests run in this process, as without -n) where
    one is, so that no two processes claim most of its memory. nvidia-smi, not jax: asking jax
    would start CUDA in this controller process."""
    smi = shutil.which("nvidia-smi")
    has_gpu = smi is not None and subprocess.run([smi, "-L"], capture_output=True).returncode == 0
    return 0 if has_gpu else 2


def pytest_configure(config):
    """Under pytest-xdist's default `--dist load`, keep the tests of one xdist_group on one worker
    (`loadgroup`): the past-2^31-element tests (test_hardening.py) each need ~60 GiB of device
    memory, which a worker's allocator keeps, so two workers running them at once go out of memory.
    Other --dist modes (README's loadfile keeps the file on one worker anyway) are left as given.
    A worker learns it from the controller (pytest_configure_node): it parses the command line
    itself, where the mode is still `load`."""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    if getattr(config, "workerinput", {}).get("batchla_loadgroup"):
        config.option.loadgroup = True  # xdist's worker reads this to tag the grouped tests


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist (controller), before a worker starts: pass it the mode chosen above."""
    node.workerinput["batchla_loadgroup"] = node.config.getvalue("dist") == "loadgroup"


def gpu_devices():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("gpu", id="gpu", marks=[
        pytest.mark.gpu, pytest.mark.skipif(not gpu_devices(), reason="no GPU")]),
]


@pytest.fixture(params=DEVICES)
def device(request):
    """Runs the test body with jax's default device set to the parametrized platform."""
    with jax.default_device(jax.devices(request.param)[0]):
        yield request.param


def eps(dtype):
    return float(np.finfo(dtype).eps)


def batch_for(n):
    """Keep CPU runs quick: fewer matrices as n grows."""
    return 3 if n <= 64 else (2 if n <= 256 else 1)


def spd(rng, shape, n, dtype, cond=100.0):
    """Random SPD matrices with condition number `cond`, float64 values rounded to `dtype`."""
    g = rng.standard_normal((*shape, n, n))
    q, _ = np.linalg.qr(g)
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    a = (q * s[..., None, :]) @ np.swapaxes(q, -1, -2)
    a = (a + np.swapaxes(a, -1, -2)) / 2
    return a.astype(dtype)


def lower_triangular(rng, shape, n, dtype):
    """Well-conditioned lower-triangular matrices (unit-ish diagonal dominance)."""
    l = np.tril(rng.standard_normal((*shape, n, n))) / np.sqrt(n)
    idx = np.arange(n)
    l[..., idx, idx] = 1.0 + rng.uniform(0, 1, (*shape, n))
    return l.astype(dtype)


def norm1(x):
    return np.max(np.sum(np.abs(x), axis=-2), axis=-1)


def potrf_residual(a, l):
    """max over the batch of ||A - L L^T||_1 / (n ||A||_1 eps), computed in float64."""
    a64, l64 = np.asarray(a, np.float64), np.asarray(l, np.float64)
    n = a64.shape[-1]
    r = norm1(a64 - l64 @ np.swapaxes(l64, -1, -2)) / (n * norm1(a64) * eps(a.dtype))
    return float(np.max(r, initial=0.0))


def solve_residual(a, x, b, dtype):
    """max over the batch of ||b - A x||_1 / (||A||_1 ||x||_1 n eps); `a` is the operator applied."""
    a64, x64, b64 = (np.asarray(v, np.float64) for v in (a, x, b))
    n = a64.shape[-1]
    r = norm1(b64 - a64 @ x64) / (norm1(a64) * np.maximum(norm1(x64), 1e-300) * n * eps(dtype))
    return float(np.max(r, initial=0.0))
