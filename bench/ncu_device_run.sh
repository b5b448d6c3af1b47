#!/usr/bin/env bash
# One device call: Nsight Compute (--set full, plus the per-SASS-instruction source page as CSV) of
# the first launch of a kernel in a standalone check program from .carry/
# (tests/cuda/build_check_variants.sh), for each profile of
#   PROFILES="name:program:kernel regex:program arguments|..."
# e.g. PROFILES="lu128:check_lu_blocked:LuWarpKernel:time 128|lu64:check_lu_blocked:LuWarpKernel:time 64"
# NCU_NAME_BASE=mangled matches the regex against mangled names (picks a dtype / template
# instance, e.g. "LuWarpKernelIdLi64ELb1E"); default: the plain function name.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
IFS='|' read -r -a profiles <<< "${PROFILES:?}"
for p in "${profiles[@]}"; do
  IFS=':' read -r name prog kernel args <<< "$p"
  [ -x "/tmp/$prog" ] || { xz -dc ".carry/$prog.xz" > "/tmp/$prog" && chmod +x "/tmp/$prog"; }
  echo "=== $name: $prog $args, kernel $kernel ($(date +%T))"
  # shellcheck disable=SC2086  # args is a list
  timeout 240 ncu --kernel-name-base "${NCU_NAME_BASE:-function}" --kernel-name "regex:$kernel" --launch-count 1 --set full --import-source no \
    -o "/tmp/$name" "/tmp/$prog" $args > "$OUT/ncu_run_$name.txt" 2>&1
  echo "rc=$?"
  ncu -i "/tmp/$name.ncu-rep" --print-details all > "$OUT/ncu_$name.txt" 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Stall|Executed Instructions  |DRAM Throughput|Block Limit" \
    "$OUT/ncu_$name.txt" | head -30
  ncu -i "/tmp/$name.ncu-rep" --page source --print-source sass --csv > "$OUT/ncu_${name}_sass.csv" 2>&1
  echo "sass csv rc=$? lines=$(wc -l < "$OUT/ncu_${name}_sass.csv")"
done
