#!/usr/bin/env bash
# Device call for the blocked least-squares lowering (jax_batchla/_ops/lstsq.py; bench/NOTES.md
# "Blocked least squares"), all in one call (a machine stays warm only 30 s after a call):
# pip build of the library (architectures: the GPU present), the GPU lstsq tests (TESTS), the A/B
# of both lowerings (bench/lstsq_blocked_ab.py), then lstsq for BENCH_N, both dtypes, against jnp
# and torch in one bench run.
# Results and logs go to $OUT (the device tool brings them back).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
step "build"
timeout 240 python3 -m pip install --no-build-isolation --no-deps -v -e . > "$OUT/build.log" 2>&1 \
  || { tail -30 "$OUT/build.log"; exit 1; }
grep -m1 "CUDA architectures" "$OUT/build.log"
step "GPU tests: ${TESTS:=tests/test_lstsq.py}"
timeout "${TEST_TIMEOUT:-120}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short \
  $TESTS > "$OUT/pytest_gpu_lstsq.txt" 2>&1
echo "rc=$?"; tail -4 "$OUT/pytest_gpu_lstsq.txt"
step "A/B"
timeout "${AB_TIMEOUT:-150}" python3 -m bench.lstsq_blocked_ab --n ${AB_N:-64 128 256 512} \
  --batch ${AB_BATCH:-8 32 128} --max-bytes 3e8 --out "$OUT/lstsq_blocked_ab.json"
echo "rc=$?"
step bench
timeout "${BENCH_TIMEOUT:-150}" python3 -m bench.run --ops lstsq \
  --n "${BENCH_N:-64,128,256,512}" --out "$OUT/lstsq.json" > "$OUT/lstsq_bench.log" 2>&1
echo "rc=$?"; cat "$OUT/lstsq.md"
python3 -m bench.targets "$OUT/lstsq.json" | tail -20
step done
