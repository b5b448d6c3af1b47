"""A/B of the fused LU kernels (gesv / slogdet on chip) against their compositions (getrf +
getrs, getrf + the LU diagonal) through the public API on the GPU, with jnp in the same process:
the numbers behind cuda/lu_blocked.cu LuBlockedFusedWins (which `_ffi.lu_fused_wins` asks when a
lowering picks its form). Bench batches (256 MiB of a), one right-hand side.

    PYTHONPATH=$PWD python3 -m bench.lu_composed_ab --n 33 48 64 --out results/x.json
"""
from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np

import jax_batchla.linalg as bl
from bench.timing import time_jax
from jax_batchla import _ffi


def run_case(op, dtype, n, reps):
    batch = max(1, (256 << 20) // (n * n * np.dtype(dtype).itemsize))
    rng = np.random.default_rng(n)
    a = jnp.asarray(rng.standard_normal((batch, n, n)) + n * np.eye(n), dtype)
    b = jnp.asarray(rng.standard_normal((batch, n, 1)), dtype)
    ours, ref = (bl.solve, jnp.linalg.solve) if op == "solve" else (bl.slogdet, jnp.linalg.slogdet)
    args = (a, b) if op == "solve" else (a,)
    row = {"op": op, "dtype": np.dtype(dtype).name, "n": n, "batch": batch}
    outs = {}
    for form, fused in (("fused", True), ("composed", False)):
        saved = _ffi.lu_fused_wins
        _ffi.lu_fused_wins = lambda *_, fused=fused: fused
        try:
            f = jax.jit(lambda *xs: ours(*xs)).lower(*args).compile()
        finally:
            _ffi.lu_fused_wins = saved
        row[form + "_s"] = time_jax(f, args, reps=reps)["seconds"]
        outs[form] = jax.device_get(f(*args))
    row["jnp_s"] = time_jax(jax.jit(ref), args, reps=reps)["seconds"]
    x0, x1 = outs["fused"], outs["composed"]
    x0 = x0 if op == "solve" else x0[1]
    x1 = x1 if op == "solve" else x1[1]
    row["max_rel_diff"] = float(np.max(np.abs(x0 - x1)) / max(np.max(np.abs(x0)), 1e-30))
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, nargs="+", default=[33, 48, 64])
    p.add_argument("--ops", nargs="+", default=["solve", "slogdet"])
    p.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--out")
    args = p.parse_args()
    jax.config.update("jax_enable_x64", True)
    rows = []
    print("| op | dtype | n | batch | fused ms | composed ms | composed / fused | jnp ms | x jnp (best) | rel diff |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for op in args.ops:
        for dt in args.dtypes:
            for n in args.n:
                r = run_case(op, dt, n, args.reps)
                rows.append(r)
                best = min(r["fused_s"], r["composed_s"])
                print(f"| {op} | {dt} | {n} | {r['batch']} | {r['fused_s'] * 1e3:.3f} | {r['composed_s'] * 1e3:.3f} | "
                      f"{r['composed_s'] / r['fused_s']:.2f} | {r['jnp_s'] * 1e3:.3f} | {r['jnp_s'] / best:.2f} | "
                      f"{r['max_rel_diff']:.1e} |", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": str(jax.devices()[0]), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
