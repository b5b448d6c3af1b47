#!/usr/bin/env bash
# Builds the interleaved tuner over a SUBSET of its search space on the work machine, for an A/B of
# a kernel change on the device (the whole space takes ~5 minutes of the device's 16 cores; a few
# shapes take ~2 minutes here). Env:
#   SPECS  objects, ';'-separated, each "dtype op part [defines...]" (bench/autotune/variants.cu:
#          op 0..3 = potrf potrs posv trsm; part 3 lane groups, 4 warp per matrix), e.g.
#          "float 2 3 -DIL_GROUP_LANES_MAX=4 -DIL_GROUP_PAD_MIN=24;double 2 4 -DIL_BLOCK_PAD_MIN=40"
#   DEFS   defines for every object (e.g. -DBATCHLA_IL_L2_PREFETCH=0)
#   OUT    the binary; OUT.xz is what to carry (the device runs `xz -dk`)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?OUT: the binary to write}
build=$(mktemp -d)
flags=(-std=c++17 -O3 --expt-relaxed-constexpr -I. -arch=sm_90)
IFS=';' read -ra specs <<< "${SPECS:?SPECS: dtype op part [defines]; ...}"
pids=()
for i in "${!specs[@]}"; do
  read -ra s <<< "${specs[$i]}"
  # shellcheck disable=SC2086  # DEFS is a list of nvcc arguments
  nvcc "${flags[@]}" ${DEFS:-} -Xptxas -v -DIL_DTYPE="${s[0]}" -DIL_OP="${s[1]}" -DIL_PART="${s[2]}" "${s[@]:3}" \
    -c bench/autotune/variants.cu -o "$build/v$i.o" > "$build/ptxas$i.log" 2>&1 &
  pids+=($!)
done
# shellcheck disable=SC2086
nvcc "${flags[@]}" ${DEFS:-} -c bench/autotune/main.cu -o "$build/main.o" &
pids+=($!)
for p in "${pids[@]}"; do wait "$p" || { cat "$build"/ptxas*.log | tail -30; exit 1; }; done
nvcc -arch=sm_90 -o "$out" "$build"/*.o
grep -ho '[0-9]* bytes spill stores' "$build"/ptxas*.log | awk '{k++; if ($1 > 0) s++; if ($1 > m) m = $1}
  END {printf "ptxas: %d kernels, %d spill (at most %d B)\n", k, s, m}'
xz -T0 -6 -f -k "$out"
ls -la "$out" "$out.xz"
rm -rf "$build"
