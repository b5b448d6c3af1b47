#!/usr/bin/env bash
# Device calls for issue 5 (the QR family). Usage: bench/qr_lib_device_run.sh build|bench
#   build: pip build of the library (sm_90), the GPU QR / lstsq tests, the small-class kernel
#          check (tests/cuda/check_qr_small.cu) and its compute-sanitizer memcheck / racecheck run.
#   bench: qr_r, qr, lstsq for BENCH_N (both dtypes) against jnp and torch in one run.
# Results and logs go to $OUT (the device tool brings them back).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
case "${1:-}" in
  build)
    step "build"
    (nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -o /tmp/check_qr_small \
      tests/cuda/check_qr_small.cu cuda/qr_small_*.cu > "$OUT/check_build.log" 2>&1) &
    JAX_BATCHLA_CUDA_ARCHS=90 python3 -m pip install --no-build-isolation --no-deps -q -e . \
      > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    wait
    step "GPU QR tests"
    timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
      tests/test_qr.py tests/test_lstsq.py > "$OUT/pytest_gpu_qr.txt" 2>&1
    echo "rc=$?"; tail -4 "$OUT/pytest_gpu_qr.txt"
    step "check_qr_small (checks and timing)"
    timeout 200 /tmp/check_qr_small > "$OUT/check_qr_small.txt" 2>&1; echo "rc=$?"
    grep -E "FAIL|PASSED|FAILED|time .* r  " "$OUT/check_qr_small.txt" | head -40
    step "compute-sanitizer (sanitize mode: every shape, small batches)"
    for tool in memcheck racecheck; do
      BATCHLA_CHECK_SANITIZE=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 \
        /tmp/check_qr_small --no-timing > "$OUT/sanitize_$tool.txt" 2>&1
      echo "$tool rc=$?"; tail -2 "$OUT/sanitize_$tool.txt"
    done
    ;;
  bench)
    step bench
    timeout "${BENCH_TIMEOUT:-540}" python3 -m bench.run --ops qr_r,qr,lstsq \
      --n "${BENCH_N:-2,4,8,16,32,64,128,256,512}" --out "$OUT/qr.json" > "$OUT/qr_bench.log" 2>&1
    echo "rc=$?"; cat "$OUT/qr.md"
    python3 -m bench.targets "$OUT/qr.json" | tail -40
    ;;
  *) echo "usage: $0 build|bench" >&2; exit 2 ;;
esac
step done
