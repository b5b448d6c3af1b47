#!/usr/bin/env bash
# One device call (issue 3: the grid class, cuda/potrf_grid.cuh; bench/NOTES.md "Grid class").
# Carried in .carry/ (tests/cuda/build_check_variants.sh check_potrf
# check_potrf_old=-DBATCHLA_POTRF_GRID_MAXN=0) and the modules of bench/build_for_device.sh. Timing
# of both dispatches (or of the binaries in VARIANTS) back to back (n = 33..128, twice), the full
# check of check_potrf, the GPU Cholesky tests, the Cholesky bench (BENCH_N, both dtypes), then
# compute-sanitizer in sanitize mode (last: runs that share the GPU with it time wrong; the first
# calls of 2026-11-23 did, see NOTES; SKIP_SANITIZER=1 leaves it out).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/res
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
vs=${VARIANTS:-"check_potrf_old check_potrf"}  # binaries in .carry/ to time back to back
for v in $vs; do xz -dc ".carry/$v.xz" > "/tmp/$v" && chmod +x "/tmp/$v"; done
step "smoke (a hang or failure stops the call)"
timeout 30 /tmp/check_potrf --timing-only 33 128 > "$OUT/smoke.txt" 2>&1 || { echo "smoke rc=$?"; tail -5 "$OUT/smoke.txt"; exit 1; }
for round in 1 2; do
  for v in $vs; do
    step "$v --timing-only 33 128 (round $round)"
    timeout 90 "/tmp/$v" --timing-only 33 128 >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
done
for v in $vs; do echo "--- $v"; grep -E "potrf n=" "$OUT/timing_$v.txt" | grep -v symmetrize | tail -16; done
step "check_potrf --no-timing"
timeout 200 /tmp/check_potrf --no-timing > "$OUT/check_potrf.txt" 2>&1; echo "rc=$?"
grep -E "FAIL|passed" "$OUT/check_potrf.txt" | head -20
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} XLA_PYTHON_CLIENT_PREALLOCATE=false
step "GPU Cholesky tests"
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short tests/test_cholesky.py 2>&1 | tail -6
step "bench"
timeout 200 python3 -m bench.run --ops cholesky --n "${BENCH_N:-16,32,48,64,96,128,256}" \
  --out /tmp/res/nvidia-h200-potrf-grid.json > "$OUT/bench.log" 2>&1
echo "rc=$?"; grep -E "^\| cholesky" /tmp/res/nvidia-h200-potrf-grid.md
cp /tmp/res/nvidia-h200-potrf-grid.* "$OUT/" 2>/dev/null
[ -n "${SKIP_SANITIZER:-}" ] && { step done; exit 0; }
step "sanitizer on check_potrf (after the timing: it shares the GPU)"
bench/sanitize_check_device.sh /tmp/check_potrf "$OUT/sanitizer_potrf.txt"
step done
