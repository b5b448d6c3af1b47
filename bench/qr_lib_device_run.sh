#!/usr/bin/env bash
# Device calls for issue 5 (the QR family). Usage: bench/qr_lib_device_run.sh STEP [STEP ...]
#   build: pip build of the library (sm_90), the GPU QR / lstsq tests, the kernel checks
#          (tests/cuda/check_qr_small.cu, check_qr.cu) and their compute-sanitizer memcheck /
#          racecheck runs (sanitize mode). QUICK=1: check_qr_small's full check only (no timing,
#          no check_qr, no sanitizers), so that build and bench fit one call.
#   bench: qr_r, qr (and lstsq unless QUICK=1) for BENCH_N (both dtypes) against jnp and torch in
#          one run.
# Results and logs go to $OUT as they come (a call cut short keeps the earlier ones).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
quick=${QUICK:-0}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build() {
  step "build"
  local checks="tests/cuda/check_qr_small.cu tests/cuda/check_qr.cu"
  [ "$quick" = 1 ] && checks=tests/cuda/check_qr_small.cu
  (mkdir -p /tmp/qrobj && ls cuda/qr*.cu $checks |
     xargs -P 8 -I{} sh -c 'nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -c {} \
       -o /tmp/qrobj/$(basename {} .cu).o' &&
   nvcc -arch=sm_90 -o /tmp/check_qr_small /tmp/qrobj/check_qr_small.o /tmp/qrobj/qr_small_*.o /tmp/qrobj/qr_tile.o &&
   { [ "$quick" = 1 ] || nvcc -arch=sm_90 -o /tmp/check_qr /tmp/qrobj/check_qr.o /tmp/qrobj/qr*.o; }) \
    > "$OUT/check_build.log" 2>&1 &
  JAX_BATCHLA_CUDA_ARCHS=90 timeout 300 python3 -m pip install --no-build-isolation --no-deps -q -e . \
    > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  step "GPU QR tests"
  timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
    tests/test_qr.py tests/test_lstsq.py > "$OUT/pytest_gpu_qr.txt" 2>&1
  echo "rc=$?"; tail -4 "$OUT/pytest_gpu_qr.txt"
  wait
  if [ "$quick" = 1 ]; then
    step "check_qr_small --no-timing"
    timeout 60 /tmp/check_qr_small --no-timing > "$OUT/check_qr_small.txt" 2>&1; echo "rc=$?"
    tail -1 "$OUT/check_qr_small.txt"
    return
  fi
  step "check_qr_small (checks and timing)"
  timeout 200 /tmp/check_qr_small > "$OUT/check_qr_small.txt" 2>&1; echo "rc=$?"
  grep -E "FAIL|PASSED|FAILED|time .* r  " "$OUT/check_qr_small.txt" | head -40
  step "check_qr (engine and dispatch: checks, timing)"
  timeout 300 /tmp/check_qr > "$OUT/check_qr.txt" 2>&1; echo "rc=$?"
  grep -E "FAIL|PASS|time qr_r|time geqrf" "$OUT/check_qr.txt" | head -30
  step "compute-sanitizer (sanitize mode: every shape, small batches)"
  for prog in check_qr_small check_qr; do
    for tool in memcheck racecheck; do
      BATCHLA_CHECK_SANITIZE=1 timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
        /tmp/$prog --no-timing > "$OUT/sanitize_${prog}_$tool.txt" 2>&1
      echo "$prog $tool rc=$?"; tail -2 "$OUT/sanitize_${prog}_$tool.txt"
    done
  done
}
bench() {
  step bench
  local ops=qr_r,qr,lstsq
  [ "$quick" = 1 ] && ops=qr_r,qr
  timeout "${BENCH_TIMEOUT:-540}" python3 -m bench.run --ops "$ops" \
    --n "${BENCH_N:-2,4,8,16,32,64,128,256,512}" --out "$OUT/qr.json" > "$OUT/qr_bench.log" 2>&1
  echo "rc=$?"; cat "$OUT/qr.md"
  python3 -m bench.targets "$OUT/qr.json" | tail -40
}
[ $# -gt 0 ] || { echo "usage: $0 build|bench [...]" >&2; exit 2; }
for s in "$@"; do
  case "$s" in
    build) build ;;
    bench) bench ;;
    *) echo "usage: $0 build|bench [...]" >&2; exit 2 ;;
  esac
done
step done
