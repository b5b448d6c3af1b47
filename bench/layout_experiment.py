"""Does a batch-minor layout pay for tiny Cholesky end to end, when XLA is asked for it? (issue 6)

    python3 -m bench.layout_experiment [--n 2,3,4,6,8,12,16] [--dtypes float32,float64]
        [--bytes 256MiB] [--producer fusion|matmul] [--reps 20] [--hlo-n 8] [--out JSON]

Each case is one jitted function of a random X (batch, n, n) that BUILDS the SPD matrices
A = X Xᵀ/n + I and factors them, so XLA decides where layouts change. Variants of the factor:

  build_only    no factor (the floor: producer + consumer alone)
  jnp           jnp.linalg.cholesky(A)
  ours          jax_batchla.linalg.cholesky(A) (standard layout, our kernel)
  batch_minor   the FFI target batchla_potrf_batch_minor (CUDA only) with operand and result
                layouts asked batch-minor, major-to-minor (1, 2, 0): one interleaved chunk of
                c = batch matrices. XLA either produces that layout in the producer fusion or
                inserts a transpose (the HLO dump shows which).
  interleaved   to_interleaved(A) -> jax_batchla.interleaved.cholesky -> from_interleaved

and of the consumer: 'L' returns L in the standard layout (batch_minor forces XLA to change the
layout back), 'sum' returns each L's sum of entries (the layout change may fuse into the reduction).
No variant symmetrizes A (batch_minor reads only the lower triangle). Every variant's output is
checked against jnp's (max relative error). The producer 'fusion' forms X Xᵀ as a broadcast
multiply + reduce (a loop fusion whose output layout XLA can choose); 'matmul' uses a batched dot.
Prints a table (µs per call, speedup over 'ours' with the same consumer) and writes JSON; the
optimized HLO of batch_minor (or, without CUDA, interleaved) at --hlo-n goes next to the JSON.
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

if __package__ in (None, ""):                     # run as `python3 bench/layout_experiment.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax
import jax.numpy as jnp

from bench.run import csv, parse_bytes
from bench.timing import time_jax

BATCH_MINOR_TARGET = "batchla_potrf_batch_minor"
BATCH_MINOR = (1, 2, 0)   # major-to-minor of (batch, n, n): the batch varies fastest


def _potrf_batch_minor(a):
    """Our interleaved potrf kernel on (batch, n, n) that XLA hands over batch-minor."""
    l, _ = jax.ffi.ffi_call(
        BATCH_MINOR_TARGET,
        (jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct(a.shape[:1], jnp.int32)),
        input_layouts=[BATCH_MINOR], output_layouts=[BATCH_MINOR, (0,)])(a, symmetrize=False)
    return l


def _interleaved_cholesky(a):
    from jax_batchla import interleaved as il
    return il.from_interleaved(il.cholesky(il.to_interleaved(a), symmetrize_input=False))


def _ours_cholesky(a):
    from jax_batchla import linalg
    return linalg.cholesky(a, symmetrize_input=False)


VARIANTS = {
    "build_only": lambda a: a,
    "jnp": lambda a: jnp.linalg.cholesky(a, symmetrize_input=False),
    "ours": _ours_cholesky,
    "batch_minor": _potrf_batch_minor,
    "interleaved": _interleaved_cholesky,
}
BASELINE = "ours"
REFERENCE = "jnp"

PRODUCERS = {
    # broadcast multiply + reduce: a loop fusion, free to write any layout
    "fusion": lambda x: jnp.sum(x[:, :, None, :] * x[:, None, :, :], axis=-1),
    "matmul": lambda x: jnp.einsum("bij,bkj->bik", x, x, precision="highest"),
}

CONSUMERS = {
    "L": lambda l: l,
    "sum": lambda l: jnp.sum(l, axis=(-2, -1)),
}


def build_and_factor(producer: str, variant: str, consumer: str):
    """The timed function: X -> consumer(factor(X Xᵀ/n + I))."""
    gram, factor, consume = PRODUCERS[producer], VARIANTS[variant], CONSUMERS[consumer]

    def f(x):
        n = x.shape[-1]
        a = gram(x) / n + jnp.eye(n, dtype=x.dtype)
        return consume(factor(a))
    return jax.jit(f)


def batch_minor_available() -> tuple[bool, str]:
    if jax.devices()[0].platform != "gpu":
        return False, "skipped: batch_minor needs a CUDA device"
    try:
        from jax_batchla import _ffi
    except Exception as e:
        return False, f"skipped: jax_batchla did not import ({type(e).__name__}: {e})"
    if not _ffi.has_cuda_target(BATCH_MINOR_TARGET):
        return False, f"skipped: this build's CUDA module has no {BATCH_MINOR_TARGET}"
    return True, ""


@jax.jit
def _rel_err(x, ref):
    return jnp.max(jnp.abs(x.astype(ref.dtype) - ref)) / jnp.max(jnp.abs(ref))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=csv(int), default=[2, 3, 4, 6, 8, 12, 16])
    p.add_argument("--dtypes", type=csv(str), default=["float32", "float64"])
    p.add_argument("--bytes", type=parse_bytes, default=256 * 2**20,
                   help="bytes of A per case: batch = bytes // (n*n*itemsize) (default 256MiB)")
    p.add_argument("--producer", choices=list(PRODUCERS), default="fusion")
    p.add_argument("--variants", type=csv(str), default=list(VARIANTS))
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--hlo-n", type=int, default=None, help="n whose optimized HLO is dumped (default: 8 "
                   "if in --n, else the first)")
    p.add_argument("--out", type=Path, default=None,
                   help="JSON path (default bench/results/<device-kind-slug>-layout.json)")
    a = p.parse_args(argv)
    unknown = [v for v in a.variants if v not in VARIANTS]
    if unknown:
        p.error(f"unknown variants {unknown}; known: {list(VARIANTS)}")
    if REFERENCE not in a.variants or BASELINE not in a.variants:
        p.error(f"--variants must include {REFERENCE!r} (the check) and {BASELINE!r} (the baseline)")
    a.hlo_n = a.hlo_n or (8 if 8 in a.n else a.n[0])
    return a


def main(argv=None):
    args = parse_args(argv)
    jax.config.update("jax_enable_x64", True)
    dev = jax.devices()[0]
    slug = re.sub(r"[^a-z0-9]+", "-", dev.device_kind.lower()).strip("-") or "unknown"
    out = args.out or Path(__file__).resolve().parent / "results" / f"{slug}-layout.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    have_bm, why_not = batch_minor_available()
    if "batch_minor" in args.variants and not have_bm:
        print(f"batch_minor {why_not}", file=sys.stderr)
    variants = [v for v in args.variants if v != "batch_minor" or have_bm]
    hlo_variant = "batch_minor" if "batch_minor" in variants else "interleaved"

    rows, hlo_files = [], []
    for dtype in args.dtypes:
        itemsize = jnp.dtype(dtype).itemsize
        for n in args.n:
            batch = max(1, args.bytes // (n * n * itemsize))
            x = jax.block_until_ready(jax.random.normal(jax.random.key(n), (batch, n, n), dtype))
            for consumer in CONSUMERS:
                case = []
                ref = None
                for variant in [REFERENCE] + [v for v in variants if v != REFERENCE]:
                    row = {"variant": variant, "consumer": consumer, "producer": args.producer,
                           "dtype": dtype, "n": n, "batch": batch, "seconds": None,
                           "max_rel_err": None, "speedup_vs_ours": None, "error": None}
                    f = build_and_factor(args.producer, variant, consumer)
                    try:
                        y = jax.block_until_ready(f(x))
                        if variant == REFERENCE:
                            ref = y
                        elif variant != "build_only" and ref is not None:
                            row["max_rel_err"] = float(_rel_err(y, ref))
                        del y
                        row.update(time_jax(f, (x,), reps=args.reps))
                        if n == args.hlo_n and variant in (hlo_variant, BASELINE):
                            path = out.with_name(f"{out.stem}-hlo-{variant}-{dtype}-n{n}-{consumer}.txt")
                            path.write_text(f.lower(x).compile().as_text())
                            hlo_files.append(str(path))
                    except Exception as e:
                        row["error"] = f"{type(e).__name__}: {e}"[:1000]
                    case.append(row)
                base = next((r["seconds"] for r in case if r["variant"] == BASELINE and r["seconds"]), None)
                for r in case:
                    if base and r["seconds"]:
                        r["speedup_vs_ours"] = base / r["seconds"]
                    print(_line(r), file=sys.stderr, flush=True)
                rows += case
            del x

    meta = {"device_kind": dev.device_kind, "platform": dev.platform, "jax_version": jax.__version__,
            "batch_minor": "ran" if have_bm else why_not, "hlo_files": hlo_files,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "argv": sys.argv[1:] if argv is None else list(argv)}
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    md = markdown(rows, meta)
    print(md)
    out.with_suffix(".md").write_text(md)
    print(f"wrote {out}, {out.with_suffix('.md')}" + "".join(f", {h}" for h in hlo_files), file=sys.stderr)


def _line(r):
    head = f"{r['dtype']} n={r['n']:<3} {r['consumer']:>3} {r['variant']:>12}"
    if r["error"]:
        return f"{head}  ERROR {r['error'][:160]}"
    return f"{head}  {r['seconds'] * 1e6:10.1f} µs" + (
        f"  x{r['speedup_vs_ours']:.2f} vs ours" if r["speedup_vs_ours"] else "")


def markdown(rows, meta) -> str:
    lines = [f"Layout experiment: {meta['device_kind']} · jax {meta['jax_version']} · {meta['date']}"
             f" · batch_minor: {meta['batch_minor']}",
             "Build A = X Xᵀ/n + I and factor it in one jit; µs per call (speedup over ours, same consumer).",
             "", "| dtype | n | batch | consumer | variant | µs | × ours | max_rel_err |",
             "|---|---:|---:|---|---|---:|---:|---:|"]
    for r in rows:
        if r["error"]:
            lines.append(f"| {r['dtype']} | {r['n']} | {r['batch']} | {r['consumer']} | {r['variant']} | "
                         f"err: {r['error'][:80]} | | |")
            continue
        err = "—" if r["max_rel_err"] is None else f"{r['max_rel_err']:.1e}"
        lines.append(f"| {r['dtype']} | {r['n']} | {r['batch']} | {r['consumer']} | {r['variant']} | "
                     f"{r['seconds'] * 1e6:.1f} | {r['speedup_vs_ours']:.2f} | {err} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
