"""Autotuner of the interleaved-layout solvers (issue 6). Run on the GPU machine:

    python3 -m bench.autotune_interleaved [--nmax 64] [--out bench/results/<gpu>-interleaved-tune.json]
    python3 -m bench.autotune_interleaved --kinds group --nmin 12 --merge <earlier tune.json>
    python3 -m bench.autotune_interleaved --kinds group --ops posv --nmin 15 --merge <earlier>

(the second times one kind only and keeps an earlier run's winners where they are faster; the
third also one op: the other ops keep every earlier record).

1. Compiles the search space (bench/autotune/variants.cu once per dtype x op, in parallel) with
   `-Xptxas -v`, and records every kernel's registers and spill bytes from ptxas' report.
2. Runs bench/autotune/main.cu, which prunes what cannot win (spills past 64 bytes, fewer than 4 resident
   warps per SM), times the rest on a batch of the benchmark's size (256 MiB of matrices),
   checks each timed variant's result, and picks per (dtype, op, n): kind (registers, fully
   unrolled / tiles, runtime n), loop order, tile size, warps per block, and (posv) the chunk.
3. Writes the winners to cuda/interleaved_tuning.h (bench/il_table.py), which the library
   build compiles in, and every timing to the JSON file. The header then holds none of the rows
   of bench/il_table_overrides.json: re-apply them (`python3 -m bench.il_table --overrides`) or
   drop those this run supersedes (tests/test_il_table.py checks that they are applied).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import time

from bench import il_table

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLAGS = ["-std=c++17", "-O3", "--expt-relaxed-constexpr", f"-I{ROOT}"]


# bench/autotune/variants.cu's parts: which kinds each one registers.
PARTS = {0: ("full", "tile", "shared"), 1: ("shared",), 2: ("shared",), 3: ("group",), 4: ("block",)}


OPS = ("potrf", "potrs", "posv", "trsm")  # il::Op order


def compile_search_space(build: pathlib.Path, arch: str, kinds: tuple, ops: tuple) -> dict:
    """Builds the tuner (the parts holding `kinds`, for `ops`); returns ptxas' spill report."""
    build.mkdir(parents=True, exist_ok=True)
    for old in build.glob("*.o"):
        old.unlink()
    parts = [p for p, has in PARTS.items() if set(has) & set(kinds)]
    jobs = [(dtype, OPS.index(op), part) for dtype in ("float", "double") for op in ops for part in parts]

    def nvcc(args, log):
        r = subprocess.run(["nvcc", *FLAGS, f"-arch={arch}", *args], capture_output=True, text=True)
        (build / log).write_text(r.stdout + r.stderr)
        if r.returncode:
            sys.exit(f"nvcc failed ({log}):\n{r.stderr[-3000:]}")
        return r.stdout + r.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        futures = [pool.submit(nvcc, ["-Xptxas", "-v", f"-DIL_DTYPE={d}", f"-DIL_OP={o}", f"-DIL_PART={p}",
                                      "-c", str(ROOT / "bench/autotune/variants.cu"), "-o",
                                      str(build / f"variants_{d}_{o}_{p}.o")], f"ptxas_{d}_{o}_{p}.log")
                   for d, o, p in jobs]
        futures.append(pool.submit(nvcc, ["-c", str(ROOT / "bench/autotune/main.cu"), "-o",
                                          str(build / "main.o")], "main.log"))
        logs = [f.result() for f in futures]
    objects = [str(p) for p in sorted(build.glob("*.o"))]
    subprocess.run(["nvcc", f"-arch={arch}", "-o", str(build / "autotune_il"), *objects], check=True)
    spills = [int(m) for log in logs for m in re.findall(r"(\d+) bytes spill stores", log)]
    return {"kernels": len(spills), "spilling": sum(1 for s in spills if s > 0)}


def pick(candidates: list) -> list:
    """Per (dtype, op, n) the fastest candidate; for posv any fused kind beats a tile one: where
    posv's variant is a tile the library composes potrf + potrs (IlPosvFused), which is slower
    than the tile posv the tuner times (that one keeps its factor in a scratch buffer)."""
    def rank(r):
        return (r["op"] == "posv" and r["kind"] == "tile", r["seconds"])

    best = {}
    for r in candidates:
        key = (r["dtype"], r["op"], r["n"])
        if key not in best or rank(r) < rank(best[key]):
            best[key] = r
    return list(best.values())


