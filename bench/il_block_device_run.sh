#!/usr/bin/env bash
# Device calls for the warp-per-matrix interleaved kind (kBlock, cuda/interleaved_block.cuh;
# bench/NOTES.md "Warp per matrix from shared memory"). A machine stays warm only ~30 s after a
# call, so each STEP is one whole call:
#   STEP=tune: the autotuner over KINDS (group, block) for OPS (posv) from n = NMIN, re-timed on
#     this machine (other kinds and ops keep the records of MERGE, a tuner JSON); it rewrites
#     cuda/interleaved_tuning.h, copied to $OUT.
#   STEP=lib: check_interleaved on the committed table (built beside the pip build), pip build,
#     the interleaved GPU tests, the interleaved bench for both dtypes.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z ' 'a-z-')
case ${STEP:-tune} in
  tune)
    step tune
    timeout "${TUNE_TIMEOUT:-420}" python3 -m bench.autotune_interleaved --kinds "${KINDS:-group,block}" \
      --ops "${OPS:-posv}" --nmin "${NMIN:-21}" --merge "${MERGE:-bench/results/nvidia-h200-interleaved-tune.json}" \
      --out "$OUT/$gpu-interleaved-tune.json" > "$OUT/tune.log" 2>&1
    echo "tune rc=$?"; grep -v '^  ' "$OUT/tune.log" | tail -8
    grep -E "(posv|potrf) +n=" "$OUT/tune.log" | tail -100
    cp cuda/interleaved_tuning.h "$OUT/" ;;
  lib)
    step build
    (flags=(-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I.); b=/tmp/ilcheck; mkdir -p $b
     for d in f32 f64; do nvcc "${flags[@]}" -c cuda/interleaved_$d.cu -o $b/$d.o & done; wait
     nvcc "${flags[@]}" -o $b/check tests/cuda/check_interleaved.cu $b/f32.o $b/f64.o
     timeout "${CHECK_TIMEOUT:-200}" $b/check > "$OUT/check_interleaved.log" 2>&1
     echo "check_interleaved rc=$?" >> "$OUT/check_interleaved.log") &
    timeout 240 python3 -m pip install --no-build-isolation --no-deps -v -e . > "$OUT/build.log" 2>&1 \
      || { tail -30 "$OUT/build.log"; exit 1; }
    step "GPU tests"
    timeout "${TEST_TIMEOUT:-150}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
      tests/test_interleaved.py > "$OUT/pytest_gpu_il.txt" 2>&1
    echo "rc=$?"; tail -4 "$OUT/pytest_gpu_il.txt"
    for dt in float32 float64; do
      step "bench $dt"
      timeout "${BENCH_TIMEOUT:-130}" python3 -m bench.run --ops interleaved --n "${NS:-2,8,16,20,24,28,32,40,48,56,64}" \
        --dtypes $dt --out "$OUT/$gpu-il-${dt/float/f}.json" > "$OUT/bench_$dt.log" 2>&1
      echo "rc=$?"; grep -E "il_posv" "$OUT/$gpu-il-${dt/float/f}.md" | head -20
    done
    python3 -m bench.targets "$OUT/$gpu-il-f32.json" | grep -i "il_posv" | tail -20
    python3 -m bench.targets "$OUT/$gpu-il-f64.json" | grep -i "il_posv" | tail -20
    wait; tail -3 "$OUT/check_interleaved.log" ;;
esac
step done
