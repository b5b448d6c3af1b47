#!/usr/bin/env bash
# One device call after a QR kernel change: the library's editable build beside check_qr_small's,
# the GPU QR / lstsq tests, check_qr_small's full check, then the library bench of qr_r / qr at
# BENCH_N (both dtypes). Results in $OUT as they come (a call cut short keeps the earlier ones).
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD
step build
(mkdir -p /tmp/qrs && ls cuda/qr_small*.cu tests/cuda/check_qr_small.cu | xargs -P 8 -I{} sh -c \
   'nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -c {} -o /tmp/qrs/$(basename {} .cu).o' &&
 nvcc -arch=sm_90 -o /tmp/check_qr_small /tmp/qrs/*.o) > "$OUT/check_build.log" 2>&1 &
JAX_BATCHLA_CUDA_ARCHS=90 timeout 300 python3 -m pip install --no-build-isolation --no-deps -e . \
  > "$OUT/pip_build.log" 2>&1 || { tail -20 "$OUT/pip_build.log"; exit 1; }
step "GPU QR tests"
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short tests/test_qr.py \
  tests/test_lstsq.py > "$OUT/pytest_gpu_qr.txt" 2>&1
echo "rc=$?"; tail -4 "$OUT/pytest_gpu_qr.txt"
wait
step "check_qr_small --no-timing"
timeout 60 /tmp/check_qr_small --no-timing > "$OUT/check_qr_small.txt" 2>&1; echo "rc=$?"; tail -1 "$OUT/check_qr_small.txt"
step bench
timeout 120 python3 -m bench.run --ops qr_r,qr --n "${BENCH_N:-32,128}" --out "$OUT/qr.json" > "$OUT/qr_bench.log" 2>&1
echo "rc=$?"; grep -E "^\| qr" "$OUT/qr.md"
step done
