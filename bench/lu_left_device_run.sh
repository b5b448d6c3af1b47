#!/usr/bin/env bash
# One device call (issue 4: the getrf left-looking class, cuda/lu_blocked_left.cuh; bench/NOTES.md
# "getrf left-looking class"). Carried in .carry/: FAMILY=lu_blocked
# tests/cuda/build_check_variants.sh check_lu_blocked check_lu_blocked_old=-DBATCHLA_LU_LEFT_MINN=100000.
# The quick check of the new dispatch first (a failure or hang stops the call), then VARIANTS timed
# alternately (TIMING sizes, two rounds); SANITIZE=1 adds compute-sanitizer on the default build.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
vs=${VARIANTS:-"check_lu_blocked_old check_lu_blocked"}
for v in $vs; do xz -dc ".carry/$v.xz" > "/tmp/$v" && chmod +x "/tmp/$v"; done
[ -n "${SKIP_CHECK:-}" ] || {
  step "check_lu_blocked quick"
  timeout 300 /tmp/check_lu_blocked quick > "$OUT/check_quick.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|passed" "$OUT/check_quick.txt" | head -20
  [ $rc = 0 ] || exit 1
}
for round in 1 2; do
  for v in $vs; do
    step "$v time ${TIMING:-96 128 256 512} (round $round)"
    timeout 150 "/tmp/$v" time ${TIMING:-96 128 256 512} >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
done
for v in $vs; do echo "--- $v"; grep -E "getrf" "$OUT/timing_$v.txt"; done
[ -z "${SANITIZE:-}" ] || { step sanitizer; bench/sanitize_check_device.sh /tmp/check_lu_blocked "$OUT/sanitizer_lu_left.txt"; }
step done
