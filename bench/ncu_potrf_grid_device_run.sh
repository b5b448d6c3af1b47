#!/usr/bin/env bash
# One device call: Nsight Compute (--set full, plus the per-SASS-instruction source page) of the
# grid-class Cholesky kernel (cuda/potrf_grid.cuh) at f32 n = 128, its first launch in
# check_potrf --timing-only 128 128 (.carry/check_potrf.xz, tests/cuda/build_potrf_variants.sh).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
xz -dc .carry/check_potrf.xz > /tmp/check_potrf && chmod +x /tmp/check_potrf
timeout 300 ncu --kernel-name "regex:GridKernel" --launch-count 1 --set full --import-source no \
  -o /tmp/grid /tmp/check_potrf --timing-only 128 128 > "$OUT/ncu_run.txt" 2>&1
echo "rc=$?"
ncu -i /tmp/grid.ncu-rep --print-details all > "$OUT/ncu_potrf_grid.txt" 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Stall|Bank|Wavefront|Shared" "$OUT/ncu_potrf_grid.txt" | head -40
ncu -i /tmp/grid.ncu-rep --page source --print-source sass --csv > "$OUT/ncu_potrf_grid_sass.csv" 2>&1
echo "sass csv rc=$? lines=$(wc -l < "$OUT/ncu_potrf_grid_sass.csv")"
head -3 "$OUT/ncu_potrf_grid_sass.csv" | cut -c1-600
