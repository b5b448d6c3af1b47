#!/usr/bin/env bash
# One device call: Nsight Compute profiles (--set full) of the blocked Cholesky classes that miss
# issue 3's targets, for the next kernel version: MediumKernel at f32 n = 128 and LargeKernel at
# f32 n = 256 (their first launches in check_potrf --timing-only 128). check_potrf comes built
# here for sm_90 in .carry/check_potrf.xz (tests/cuda/check_potrf.cu + cuda/potrf*.cu).
# First run 2026-11-23 (bench/NOTES.md, "Blocked Cholesky — ncu").
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
xz -dc .carry/check_potrf.xz > /tmp/check_potrf && chmod +x /tmp/check_potrf
for k in MediumKernel LargeKernel; do
  echo "=== ncu $k ($(date +%T))"
  timeout 240 ncu --kernel-name "regex:$k" --launch-count 1 --set full /tmp/check_potrf --timing-only 128 \
    > "$OUT/ncu_potrf_$k.txt" 2>&1
  echo "rc=$?"
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issue Slots Busy|Compute \(SM\) Throughput|Memory Throughput|Stall" \
    "$OUT/ncu_potrf_$k.txt" | head -30
done
