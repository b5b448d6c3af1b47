#!/usr/bin/env bash
# One device call for a change to the small or tile QR classes (cuda/qr_small.cuh, cuda/qr_tile.cuh;
# bench/NOTES.md "geqrf small class", "QR tile class"): check_qr_small built from this tree
# ("new", with NEW_FLAGS, e.g. -DBATCHLA_QR_SMALL_CPL=2), from this tree with PATCH reversed and
# OLD_FLAGS ("old": PATCH = `git diff` of the change, carried e.g. in .carry/; unset: this tree as
# it is), from this tree with each of VARIANTS="name:flags|name:flags" (optional), and from this
# tree with each of PATCH_VARIANTS="name:patch|name:patch" applied (optional; e.g. prepared
# patches under bench/results/), all built here with all cores; the full check of each (a failure
# of new stops the call; of a variant, drops it), --timing-only alternately (ROUNDS rounds,
# appended to timing_<program>.txt), then compute-sanitizer memcheck / racecheck in sanitize
# mode of new and of each program named in SAN_ALSO="qrs_name ..." that passed its check
# (sanitize.txt; SAN=0: none; OLD_CHECK=0: old is only timed). PIP=1: the library's editable
# build starts after the timing (a warm machine keeps it for the next call). A program packed
# into .carry/ on the work machine beforehand (carry [".carry"]) is not built again, which saves
# ~2 device minutes: FAMILY=qr_small VARIANT_SOURCES=cuda/qr_tile.cu
# tests/cuda/build_check_variants.sh qrs_new qrs_old=FLAGS qrs_m12=FLAGS (3 minutes on 2 cores).
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I.)
build() {  # build TREE NAME [EXTRA_FLAGS]; a program packed in .carry/NAME.xz is used as it is
  [ -f ".carry/$2.xz" ] && { echo "$2: prebuilt"; unpack_programs "$2"; return; }
  local o=/tmp/qrs_$2; mkdir -p "$o"
  (cd "$1" && ls cuda/qr_small*.cu cuda/qr_tile.cu tests/cuda/check_qr_small.cu |
     xargs -P 16 -I{} sh -c "nvcc ${flags[*]} ${3:-} -c {} -o $o/\$(basename {} .cu).o") &&
    nvcc -arch=sm_90 -o "/tmp/$2" "$o"/*.o
}
# At most 8 files come back: the logs, checks and timings of every program in one file each, packed
# (and the table printed) before the sanitizers, so a call cut by its time limit keeps its timings.
pack() {
  for kind in build check timing; do
    for f in "$OUT"/${kind}_*; do echo "##### $(basename "$f")"; cat "$f"; rm "$f"; done \
      > "/tmp/${kind}_all.txt" 2>/dev/null; mv "/tmp/${kind}_all.txt" "$OUT/${kind}_all.txt"
  done
}
step build
rm -rf /tmp/oldtree && mkdir -p /tmp/oldtree && cp -r cuda tests /tmp/oldtree/ &&
  { [ -z "${PATCH:-}" ] || (cd /tmp/oldtree && patch -s -R -p1 < "$OLDPWD/$PATCH"); } ||
  { echo "patch -R failed"; exit 1; }
programs=(qrs_old qrs_new)
build . qrs_new "${NEW_FLAGS:-}" > "$OUT/build_new.log" 2>&1 &
build /tmp/oldtree qrs_old "${OLD_FLAGS:-}" > "$OUT/build_old.log" 2>&1 &
IFS='|' read -r -a variants <<< "${VARIANTS:-}"
for v in "${variants[@]}"; do
  name=${v%%:*}
  build . "qrs_$name" "${v#*:}" > "$OUT/build_$name.log" 2>&1 &
  programs+=("qrs_$name")
done
IFS='|' read -r -a patch_variants <<< "${PATCH_VARIANTS:-}"
for v in "${patch_variants[@]}"; do
  name=${v%%:*}; tree=/tmp/tree_$name
  rm -rf "$tree" && mkdir -p "$tree" && cp -r cuda tests "$tree"/ &&
    (cd "$tree" && patch -s -p1 < "$OLDPWD/${v#*:}") || { echo "$name: patch failed"; continue; }
  build "$tree" "qrs_$name" > "$OUT/build_$name.log" 2>&1 &
  programs+=("qrs_$name")
done
wait
[ -x /tmp/qrs_new ] && [ -x /tmp/qrs_old ] || { tail -20 "$OUT"/build_*.log; exit 1; }
timed=()
for v in "${programs[@]}"; do
  [ -x "/tmp/$v" ] || { echo "$v: build failed"; tail -5 "$OUT/build_${v#qrs_}.log"; continue; }
  [ "$v" = qrs_old ] && [ "${OLD_CHECK:-1}" = 0 ] && { timed+=("$v"); continue; }
  step "$v --no-timing"
  timeout "${CHECK_TIMEOUT:-150}" "/tmp/$v" --no-timing > "$OUT/check_$v.txt" 2>&1; rc=$?
  echo "rc=$rc"; grep -E "FAIL|PASS" "$OUT/check_$v.txt" | head -10
  [ $rc = 0 ] || [ $v = qrs_old ] || [ $v != qrs_new ] || exit 1
  [ $rc = 0 ] || [ $v = qrs_old ] || continue
  timed+=("$v")
done
for round in $(seq "${ROUNDS:-2}"); do
  for v in "${timed[@]}"; do
    step "$v timing (round $round)"
    echo "## round $round" >> "$OUT/timing_$v.txt"
    timeout 120 "/tmp/$v" --timing-only ${TIMING_ARGS:-} >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
  done
done
pack; python3 -m bench.ab_timing_table "$OUT/timing_all.txt" qrs_new
[ "${PIP:-0}" = 1 ] && (JAX_BATCHLA_CUDA_ARCHS=90 timeout 300 python3 -m pip install --no-build-isolation \
  --no-deps -e . > "$OUT/pip_build.log" 2>&1; echo "pip rc=$?" >> "$OUT/pip_build.log") &
for prog in qrs_new ${SAN_ALSO:-}; do
  [[ " ${timed[*]} " == *" $prog "* ]] || continue
  for tool in $([ "${SAN:-1}" = 1 ] && echo memcheck racecheck); do
    step "sanitizer $tool $prog"
    echo "## $tool $prog" >> "$OUT/sanitize.txt"
    BATCHLA_CHECK_SANITIZE=1 timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool \
      --error-exitcode 9 "/tmp/$prog" --no-timing >> "$OUT/sanitize.txt" 2>&1
    echo "rc=$?"; tail -2 "$OUT/sanitize.txt"
  done
done
wait; [ -f "$OUT/pip_build.log" ] && tail -1 "$OUT/pip_build.log"
step done
