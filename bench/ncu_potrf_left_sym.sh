set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
xz -dc .carry/check_potrf.xz > /tmp/check_potrf && chmod +x /tmp/check_potrf
timeout 200 ncu --kernel-name-base mangled --kernel-name "regex:LeftKernelIfNS0_7LeftCfgIfLi128" --launch-skip 13 --launch-count 1 --set full --import-source no -o /tmp/s128sym /tmp/check_potrf --timing-only 128 128 > $OUT/ncu_run.txt 2>&1; echo rc=$?
ncu -i /tmp/s128sym.ncu-rep --print-details all > $OUT/ncu_s128sym.txt 2>&1
ncu -i /tmp/s128sym.ncu-rep --page source --print-source sass --csv > $OUT/ncu_s128sym_sass.csv 2>&1
grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|Stall (Barrier|Long|Short|Wait)|Registers Per|Achieved Occ" $OUT/ncu_s128sym.txt | head
