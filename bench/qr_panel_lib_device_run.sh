#!/usr/bin/env bash
# One device call for the QR panel class in the library (issue 5): check_qr's full check (from
# .carry/, tests/cuda/build_check_variants.sh), the pip build (sm_90), the library bench of
# qr mode 'r' (BENCH_N, both dtypes, jnp and torch in the same run), then the GPU QR / lstsq tests.
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
unpack_programs check_qr
step "check_qr --no-timing"
timeout 200 /tmp/check_qr --no-timing > "$OUT/check_qr.txt" 2>&1; echo "rc=$?"; grep -E "PASS|FAIL" "$OUT/check_qr.txt" | head
step "build"
JAX_BATCHLA_CUDA_ARCHS=90 python3 -m pip install --no-build-isolation --no-deps -q -e . > "$OUT/build.log" 2>&1 \
  || { tail -30 "$OUT/build.log"; exit 1; }
step "bench qr_r"
timeout "${BENCH_TIMEOUT:-200}" python3 -m bench.run --ops qr_r --dtypes float32,float64 --n "${BENCH_N:-96,128,160,256}" \
  --reps 5 --out "$OUT/qr_r.json" > "$OUT/bench.log" 2>&1; echo "rc=$?"; grep -E "qr_r" "$OUT/bench.log" | tail -12
step "GPU QR tests"
timeout "${TEST_TIMEOUT:-220}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short tests/test_qr.py tests/test_lstsq.py \
  > "$OUT/pytest_gpu_qr.txt" 2>&1; echo "rc=$?"; tail -3 "$OUT/pytest_gpu_qr.txt"
step done
