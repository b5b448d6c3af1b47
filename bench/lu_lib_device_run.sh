#!/usr/bin/env bash
# One device call on the library: GPU tests, then the bench of some ops with its targets table
# (issue 4's LU family by default; bench/il_lib_device_run.sh runs it for il_posv). The modules come
# from .carry/ (bench/build_for_device.sh; carry [".carry"]), or with BUILD=1 are built on the
# device (~3.5 min).
# Env: TESTS (pytest arguments, split on spaces; tests/test_lu.py), PYTEST_K (a -k expression), N
# (pytest-xdist workers; none), SKIP_TESTS, SKIP_BENCH, BENCH_OPS (lu,solve,inv,det), BENCH_N
# (16,32,64,128), NAME (the results' file stem in $OUT, lu), TEST_TIMEOUT, BENCH_TIMEOUT.
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
name=${NAME:-lu} ops=${BENCH_OPS:-lu,solve,inv,det}
[ -n "${SKIP_TESTS:-}" ] || {
  step "GPU tests: ${TESTS:=tests/test_lu.py}"
  # shellcheck disable=SC2086  # TESTS is a list of pytest arguments
  timeout "${TEST_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
    ${N:+-n "$N"} ${PYTEST_K:+-k "$PYTEST_K"} $TESTS > "$OUT/pytest_gpu_$name.txt" 2>&1
  echo "rc=$?"; tail -4 "$OUT/pytest_gpu_$name.txt"
}
[ -n "${SKIP_BENCH:-}" ] || {
  step bench
  timeout "${BENCH_TIMEOUT:-300}" python3 -m bench.run --ops "$ops" --n "${BENCH_N:-16,32,64,128}" \
    --out "$OUT/$name.json" > "$OUT/bench.log" 2>&1
  echo "rc=$?"; grep -E "^\| (${ops//,/|}) " "$OUT/$name.md"
  python3 -m bench.targets "$OUT/$name.json" > "$OUT/$name.targets.md" 2>&1; grep -E "NO|met" "$OUT/$name.targets.md" | tail -24
}
step done
