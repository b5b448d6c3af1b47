#!/usr/bin/env bash
# One device call on one GPU, the whole correctness gate: every standalone kernel check under
# compute-sanitizer's racecheck, memcheck and initcheck (tests/cuda/run_sanitizer.sh builds them,
# in the background) beside the full GPU test suite (pytest -m gpu) on the modules that
# bench/build_for_device.sh packed into .carry/ (carry [".carry"]).
# SAN=0: the test suite alone, under pytest-xdist (N workers): at N = 12 on an H200 64 % of it passed
# in 545 s (2026-11-28 g), so it takes two 600 s calls split by FILES (e.g. test_hardening,
# test_interleaved, test_lu, test_cholesky, test_backends, test_lstsq in one; the rest in the other). The past-2^31 tests (~60 GiB each) share
# one worker (tests/conftest.py). Each result is logged as it comes (-v), so a run cut by the time
# limit still names its failures; the FAILED lines and the summary are printed at the end.
# Env: SAN (1), SAN_JOBS (sanitizer runs at once, 6), SAN_TIMEOUT (s per run, 400), SAN_BUDGET (s for
# all of it, 540), PYTEST_TIMEOUT (s, 420), PYTEST_K (a pytest -k expression, default all), N (pytest
# workers, none by default), FILES (pytest arguments, "tests").
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

san_pid=
if [ "${SAN:-1}" != 0 ]; then
  step "sanitizer: every check x racecheck, memcheck, initcheck (background)"
  (SAN_JOBS=${SAN_JOBS:-6} SAN_TIMEOUT=${SAN_TIMEOUT:-400} OUT=/tmp/san timeout "${SAN_BUDGET:-540}" \
    tests/cuda/run_sanitizer.sh > "$OUT/sanitizer.txt" 2>&1; echo "run_sanitizer.sh rc=$?" >> "$OUT/sanitizer.txt") &
  san_pid=$!
fi

bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} XLA_PYTHON_CLIENT_PREALLOCATE=false
python3 -c "import jax, jax_batchla; print(jax.__version__, jax.devices(), 'cuda module:', jax_batchla.has_cuda())"
step "pytest -m gpu"
k=(); [ -z "${PYTEST_K:-}" ] || k=(-k "$PYTEST_K")
how=(-q); [ -z "${N:-}" ] || how=(-v -n "$N")  # -v: each result as it comes
# shellcheck disable=SC2086  # FILES is a list of pytest arguments
timeout "${PYTEST_TIMEOUT:-420}" python3 -m pytest -p no:cacheprovider -m gpu -rfE --tb=short "${how[@]}" \
  "${k[@]}" ${FILES:-tests} > "$OUT/pytest_gpu.log" 2>&1
echo "pytest rc=$?"
grep -E " (FAILED|ERROR) " "$OUT/pytest_gpu.log" | head -40
tail -12 "$OUT/pytest_gpu.log"
[ -n "$san_pid" ] || { step done; exit 0; }

step "waiting for the sanitizer"
wait $san_pid
grep -vE "^\s*$" "$OUT/sanitizer.txt" | tail -30
tar czf "$OUT/sanitizer_logs.tgz" -C /tmp san 2>/dev/null
step done
