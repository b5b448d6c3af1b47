#!/usr/bin/env bash
# One device call: GPU tests of FILES with each test's wall time, on the modules in .carry/
# (bench/build_for_device.sh; carry [".carry"]), to find tests that got slow. Every result line
# is streamed with the epoch second it was printed, so a run cut by TIMEOUT still shows where the
# time went; the slowest tests are listed at the end (pytest --durations).
# Env: FILES (tests/test_interleaved.py), TIMEOUT (300), N (pytest-xdist workers; none).
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT"
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader; uptime
# shellcheck disable=SC2086  # FILES is a list of pytest arguments
timeout "${TIMEOUT:-300}" python3 -m pytest -v -p no:cacheprovider -m gpu --durations=25 ${N:+-n "$N"} \
  ${FILES:-tests/test_interleaved.py} 2>&1 | while IFS= read -r line; do echo "$(date +%s) $line"; done \
  > "$OUT/pytest_times.txt"
grep -E 'PASSED|FAILED|ERROR' "$OUT/pytest_times.txt" | awk 'NR > 1 {print $1 - t, $2} {t = $1}' \
  | sort -rn | head -15
tail -30 "$OUT/pytest_times.txt" | cut -c1-160
