#!/usr/bin/env bash
# One device call for the QR column class (bench/NOTES.md "Column class"): the full check of
# check_qr_col (the class on; a failure is reported and the timings still run), the column class
# against the shipped classes timed alternately (check_qr --time OP n, OPS x TIMING, ROUNDS
# rounds), then compute-sanitizer on check_qr_col's sanitize mode (SANITIZE=1).
# Programs come from .carry/ (carry [".carry"]), built here by tests/cuda/build_check_variants.sh:
#   FAMILY=qr VARIANT_SOURCES="cuda/qr.cu cuda/qr_column.cu" \
#     tests/cuda/build_check_variants.sh check_qr_col=-DBATCHLA_QR_COLUMN_MAXM=128 check_qr_old
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
vs=${VARIANTS:-"check_qr_old check_qr_col"}
unpack_programs $vs
[ -n "${SKIP_CHECK:-}" ] || {
  step "check_qr_col --no-timing"
  timeout 300 /tmp/check_qr_col --no-timing > "$OUT/check_qr_col.txt" 2>&1
  echo "rc=$?"; grep -E "FAIL|PASS|scaled| (6[5-9]|[7-9][0-9]|1[0-2][0-9]) x" "$OUT/check_qr_col.txt" | head -40
}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for v in $vs; do
    step "$v (round $round)"
    for op in ${OPS:-qr_r geqrf}; do
      for n in ${TIMING:-72 96 128}; do timeout 60 "/tmp/$v" --time "$op" "$n" >> "$OUT/timing_$v.txt" 2>&1; done
    done
  done
done
for v in $vs; do echo "--- $v"; grep time "$OUT/timing_$v.txt" | sed 's/  */ /g'; done
[ -z "${SANITIZE:-}" ] || { step "sanitizers"; bench/sanitize_check_device.sh /tmp/check_qr_col "$OUT/sanitizer_check_qr_col.txt"; }
step done
