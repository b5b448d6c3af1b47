#!/usr/bin/env bash
# One device call (issue 6) on the modules of bench/build_for_device.sh (carry [".carry"]): the
# lower/upper read A/B of il_posv (bench/il_triangle_ab.py; AB_F32_N, AB_F64_N; AB=0 skips it), then
# bench/lu_lib_device_run.sh for the interleaved layout: its GPU tests (TESTS, PYTEST_K, N = 8) and
# the il_posv bench (BENCH_N, both dtypes, jnp and torch in the same run) with its targets table.
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT"
if [ "${AB:-1}" != 0 ]; then
  bench/unpack_on_device.sh || exit 1
  echo "=== A/B lower / upper ($(date +%T))"
  for d in float32 float64; do
    [ "$d" = float32 ] && ns=${AB_F32_N:-20,24,28,32,36} || ns=${AB_F64_N:-16,20,24,28,32}
    PYTHONPATH=$PWD timeout 200 python3 -W ignore -m bench.il_triangle_ab --dtypes "$d" --n "$ns" 2>&1 \
      | tee "$OUT/il_triangle_ab_$d.txt"
  done
fi
NAME=il BENCH_OPS=il_posv BENCH_N=${BENCH_N:-16,20,24,28,32,40,48,56,64} TESTS=${TESTS:-tests/test_interleaved.py} \
  N=${N:-8} TEST_TIMEOUT=${TEST_TIMEOUT:-240} exec bench/lu_lib_device_run.sh
