#!/usr/bin/env bash
# One device call for the QR size classes (issue 5; bench/NOTES.md "Panel class"): the full check
# of CHECK (check_qr --no-timing; a failure stops the call), then VARIANTS timed alternately
# (check_qr --time OP n for OPS x TIMING, two rounds), SANITIZE=1 compute-sanitizer on CHECK.
# Programs come from .carry/ (carry [".carry"]), built by tests/cuda/build_check_variants.sh:
#   FAMILY=qr VARIANT_SOURCES="cuda/qr.cu cuda/qr_panel.cu" \
#     tests/cuda/build_check_variants.sh check_qr check_qr_old=-DBATCHLA_QR_PANEL_MAXM=0
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
check=${CHECK:-check_qr}
vs=${VARIANTS:-"check_qr_old check_qr"}
unpack_programs $check $vs
[ -n "${SKIP_CHECK:-}" ] || for c in $check; do
  step "$c --no-timing"
  timeout 400 "/tmp/$c" --no-timing > "$OUT/check_$c.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|PASS" "$OUT/check_$c.txt" | head -20
  [ $rc = 0 ] || { grep -vE " ok$" "$OUT/check_$c.txt" | head -30; exit 1; }
done
for round in 1 2; do
  for v in $vs; do
    step "$v (round $round)"
    for op in ${OPS:-qr_r geqrf}; do
      for n in ${TIMING:-72 96 128 160}; do timeout 60 "/tmp/$v" --time "$op" "$n" >> "$OUT/timing_$v.txt" 2>&1; done
    done
  done
done
for v in $vs; do echo "--- $v"; grep time "$OUT/timing_$v.txt" | sed 's/  */ /g'; done
[ -z "${SANITIZE:-}" ] || for c in $check; do step "sanitizer $c"; bench/sanitize_check_device.sh "/tmp/$c" "$OUT/sanitizer_$c.txt"; done
step done
