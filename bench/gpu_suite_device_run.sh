#!/usr/bin/env bash
# One device call: the GPU test suite (pytest -m gpu) on the modules bench/build_for_device.sh packed
# into .carry/ (carry [".carry"]), under pytest-xdist. Each result is written as it comes (-v), so a
# run cut by the call's time limit still names its failures; the FAILED lines and the summary are
# printed at the end. The whole suite takes ~560 s at -n 12-14 on an H200 (2026-11-28 f), so a
# 600 s call is tight: FILES splits it, e.g. FILES="--ignore tests/test_hardening.py tests" in
# one call and FILES=tests/test_hardening.py in the next. The past-2^31 tests (~60 GiB each) share
# one worker (tests/conftest.py), so any -n is safe for memory.
# Env: N (workers, 12), FILES (pytest arguments, "tests"), PYTEST_TIMEOUT (s, 560).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT"
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
echo "=== pytest -m gpu -n ${N:-12} ${FILES:-tests} ($(date +%T))"
# shellcheck disable=SC2086  # FILES is a list of pytest arguments
timeout "${PYTEST_TIMEOUT:-560}" python3 -m pytest -v -p no:cacheprovider -m gpu -n "${N:-12}" -rfE \
  --tb=short ${FILES:-tests} > "$OUT/pytest_gpu.log" 2>&1
echo "pytest rc=$? ($(date +%T))"
grep -cE " PASSED " "$OUT/pytest_gpu.log" | sed 's/^/passed so far: /'
grep -E " (FAILED|ERROR) " "$OUT/pytest_gpu.log" | head -40
tail -3 "$OUT/pytest_gpu.log"
