#!/usr/bin/env bash
# One device call (issue 4: the getrf tile class, cuda/lu_blocked_tile.cuh; bench/NOTES.md "getrf
# tile class"). Carried in .carry/ (carry [".carry"]):
#   FAMILY=lu_blocked VARIANT_SOURCES=cuda/lu_blocked.cu tests/cuda/build_check_variants.sh \
#     check_lu_blocked check_lu_blocked_old=-DBATCHLA_LU_TILE_MAXN=0 check_lu_blocked_t17=-DBATCHLA_LU_TILE_MINN=17
#   FAMILY=lu_small VARIANT_SOURCES=cuda/lu_small_dispatch.cu tests/cuda/build_check_variants.sh check_lu_small
# The quick check of the t17 build (tile class for n = 17..64; a failure stops the call), then the
# blocked builds timed alternately at TIMING (two rounds), the small class at n = 17..32
# (--timing-only: every n, median of 10), SANITIZE=1: compute-sanitizer on the t17 build.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
vs=${VARIANTS:-"check_lu_blocked_old check_lu_blocked check_lu_blocked_t17"}
for v in $vs check_lu_small; do xz -dc ".carry/$v.xz" > "/tmp/$v" && chmod +x "/tmp/$v"; done
[ -n "${SKIP_CHECK:-}" ] || {
  step "check_lu_blocked_t17 quick"
  timeout 300 /tmp/check_lu_blocked_t17 quick > "$OUT/check_quick.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|passed" "$OUT/check_quick.txt" | head -20
  [ $rc = 0 ] || exit 1
}
for round in 1 2; do
  for v in $vs; do
    step "$v time ${TIMING:-24 32 40 48 56 64} (round $round)"
    timeout 150 "/tmp/$v" time ${TIMING:-24 32 40 48 56 64} >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
done
for v in $vs; do echo "--- $v"; grep -E "getrf|slogdet" "$OUT/timing_$v.txt"; done
[ -n "${SKIP_SMALL:-}" ] || {
  step "check_lu_small --timing-only"
  timeout 200 /tmp/check_lu_small --timing-only > "$OUT/timing_small.txt" 2>&1; echo "rc=$?"
  grep -E "^\| *(float|double|f32|f64)" "$OUT/timing_small.txt" | awk -F'|' '$3+0 >= 17' | grep -E "getrf|slogdet" | head -70
}
[ -z "${SANITIZE:-}" ] || { step sanitizer; BATCHLA_CHECK_SANITIZE=1 bench/sanitize_check_device.sh /tmp/check_lu_blocked_t17 "$OUT/sanitizer_lu_tile.txt"; }
step done
