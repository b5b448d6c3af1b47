#!/usr/bin/env bash
# One device call (issue 6) on the modules of bench/build_for_device.sh (carry [".carry"]): the
# lower/upper read A/B of il_posv (bench/il_triangle_ab.py; AB_F32_N, AB_F64_N; AB=0 skips it), the
# GPU tests of the interleaved layout (TESTS: pytest arguments, split on spaces; PYTEST_K: a -k
# expression, which may hold spaces), then the il_posv bench (BENCH_N,
# both dtypes, jnp and torch in the same run) with its targets table, into $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
[ "${AB:-1}" = 0 ] || step "A/B lower / upper"
for d in float32 float64; do
  [ "${AB:-1}" = 0 ] && break
  [ "$d" = float32 ] && ns=${AB_F32_N:-20,24,28,32,36} || ns=${AB_F64_N:-16,20,24,28,32}
  timeout 200 python3 -W ignore -m bench.il_triangle_ab --dtypes "$d" --n "$ns" 2>&1 | tee "$OUT/il_triangle_ab_$d.txt"
done
step "GPU tests: ${TESTS:=tests/test_interleaved.py}"
# shellcheck disable=SC2086  # TESTS is a list of pytest arguments
timeout "${TEST_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE --tb=short -n "${N:-8}" \
  ${PYTEST_K:+-k "$PYTEST_K"} $TESTS > "$OUT/pytest_gpu_il.txt" 2>&1
echo "rc=$?"; tail -4 "$OUT/pytest_gpu_il.txt"
step bench
timeout "${BENCH_TIMEOUT:-300}" python3 -m bench.run --ops il_posv --n "${BENCH_N:-16,20,24,28,32,40,48,56,64}" \
  --out "$OUT/il.json" > "$OUT/bench.log" 2>&1
echo "rc=$?"; grep -E "^\| il_posv " "$OUT/il.md"
python3 -m bench.targets "$OUT/il.json" > "$OUT/il.targets.md" 2>&1; grep -E "NO|met" "$OUT/il.targets.md" | tail -24
step done
