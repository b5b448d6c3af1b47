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
step done
