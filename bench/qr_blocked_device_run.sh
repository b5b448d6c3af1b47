#!/usr/bin/env bash
# One device call for the blocked QR lowerings (jax_batchla/_ops/qr_blocked.py; bench/NOTES.md
# "Blocked least squares", "Blocked QR for qr mode 'r'"); everything in one call, since a machine
# stays warm only 30 s after one: pip build (architectures: the GPU present), the GPU lstsq / qr
# tests, the A/B of both lowerings (bench/lstsq_blocked_ab.py, jnp on the same inputs), the bench.
#   AB_OP=lstsq: tall m = min(8n, 4096) for AB_N x AB_BATCH; AB_OP=qr_r: square AB_N at the bench's
#   batch (256 MiB); BENCH_OPS / BENCH_N / BENCH_DTYPES: the bench run.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
step build
timeout 240 python3 -m pip install --no-build-isolation --no-deps -v -e . > "$OUT/build.log" 2>&1 \
  || { tail -30 "$OUT/build.log"; exit 1; }
grep -m1 "CUDA architectures" "$OUT/build.log"
step "GPU tests"
timeout "${TEST_TIMEOUT:-170}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
  tests/test_lstsq.py tests/test_qr.py > "$OUT/pytest_gpu_lstsq_qr.txt" 2>&1
echo "rc=$?"; tail -4 "$OUT/pytest_gpu_lstsq_qr.txt"
step "A/B ${AB_OP:=qr_r}"
if [ "$AB_OP" = lstsq ]; then
  timeout "${AB_TIMEOUT:-150}" python3 -m bench.lstsq_blocked_ab --jnp --n ${AB_N:-64 128 256 512} \
    --batch ${AB_BATCH:-8 32 128} --max-bytes 3e8 --out "$OUT/ab_lstsq.json"
else
  for dt in float32 float64; do
    for n in ${AB_N:-128 256 384 512}; do
      size=4; [ "$dt" = float64 ] && size=8
      b=$(( 256 * 1024 * 1024 / (n * n * size) ))  # the bench's batch (256 MiB of input)
      timeout 60 python3 -m bench.lstsq_blocked_ab --op qr_r --jnp --dtypes $dt --n $n --m $n \
        --batch $b --max-bytes 3e8 --out "$OUT/ab_qr_r_${dt}_$n.json"
    done
  done
fi
step bench
timeout "${BENCH_TIMEOUT:-150}" python3 -m bench.run --ops "${BENCH_OPS:-lstsq}" \
  --dtypes "${BENCH_DTYPES:-float32,float64}" --n "${BENCH_N:-64,128,256,512}" --out "$OUT/bench.json" \
  > "$OUT/bench.log" 2>&1
echo "rc=$?"; cat "$OUT/bench.md"
python3 -m bench.targets "$OUT/bench.json" | tail -20
step done
