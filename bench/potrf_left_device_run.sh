#!/usr/bin/env bash
# One device call (issue 3: the left-looking class, cuda/potrf_left.cuh; bench/NOTES.md
# "Left-looking class"). Carried in .carry/: tests/cuda/build_check_variants.sh check_potrf
# check_potrf_old=-DBATCHLA_POTRF_LEFT_MINN=100000. Full blocked check (n = 63..512, failures
# mixed in) of the new dispatch, then both dispatches timed alternately (n = 64..512, twice).
set -uo pipefail
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
vs=${VARIANTS:-"check_potrf_old check_potrf"}
for v in $vs; do xz -dc ".carry/$v.xz" > "/tmp/$v" && chmod +x "/tmp/$v"; done
step "smoke (a hang or failure stops the call)"
timeout 60 /tmp/check_potrf --timing-only 256 256 > "$OUT/smoke.txt" 2>&1 || { echo "smoke rc=$?"; tail -5 "$OUT/smoke.txt"; exit 1; }
cat "$OUT/smoke.txt"
[ -n "${SKIP_CHECK:-}" ] || {
step "check_potrf --blocked"
timeout 240 /tmp/check_potrf --blocked > "$OUT/check_blocked.txt" 2>&1; echo "rc=$?"
grep -E "FAIL|passed" "$OUT/check_blocked.txt" | head -20
}
for round in 1 2; do
  for v in $vs; do
    step "$v --timing-only ${TIMING_RANGE:-64 512} (round $round)"
    timeout 120 "/tmp/$v" --timing-only ${TIMING_RANGE:-64 512} >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
done
for v in $vs; do echo "--- $v"; grep -E "potrf n=" "$OUT/timing_$v.txt"; done
step "timing done"
# FULL=1: also the library (modules from bench/build_for_device.sh in .carry/): the GPU Cholesky
# tests, the Cholesky bench (BENCH_N, both dtypes, against jnp and torch), then compute-sanitizer
# on check_potrf in sanitize mode (last: runs that share the GPU with it time wrong).
[ -n "${FULL:-}" ] || exit 0
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
mkdir -p /tmp/res
step "GPU Cholesky tests"
timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short tests/test_cholesky.py > "$OUT/pytest_gpu_cholesky.txt" 2>&1
echo "rc=$?"; tail -4 "$OUT/pytest_gpu_cholesky.txt"
step "bench"
timeout 300 python3 -m bench.run --ops "${BENCH_OPS:-cholesky}" --n "${BENCH_N:-64,96,128,256,512}" \
  --out /tmp/res/nvidia-h200-potrf-left.json > "$OUT/bench.log" 2>&1
echo "rc=$?"; grep -E "^\| (cholesky|posv)" /tmp/res/nvidia-h200-potrf-left.md
cp /tmp/res/nvidia-h200-potrf-left.json "$OUT/" 2>/dev/null
step "sanitizer on check_potrf"
bench/sanitize_check_device.sh /tmp/check_potrf "$OUT/sanitizer_potrf_left.txt"
step done
