#!/usr/bin/env bash
# One device call: Nsight Compute (--set full + the per-SASS-instruction source page as CSV) of the
# left-looking potrf kernel's n <= 128 band (cuda/potrf_left.cuh) in symmetrize mode: check_potrf
# --timing-only 128 128 times the lower-triangle read first (3 warm-ups + 10 launches), so the
# 14th launch of the f32 instance is the first symmetrizing one. check_potrf from .carry/
# (tests/cuda/build_check_variants.sh check_potrf). bench/NOTES.md, "Left-looking class".
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
xz -dc .carry/check_potrf.xz > /tmp/check_potrf && chmod +x /tmp/check_potrf
timeout 200 ncu --kernel-name-base mangled --kernel-name "regex:LeftKernelIfNS0_7LeftCfgIfLi128" --launch-skip 13 --launch-count 1 --set full --import-source no -o /tmp/s128sym /tmp/check_potrf --timing-only 128 128 > $OUT/ncu_run.txt 2>&1; echo rc=$?
ncu -i /tmp/s128sym.ncu-rep --print-details all > $OUT/ncu_s128sym.txt 2>&1
ncu -i /tmp/s128sym.ncu-rep --page source --print-source sass --csv > $OUT/ncu_s128sym_sass.csv 2>&1
grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|Stall (Barrier|Long|Short|Wait)|Registers Per|Achieved Occ" $OUT/ncu_s128sym.txt | head
