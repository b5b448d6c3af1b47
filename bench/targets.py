"""Checks a benchmark JSON against the speed targets of the issues and prints a markdown table.

Usage: python3 -m bench.targets bench/results/nvidia-h200.json [--copy-gbps 4232]
Each target: (op, predicate on n, metric, threshold[, dtype]). Metrics: 'fraction' (of the
roofline), 'x_jnp' / 'x_torch' / 'x_ours_standard' (that library's time / our time in the same
run; ours_standard is our standard-layout kernel, timed for the interleaved il_ ops), 'x_peer' (the
faster of jnp and torch / ours), 'best_gflops' (one row per dtype: our highest GFLOP/s over the n
in range, shown at the n that reached it). A target with a dtype applies to that dtype only.
--copy-gbps G: 'fraction' against a copy bandwidth of G GB/s instead of the run's own (e.g. an
H100 run at 4232, the H200's: what a kernel that takes the same time on both cards, i.e. one that
is latency- or issue-bound and not memory-bound, would reach on an H200; for a memory-bound row
it understates the H200's fraction).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, NamedTuple


class Target(NamedTuple):
    op: str
    in_range: Callable[[int], bool]
    metric: str
    threshold: float
    dtype: str | None = None


# Seed 001 peaked at ~600 GFLOP/s (f32, P100) for its interleaved Cholesky solve at small n; issue 6
# asks 10x that on the H200 "for the n where the paper peaked": our best f32 il_posv over n = 8..32.
SEED001_PEAK_GFLOPS = 600.0

TARGETS = [Target(*t) for t in [  # issue 3: the Cholesky family
    ("cholesky", lambda n: n <= 32, "fraction", 0.5),
    ("cholesky", lambda n: 64 <= n <= 128, "fraction", 0.3),
    ("cholesky", lambda n: n in (256, 512), "x_jnp", 2.0),
    ("cho_solve", lambda n: n <= 256, "fraction", 0.5),
    ("solve_triangular", lambda n: n <= 256, "fraction", 0.5),
    ("posv", lambda n: n <= 64, "x_jnp", 5.0),
    # issue 4: the LU family
    ("lu", lambda n: n <= 32, "fraction", 0.5),
    ("lu", lambda n: True, "x_peer", 2.0),
    ("solve", lambda n: n <= 64, "x_jnp", 5.0),
    ("solve", lambda n: 128 <= n <= 512, "x_jnp", 2.0),
    ("inv", lambda n: n <= 128, "x_jnp", 3.0),
    ("det", lambda n: n <= 128, "x_jnp", 3.0),
    # issue 5: the QR family (lstsq on tall m = min(8n, 4096) inputs, one rhs column)
    ("qr_r", lambda n: n <= 32, "fraction", 0.4),
    ("qr_r", lambda n: n >= 128, "x_jnp", 20.0),
    ("qr_r", lambda n: n >= 128, "x_torch", 5.0),
    ("qr", lambda n: n >= 64, "x_jnp", 10.0),
    ("lstsq", lambda n: True, "x_jnp", 10.0),
    # issue 6: the interleaved layout (posv bytes: read A and b, write x; conversions: read + write)
    ("il_posv", lambda n: n <= 32, "fraction", 0.7),
    ("il_posv", lambda n: 32 < n <= 64, "fraction", 0.5),
    ("il_posv", lambda n: n <= 16, "x_ours_standard", 1.3),
    ("il_posv", lambda n: 8 <= n <= 32, "best_gflops", 10 * SEED001_PEAK_GFLOPS, "float32"),
    ("to_interleaved", lambda n: True, "fraction", 0.7),
    ("from_interleaved", lambda n: True, "fraction", 0.7),
]]


def fraction(r, meta, copy_gbps=None):
    """Our roofline fraction of row r, against copy_gbps (GB/s) when given."""
    if copy_gbps is None:
        return r["roofline_fraction"]
    ideal = max(r["bytes"] / (copy_gbps * 1e9), r["flops"] / meta["peak_flops"])
    return ideal / r["seconds"]


def evaluate(rows, meta=None, copy_gbps=None):
    by_key = {(r["lib"], r["op"], r["dtype"], r["n"]): r for r in rows}
    out = []
    for op, in_range, metric, threshold, only_dtype in TARGETS:
        best = {}                                   # best_gflops: dtype -> (value, n)
        for (lib, o, dtype, n), r in sorted(by_key.items(), key=lambda kv: (kv[0][2], kv[0][3])):
            if (lib != "ours" or o != op or not in_range(n) or r.get("seconds") is None
                    or (only_dtype is not None and dtype != only_dtype)):
                continue
            if metric == "best_gflops":
                best[dtype] = max(best.get(dtype, (-1.0, n)), (r["gflop_per_s"], n))
                continue
            if metric == "fraction":
                value = fraction(r, meta, copy_gbps)
            else:
                libs = ("jnp", "torch") if metric == "x_peer" else (metric[2:],)
                peers = [by_key.get((lib_, op, dtype, n), {}).get("seconds") for lib_ in libs]
                peers = [p for p in peers if p]
                value = min(peers) / r["seconds"] if peers else float("nan")
            out.append((op, dtype, n, metric, threshold, value, value >= threshold))
        out += [(op, dtype, n, metric, threshold, value, value >= threshold)
                for dtype, (value, n) in best.items()]
    return out


def main(argv):
    parser = argparse.ArgumentParser(description="Speed targets of the issues against a bench JSON.")
    parser.add_argument("path", nargs="?", default="bench/results/nvidia-h200.json")
    parser.add_argument("--copy-gbps", type=float, default=None,
                        help="copy bandwidth (GB/s) for 'fraction' instead of the run's own")
    args = parser.parse_args(argv)
    if args.copy_gbps is not None:
        print(f"Fractions against {args.copy_gbps:g} GB/s of copy bandwidth, not the run's own.\n")
    data = json.load(open(args.path))
    results = evaluate(data["rows"], data.get("meta"), args.copy_gbps)
    print("| op | dtype | n | metric | target | measured | met |\n|---|---|---:|---|---:|---:|---|")
    for op, dtype, n, metric, threshold, value, ok in results:
        print(f"| {op} | {dtype} | {n} | {metric} | {threshold:g} | {value:.2f} | {'yes' if ok else 'NO'} |")
    missed = sum(not r[-1] for r in results)
    print(f"\n{len(results) - missed} of {len(results)} target rows met")


if __name__ == "__main__":
    main(sys.argv[1:])
