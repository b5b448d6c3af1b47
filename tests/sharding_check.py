"""Sharding check of every accelerated function (table: sharding_cases.py), run in a fresh process
per partitioner by test_sharding.py:

  python3 tests/sharding_check.py {shardy,gspmd} [--platform {cpu,gpu}] [--host-devices N]

- batch-sharded inputs under jax.jit (Mesh + NamedSharding) and inside shard_map compile to our
  custom calls on the per-shard batch with no collective, and give the unsharded results;
- matrices split along their rows/columns (not the batch) still give the unsharded results.

On cpu (default) it forces 4 host devices (--host-devices); with --platform gpu (or
BATCHLA_SHARDING_PLATFORM=gpu) it shards over all the GPUs present. Prints one line per function
and "sharding ok" at the end.
"""

import argparse
import os
import sys
import time


def _args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("partitioner", choices=("shardy", "gspmd"))
    parser.add_argument("--platform", choices=("cpu", "gpu"),
                        default=os.environ.get("BATCHLA_SHARDING_PLATFORM", "cpu"))
    parser.add_argument("--host-devices", type=int, default=4, help="cpu only: how many to force")
    return parser.parse_args()


ARGS = _args()
if ARGS.platform == "cpu":  # must precede jax's import
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={ARGS.host_devices}")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_use_shardy_partitioner", ARGS.partitioner == "shardy")

import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

try:  # jax >= 0.7 exports it; older versions only have the experimental one
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map

from sharding_cases import CASES, FLOAT32, NON_BATCH, inputs  # noqa: E402
from sharding_hlo import batchla_calls, collectives, is_scalar_all_reduce  # noqa: E402

# Matrix splits of the non-batch variant on a ("batch", "mat") mesh: every input gets the spec.
MATRIX_SPLITS = {"rows": P(None, "mat"), "columns": P(None, None, "mat"),
                 "batch+rows": P("batch", "mat"), "rows+columns": P(None, "batch", "mat")}


def assert_same(out, ref, dtype):
    """Sharded and unsharded runs do the same arithmetic per matrix: equal up to a few ulps."""
    tol = 100 * np.finfo(dtype).eps
    out_leaves, ref_leaves = jax.tree.leaves(out), jax.tree.leaves(ref)
    assert len(out_leaves) == len(ref_leaves), "result structure differs from the unsharded one"
    for o, r in zip(out_leaves, ref_leaves):
        o, r = np.asarray(o), np.asarray(r)
        assert o.shape == r.shape and o.dtype == r.dtype, f"{o.dtype}{o.shape} vs {r.dtype}{r.shape}"
        np.testing.assert_allclose(o, r, rtol=0, atol=tol * max(1.0, float(np.abs(r).max())))


def assert_per_shard(case, hlo, shard_batch):
    """Our custom calls run on `shard_batch` matrices each, and no collective runs except the
    scalar all-reduce a case is allowed (see Case.scalar_all_reduce). Returns a short summary."""
    found = collectives(hlo)
    bad = [c for c in found if not (case.scalar_all_reduce and is_scalar_all_reduce(*c))]
    assert not bad, f"collectives {bad} in the compiled HLO"
    calls = batchla_calls(hlo)
    assert calls, "no batchla_ custom call in the compiled HLO"
    global_sized = [(t, dims) for t, dims in calls if dims[:1] != (shard_batch,)]
    assert not global_sized, f"custom calls not on the per-shard batch of {shard_batch}: {global_sized}"
    summary = f"{len(calls)} call(s) on {shard_batch} each"
    return summary + (f", {len(found)} scalar all-reduce" if found else "")


