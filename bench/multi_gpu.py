"""Batch split over several GPUs against one GPU (issue 7), in one run.

For each op (cholesky, lu, qr, solve), n and dtype, the same batch (`--bytes` of matrices in all)
runs once on GPU 0 alone and once sharded along the batch over every GPU present
(`NamedSharding(Mesh(devices, ('batch',)), P('batch'))`, one jit). Reported per case: time,
matrices/s on 1 and on all GPUs, the speedup (target >= 1.9x on 2 GPUs), whether the sharded
program has any collective, and whether the sharded results equal the single-GPU ones bit for bit.

    python3 -m bench.multi_gpu --out bench/results/nvidia-h200-x2-scaling.json
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import jax_batchla
from bench.ops import OPS, make_inputs
from bench.run import csv, parse_bytes
from bench.timing import time_jax

OP_NAMES = ("cholesky", "lu", "qr", "solve")
COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce", "reduce-scatter")
TARGET = 1.9
# Samples of >= 50 ms (k calls back to back, k <= 64): the per-sample sync and the first call's
# dispatch (tens of µs, more for a program on several devices) then cost < 1 % of a sample.
TIMING = {"target_s": 0.05, "budget_s": 3.0}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", type=csv(str), default=list(OP_NAMES))
    p.add_argument("--n", type=csv(int), default=[16, 128])
    p.add_argument("--dtypes", type=csv(str), default=["float32", "float64"])
    p.add_argument("--bytes", type=parse_bytes, default=2 * 2**30,
                   help="bytes of n x n matrices in the whole batch (split over the GPUs)")
    p.add_argument("--platform", default="gpu",
                   help="'cpu' (with XLA_FLAGS=--xla_force_host_platform_device_count=2) to try the script")
    p.add_argument("--out", type=Path, default=None, help="JSON path (a .md table is written next to it)")
    return p.parse_args(argv)


def case(op, n, dtype, nbytes, devices):
    ndev = len(devices)
    itemsize = np.dtype(dtype).itemsize
    batch = max(ndev, nbytes // (n * n * itemsize)) // ndev * ndev
    with jax.default_device(devices[0]):
        inputs = make_inputs(batch, n, dtype)
    args = tuple(inputs[k] for k in op.args)
    fn = jax.jit(lambda *x: op.ours(jax_batchla, *x))
    one = time_jax(fn, args, **TIMING)
    single_out = jax.device_get(fn(*args))
    # One GPU on its share of the batch: the speedup the kernels allow at that batch size (the
    # scale-out itself is perfect when seconds_all equals this).
    share = time_jax(fn, tuple(x[: batch // ndev] for x in args), **TIMING)

    shard = NamedSharding(Mesh(np.array(devices), ("batch",)), P("batch"))
    sharded_args = tuple(jax.device_put(x, shard) for x in args)
    fn_all = jax.jit(lambda *x: op.ours(jax_batchla, *x), out_shardings=shard)
    hlo = fn_all.lower(*sharded_args).compile().as_text()
    alls = time_jax(fn_all, sharded_args, **TIMING)
    sharded_out = jax.device_get(fn_all(*sharded_args))
    same = all(np.array_equal(a, b) for a, b in zip(jax.tree_util.tree_leaves(single_out),
                                                    jax.tree_util.tree_leaves(sharded_out)))
    return {"op": op.name, "n": n, "dtype": dtype, "batch": batch, "gpus": ndev,
            "seconds_1gpu": one["seconds"], "seconds_all": alls["seconds"],
            "seconds_1gpu_share": share["seconds"],
            "matrices_per_s_1gpu": batch / one["seconds"], "matrices_per_s_all": batch / alls["seconds"],
            "speedup": one["seconds"] / alls["seconds"],
            "collectives": [c for c in COLLECTIVES if c in hlo], "bit_identical": same}


def markdown(rows, meta):
    header = ["op", "n", "dtype", "batch", "1 GPU ms", "all GPUs ms", "1 GPU, share ms", "1 GPU mat/s",
              "all GPUs mat/s", "speedup", "collectives", "identical"]
    lines = [f"# Batch split over {meta['gpus']} GPUs ({meta['device']}) against one GPU", "",
             f"jax {meta['jax']}; {meta['bytes'] / 2**30:.1f} GiB of matrices per case; "
             f"target: speedup >= {TARGET}x.", "",
             f"`1 GPU, share ms`: one GPU on 1/{meta['gpus']} of the batch (what perfect scale-out "
             "would take).", "", "| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for r in rows:
        cells = [r["op"], r["n"], r["dtype"], r["batch"], f"{1e3 * r['seconds_1gpu']:.3f}",
                 f"{1e3 * r['seconds_all']:.3f}", f"{1e3 * r['seconds_1gpu_share']:.3f}",
                 f"{r['matrices_per_s_1gpu']:.3g}", f"{r['matrices_per_s_all']:.3g}",
                 f"**{r['speedup']:.2f}x**", ", ".join(r["collectives"]) or "none",
                 "yes" if r["bit_identical"] else "NO"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    args = parse_args(argv)
    jax.config.update("jax_enable_x64", True)  # else float64 inputs silently become float32
    try:
        devices = jax.devices(args.platform)
    except RuntimeError:
        devices = []
    if len(devices) < 2:
        sys.exit(f"bench.multi_gpu needs at least 2 {args.platform} devices, found {len(devices)}")
    meta = {"device": devices[0].device_kind, "gpus": len(devices), "jax": jax.__version__,
            "bytes": args.bytes, "host": platform.node()}
    rows = []
    for name in args.ops:
        for dtype in args.dtypes:
            for n in args.n:
                r = case(OPS[name], n, dtype, args.bytes, devices)
                rows.append(r)
                print(f"{name:9s} n={n:4d} {dtype}: 1 GPU {1e3 * r['seconds_1gpu']:.3f} ms, "
                      f"{len(devices)} GPUs {1e3 * r['seconds_all']:.3f} ms (1 GPU on its share "
                      f"{1e3 * r['seconds_1gpu_share']:.3f} ms), speedup {r['speedup']:.2f}x, "
                      f"collectives {r['collectives'] or 'none'}, identical {r['bit_identical']}", flush=True)
    table = markdown(rows, meta)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        args.out.with_suffix(".md").write_text(table)
    missed = [r for r in rows if r["speedup"] < TARGET or r["collectives"] or not r["bit_identical"]]
    print(f"{len(rows) - len(missed)}/{len(rows)} cases meet the target, have no collective and match")


if __name__ == "__main__":
    main()
