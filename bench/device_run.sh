#!/usr/bin/env bash
# One device call: build, GPU tests, standalone kernel checks, benchmark. Logs and results go to
# $OUT (the device tool brings them back). Usage: bench/device_run.sh [bench args...]
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
step() { echo "=== $1 ($(date +%T))"; }

step "build (and the kernel checks alongside)"
if [ "${SKIP_CHECKS:-0}" != 1 ]; then
  (tests/cuda/run_checks.sh ${CHECKS:-} > "$OUT/checks.log" 2>&1; echo "checks rc=$?" >> "$OUT/checks.log") &
fi
JAX_BATCHLA_PTXAS_VERBOSE=${PTXAS_VERBOSE:-0} JAX_BATCHLA_CUDA_ARCHS=90 \
  python3 -m pip install --no-build-isolation --no-deps -q -e . > "$OUT/build.log" 2>&1 \
  || { tail -50 "$OUT/build.log"; exit 1; }
python3 -c "import jax, jax_batchla; print(jax.__version__, jax.devices(), 'cuda module:', jax_batchla.has_cuda())"
wait
if [ "${SKIP_CHECKS:-0}" != 1 ]; then
  step "kernel checks (done)"
  grep -E "^===|FAIL|PASS|fail|error|rc=" "$OUT/checks.log" | tail -30
fi

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  step "gpu tests"
  python3 -m pytest -q -p no:cacheprovider -m gpu --maxfail=25 tests > "$OUT/pytest_gpu.log" 2>&1; echo "pytest rc=$?"
  tail -15 "$OUT/pytest_gpu.log"
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
  step bench
  python3 -m bench.run --out "$OUT/nvidia-h200.json" "$@" > "$OUT/bench.log" 2>&1; echo "bench rc=$?"
  cat "$OUT/nvidia-h200.md" 2>/dev/null || tail -30 "$OUT/bench.log"
fi
step done
python3 -m bench.targets "$OUT/nvidia-h200.json" 2>/dev/null | tail -40
