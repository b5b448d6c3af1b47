#!/usr/bin/env bash
# One device call on one GPU, the whole correctness gate: every standalone kernel check under
# compute-sanitizer's racecheck, memcheck and initcheck (tests/cuda/run_sanitizer.sh builds them,
# in the background) beside the full GPU test suite (pytest -m gpu) on the modules that
# bench/build_for_device.sh packed into .carry/ (carry [".carry"]).
# Env: SAN_JOBS (sanitizer runs at once, 6), SAN_TIMEOUT (s per run, 400), SAN_BUDGET (s for all of
# it, 540), PYTEST_TIMEOUT (s, 420), PYTEST_K (a pytest -k expression, default all).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

step "sanitizer: every check x racecheck, memcheck, initcheck (background)"
(SAN_JOBS=${SAN_JOBS:-6} SAN_TIMEOUT=${SAN_TIMEOUT:-400} OUT=/tmp/san timeout "${SAN_BUDGET:-540}" tests/cuda/run_sanitizer.sh \
  > "$OUT/sanitizer.txt" 2>&1; echo "run_sanitizer.sh rc=$?" >> "$OUT/sanitizer.txt") &
san_pid=$!

bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} XLA_PYTHON_CLIENT_PREALLOCATE=false
python3 -c "import jax, jax_batchla; print(jax.__version__, jax.devices(), 'cuda module:', jax_batchla.has_cuda())"
step "pytest -m gpu"
k=(); [ -z "${PYTEST_K:-}" ] || k=(-k "$PYTEST_K")
timeout "${PYTEST_TIMEOUT:-420}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short "${k[@]}" tests \
  > "$OUT/pytest_gpu.log" 2>&1
echo "pytest rc=$?"; tail -12 "$OUT/pytest_gpu.log"

step "waiting for the sanitizer"
wait $san_pid
grep -vE "^\s*$" "$OUT/sanitizer.txt" | tail -30
tar czf "$OUT/sanitizer_logs.tgz" -C /tmp san 2>/dev/null
step done
