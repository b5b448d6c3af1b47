#!/usr/bin/env bash
# One device call: Nsight Compute (--set full, plus the per-SASS-instruction source page as CSV) of
# the block kind (cuda/interleaved_block.cuh) inside the interleaved autotuner, built here with
#   python3 -c "from bench.autotune_interleaved import compile_search_space as c; import pathlib; \
#     c(pathlib.Path('/tmp/tune_blk'), 'sm_90', ('block',), ('posv',))"
# and carried as .carry/autotune_il.xz. PROFILES="name:dtype:n:mangled-name regex|..."
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
xz -dc .carry/autotune_il.xz > /tmp/autotune_il && chmod +x /tmp/autotune_il
IFS='|' read -r -a profiles <<< "${PROFILES:?}"
for p in "${profiles[@]}"; do
  IFS=':' read -r name dtype n kernel <<< "$p"
  echo "=== $name ($(date +%T))"
  timeout 200 ncu --kernel-name-base mangled --kernel-name "regex:$kernel" --launch-skip 1 --launch-count 1 --set full \
    --import-source no -o "/tmp/$name" /tmp/autotune_il --dtypes "$dtype" --ops posv --nmin "$n" --nmax "$n" \
    --kinds block > "$OUT/ncu_run_$name.txt" 2>&1
  echo "rc=$?"
  ncu -i "/tmp/$name.ncu-rep" --print-details all > "$OUT/ncu_$name.txt" 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Stall|Executed Instructions  |DRAM Throughput|Block Limit|Bank" \
    "$OUT/ncu_$name.txt" | head -30
  ncu -i "/tmp/$name.ncu-rep" --page source --print-source sass --csv > "$OUT/ncu_${name}_sass.csv" 2>&1
  echo "sass csv rc=$? lines=$(wc -l < "$OUT/ncu_${name}_sass.csv")"
done
