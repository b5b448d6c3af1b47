#!/usr/bin/env bash
# Builds check_potrf HERE for the device machine (sm_90) in variants that differ only in the size
# dispatch (cuda/potrf.cu compiled with -D flags; the kernels once), xz-packed into .carry/ for a
# device call (carry [".carry"]). Usage: tests/cuda/build_potrf_variants.sh NAME[=FLAGS] ...
#   e.g. check_potrf check_potrf_old=-DBATCHLA_POTRF_GRID_MAXN=0 check_potrf_g33=-DBATCHLA_POTRF_GRID_MINN=33
# Environment: BUILD_DIR (/tmp/batchla_potrf_variants), CUDA_ARCH (sm_90), JOBS (nproc).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${BUILD_DIR:-/tmp/batchla_potrf_variants}
flags=(-std=c++17 -O3 -arch="${CUDA_ARCH:-sm_90}" --expt-relaxed-constexpr -I.)
mkdir -p "$out" .carry
export NVCC_FLAGS="${flags[*]}" OUT_DIR="$out"
# Kernel objects (everything cuda/potrf.cu links against), rebuilt only when a source is newer.
for f in cuda/potrf_*.cu tests/cuda/check_potrf.cu; do
  o="$out/$(basename "$f" .cu).o"
  [ -f "$o" ] && [ "$o" -nt "$f" ] && [ -z "$(find cuda tests/cuda -name '*.cuh' -newer "$o" -o -name '*.h' -newer "$o")" ] || echo "$f"
done | xargs -r -P "${JOBS:-$(nproc)}" -I{} sh -c 'nvcc $NVCC_FLAGS -c "{}" -o "$OUT_DIR/$(basename "{}" .cu).o"'
for v in "$@"; do
  name=${v%%=*}; vflags=""; [ "$name" = "$v" ] || vflags=${v#*=}
  # shellcheck disable=SC2086  # vflags is a flag list
  nvcc "${flags[@]}" $vflags -c cuda/potrf.cu -o "$out/potrf.$name.o"
  nvcc "${flags[@]}" -o "$out/$name" "$out/check_potrf.o" "$out/potrf.$name.o" \
    $(ls "$out"/potrf_*.o | grep -v '/potrf\.')
  xz -T0 -6 -c "$out/$name" > ".carry/$name.xz"
done
ls -la .carry