def variant(rec: dict) -> dict:
    return {k: rec.get(k, 0) for k in ("kind", "order", "nb", "warps", "pad", "alt")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nmin", type=int, default=1)
    parser.add_argument("--nmax", type=int, default=il_table.TUNED_MAX_N)
    parser.add_argument("--kinds", default="full,tile,shared,group,block", help="the kinds to build and time")
    parser.add_argument("--ops", default=",".join(OPS), help="the ops to build and time")
    parser.add_argument("--merge", help="an earlier run's JSON: its winners stay where they are faster")
    parser.add_argument("--bytes", type=int, default=256 << 20)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--build", default="/tmp/batchla_autotune")
    parser.add_argument("--out", default=str(ROOT / "bench/results/nvidia-h200-interleaved-tune.json"))
    parser.add_argument("--no-table", action="store_true", help="do not rewrite cuda/interleaved_tuning.h")
    parser.add_argument("--posv-read", choices=("lower", "upper"), default="lower",
                        help="the triangle posv reads (upper: interleaved.solve's default)")
    args = parser.parse_args()

    t0 = time.time()
    kinds = tuple(args.kinds.split(","))
    ops = tuple(args.ops.split(","))
    spill_report = compile_search_space(pathlib.Path(args.build), args.arch, kinds, ops)
    print(f"compiled the search space in {time.time() - t0:.0f} s; ptxas: {spill_report}", flush=True)
    t1 = time.time()
    proc = subprocess.run([f"{args.build}/autotune_il", "--nmin", str(args.nmin), "--nmax", str(args.nmax),
                           "--bytes", str(args.bytes), "--kinds", args.kinds, "--ops", args.ops,
                           "--posv-read", args.posv_read],
                          capture_output=True, text=True)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    print(proc.stderr[-3000:])
    print(f"timed {sum(r['record'] == 'timing' and 'seconds' in r for r in records)} variants, pruned "
          f"{sum('pruned' in r for r in records)}, in {time.time() - t1:.0f} s", flush=True)
    failed = [r for r in records if r.get("ok") is False]
    winners = pick([r for r in records if r["record"] == "winner"])
    if args.merge:  # the earlier run's records of the other kinds stay; per (dtype, op, n) the faster
        earlier = [e for e in json.loads(pathlib.Path(args.merge).read_text())["records"]
                   if not (e.get("kind") in kinds and e.get("op") in ops and args.nmin <= e.get("n", 0) <= args.nmax)]
        # (the kinds, ops and sizes timed now replace their old records)
        winners = pick([e for e in earlier if e["record"] == "winner"] + winners)
        records = [r for r in earlier + records if r["record"] != "winner"] + winners
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps({"gpu": gpu, "date": time.strftime("%Y-%m-%d"), "bytes": args.bytes,
                       "ptxas": spill_report, "failed_checks": len(failed)})
    body = ",\n".join(json.dumps(r, separators=(",", ":")) for r in records)  # one record per line
    pathlib.Path(args.out).write_text(f'{head[:-1]}, "records": [\n{body}\n]}}\n')
    print(f"wrote {args.out}")
    if proc.returncode or failed:
        sys.exit(f"autotune: {len(failed)} variants failed their check (rc {proc.returncode})")
    if args.no_table:
        return
    table, chunks, default = il_table.heuristic()  # n beyond --nmax keep the starting table
    for r in winners:
        table[(r["dtype"], r["op"], r["n"])] = variant(r)
        if r["op"] == "posv":
            chunks[(r["dtype"], r["n"])] = r["c"]
    for dtype in il_table.DTYPES:  # beyond the table: the tile winner at the largest tuned n
        tiles = [r for r in winners if r["dtype"] == dtype and r["op"] == "posv" and r["kind"] == "tile"]  # any n
        if tiles:
            default[dtype] = variant(max(tiles, key=lambda r: r["n"]))
    il_table.write(table, chunks, default, source=f"{gpu}, {time.strftime('%Y-%m-%d')}, "
                   f"batch of {args.bytes >> 20} MiB per n (bench/autotune_interleaved.py)")
    print(f"wrote {il_table.HEADER}")
    for r in winners:
        print(f"  {r['dtype']} {r['op']:5s} n={r['n']:2d}: {r['kind']} pad={r.get('pad', 0)} {r['order']} nb={r['nb']} "
              f"warps={r['warps']} c={r['c']} {r['seconds'] * 1e6:.1f} us")


if __name__ == "__main__":
    main()
