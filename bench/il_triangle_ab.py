"""il_posv reading the lower against the upper triangle, same inputs, same process (issue 6).

    python3 -m bench.il_triangle_ab [--n 12,16,...] [--dtypes float32,float64] [--rounds 2]

The tuner times posv reading the lower triangle (unless `--posv-read upper`); the bench runs
`interleaved.solve` with jnp's default `lower=False`. This times both reads alternately on one
batch (the bench's 256 MiB of A and its inputs), best of `rounds`, and prints us and the upper /
lower ratio per (dtype, n): the staged lane-group forms whose warps copy one 32 B sector of each
line pay 4-7 % for the upper read (bench/NOTES.md, 2026-11-28 g).
"""
from __future__ import annotations

import argparse

import jax

from bench.ops import make_inputs
from bench.run import csv
from bench.timing import time_jax


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=csv(int), default=[12, 16, 20, 24, 28, 32, 40, 48, 64])
    p.add_argument("--dtypes", type=csv(str), default=["float32", "float64"])
    p.add_argument("--bytes", type=int, default=256 << 20)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    jax.config.update("jax_enable_x64", True)

    import jax_batchla.interleaved as il
    solve = {lower: jax.jit(lambda a, b, lower=lower: il.solve(a, b, lower=lower)) for lower in (True, False)}
    print(f"{'dtype':8} {'n':>3} {'chunk':>5} {'lower us':>9} {'upper us':>9} {'upper/lower':>11}", flush=True)
    for dtype in args.dtypes:
        for n in args.n:
            batch = args.bytes // (n * n * jax.numpy.dtype(dtype).itemsize)
            inputs = make_inputs(batch, n, dtype)
            a = il.to_interleaved(inputs["A"])
            b = il.to_interleaved(inputs["b"], a.chunk)
            best = {True: float("inf"), False: float("inf")}
            for _ in range(args.rounds):
                for lower in (True, False):
                    best[lower] = min(best[lower], time_jax(solve[lower], (a, b))["seconds"])
            lo, up = best[True] * 1e6, best[False] * 1e6
            print(f"{dtype:8} {n:3d} {a.chunk:5d} {lo:9.1f} {up:9.1f} {up / lo:11.3f}", flush=True)
            del inputs, a, b


if __name__ == "__main__":
    main()
