#!/usr/bin/env bash
# One device call (issue 4): the library's LU family. The modules come from .carry/
# (bench/build_for_device.sh; carry [".carry"]), or with BUILD=1 are built on the device (~3.5 min).
# The GPU LU tests (TESTS, PYTEST_K: a -k expression), then (unless SKIP_BENCH) the LU bench (BENCH_OPS at BENCH_N, both dtypes, jnp and torch in
# the same run) with its targets table, into $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
if [ -n "${BUILD:-}" ]; then
  step build
  JAX_BATCHLA_CUDA_ARCHS=90 python3 -m pip install --no-build-isolation --no-deps -q -e . > "$OUT/build.log" 2>&1 \
    || { tail -30 "$OUT/build.log"; exit 1; }
else
  bench/unpack_on_device.sh || exit 1
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
[ -n "${SKIP_TESTS:-}" ] || {
  step "GPU LU tests"
  timeout "${TEST_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short ${TESTS:-tests/test_lu.py} \
    ${PYTEST_K:+-k "$PYTEST_K"} \
    > "$OUT/pytest_gpu_lu.txt" 2>&1
  echo "rc=$?"; tail -4 "$OUT/pytest_gpu_lu.txt"
}
[ -n "${SKIP_BENCH:-}" ] || {
  step bench
  timeout "${BENCH_TIMEOUT:-300}" python3 -m bench.run --ops "${BENCH_OPS:-lu,solve,inv,det}" --n "${BENCH_N:-16,32,64,128}" \
    --out "$OUT/lu.json" > "$OUT/bench.log" 2>&1
  echo "rc=$?"; grep -E "^\| (lu|solve|inv|det) " "$OUT/lu.md"
  python3 -m bench.targets "$OUT/lu.json" > "$OUT/lu.targets.md" 2>&1; grep -E "NO|met" "$OUT/lu.targets.md" | tail -20
}
step done
