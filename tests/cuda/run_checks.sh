#!/usr/bin/env bash
# Builds and runs the standalone kernel checks (tests/cuda/check_*.cu) against cuda/*.cu on a GPU
# machine. Each check prints a table and exits non-zero on any failed residual. The kernels are
# compiled once, in parallel, and every check links against those objects.
# Usage: tests/cuda/run_checks.sh [check_name ...]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${CUDA_ARCH:-sm_90}
out=${BUILD_DIR:-/tmp/batchla_checks}
flags=(-std=c++17 -O3 -arch="$arch" --expt-relaxed-constexpr -I.)
mkdir -p "$out/obj"
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=($(ls tests/cuda/check_*.cu | xargs -n1 basename | sed 's/\.cu$//'))
export NVCC_FLAGS="${flags[*]}" OBJ_DIR="$out/obj"
ls cuda/*.cu | xargs -P "$(nproc)" -I{} sh -c 'nvcc $NVCC_FLAGS -c {} -o "$OBJ_DIR/$(basename {} .cu).o"'
status=0
for c in "${checks[@]}"; do
  echo "=== $c"
  nvcc "${flags[@]}" -o "$out/$c" "tests/cuda/$c.cu" "$out"/obj/*.o
  "$out/$c" || status=1
done
exit $status
