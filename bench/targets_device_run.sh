#!/usr/bin/env bash
# One device call: the bench of several op groups on the carried modules (bench/build_for_device.sh;
# carry .carry/_cuda.so.xz and .carry/_cpu*.so), each group's JSON / md / png / log and its targets
# table (bench/targets.py) under $OUT/r, packed into $OUT/res.tar.gz (the device returns 8 files).
# Optionally first an A/B of check programs (bench/ab_device_run.sh; AB and CHECKS as there).
# Env: GROUPS_SPEC="name:ops:n:timeout_s|..." e.g. "lu:lu,solve:16,24:200|il:il_posv:16,32:150".
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
if [ -n "${AB:-}" ]; then
  echo "=== A/B ($(date +%T))"
  OUT=$OUT/r/ab bash bench/ab_device_run.sh > "$OUT/r/ab.log" 2>&1; echo "rc=$?"; grep -E "FAIL|passed|PASS|rc=" "$OUT/r/ab.log" | tail -8
fi
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
IFS='|' read -r -a groups <<< "${GROUPS_SPEC:?GROUPS_SPEC}"
for g in "${groups[@]}"; do
  IFS=':' read -r name ops ns limit <<< "$g"
  echo "=== $name: $ops at n = $ns ($(date +%T))"
  timeout "${limit:-300}" python3 -m bench.run --ops "$ops" --n "$ns" --out "$OUT/r/$name.json" > "$OUT/r/$name.log" 2>&1
  echo "rc=$?"
  python3 -m bench.targets "$OUT/r/$name.json" > "$OUT/r/$name.targets.md" 2>&1
  grep -E "NO|rows met" "$OUT/r/$name.targets.md"
done
(cd "$OUT" && tar czf res.tar.gz r && rm -rf r)
echo "=== done ($(date +%T))"
