#!/usr/bin/env bash
# Device calls for the warp-per-matrix interleaved kind (kBlock, cuda/interleaved_block.cuh;
# bench/NOTES.md "Warp per matrix from shared memory"). A machine stays warm only ~30 s after a
# call, so each STEP is one whole call:
#   STEP=tune: the autotuner over KINDS (group, block) for OPS (posv) from n = NMIN, re-timed on
#     this machine (other kinds and ops keep the records of MERGE, a tuner JSON, by default the one
#     the committed table was written from); it rewrites
#     cuda/interleaved_tuning.h, copied to $OUT.
#   STEP=lib: check_interleaved on the committed table (built beside the pip build; CHECK=0
#     skips it), pip build, the interleaved GPU tests, the interleaved bench for DTYPES.
#     TABLE_PATCH=path: that patch of cuda/interleaved_tuning.h (e.g. a proposed table from
#     bench/results) is applied first, on the device's copy only. TESTS=0 skips the GPU tests
#     (~280 s; build + tests + bench exceed one call's 600 s: run the tests in a second call).
#     BENCH=0 skips the bench. RACECHECK=1: after check_interleaved (built with -lineinfo), a
#     racecheck of its float64 block-kind sizes (n >= 33, sanitize mode; ~250 s, in the background).
#   STEP=more (on the warm machine of a lib call: the install is kept): the bench for DTYPES and
#     the GPU backend comparisons (tests/test_backends.py).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z ' 'a-z-')
bench_il() {  # the interleaved bench and its issue-6 target rows, per dtype of DTYPES
  for dt in ${DTYPES:-float32 float64}; do
    step "bench $dt"
    local out="$OUT/$gpu-il-${dt/float/f}.json"
    timeout "${BENCH_TIMEOUT:-130}" python3 -m bench.run --ops interleaved --n "${NS:-2,8,16,20,24,28,32,40,48,56,64}" \
      --dtypes "$dt" --out "$out" > "$OUT/bench_$dt.log" 2>&1
    echo "rc=$?"; grep -E "il_posv" "${out%.json}.md" | head -20
    python3 -m bench.targets "$out" | grep -i "il_posv" | tail -20
  done
}
case ${STEP:-tune} in
  tune)
    step tune
    timeout "${TUNE_TIMEOUT:-420}" python3 -m bench.autotune_interleaved --kinds "${KINDS:-group,block}" \
      --ops "${OPS:-posv}" --nmin "${NMIN:-21}" --merge "${MERGE:-bench/results/nvidia-h100-session-2026-11-27f-interleaved-tune-block-solves.json}" \
      --out "$OUT/$gpu-interleaved-tune.json" > "$OUT/tune.log" 2>&1
    echo "tune rc=$?"; grep -v '^  ' "$OUT/tune.log" | tail -8
    grep -E "(posv|potrf) +n=" "$OUT/tune.log" | tail -100
    cp cuda/interleaved_tuning.h "$OUT/" ;;
  lib)
    [ -z "${TABLE_PATCH:-}" ] || { git apply "$TABLE_PATCH" && echo "table patched: $TABLE_PATCH"; } || exit 1
    step build
    if [ "${CHECK:-1}" = 1 ]; then
      (flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo -I.); b=/tmp/ilcheck; mkdir -p $b
       for d in f32 f64; do nvcc "${flags[@]}" -c cuda/interleaved_$d.cu -o $b/$d.o & done; wait
       nvcc "${flags[@]}" -o $b/check tests/cuda/check_interleaved.cu $b/f32.o $b/f64.o
       timeout "${CHECK_TIMEOUT:-200}" $b/check > "$OUT/check_interleaved.log" 2>&1
       echo "check_interleaved rc=$?" >> "$OUT/check_interleaved.log"
       if [ "${RACECHECK:-0}" = 1 ]; then
         BATCHLA_CHECK_SANITIZE=1 BATCHLA_CHECK_DTYPE=float64 BATCHLA_CHECK_NMIN=33 \
           timeout "${RACE_TIMEOUT:-330}" compute-sanitizer --tool racecheck $b/check > "$OUT/racecheck_il_f64.log" 2>&1
         echo "racecheck rc=$? findings=$(tests/cuda/run_sanitizer.sh --count "$OUT/racecheck_il_f64.log")" >> "$OUT/racecheck_il_f64.log"
       fi) &
    fi
    timeout 240 python3 -m pip install --no-build-isolation --no-deps -v -e . > "$OUT/build.log" 2>&1 \
      || { tail -30 "$OUT/build.log"; exit 1; }
    if [ "${TESTS:-1}" = 1 ]; then  # ~280 s on an H100: with the build and the bench past one call's 600 s
      step "GPU tests"
      timeout "${TEST_TIMEOUT:-330}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
        tests/test_interleaved.py > "$OUT/pytest_gpu_il.txt" 2>&1
      echo "rc=$?"; tail -4 "$OUT/pytest_gpu_il.txt"
    fi
    [ "${BENCH:-1}" = 0 ] || bench_il
    wait; [ -f "$OUT/check_interleaved.log" ] && tail -3 "$OUT/check_interleaved.log"
    [ -f "$OUT/racecheck_il_f64.log" ] && tail -4 "$OUT/racecheck_il_f64.log" ;;
  more)
    bench_il
    step "GPU backend tests"
    timeout "${TEST_TIMEOUT:-150}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
      tests/test_backends.py > "$OUT/pytest_gpu_backends.txt" 2>&1
    echo "rc=$?"; tail -4 "$OUT/pytest_gpu_backends.txt" ;;
esac
step done
