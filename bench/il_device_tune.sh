#!/usr/bin/env bash
# One device call for the interleaved solvers (issue 6): check every kernel of the current table,
# autotune (rewrites cuda/interleaved_tuning.h), check the tuned table. Results go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I.)
check() {  # $1: label
  local b=/tmp/ilcheck_$1
  mkdir -p $b
  for d in f32 f64; do nvcc "${flags[@]}" -c cuda/interleaved_$d.cu -o $b/$d.o & done; wait
  nvcc "${flags[@]}" -o $b/check tests/cuda/check_interleaved.cu $b/f32.o $b/f64.o
  $b/check ${CHECK_ARGS:-} > "$OUT/check_$1.log" 2>&1; echo "check $1 rc=$?"; tail -3 "$OUT/check_$1.log"
}
[ "${SKIP_FIRST_CHECK:-0}" = 1 ] || check before
python3 -m bench.autotune_interleaved --out "$OUT/nvidia-h200-interleaved-tune.json" ${TUNE_ARGS:-} \
  > "$OUT/tune.log" 2>&1; echo "tune rc=$?"; head -5 "$OUT/tune.log"
cp cuda/interleaved_tuning.h "$OUT/"
check tuned