def run_named(case, args, mesh, ref, dtype):
    shard = NamedSharding(mesh, P("batch"))
    jitted = jax.jit(case.fn, out_shardings=shard)
    args = [jax.device_put(x, shard) for x in args]
    summary = assert_per_shard(case, jitted.lower(*args).compile().as_text(),
                               args[0].shape[0] // mesh.size)
    assert_same(jitted(*args), ref, dtype)
    return summary


def run_shard_map(case, args, mesh, ref, dtype):
    mapped = jax.jit(shard_map(case.fn, mesh=mesh, in_specs=(P("batch"),) * len(args),
                               out_specs=P("batch")))
    per_shard = case._replace(scalar_all_reduce=False)  # every shard decides for itself
    summary = assert_per_shard(per_shard, mapped.lower(*args).compile().as_text(),
                               args[0].shape[0] // mesh.size)
    assert_same(mapped(*args), ref, dtype)
    return summary


def run_matrix_splits(case, args, mesh, ref, dtype):
    """Rows/columns split: any collective is fine, the results and our kernels must stay.
    Returns the number of collectives per split."""
    counts = []
    for split, spec in MATRIX_SPLITS.items():
        sharded = [jax.device_put(x, NamedSharding(mesh, spec)) for x in args]
        jitted = jax.jit(case.fn)
        hlo = jitted.lower(*sharded).compile().as_text()
        assert batchla_calls(hlo), f"{split}: no batchla_ call"
        try:
            assert_same(jitted(*sharded), ref, dtype)
        except AssertionError as e:
            raise AssertionError(f"split {split}: {e}") from None
        counts.append(f"{split} {len(collectives(hlo))}")
    return "ok, collectives: " + ", ".join(counts)


# Under GSPMD, the gradient of lstsq inside shard_map aborts the process in XLA
# ("Check failed: !IsManualLeaf()" in CustomCallBatchPartitioner::Partition) on jax's own SVD
# custom call (lapack_dgesdd_ffi, registered batch partitionable by jaxlib) inside the lax.cond of
# the jnp fallback: not a call of ours (ours lower to their non-partitionable *_manual targets
# there). Shardy, the default partitioner, compiles it and it is checked there.
GSPMD_SHARD_MAP_ABORTS = {"vjp_lstsq"}


def main():
    devices = jax.devices()
    assert devices[0].platform == ARGS.platform, f"wanted {ARGS.platform}, got {devices[0].platform}"
    ndev = len(devices)
    assert ndev >= 2 and ndev % 2 == 0, f"need an even number (>= 2) of devices, got {ndev}"
    batch = 8 if 8 % ndev == 0 else 2 * ndev
    batch_mesh = Mesh(np.array(devices), ("batch",))
    split_mesh = Mesh(np.array(devices).reshape(ndev // 2, 2), ("batch", "mat"))
    variants = {"jit+NamedSharding": (run_named, batch_mesh), "shard_map": (run_shard_map, batch_mesh),
                "matrix splits": (run_matrix_splits, split_mesh)}
    print(f"{ndev} {ARGS.platform} devices, partitioner {ARGS.partitioner}, jax {jax.__version__}")
    data = inputs(batch, nchunks=ndev)
    runs = [(case, np.float64) for case in CASES] + [(c, np.float32) for c in CASES if c.name in FLOAT32]
    failures = []
    start = time.perf_counter()
    for case, dtype in runs:
        args = [x.astype(dtype) if x.dtype.kind == "f" else x for x in map(data.get, case.inputs)]
        ref = jax.jit(case.fn)(*args)
        line = []
        for variant, (run, mesh) in variants.items():
            if variant == "matrix splits" and (case.name not in NON_BATCH or dtype != np.float64):
                continue
            if variant == "shard_map" and ARGS.partitioner == "gspmd" and case.name in GSPMD_SHARD_MAP_ABORTS:
                line.append(f"{variant}: not run (XLA aborts on jax's SVD, see GSPMD_SHARD_MAP_ABORTS)")
                continue
            try:
                line.append(f"{variant}: {run(case, args, mesh, ref, dtype)}")
            except Exception as e:  # noqa: BLE001 - every failure is reported, then the run fails
                failures.append(f"{case.name} {np.dtype(dtype).name} {variant}: {type(e).__name__}: {e}")
                line.append(f"{variant}: FAILED")
        print(f"{case.name:24s} {np.dtype(dtype).name:8s} " + " | ".join(line), flush=True)
    print(f"{len(runs)} cases in {time.perf_counter() - start:.1f} s")
    if failures:
        print("\n".join(["FAILURES:"] + failures))
        sys.exit(1)
    print("sharding ok")


if __name__ == "__main__":
    main()
