#!/usr/bin/env bash
# One device call (issue 4, the LU tile class): build the library on the device, the GPU LU tests,
# then the LU bench (BENCH_OPS at BENCH_N, both dtypes, jnp and torch in the same run) into $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
step build
JAX_BATCHLA_CUDA_ARCHS=90 python3 -m pip install --no-build-isolation --no-deps -q -e . > "$OUT/build.log" 2>&1 \
  || { tail -30 "$OUT/build.log"; exit 1; }
[ -n "${SKIP_TESTS:-}" ] || {
  step "GPU LU tests"
  timeout "${TEST_TIMEOUT:-200}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short ${TESTS:-tests/test_lu.py} \
    > "$OUT/pytest_gpu_lu.txt" 2>&1
  echo "rc=$?"; tail -4 "$OUT/pytest_gpu_lu.txt"
}
step bench
timeout "${BENCH_TIMEOUT:-300}" python3 -m bench.run --ops "${BENCH_OPS:-lu,solve,inv,det}" --n "${BENCH_N:-16,32,64}" \
  --out "$OUT/lu-tile.json" > "$OUT/bench.log" 2>&1
echo "rc=$?"; grep -E "^\| (lu|solve|inv|det) " "$OUT/lu-tile.md"
python3 -m bench.targets "$OUT/lu-tile.json" > "$OUT/lu-tile.targets.md" 2>&1; grep -E "NO|met" "$OUT/lu-tile.targets.md" | tail -20
step done
