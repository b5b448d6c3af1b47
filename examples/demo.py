"""Solve a batch of SPD and general systems with jax_batchla and with jnp.linalg, check and time both.

Runs on whatever device jax picks (CPU without a GPU). Usage: python examples/demo.py [n] [batch]
"""

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jax_batchla
from jax_batchla import linalg as bla
from jax_batchla.scipy import linalg as bsl


def timed(fn, *args, reps=10):
    jax.block_until_ready(fn(*args))  # compile + warm up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    key_a, key_b, key_c = jax.random.split(jax.random.PRNGKey(0), 3)
    g = jax.random.normal(key_a, (batch, n, n), jnp.float32)
    a = g @ jnp.swapaxes(g, -1, -2) / n + jnp.eye(n, dtype=jnp.float32)
    c = jax.random.normal(key_c, (batch, n, n), jnp.float32) / n ** 0.5 + 2 * jnp.eye(n, dtype=jnp.float32)
    b = jax.random.normal(key_b, (batch, n, 1), jnp.float32)

    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}; "
          f"jax_batchla CUDA kernels built: {jax_batchla.has_cuda()}")
    print(f"batch of {batch} SPD and {batch} general {n}x{n} float32 systems")
    cases = [
        ("cholesky", jax.jit(bla.cholesky), jax.jit(jnp.linalg.cholesky), (a,)),
        ("solve (assume_a='pos')", jax.jit(lambda a, b: bsl.solve(a, b, assume_a="pos")),
         jax.jit(jnp.linalg.solve), (a, b)),
        ("solve (general, LU)", jax.jit(bla.solve), jax.jit(jnp.linalg.solve), (c, b)),
        ("inv", jax.jit(bla.inv), jax.jit(jnp.linalg.inv), (c,)),
        ("det", jax.jit(bla.det), jax.jit(jnp.linalg.det), (c,)),
    ]
    print(f"{'op':24s} {'jax_batchla ms':>14s} {'jnp.linalg ms':>14s} {'speedup':>8s} {'max rel diff':>12s}")
    for name, ours, theirs, args in cases:
        x, y = ours(*args), theirs(*args)
        diff = float(jnp.max(jnp.abs(x - y)) / jnp.max(jnp.abs(y)))
        t_ours, t_jnp = timed(ours, *args), timed(theirs, *args)
        print(f"{name:24s} {t_ours * 1e3:14.3f} {t_jnp * 1e3:14.3f} {t_jnp / t_ours:7.2f}x {diff:12.2e}")
        assert diff < 1e-3, f"{name}: results differ from jnp.linalg by {diff}"


if __name__ == "__main__":
    main()
