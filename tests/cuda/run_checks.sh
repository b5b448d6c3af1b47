#!/usr/bin/env bash
# Builds and runs the standalone kernel checks (tests/cuda/check_*.cu) against cuda/*.cu on a GPU
# machine. Each check prints a table and exits non-zero on any failed residual.
# Usage: tests/cuda/run_checks.sh [check_name ...]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${CUDA_ARCH:-sm_90}
out=${BUILD_DIR:-/tmp/batchla_checks}
mkdir -p "$out"
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=($(ls tests/cuda/check_*.cu | xargs -n1 basename | sed 's/\.cu$//'))
status=0
for c in "${checks[@]}"; do
  echo "=== $c"
  nvcc -std=c++17 -O2 -arch="$arch" --expt-relaxed-constexpr -I. -o "$out/$c" "tests/cuda/$c.cu" cuda/*.cu
  "$out/$c" || status=1
done
exit $status
