#!/usr/bin/env bash
# One device call for a change to the small QR class (cuda/qr_small.cuh; bench/NOTES.md "geqrf small
# class"): check_qr_small built from this tree ("new", with NEW_FLAGS, e.g.
# -DBATCHLA_QR_SMALL_CPL=2) and from this tree with PATCH reversed ("old": PATCH = `git diff` of
# the change, carried e.g. in .carry/; unset: this tree as it is), both built here with all
# cores; the full check of both (a failure of new stops the call), --timing-only alternately
# (ROUNDS rounds, appended to timing_<program>.txt), then compute-sanitizer memcheck / racecheck
# of new in sanitize mode (sanitize.txt). PIP=1: the library's editable build starts after the
# timing (a warm machine keeps it for the next call).
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I.)
build() {  # build TREE NAME [EXTRA_FLAGS]
  local o=/tmp/qrs_$2; mkdir -p "$o"
  (cd "$1" && ls cuda/qr_small*.cu tests/cuda/check_qr_small.cu |
     xargs -P 16 -I{} sh -c "nvcc ${flags[*]} ${3:-} -c {} -o $o/\$(basename {} .cu).o") &&
    nvcc -arch=sm_90 -o "/tmp/$2" "$o"/*.o
}
step build
rm -rf /tmp/oldtree && mkdir -p /tmp/oldtree && cp -r cuda tests /tmp/oldtree/ &&
  { [ -z "${PATCH:-}" ] || (cd /tmp/oldtree && patch -s -R -p1 < "$OLDPWD/$PATCH"); } ||
  { echo "patch -R failed"; exit 1; }
build . qrs_new "${NEW_FLAGS:-}" > "$OUT/build_new.log" 2>&1 &
build /tmp/oldtree qrs_old > "$OUT/build_old.log" 2>&1 &
wait
[ -x /tmp/qrs_new ] && [ -x /tmp/qrs_old ] || { tail -20 "$OUT"/build_*.log; exit 1; }
for v in qrs_new qrs_old; do
  step "$v --no-timing"
  timeout "${CHECK_TIMEOUT:-150}" "/tmp/$v" --no-timing > "$OUT/check_$v.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|PASS" "$OUT/check_$v.txt" | head -10
  [ $rc = 0 ] || [ $v = qrs_old ] || exit 1
done
for round in $(seq "${ROUNDS:-2}"); do
  for v in qrs_old qrs_new; do
    step "$v timing (round $round)"
    echo "## round $round" >> "$OUT/timing_$v.txt"
    timeout 120 "/tmp/$v" --timing-only >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
done
[ "${PIP:-0}" = 1 ] && (JAX_BATCHLA_CUDA_ARCHS=90 timeout 300 python3 -m pip install --no-build-isolation \
  --no-deps -e . > "$OUT/pip_build.log" 2>&1; echo "pip rc=$?" >> "$OUT/pip_build.log") &
for tool in memcheck racecheck; do
  step "sanitizer $tool"
  echo "## $tool" >> "$OUT/sanitize.txt"
  BATCHLA_CHECK_SANITIZE=1 timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool --error-exitcode 9 \
    /tmp/qrs_new --no-timing >> "$OUT/sanitize.txt" 2>&1
  echo "rc=$?"; tail -2 "$OUT/sanitize.txt"
done
wait; [ -f "$OUT/pip_build.log" ] && tail -1 "$OUT/pip_build.log"
step done
