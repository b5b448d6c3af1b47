#!/usr/bin/env bash
# On the device: racecheck, memcheck and initcheck of one standalone check program in its sanitize
# mode (BATCHLA_CHECK_SANITIZE=1), the three tools side by side; a one-line summary per tool and
# the first findings go to OUT_FILE. Run it after any timing: it shares the GPU.
# Usage: bench/sanitize_check_device.sh PROGRAM OUT_FILE
set -uo pipefail
prog=${1:?program} out=${2:?output file}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck initcheck; do
  (BATCHLA_CHECK_SANITIZE=1 timeout 400 "$san" --tool $tool "$prog" > "/tmp/san_$tool.log" 2>&1
   echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | head -1)" > "/tmp/san_$tool.sum") &
done
wait
cat /tmp/san_*.sum | tee "$out"
for tool in racecheck memcheck initcheck; do
  grep -m3 -B2 -A8 "Invalid\|Hazard\|Uninitialized\|Race reported\|Warning" "/tmp/san_$tool.log" >> "$out"
done
