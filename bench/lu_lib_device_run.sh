#!/usr/bin/env bash
# One device call (issue 4): the library with the getrf left-looking class. Modules from
# bench/build_for_device.sh (carry [".carry"]). The GPU LU tests, then the LU bench (lu, solve,
# inv, det; BENCH_N, both dtypes, jnp and torch in the same run), results tarred.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT" /tmp/res
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
[ -n "${SKIP_TESTS:-}" ] || {
  step "GPU LU tests"
  timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short ${TESTS:-tests/test_lu.py} > "$OUT/pytest_gpu_lu.txt" 2>&1
  echo "rc=$?"; tail -4 "$OUT/pytest_gpu_lu.txt"
}
step bench
timeout "${BENCH_TIMEOUT:-300}" python3 -m bench.run --ops "${BENCH_OPS:-lu,solve,inv,det}" --n "${BENCH_N:-64,96,128,256,512}" \
  --out /tmp/res/lu-left.json > /tmp/res/lu-left.log 2>&1
echo "rc=$?"; grep -E "^\| (lu|solve|inv|det) " /tmp/res/lu-left.md
cp /tmp/res/lu-left.json /tmp/res/lu-left.md "$OUT/" 2>/dev/null
step done
