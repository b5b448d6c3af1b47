"""Run by test_hardening.test_command_buffers in a fresh process (XLA_FLAGS and
JAX_BATCHLA_COUNT_LAUNCHES=1 set by the caller): python command_buffer_check.py {on|off} OUT.npz

Every op of test_hardening.OPS runs inside a jitted lax.fori_loop (3 steps, the matrix perturbed
per step so no step is hoisted out), called three times. The last call's results go to OUT.npz
for the caller to compare across the two modes. The evidence that our kernels ran inside XLA's
command buffers (CUDA graphs) comes from the handlers themselves: `_cuda.launch_counts()` counts
the calls whose stream was being captured into a graph. XLA converts thunks to command buffers
after HLO optimization, so the optimized HLO does not show it. With 'on' every program must have
had its handlers captured, with 'off' never (else exit status 1)."""

import os
import sys

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from test_hardening import IL_MAX_N, OPS, _inputs  # noqa: E402

SIZES = [12, 100]


def looped(fn):
    def run(a, b):
        def step(i, acc):
            out = fn(a * (1 + i.astype(a.dtype) / 64), b)
            return jax.tree_util.tree_map(lambda s, x: s + x.astype(s.dtype), acc, out)

        zeros = jax.tree_util.tree_map(lambda x: np.zeros(x.shape, x.dtype), jax.eval_shape(fn, a, b))
        return lax.fori_loop(0, 3, step, zeros)
    return jax.jit(run)


def main(mode, path):
    from jax_batchla import _ffi

    if _ffi._cuda is None:
        raise SystemExit("the CUDA module did not load")
    counts = _ffi._cuda.launch_counts
    results, mismatches = {}, []
    for name, (fn, kind) in OPS.items():
        for n in SIZES:
            if name.startswith("il_") and n > IL_MAX_N:
                continue
            for dtype in (np.float32, np.float64):
                a, b = _inputs(kind, n, 37, dtype)
                f = looped(fn)
                direct0, captured0 = counts()
                # XLA runs a command buffer's first execution as plain thunks (warm-up), records
                # the graph on the second and replays it after: the third call's results are the
                # graph's, and with 'on' the handlers must have been captured at least once.
                for _ in range(3):
                    leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(f(a, b))]
                direct, captured = (x - x0 for x, x0 in zip(counts(), (direct0, captured0)))
                ok = captured > 0 if mode == "on" else (captured == 0 and direct > 0)
                if not ok:
                    mismatches.append(f"{name} n={n} {np.dtype(dtype).name}: {direct} direct, "
                                      f"{captured} captured")
                for i, leaf in enumerate(leaves):
                    results[f"{name}-{n}-{np.dtype(dtype).name}-{i}"] = leaf
                print(f"{name} n={n} {np.dtype(dtype).name}: handler calls {direct} direct, "
                      f"{captured} captured", flush=True)
    np.savez(path, **results)
    if mismatches:  # after saving: the caller still compares the results
        raise SystemExit(f"command buffers {mode}: {len(mismatches)} programs did not launch as expected, "
                         f"e.g. {mismatches[:4]}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
