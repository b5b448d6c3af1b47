#!/usr/bin/env bash
# One device call for the blocked LU classes (issue 4; bench/NOTES.md "getrf left-looking class",
# "getrf tile class"): the quick check of each CHECK program (a failure stops the call), then VARIANTS timed
# alternately at TIMING (two rounds); SMALL=1 adds the small class's timings (check_lu_small
# --timing-only: every n <= 32; SMALL_VARIANTS="a b ...": those check_lu_small builds, full check of
# each but the first, then timed alternately with the blocked VARIANTS), SANITIZE=1 compute-sanitizer
# on CHECK. The outputs come back as $OUT/lu_blocked_run.tar.gz. Programs come from .carry/
# (carry [".carry"]), built by tests/cuda/build_check_variants.sh, e.g.
#   tile class: FAMILY=lu_blocked VARIANT_SOURCES=cuda/lu_blocked.cu ... check_lu_blocked
#     check_lu_blocked_old=-DBATCHLA_LU_TILE_MAXN=0 check_lu_blocked_t17=-DBATCHLA_LU_TILE_MINN=17
#     (CHECK=check_lu_blocked_t17: the tile class from n = 17), FAMILY=lu_small ... check_lu_small
#   left class: FAMILY=lu_blocked VARIANT_SOURCES="cuda/lu_blocked.cu cuda/lu_blocked_left.cu" ...
#     check_lu_blocked check_lu_blocked_old=-DBATCHLA_LU_LEFT_MINN=100000 (TIMING="96 128 256 512")
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
check=${CHECK:-check_lu_blocked}
vs=${VARIANTS:-"check_lu_blocked_old check_lu_blocked"}
svs=${SMALL_VARIANTS:-}
unpack_programs $check $vs ${SMALL:+check_lu_small} $svs
first=1
for c in $svs; do  # the first small variant is the baseline
  [ -n "$first" ] && { first=; continue; }
  step "$c (full check)"
  timeout 300 "/tmp/$c" --no-timing > "$OUT/check_$c.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|passed" "$OUT/check_$c.txt" | head -20
  [ $rc = 0 ] || exit 1
done
[ -n "${SKIP_CHECK:-}" ] || for c in $check; do  # CHECK may name several programs
  step "$c quick"
  timeout 300 "/tmp/$c" quick > "$OUT/check_quick_$c.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|passed" "$OUT/check_quick_$c.txt" | head -20
  [ $rc = 0 ] || exit 1
done
for round in 1 2; do
  for v in $vs; do
    step "$v time ${TIMING:-24 32 40 48 56 64} (round $round)"
    timeout 150 "/tmp/$v" time ${TIMING:-24 32 40 48 56 64} >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
  for v in $svs; do
    step "$v --timing-only (round $round)"
    timeout 200 "/tmp/$v" --timing-only >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
done
for v in $vs; do echo "--- $v"; grep -E "getrf|slogdet" "$OUT/timing_$v.txt"; done
[ -z "${SMALL:-}" ] || {
  step "check_lu_small --timing-only"
  timeout 200 /tmp/check_lu_small --timing-only > "$OUT/timing_small.txt" 2>&1; echo "rc=$?"
  grep -E 'n=(1[7-9]|2[0-9]|3[0-2]) ' "$OUT/timing_small.txt"
}
[ -z "${SANITIZE:-}" ] || for c in $check; do step "sanitizer $c"; bench/sanitize_check_device.sh "/tmp/$c" "$OUT/sanitizer_$c.txt"; done
# the device tool returns at most 8 files: everything goes back as one archive (python3 -m
# bench.lu_ab_table on its timing_*.txt gives the A/B table)
(cd "$OUT" && tar -czf lu_blocked_run.tar.gz ./*.txt && rm -f ./*.txt)
step done
