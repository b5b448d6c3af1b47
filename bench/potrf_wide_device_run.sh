#!/usr/bin/env bash
# One device call (issue 3; result in bench/NOTES.md, "wide class v3", reverted): a two-stage f32
# potrf against the committed one-stage kernel. Carried in .carry/: check_potrf.xz (new) and
# check_potrf_old.xz (HEAD before the change), both built here for sm_90, and the modules of
# bench/build_for_device.sh. Timing of both binaries back to back (n >= 32), the new one's full
# check, compute-sanitizer on it (sanitize mode, in the background), the GPU Cholesky tests and
# the Cholesky bench at n = 32..64.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/res
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for v in check_potrf_old check_potrf; do xz -dc ".carry/$v.xz" > "/tmp/$v" && chmod +x "/tmp/$v"; done
for v in check_potrf_old check_potrf check_potrf_old check_potrf; do
  step "$v --timing-only 32"
  timeout 90 "/tmp/$v" --timing-only 32 >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
done
paste -d'|' "$OUT/timing_check_potrf_old.txt" "$OUT/timing_check_potrf.txt" | grep -E "^ *(32|48|64|128) " | head -40
step "check_potrf (checks)"
timeout 150 /tmp/check_potrf --no-timing > "$OUT/check_potrf.txt" 2>&1; echo "rc=$?"; tail -3 "$OUT/check_potrf.txt"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step "sanitizer (background)"
for tool in racecheck memcheck initcheck; do
  (BATCHLA_CHECK_SANITIZE=1 timeout 300 "$san" --tool $tool /tmp/check_potrf > "/tmp/san_$tool.log" 2>&1
   echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | head -1)" > "/tmp/san_$tool.sum") &
done
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} XLA_PYTHON_CLIENT_PREALLOCATE=false
step "GPU Cholesky tests"
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short tests/test_cholesky.py 2>&1 | tail -4
wait
cat /tmp/san_*.sum | tee "$OUT/sanitizer_potrf.txt"
step "bench"
timeout 200 python3 -m bench.run --ops cholesky --dtypes float32 --n 32,40,48,56,64 --out /tmp/res/nvidia-h200-potrf-wide.json > "$OUT/bench.log" 2>&1
echo "rc=$?"; cat /tmp/res/nvidia-h200-potrf-wide.md
cp /tmp/res/nvidia-h200-potrf-wide.json "$OUT/" 2>/dev/null
step done
