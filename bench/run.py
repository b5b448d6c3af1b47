"""Benchmark jax_batchla against jnp (and torch on CUDA): ops × dtypes × n, batch sized to a byte budget.

    python3 -m bench.run [--ops ...] [--dtypes ...] [--n ...] [--bytes 256MiB] [--quick] ...

See bench/README.md for the columns. `--ours jnp` (or JAX_BATCHLA_BENCH_OURS=jnp) benchmarks a
jnp stand-in under the name "ours", so the script runs before the package exists.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import os
import re
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                     # run as `python3 bench/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax
import jax.numpy as jnp

from bench import report
from bench.ops import OP_GROUPS, OPS, JnpStandIn, make_inputs
from bench.timing import copy_bandwidth, time_jax, time_torch, torch_copy_bandwidth

GPU_PEAK_FLOPS = 67e12   # H200 FP32 (CUDA cores) and FP64 (DMMA) peak, ~67 TFLOP/s; see DESIGN.md
QUICK_N = (4, 16, 64, 256)


def parse_bytes(s: str) -> int:
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([KMG]i?B?)?\s*", s)
    if not m:
        raise argparse.ArgumentTypeError(f"bad byte count {s!r} (e.g. 1e6, 64MiB, 1GiB)")
    unit = (m.group(2) or "").rstrip("B")
    scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}[unit]
    return int(float(m.group(1)) * scale)


def csv(kind):
    return lambda s: [kind(x) for x in s.split(",") if x.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", type=csv(str), default=list(OP_GROUPS["standard"]),
                   help=f"comma list from {','.join(OPS)}, or a group: {','.join(OP_GROUPS)} "
                        "(default: standard)")
    p.add_argument("--dtypes", type=csv(str), default=["float32", "float64"])
    p.add_argument("--n", type=csv(int), default=None, help="comma list (default 2,4,...,512)")
    p.add_argument("--bytes", type=parse_bytes, default=256 * 2**20,
                   help="input bytes per batch of matrices: batch = bytes // (n*n*itemsize) (default 256MiB)")
    p.add_argument("--reps", type=int, default=None, help="timed samples per case (default 20, quick 5)")
    p.add_argument("--out", type=Path, default=None,
                   help="JSON path (default bench/results/<device-kind-slug>.json); .md and .png beside it")
    p.add_argument("--no-torch", action="store_true", help="skip torch even if importable")
    p.add_argument("--quick", action="store_true", help=f"n in {QUICK_N}, 5 reps")
    p.add_argument("--ours", choices=["jax_batchla", "jnp"],
                   default=os.environ.get("JAX_BATCHLA_BENCH_OURS", "jax_batchla"),
                   help="'jnp' benchmarks a jnp stand-in as 'ours' (no package needed)")
    p.add_argument("--copy-bytes", type=parse_bytes, default=None,
                   help="buffer size for the copy-bandwidth measurement (default 1GiB on GPU, 64MiB on CPU)")
    p.add_argument("--peak-flops", type=float, default=None,
                   help=f"FLOP ceiling (default {GPU_PEAK_FLOPS:.0e} on GPU, none on CPU)")
    a = p.parse_args(argv)
    a.n = a.n or (list(QUICK_N) if a.quick else [2 ** k for k in range(1, 10)])
    a.reps = a.reps or (5 if a.quick else 20)
    a.ops = list(dict.fromkeys(o for g in a.ops for o in OP_GROUPS.get(g, (g,))))
    unknown = [o for o in a.ops if o not in OPS]
    if unknown:
        p.error(f"unknown ops {unknown}; known: {list(OPS)}")
    return a


def load_ours(which: str):
    """(module, impl name, error string or None)."""
    if which == "jnp":
        return JnpStandIn, "jnp stand-in", None
    try:
        import jax_batchla
        import jax_batchla.interleaved
        import jax_batchla.linalg
        import jax_batchla.scipy.linalg  # noqa: F401
        return jax_batchla, f"jax_batchla {getattr(jax_batchla, '__version__', '')}".strip(), None
    except Exception as e:  # recorded in every 'ours' row; peers still run
        return None, "jax_batchla (import failed)", f"import jax_batchla failed: {type(e).__name__}: {e}"


def load_torch(platform: str, disabled: bool):
    if disabled:
        return None, "disabled (--no-torch)"
    if platform != "gpu":
        return None, "skipped (not a CUDA device)"
    try:
        import torch
        if not torch.cuda.is_available():
            return None, "skipped (torch has no CUDA)"
        torch.backends.cuda.matmul.allow_tf32 = False    # full precision, as DESIGN.md asks of us
        return torch, torch.__version__
    except Exception as e:
        return None, f"not importable: {e}"


def _rel_err(u, r):
    """max |u - r| / max |r| over the finite entries of r; entries equal to the reference count as
    exact, so that a det that overflows to the same infinity on both sides (f32 n = 128) is not a
    NaN error, while an infinity where the reference is finite still gives an infinite one."""
    u = u.astype(r.dtype)
    diff = jnp.where(u == r, 0, jnp.abs(u - r))
    scale = jnp.max(jnp.where(jnp.isfinite(r), jnp.abs(r), 0), initial=0)
    return jnp.max(diff, initial=0) / jnp.where(scale > 0, scale, 1)


@jax.jit
def _check(x, ref):
    """Ops may return several arrays (qr: Q and R): the worst relative error over them."""
    errs = [_rel_err(u, r) for u, r in zip(jax.tree.leaves(x), jax.tree.leaves(ref))]
    return jnp.max(jnp.stack(errs)), _has_nan(x)


def _has_nan(x):
    return jnp.any(jnp.stack([jnp.isnan(u).any() for u in jax.tree.leaves(x)]))


def _addresses(args):
    """Device addresses of the arrays the timed call reads (hex), or None where an array has no
    single buffer: an interleaved case's time has moved by 20-40 % between runs with nothing else
    changed (bench/NOTES.md, "An intermittent slowdown at n = 24"), so the rows keep where the
    inputs sat."""
    try:
        return [hex(x.unsafe_buffer_pointer()) for x in jax.tree.leaves(args)]
    except Exception:  # sharded or deleted arrays, backends without the call
        return None


def run_case(lib, op, inputs, ref, ours_mod, ours_err, torch, reps):
    """Compile, check against ref, time. Returns (timing dict, output or None). Raises on failure."""
    args = tuple(inputs[k] for k in op.args)
    if lib == "torch":
        targs = tuple(torch.from_dlpack(a) for a in args)
        fn = lambda *a: op.torch(torch, *a)  # noqa: E731
        t0 = time.perf_counter()
        out = fn(*targs)
        torch.cuda.synchronize()
        res = {"compile_s": time.perf_counter() - t0}
        if ref is not None:
            try:
                outs = out if isinstance(out, tuple) else (out,)
                err, nan = _check(tuple(jax.dlpack.from_dlpack(o.contiguous()) for o in outs),
                                  ref if isinstance(ref, tuple) else (ref,))
                res.update(max_rel_err=float(err), has_nan=bool(nan))
            except Exception as e:   # a failed check should not drop the timing
                res["check_error"] = f"{type(e).__name__}: {e}"[:300]
        del out
        res.update(time_torch(torch, fn, targs, reps=reps))
        return res, None
    to_standard = None
    if lib in ("ours", "ours_standard"):
        if ours_err:
            raise RuntimeError(ours_err)
        impl = op if lib == "ours" else OPS[op.standard]
        f = jax.jit(lambda *a: impl.ours(ours_mod, *a))
        if lib == "ours" and op.ours_inputs:           # layout conversion: before, not timed
            args = jax.block_until_ready(op.ours_inputs(ours_mod, *args))
        if lib == "ours" and op.ours_output:
            to_standard = lambda x: op.ours_output(ours_mod, x)  # noqa: E731
    else:
        f = jax.jit(op.jnp)
    t0 = time.perf_counter()
    out = jax.block_until_ready(f(*args))
    res = {"compile_s": time.perf_counter() - t0}         # first call: trace + compile + run
    if lib == "jnp":
        res["has_nan"] = bool(_has_nan(out))
    elif ref is not None:
        err, nan = _check(to_standard(out) if to_standard else out, ref)
        res.update(max_rel_err=float(err), has_nan=bool(nan))
    res.update(time_jax(f, args, reps=reps))
    if lib == "ours":
        res["input_addresses"] = _addresses(args)
    return res, out


def main(argv=None):
    args = parse_args(argv)
    t_start = time.perf_counter()
    jax.config.update("jax_enable_x64", True)
    dev = jax.devices()[0]
    platform, kind = dev.platform, dev.device_kind
    ours_mod, ours_impl, ours_err = load_ours(args.ours)
    torch, torch_info = load_torch(platform, args.no_torch)
    # jnp first: its output is the reference; "ours_standard" only for ops that name a standard one
    libs = ["jnp", "ours", "ours_standard"] + (["torch"] if torch else [])

    copy_bytes = args.copy_bytes or (2**30 if platform == "gpu" else 64 * 2**20)
    # The roofline's bandwidth is the best copy measured in this run (a higher ceiling is the
    # stricter one for us): jax's streaming `x + 1` and, where torch runs, its device copy.
    copy_bws = {"jax": copy_bandwidth(copy_bytes)}
    if torch:
        copy_bws["torch"] = torch_copy_bandwidth(torch, copy_bytes)
    copy_bw = max(copy_bws.values())
    peak = args.peak_flops or (GPU_PEAK_FLOPS if platform == "gpu" else None)
    slug = re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-") or "unknown"
    out_path = args.out or Path(__file__).resolve().parent / "results" / f"{slug}.json"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"device_kind": kind, "platform": platform, "jax_version": jax.__version__,
            "torch": torch_info, "ours_impl": ours_impl, "ours_error": ours_err,
            "copy_bw": copy_bw, "copy_bw_by_lib": copy_bws, "copy_bytes": copy_bytes, "peak_flops": peak,
            "bytes_budget": args.bytes, "reps": args.reps,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "argv": sys.argv[1:] if argv is None else list(argv)}
    if ours_err:
        print(f"WARNING: {ours_err}; 'ours' rows will carry this error (use --ours jnp for a stand-in)",
              file=sys.stderr)
    print(f"# {kind} ({platform}), copy bw {copy_bw / 1e9:.1f} GB/s, ours = {ours_impl}, torch: {torch_info}",
          file=sys.stderr)

    rows = []
    for dtype in args.dtypes:
        itemsize = jnp.dtype(dtype).itemsize
        for n in args.n:
            batch = max(1, args.bytes // (n * n * itemsize))
            try:
                inputs, in_err = make_inputs(batch, n, dtype), None
            except Exception as e:
                inputs, in_err = None, f"making inputs failed: {type(e).__name__}: {e}"
            for name in args.ops:
                op = OPS[name]
                ref, case_rows = None, []
                if op.reference and inputs is not None:       # no jnp peer: a known answer
                    ref = op.reference(*(inputs[k] for k in op.args))
                # inputs of other shapes (the tall T) have their own count: the first one's
                op_batch = inputs[op.args[0]].shape[0] if inputs is not None else batch
                nbytes = op_batch * op.bytes_per_matrix(n) * itemsize
                flops = op_batch * op.flops_per_matrix(n)
                t_min = max(nbytes / copy_bw, flops / peak if peak else 0.0)
                for lib in libs:
                    provided = {"jnp": op.jnp, "ours": op.ours, "ours_standard": op.standard, "torch": op.torch}
                    if provided[lib] is None:
                        continue                            # this op has no such peer
                    row = {"lib": lib, "op": name, "dtype": dtype, "n": n, "batch": op_batch,
                           "bytes": nbytes, "flops": flops, "seconds": None, "max_rel_err": None,
                           "has_nan": None, "speedup_vs_best_peer": None, "note": None, "error": in_err}
                    if inputs is not None:
                        try:
                            res, out = run_case(lib, op, inputs, ref, ours_mod, ours_err, torch, args.reps)
                            if lib == "jnp":
                                ref = out
                            row.update(res)
                            s = row["seconds"]
                            row.update(matrices_per_s=op_batch / s, gb_per_s=nbytes / s / 1e9,
                                       gflop_per_s=flops / s / 1e9, roofline_fraction=t_min / s)
                            if row["seconds_single"] < 200e-6:
                                row["note"] = "isolated call < 200 us: launch overhead may dominate"
                        except Exception as e:
                            row["error"] = f"{type(e).__name__}: {e}"[:1000]
                    case_rows.append(row)
                    print(_progress(row), file=sys.stderr, flush=True)
                ref = None
                peers = [r["seconds"] for r in case_rows if r["lib"] != "ours" and not r["error"]]
                for r in case_rows:
                    if r["lib"] == "ours" and not r["error"] and peers:
                        r["speedup_vs_best_peer"] = min(peers) / r["seconds"]
                rows += case_rows
            inputs = None
            gc.collect()
            if torch:
                torch.cuda.empty_cache()
            meta["elapsed_s"] = round(time.perf_counter() - t_start, 1)
            _write_json(out_path, rows, meta)              # partial results survive a crash

    md = report.markdown(rows, meta)
    print(md)
    out_path.with_suffix(".md").write_text(md)
    png = out_path.with_suffix(".png")
    plotted = report.plot(rows, meta, png)
    il_png = out_path.with_name(out_path.stem + "-interleaved.png")
    il_plotted = report.plot_interleaved(rows, meta, il_png)
    print(f"{time.perf_counter() - t_start:.0f} s; wrote {out_path}, {out_path.with_suffix('.md')}"
          + (f", {png}" if plotted else " (no matplotlib: no plot)")
          + (f", {il_png}" if il_plotted else ""), file=sys.stderr)


def _progress(r):
    head = f"{r['op']:>16} {r['dtype']} n={r['n']:<4} batch={r['batch']:<9} {r['lib']:>13}"
    if r["error"]:
        return f"{head}  ERROR {r['error'][:120]}"
    return (f"{head}  {r['seconds'] * 1e3:9.3f} ms  {r['gb_per_s']:8.1f} GB/s  "
            f"frac {r['roofline_fraction']:.3f}" + ("  NaN!" if r["has_nan"] else ""))


def _write_json(path, rows, meta):
    def clean(v):   # JSON has no NaN/inf
        return None if isinstance(v, float) and not math.isfinite(v) else v
    data = {"meta": meta, "rows": [{k: clean(v) for k, v in r.items()} for r in rows]}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


if __name__ == "__main__":
    main()
