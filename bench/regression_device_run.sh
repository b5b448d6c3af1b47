#!/usr/bin/env bash
# One device call after kernel changes: the benchmark of the Cholesky and LU families (f32, f64,
# n = 2..512, as the committed bench/results/nvidia-h200{,-lu}.json) to compare against the
# committed numbers, and QR in float64 (n = 16..256). Modules from bench/build_for_device.sh
# (carry [".carry"]). Results are tarred (the device tool brings back at most 8 files).
# Env: EXTRA_TESTS (pytest node ids to run first, optional), GROUPS_TO_RUN (default
# "cholesky lu qr64"; also qr32), BENCH_TIMEOUT (s per group, 200).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/res
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if [ -n "${EXTRA_TESTS:-}" ]; then
  step "tests"
  # shellcheck disable=SC2086  # a list of node ids
  timeout 120 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short $EXTRA_TESTS 2>&1 | tail -6
fi
run() {  # name, bench args...
  local name=$1; shift
  step "bench $name"
  timeout "${BENCH_TIMEOUT:-200}" python3 -m bench.run --out "/tmp/res/$name.json" "$@" > "/tmp/res/$name.log" 2>&1
  echo "rc=$?"; python3 -m bench.targets "/tmp/res/$name.json" 2>/dev/null | tail -3
}
for group in ${GROUPS_TO_RUN:-cholesky lu qr64}; do
  case $group in
    cholesky) run nvidia-h200 --ops cholesky,cho_solve,posv,solve_triangular ;;
    lu) run nvidia-h200-lu --ops lu,solve,inv,det ;;
    qr64) run nvidia-h200-qr-f64 --ops qr_r,qr,lstsq --dtypes float64 --n 16,32,64,128,256 --reps 5 ;;
    qr32) run nvidia-h200-qr --ops qr_r,qr,lstsq --dtypes float32 --n 16,32,64,128,256 --reps 5 ;;
  esac
done
tar czf "$OUT/bench_results.tgz" -C /tmp res
step done
