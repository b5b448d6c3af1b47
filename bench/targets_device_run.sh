#!/usr/bin/env bash
# One device call: the bench of several op groups on the carried modules (bench/build_for_device.sh;
# carry .carry/_cuda.so.xz and .carry/_cpu*.so): bench/lu_lib_device_run.sh's bench and targets steps
# per group, its files under $WORK/r/NAME, packed into $OUT/res.tar.gz after each step (the device
# returns 8 files, and a call cut by its time limit still returns the steps that finished).
# Optionally first an A/B of check programs (bench/ab_device_run.sh; AB and CHECKS as there).
# Env: GROUPS_SPEC="name:ops:n:timeout_s|..." e.g. "lu:lu,solve:16,24:200|il:il_posv:16,32:150".
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
work=${WORK:-/tmp/targets_work}
rm -rf "$work/r" && mkdir -p "$OUT" "$work/r"  # a warm machine keeps /tmp: no earlier call's files
pack() { (cd "$work" && tar czf res.tar.gz r && mv -f res.tar.gz "$OUT/"); }  # whole or not at all
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
if [ -n "${AB:-}" ]; then
  echo "=== A/B ($(date +%T))"
  OUT=$work/r/ab bash bench/ab_device_run.sh > "$work/r/ab.log" 2>&1; echo "rc=$?"; grep -E "FAIL|passed|PASS|rc=" "$work/r/ab.log" | tail -8
  pack
fi
IFS='|' read -r -a groups <<< "${GROUPS_SPEC:?GROUPS_SPEC}"
for g in "${groups[@]}"; do  # each group: bench/lu_lib_device_run.sh's bench and targets steps
  IFS=':' read -r name ops ns limit <<< "$g"
  SKIP_TESTS=1 NAME=$name BENCH_OPS=$ops BENCH_N=$ns BENCH_TIMEOUT=${limit:-300} OUT=$work/r/$name \
    bash bench/lu_lib_device_run.sh
  pack
done
echo "=== done ($(date +%T))"
