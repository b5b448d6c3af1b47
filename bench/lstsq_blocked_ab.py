"""A/B of the lstsq lowerings (jax_batchla/_ops/lstsq.py) on the GPU: the one-block-per-matrix
kernel (fused where [A | b] fits on chip, else geqrf + ormqr + trsm) against the blocked form, for
tall matrices m = min(8 n, 4096), one right-hand side, over a grid of batch sizes. Prints a table
and writes JSON; the crossover sets `blocked_wins`.

    PYTHONPATH=$PWD python3 -m bench.lstsq_blocked_ab --out results/x.json
"""
from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np

from bench.ops import tall_rows
from bench.timing import time_jax
from jax_batchla._ops import lstsq as lstsq_ops


def compiled(a, b, blocked: bool):
    """lstsq_p compiled with the blocked form forced on or off (the choice is made when lowering;
    a fresh function per call, so that jax's caches do not hand back an earlier lowering)."""
    saved = lstsq_ops.blocked_wins
    lstsq_ops.blocked_wins = lambda *args: blocked
    try:
        return jax.jit(lambda a, b: lstsq_ops.lstsq(a, b)).lower(a, b).compile()
    finally:
        lstsq_ops.blocked_wins = saved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[64, 128, 256, 512])
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32, 64, 128, 256])
    ap.add_argument("--m", type=int, nargs="+", default=None,
                    help="rows (each m >= n with each n); default m = min(8 n, 4096)")
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--max-bytes", type=float, default=2e9, help="skip cases whose A is larger")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    jax.config.update("jax_enable_x64", True)
    rows = []
    for dtype in args.dtypes:
        for n, m in [(n, m) for n in args.n for m in (args.m or [tall_rows(n)]) if m >= n]:
            for batch in args.batch:
                if batch * m * n * np.dtype(dtype).itemsize > args.max_bytes:
                    continue
                key = jax.random.PRNGKey(n + batch)
                a = jax.random.normal(key, (batch, m, n), dtype)
                b = jax.random.normal(jax.random.fold_in(key, 1), (batch, m, 1), dtype)
                row = {"dtype": dtype, "n": n, "m": m, "batch": batch}
                for name in ("kernel", "blocked"):
                    fj = compiled(a, b, name == "blocked")
                    x = fj(a, b)[0]
                    err = jnp.max(jnp.abs(jnp.matmul(jnp.swapaxes(a, -1, -2), b - a @ x,
                                                     precision="highest")))
                    row[name + "_s"] = time_jax(fj, (a, b), reps=5, budget_s=3.0)["seconds"]
                    row[name + "_normal_eq_err"] = float(err)
                row["blocked_speedup"] = row["kernel_s"] / row["blocked_s"]
                rows.append(row)
                print(f"{dtype} n={n:4d} m={m:5d} batch={batch:5d}  kernel {row['kernel_s'] * 1e3:9.3f} ms"
                      f"  blocked {row['blocked_s'] * 1e3:9.3f} ms  x{row['blocked_speedup']:6.2f}"
                      f"  |A^T r| {row['kernel_normal_eq_err']:.1e} / {row['blocked_normal_eq_err']:.1e}",
                      flush=True)
                if args.out:  # after every case: a timed-out call keeps what it measured
                    with open(args.out, "w") as fh:
                        json.dump({"device": str(jax.devices()[0]), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
