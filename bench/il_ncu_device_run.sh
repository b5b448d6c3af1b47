#!/usr/bin/env bash
# One device call (carry [".carry"], the modules of bench/build_for_device.sh): Nsight Compute's
# memory, launch and scheduler sections of one il_posv launch reading the lower and one reading the
# upper triangle (64 MiB of A), for each (dtype, n) of PROFILE_CASES ("float32:16 float32:24").
# LOWERS ("1 0") picks the reads; EXTRA_SECTIONS adds ncu sections (e.g. "SourceCounters"), METRICS
# a --metrics list (e.g. "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio").
set -uo pipefail
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for case in ${PROFILE_CASES:?}; do
  dtype=${case%:*} n=${case#*:}
  for lower in ${LOWERS:-1 0}; do
    name=ncu_${dtype}_n${n}_lower$lower
    echo "=== $name ($(date +%T))"
    timeout 120 ncu --kernel-name "regex:^(Staged)?Kernel$" --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats \
      $(for x in ${EXTRA_SECTIONS:-}; do echo --section "$x"; done) ${METRICS:+--metrics "$METRICS"} \
      python3 -c "
import jax, jax_batchla.interleaved as il
jax.config.update('jax_enable_x64', True)  # else a float64 case profiles float32
from bench.ops import make_inputs
n, dtype = $n, '$dtype'
inp = make_inputs((64 << 20) // (n * n * jax.numpy.dtype(dtype).itemsize), n, dtype)
a = il.to_interleaved(inp['A']); b = il.to_interleaved(inp['b'], a.chunk)
f = jax.jit(lambda a, b: il.solve(a, b, lower=bool($lower)))
for _ in range(2): jax.block_until_ready(f(a, b))
" > "$OUT/$name.txt" 2>&1
    echo "rc=$?"
    grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|dram__|Mem Busy|Max Bandwidth|Issue Slots|Warp Cycles Per Issued|stalled|Executed Instructions|Achieved Occupancy|Registers Per|Grid Size|Block Size" "$OUT/$name.txt" | head -40
  done
done
echo "=== done ($(date +%T))"
