#!/usr/bin/env bash
# One device call for issue 7 on one GPU: the GPU hardening tests (batches past 2^31 elements,
# command buffers, threads, bad numbers, determinism) and compute-sanitizer runs, side by side.
# The native modules may come prebuilt (PREBUILT=1: .carry/ from bench/build_for_device.sh, carried
# in), else they are built here first.
# The sanitizer's check binaries may come prebuilt too (PREBUILT_CHECKS=1: .carry/<check>.xz, built
# here with -lineinfo for sm_90), else they are built on the device (about 3 minutes).
# Env: SAN_CHECKS (checks to build), SAN_RACE / SAN_MEM (checks per tool; default SAN_CHECKS),
#      SAN_TIMEOUT (s per sanitizer run), SAN_BUDGET (s for the whole sanitizer part),
#      PYTEST_TIMEOUT / PYTEST_TIMEOUT2 (s for the two pytest parts), BIG_K (pytest -k expression
#      picking the big / command-buffer / threads cases; default all).
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
checks=${SAN_CHECKS:-check_getrs check_lu_blocked check_solves check_potrf check_qr}

step "sanitizer build and runs (background, at most ${SAN_BUDGET:-370} s)"
if [ "${PREBUILT_CHECKS:-0}" = 1 ]; then
  mkdir -p /tmp/batchla_sanitize
  for c in $checks; do xz -dc ".carry/$c.xz" > "/tmp/batchla_sanitize/$c" && chmod +x "/tmp/batchla_sanitize/$c"; done
  build_cmd=true
else
  build_cmd="BUILD_DIR=/tmp/batchla_sanitize EXTRA_NVCC_FLAGS=-lineinfo tests/cuda/run_checks.sh --build-only $checks"
fi
timeout "${SAN_BUDGET:-370}" bash -c '
  '"$build_cmd"' > /tmp/san_build.log 2>&1 || { echo "sanitizer build failed"; tail -20 /tmp/san_build.log; exit 2; }
  echo "built ($(date +%T))"
  # racecheck and memcheck + initcheck side by side (they share the GPU with the tests)
  SAN_NO_BUILD=1 SAN_JOBS=3 SAN_TOOLS=racecheck OUT=/tmp/san/race \
    tests/cuda/run_sanitizer.sh '"${SAN_RACE:-$checks}"' > /tmp/san_race.txt 2>&1 &
  SAN_NO_BUILD=1 SAN_JOBS=3 SAN_TOOLS="memcheck initcheck" OUT=/tmp/san/mem \
    tests/cuda/run_sanitizer.sh '"${SAN_MEM:-$checks}"' > /tmp/san_mem.txt 2>&1 &
  wait
' > /tmp/san_outer.txt 2>&1 &
san_pid=$!

if [ "${PREBUILT:-0}" = 1 ]; then
  bench/unpack_on_device.sh || exit 1
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
else
  step "build"
  JAX_BATCHLA_CUDA_ARCHS=90 python3 -m pip install --no-build-isolation --no-deps -q -e . > "$OUT/build.log" 2>&1 \
    || { tail -50 "$OUT/build.log"; exit 1; }
fi
python3 -c "import jax, jax_batchla; print(jax.__version__, jax.devices(), 'cuda module:', jax_batchla.has_cuda())"

step "gpu hardening tests"
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # the sanitizer runs need device memory too
h=tests/test_hardening.py
big_k=(); [ -z "${BIG_K:-}" ] || big_k=(-k "$BIG_K")
timeout "${PYTEST_TIMEOUT:-200}" python3 -m pytest -v -p no:cacheprovider -m gpu -rfE --tb=short "${big_k[@]}" \
  $h::test_more_than_2_31_elements $h::test_rhs_batch_folded_past_2_31_elements $h::test_command_buffers \
  $h::test_threads_and_devices_at_once > "$OUT/hardening_gpu_big.log" 2>&1
echo "pytest (big, command buffers, threads) rc=$?"
grep -E "PASSED|FAILED|ERROR|passed|failed" "$OUT/hardening_gpu_big.log" | tail -30
timeout "${PYTEST_TIMEOUT2:-120}" python3 -m pytest -v -p no:cacheprovider -m gpu -rfE --tb=short \
  $h::test_bad_numbers_stay_in_their_matrix_and_runs_repeat > "$OUT/hardening_gpu_bad.log" 2>&1
echo "pytest (bad numbers) rc=$?"
grep -cE "PASSED" "$OUT/hardening_gpu_bad.log"; grep -E "FAILED|ERROR|passed|failed" "$OUT/hardening_gpu_bad.log" | tail -20

step "waiting for the sanitizer"
wait $san_pid
cat /tmp/san_outer.txt /tmp/san_race.txt /tmp/san_mem.txt > "$OUT/sanitizer.txt" 2>/dev/null
cat "$OUT/sanitizer.txt" | grep -vE "^\s*$" | tail -40
tar czf "$OUT/sanitizer_logs.tgz" -C /tmp san san_build.log 2>/dev/null
step done
