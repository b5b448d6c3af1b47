#!/usr/bin/env bash
# SASS and ptxas register / spill counts of one kernel source, on this machine (no GPU): compiles
# SRC for sm_90 to a cubin and disassembles it with cuobjdump from PyPI's nvidia-cuda-cuobjdump and
# nvidia-cuda-nvdisasm wheels (the local CUDA has nvcc and ptxas but no disassembler). The wheels
# are fetched once into $TOOLS. Reading SASS here costs no device time: instruction counts per
# step, which branches nvcc merged, registers (bench/NOTES.md, "Small class: one range test ...").
# Usage, from the root of the tree to compile (this checkout, or a worktree holding a variant):
#   bench/offline_sass.sh SRC OUT_STEM [extra nvcc flags...]
#   e.g. bench/offline_sass.sh cuda/lu_small_f32b.cu /tmp/lu_b -DSOME_KNOB=1
# Writes OUT_STEM.sass (cuobjdump -sass) and OUT_STEM.ptxas (ptxas -v: registers, spills per kernel).
# Environment: TOOLS (/tmp/cuda_sass_tools), CUDA_ARCH (sm_90).
set -euo pipefail
[ -f cuda/common.cuh ] || { echo "offline_sass.sh: run it from a repository root (cuda/ not found)" >&2; exit 2; }
src=${1:?source file}
stem=${2:?output stem}
shift 2
tools=${TOOLS:-/tmp/cuda_sass_tools}
bin=$tools/nvidia/cu13/bin
if [ ! -x "$bin/cuobjdump" ] || [ ! -x "$bin/nvdisasm" ]; then
  mkdir -p "$tools/wheels"
  python3 -m pip download -q --no-deps -d "$tools/wheels" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
  for w in "$tools"/wheels/*.whl; do python3 -m zipfile -e "$w" "$tools"; done
  chmod +x "$bin"/*
fi
nvcc -std=c++17 -O3 -arch="${CUDA_ARCH:-sm_90}" --expt-relaxed-constexpr -I. -Xptxas -v "$@" \
  -cubin -o "$stem.cubin" "$src" 2> "$stem.ptxas"
PATH=$bin:$PATH cuobjdump -sass "$stem.cubin" > "$stem.sass"
echo "$stem.sass: $(grep -c 'Function :' "$stem.sass") kernels; $stem.ptxas"
