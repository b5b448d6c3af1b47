#!/usr/bin/env bash
# Device calls for the interleaved solvers' end-to-end run (issue 6): STEP=a: build, interleaved
# GPU tests, float32 benchmark; STEP=b: the whole GPU test suite, float64 benchmark; STEP=c: the
# XLA layout experiment; STEP=d: the modules packed by bench/build_for_device.sh (carry
# [".carry"]), check_interleaved under compute-sanitizer (background), the interleaved GPU tests,
# both benchmarks. Logs and results go to $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
NS=${NS:-2,3,4,5,6,8,10,12,16,20,24,32,40,48,64}
build() {
  JAX_BATCHLA_CUDA_ARCHS=90 python3 -m pip install --no-build-isolation --no-deps -q -e . > "$OUT/build.log" 2>&1 \
    || { tail -30 "$OUT/build.log"; exit 1; }
}
case ${STEP:-a} in
  a)
    build
    timeout 180 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_interleaved.py > "$OUT/pytest_il.log" 2>&1
    echo "pytest il rc=$?"; tail -5 "$OUT/pytest_il.log"
    timeout 140 python3 -m bench.run --ops interleaved --n $NS --dtypes float32 --out "$OUT/nvidia-h200-il-f32.json" \
      > "$OUT/bench_f32.log" 2>&1; echo "bench rc=$?"; tail -40 "$OUT/bench_f32.log" ;;
  b)
    python3 -c "import jax_batchla" 2>/dev/null || build
    timeout 380 python3 -m pytest -q -p no:cacheprovider -m gpu --maxfail=25 tests > "$OUT/pytest_gpu.log" 2>&1
    echo "pytest rc=$?"; tail -8 "$OUT/pytest_gpu.log"
    timeout 200 python3 -m bench.run --ops interleaved --n $NS --dtypes float64 --out "$OUT/nvidia-h200-il-f64.json" \
      > "$OUT/bench_f64.log" 2>&1; echo "bench rc=$?"; tail -30 "$OUT/bench_f64.log" ;;
  c)
    python3 -c "import jax_batchla" 2>/dev/null || build
    timeout 200 python3 -m bench.run --ops interleaved --n $NS --dtypes float64 --out "$OUT/nvidia-h200-il-f64.json" \
      > "$OUT/bench_f64.log" 2>&1; echo "bench rc=$?"; tail -12 "$OUT/bench_f64.log"
    timeout 200 python3 -m bench.layout_experiment --out "$OUT/nvidia-h200-layout.json" > "$OUT/layout.log" 2>&1
    echo "layout rc=$?"; tail -60 "$OUT/layout.log" ;;
  d)
    [ "${SKIP_SANITIZER:-0}" = 1 ] || (SAN_JOBS=3 OUT=/tmp/san timeout 400 tests/cuda/run_sanitizer.sh check_interleaved > "$OUT/sanitizer.txt" 2>&1
     echo "run_sanitizer.sh rc=$?" >> "$OUT/sanitizer.txt") &
    bench/unpack_on_device.sh || exit 1
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} XLA_PYTHON_CLIENT_PREALLOCATE=false
    timeout ${PYTEST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider -m gpu -n ${PYTEST_JOBS:-4} \
      tests/test_interleaved.py > "$OUT/pytest_il.log" 2>&1
    echo "pytest il rc=$?"; tail -5 "$OUT/pytest_il.log"
    for dt in float32 float64; do
      timeout 200 python3 -m bench.run --ops interleaved --n $NS --dtypes $dt --out "$OUT/nvidia-h200-il-${dt/float/f}.json" \
        > "$OUT/bench_$dt.log" 2>&1; echo "bench $dt rc=$?"
    done
    wait; grep -vE "^\s*$" "$OUT/sanitizer.txt" | tail -8 ;;
esac
