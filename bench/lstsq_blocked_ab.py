"""A/B of the lstsq (or, --op qr_r, qr mode 'r') lowerings on the GPU: the one-block-per-matrix
kernels (fused where [A | b] fits on chip, else geqrf + ormqr + trsm) against the blocked QR of
jax_batchla/_ops/qr_blocked.py, for tall matrices m = min(8 n, 4096) (or --m), one right-hand
side, over a grid of batch sizes. Prints a table and writes JSON; the crossover sets
`lstsq.blocked_wins` / `qr._qr_r_blocked_wins`.

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
from jax_batchla._ops import qr as qr_ops


def compiled(op, args, blocked: bool):
    """The op compiled with the blocked form forced on or off (the choice is made when lowering;
    a fresh function per call, so that jax's caches do not hand back an earlier lowering)."""
    module, rule, fn = ((lstsq_ops, "blocked_wins", lstsq_ops.lstsq) if op == "lstsq"
                        else (qr_ops, "_qr_r_blocked_wins", qr_ops.qr_r))
    saved = getattr(module, rule)
    setattr(module, rule, lambda *args: blocked)
    try:
        return jax.jit(lambda *xs: fn(*xs)).lower(*args).compile()
    finally:
        setattr(module, rule, saved)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", choices=["lstsq", "qr_r"], default="lstsq")
    ap.add_argument("--n", type=int, nargs="+", default=[64, 128, 256, 512])
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32, 64, 128, 256])
    ap.add_argument("--m", type=int, nargs="+", default=None,
                    help="rows (each m >= n with each n); default m = min(8 n, 4096)")
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--max-bytes", type=float, default=2e9, help="skip cases whose A is larger")
    ap.add_argument("--jnp", action="store_true", help="also time jnp on the same inputs")
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
                row = {"op": args.op, "dtype": dtype, "n": n, "m": m, "batch": batch}
                xs = (a, b) if args.op == "lstsq" else (a,)
                for name in ("kernel", "blocked"):
                    fj = compiled(args.op, xs, name == "blocked")
                    out = fj(*xs)
                    if args.op == "lstsq":  # |A^T (b - A x)|
                        err = jnp.max(jnp.abs(jnp.matmul(jnp.swapaxes(a, -1, -2), b - a @ out[0],
                                                         precision="highest")))
                    else:  # |R^T R - A^T A| / |A^T A|
                        ata = jnp.matmul(jnp.swapaxes(a, -1, -2), a, precision="highest")
                        rtr = jnp.matmul(jnp.swapaxes(out, -1, -2), out, precision="highest")
                        err = jnp.max(jnp.abs(rtr - ata)) / jnp.max(jnp.abs(ata))
                    row[name + "_s"] = time_jax(fj, xs, reps=5, budget_s=3.0)["seconds"]
                    row[name + "_err"] = float(err)
                if args.jnp:  # the same inputs through jnp, for the speedups the issues ask
                    ref = (jax.jit(jax.vmap(jnp.linalg.lstsq)) if args.op == "lstsq"
                           else jax.jit(lambda a: jnp.linalg.qr(a, mode="r")))
                    row["jnp_s"] = time_jax(ref, xs, reps=3, budget_s=3.0)["seconds"]
                row["blocked_speedup"] = row["kernel_s"] / row["blocked_s"]
                rows.append(row)
                print(f"{args.op} {dtype} n={n:4d} m={m:5d} batch={batch:5d}  kernel {row['kernel_s'] * 1e3:9.3f} ms"
                      f"  blocked {row['blocked_s'] * 1e3:9.3f} ms  x{row['blocked_speedup']:6.2f}"
                      f"  err {row['kernel_err']:.1e} / {row['blocked_err']:.1e}"
                      + (f"  jnp {row['jnp_s'] * 1e3:9.3f} ms (x{row['jnp_s'] / row['kernel_s']:.1f}"
                         f" / x{row['jnp_s'] / row['blocked_s']:.1f})" if args.jnp else ""),
                      flush=True)
                if args.out:  # after every case: a timed-out call keeps what it measured
                    with open(args.out, "w") as fh:
                        json.dump({"device": str(jax.devices()[0]), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
