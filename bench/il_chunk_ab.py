"""A/B of the interleaved layout's chunk for il_posv on the public API: the bench's posv inputs
(256 MiB of A) put into the layout once per chunk, `interleaved.solve(assume_a='pos')` timed
for every chunk of a case in turn, ROUNDS times (alternating, so drift hits all alike); prints
each chunk's best and median of the rounds' medians (bench/NOTES.md, "Chunks of the lane-group
rows").

    python3 -m bench.il_chunk_ab float32:44:512,32 float64:36:32,64 [--rounds 3]
"""
from __future__ import annotations

import argparse
import statistics

import jax

jax.config.update("jax_enable_x64", True)

import jax_batchla as jb  # noqa: E402
from bench.il_order_probe import _posv_inputs  # noqa: E402
from bench.timing import time_jax  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cases", nargs="+", help="dtype:n:c1,c2,...")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    solve = jax.jit(lambda a, b: jb.interleaved.solve(a, b, assume_a="pos"))
    print("| dtype | n | chunk | best us | median us | x first chunk (median) |")
    print("|---|---:|---:|---:|---:|---:|")
    for case in args.cases:
        dtype, n, chunks = case.split(":")
        a, b = _posv_inputs(dtype, int(n))
        runs = {}
        for c in map(int, chunks.split(",")):
            ai = jb.interleaved.to_interleaved(a, c)
            runs[c] = ((ai, jb.interleaved.to_interleaved(b, c)), [])
        for _ in range(args.rounds):
            for c, (xs, times) in runs.items():
                times.append(time_jax(solve, xs)["seconds"] * 1e6)
        first = statistics.median(next(iter(runs.values()))[1])
        for c, (_, times) in runs.items():
            med = statistics.median(times)
            print(f"| {dtype} | {n} | {c} | {min(times):.1f} | {med:.1f} | {med / first:.3f} |", flush=True)
        del runs


if __name__ == "__main__":
    main()
