#!/usr/bin/env bash
# One device call for the QR column class (bench/NOTES.md "Column class"): the full check of each
# of CHECKS (the class on; a failure is reported and the timings still run), VARIANTS timed
# alternately (check_qr --time OP n, OPS x TIMING, ROUNDS rounds), then compute-sanitizer on the
# first of CHECKS in its sanitize mode (SANITIZE=1).
# Programs come from .carry/ (carry [".carry"]), built here by tests/cuda/build_check_variants.sh:
#   FAMILY=qr VARIANT_SOURCES="cuda/qr.cu cuda/qr_column.cu" \
#     tests/cuda/build_check_variants.sh check_qr_col=-DBATCHLA_QR_COLUMN_MAXM=128 check_qr_old
# e.g. CHECKS="check_qr_m8 check_qr_m4" VARIANTS="check_qr_old check_qr_m8 check_qr_m4" SANITIZE=1
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
vs=${VARIANTS:-"check_qr_old check_qr_col"}
checks=${CHECKS:-check_qr_col}
unpack_programs $vs $checks
[ -n "${SKIP_CHECK:-}" ] || for c in $checks; do
  step "$c --no-timing"
  timeout 150 "/tmp/$c" --no-timing > "$OUT/$c.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|PASS|scaled| (6[5-9]|[7-9][0-9]|1[0-2][0-9]) x" "$OUT/$c.txt" | head -40
  [ $rc != 124 ] || { tail -3 "$OUT/$c.txt"; echo "$c timed out (a hang?): stopping"; exit 1; }
done
for round in $(seq 1 "${ROUNDS:-2}"); do
  for v in $vs; do
    step "$v (round $round)"
    for op in ${OPS:-qr_r geqrf}; do
      for n in ${TIMING:-72 96 128}; do timeout 30 "/tmp/$v" --time "$op" "$n" >> "$OUT/timing_$v.txt" 2>&1; done
    done
  done
done
for v in $vs; do echo "--- $v"; grep time "$OUT/timing_$v.txt" | sed 's/  */ /g'; done
first=${checks%% *}
[ -z "${SANITIZE:-}" ] || { step "sanitizers"; bench/sanitize_check_device.sh "/tmp/$first" "$OUT/sanitizer_$first.txt"; }
step done
