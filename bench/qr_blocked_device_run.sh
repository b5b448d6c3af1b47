#!/usr/bin/env bash
# One device call for the blocked QR (jax_batchla/_ops/qr_blocked.py; bench/NOTES.md "Blocked least
# squares"): pip build, the GPU lstsq / qr tests, the A/B of qr mode 'r' (one-block kernels vs the
# blocked form, jnp on the same inputs) for AB_N square, and the lstsq bench at LSTSQ_N.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
step build
timeout 240 python3 -m pip install --no-build-isolation --no-deps -v -e . > "$OUT/build.log" 2>&1 \
  || { tail -30 "$OUT/build.log"; exit 1; }
step "GPU tests"
timeout 170 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short tests/test_lstsq.py \
  tests/test_qr.py > "$OUT/pytest_gpu_lstsq_qr.txt" 2>&1
echo "rc=$?"; tail -4 "$OUT/pytest_gpu_lstsq_qr.txt"
step "A/B qr_r"
for dt in float32 float64; do
  for n in ${AB_N:-128 256 384 512}; do
    size=4; [ "$dt" = float64 ] && size=8
    b=$(( 256 * 1024 * 1024 / (n * n * size) ))  # the bench's batch (256 MiB of input)
    timeout 60 python3 -m bench.lstsq_blocked_ab --op qr_r --jnp --dtypes $dt --n $n --m $n --batch $b \
      --max-bytes 3e8 --out "$OUT/qr_r_ab_${dt}_$n.json" 2>&1 | grep -v Warning
  done
done
step "lstsq bench"
timeout 100 python3 -m bench.run --ops lstsq --dtypes "${LSTSQ_DTYPES:-float64}" --n "${LSTSQ_N:-64}" \
  --out "$OUT/lstsq.json" > "$OUT/lstsq_bench.log" 2>&1
echo "rc=$?"; cat "$OUT/lstsq.md"
step done
