"""Timing: the same driver for jax (host clock + block_until_ready) and torch (CUDA events).

A sample runs the op k times back to back and divides by k, with k chosen so a sample lasts about
`target_s` (k <= 64): then the per-call host overhead (jax dispatch, ~10-30 µs) overlaps the device
work and the sample measures device throughput. What does not overlap — the first call's dispatch
and the final sync, ~50-100 µs with jitter — is paid once per sample, so samples must be long:
with 2 ms samples a 300 µs op read 10-60 % slow and moved by up to 1.5x between runs (H200, issue
7's regression run); at the 20 ms default it is ~0.5 %. For ops slower than target_s, k = 1.
`seconds` is the median of the samples; `seconds_single` is the median of three isolated calls
(dispatch + run + sync), kept so launch-bound sizes are visible.
"""
from __future__ import annotations

import math
import statistics
import time
from typing import Callable

import jax


def _drive(run_k: Callable[[int], float], reps: int, target_s: float, budget_s: float) -> dict:
    run_k(1)                                            # warm-up (first call compiles)
    single = statistics.median(run_k(1) for _ in range(3))
    k = max(1, min(64, math.ceil(target_s / max(single, 1e-9))))
    n = max(3, min(reps, int(budget_s / (k * single))))
    samples = [run_k(k) for _ in range(n)]
    return {"seconds": statistics.median(samples), "seconds_single": single,
            "calls_per_sample": k, "samples": n}


def time_jax(f: Callable, args: tuple, reps: int = 20, target_s: float = 2e-2,
             budget_s: float = 1.0) -> dict:
    def run_k(k):
        t0 = time.perf_counter()
        for _ in range(k):
            out = f(*args)
        jax.block_until_ready(out)
        return (time.perf_counter() - t0) / k
    return _drive(run_k, reps, target_s, budget_s)


def time_torch(torch, f: Callable, args: tuple, reps: int = 20, target_s: float = 2e-2,
               budget_s: float = 1.0) -> dict:
    def run_k(k):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(k):
            f(*args)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / k
    torch.cuda.synchronize()
    return _drive(run_k, reps, target_s, budget_s)


def copy_bandwidth(nbytes: int, reps: int = 20) -> float:
    """Device-to-device copy bandwidth in bytes/s (read + write counted) of a jitted `x + 1`."""
    import jax.numpy as jnp
    x = jax.random.uniform(jax.random.PRNGKey(0), (max(1, nbytes // 4),), jnp.float32)
    t = time_jax(jax.jit(lambda x: x + 1), (x,), reps=reps, budget_s=5.0)["seconds"]
    return 2 * x.size * 4 / t


def torch_copy_bandwidth(torch, nbytes: int, reps: int = 20) -> float:
    """The same through torch's device-to-device `copy_` (often closer to the memory's peak)."""
    src = torch.rand(max(1, nbytes // 4), device="cuda")
    dst = torch.empty_like(src)
    t = time_torch(torch, lambda: dst.copy_(src), (), reps=reps, budget_s=5.0)["seconds"]
    return 2 * src.numel() * 4 / t
