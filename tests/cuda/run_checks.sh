#!/usr/bin/env bash
# Builds and runs the standalone kernel checks (tests/cuda/check_*.cu) against cuda/*.cu on a GPU
# machine. Each check prints a table and exits non-zero on any failed residual. The kernels and the
# checks are compiled once, in one parallel pool, and every check links against the kernel objects.
# Usage: tests/cuda/run_checks.sh [--build-only] [check_name ...]   (default: all)
#   --build-only: compile into $BUILD_DIR and run nothing (tests/cuda/run_sanitizer.sh uses it).
# Environment: CUDA_ARCH (sm_90), BUILD_DIR (/tmp/batchla_checks; binaries in it, objects in
# $BUILD_DIR/obj), EXTRA_NVCC_FLAGS (appended, e.g. -lineinfo), JOBS (parallel nvcc, nproc).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
arch=${CUDA_ARCH:-sm_90}
out=${BUILD_DIR:-/tmp/batchla_checks}
# shellcheck disable=SC2206  # EXTRA_NVCC_FLAGS is a space-separated flag list on purpose
flags=(-std=c++17 -O3 -arch="$arch" --expt-relaxed-constexpr -I. ${EXTRA_NVCC_FLAGS:-})
mkdir -p "$out/obj" "$out/check_obj"
checks=("$@")
if [ ${#checks[@]} -eq 0 ]; then
  mapfile -t checks < <(ls tests/cuda/check_*.cu | xargs -n1 basename | sed 's/\.cu$//')
fi
for c in "${checks[@]}"; do
  [ -f "tests/cuda/$c.cu" ] || { echo "run_checks.sh: no tests/cuda/$c.cu" >&2; exit 2; }
done
# One pool for the kernel objects and the check objects: the slowest files overlap.
export NVCC_FLAGS="${flags[*]}" OUT_DIR="$out"
{
  for f in cuda/*.cu; do echo "$f obj"; done
  for c in "${checks[@]}"; do echo "tests/cuda/$c.cu check_obj"; done
} | xargs -P "${JOBS:-$(nproc)}" -L1 sh -c 'nvcc $NVCC_FLAGS -c "$0" -o "$OUT_DIR/$1/$(basename "$0" .cu).o"'
for c in "${checks[@]}"; do
  nvcc "${flags[@]}" -o "$out/$c" "$out/check_obj/$c.o" "$out"/obj/*.o
done
[ $build_only = 0 ] || exit 0
status=0
for c in "${checks[@]}"; do
  echo "=== $c"
  "$out/$c" || status=1
done
exit $status
