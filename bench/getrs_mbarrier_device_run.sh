#!/usr/bin/env bash
# One device call (issue 7): PanelGetrsKernel's mbarrier protocol against the spin flag it
# replaced: timing of both (check_getrs --timing-only; binaries built here with -lineinfo and
# carried in .carry/: check_getrs.xz = mbarrier, check_getrs_flag.xz = flag), the new one's checks,
# then bench/hardening_device_run.sh with check_getrs under every sanitizer tool beside the GPU
# tests this session touched (BIG_K), then the GPU LU tests.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for v in check_getrs_flag check_getrs; do
  xz -dc ".carry/$v.xz" > "/tmp/$v" && chmod +x "/tmp/$v"
  echo "=== $v --timing-only ($(date +%T))"
  timeout 60 "/tmp/$v" --timing-only > "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
done
paste "$OUT/timing_check_getrs_flag.txt" "$OUT/timing_check_getrs.txt" | head -60
echo "=== check_getrs --no-timing ($(date +%T))"
timeout 90 /tmp/check_getrs --no-timing > "$OUT/checks_getrs.txt" 2>&1; echo "rc=$?"; tail -5 "$OUT/checks_getrs.txt"
PREBUILT=1 PREBUILT_CHECKS=1 SAN_CHECKS=check_getrs bench/hardening_device_run.sh
echo "=== GPU LU tests ($(date +%T))"
timeout "${LU_TIMEOUT:-100}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short tests/test_lu.py 2>&1 | tail -8
