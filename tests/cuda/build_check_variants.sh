#!/usr/bin/env bash
# Builds a standalone check program (tests/cuda/check_$FAMILY.cu linked with cuda/$FAMILY*.cu) HERE
# for the device machine (sm_90) in variants that differ only in -D flags of a few sources
# (VARIANT_SOURCES, default cuda/$FAMILY.cu, the size dispatch; the other kernels are compiled
# once), xz-packed into .carry/ for a device call (carry [".carry"]).
# Usage: [FAMILY=potrf] tests/cuda/build_check_variants.sh NAME[=FLAGS] ...
#   e.g. check_potrf check_potrf_old=-DBATCHLA_POTRF_GRID_MAXN=0
#        VARIANT_SOURCES="cuda/potrf.cu cuda/potrf_wide.cu" ... check_potrf_opaque=-DBATCHLA_WIDE_OPAQUE_ROW
#        FAMILY=lu_blocked ... check_lu_blocked check_lu_blocked_old=-DBATCHLA_LU_WARP_WIDE_MAXN=0
# Environment: FAMILY (potrf), BUILD_DIR (/tmp/batchla_$FAMILY_variants), CUDA_ARCH (sm_90), JOBS (nproc).
set -euo pipefail
cd "$(dirname "$0")/../.."
family=${FAMILY:-potrf}
out=${BUILD_DIR:-/tmp/batchla_${family}_variants}
flags=(-std=c++17 -O3 -arch="${CUDA_ARCH:-sm_90}" --expt-relaxed-constexpr -I.)
read -r -a per_variant <<< "${VARIANT_SOURCES:-cuda/$family.cu}"
mkdir -p "$out" .carry
export NVCC_FLAGS="${flags[*]}" OUT_DIR="$out"
is_per_variant() { for p in "${per_variant[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
# Shared objects, rebuilt only when a source or a header is newer.
shared=()
# Classes a family's check also dispatches to, outside its prefix.
also=()
[ "$family" = qr_small ] && also=(cuda/qr_tile.cu)
for f in cuda/"$family"*.cu "${also[@]}" tests/cuda/check_"$family".cu; do
  is_per_variant "$f" || shared+=("$f")
done
for f in "${shared[@]}"; do
  o="$out/$(basename "$f" .cu).o"
  [ -f "$o" ] && [ "$o" -nt "$f" ] && [ -z "$(find cuda tests/cuda -name '*.cuh' -newer "$o" -o -name '*.h' -newer "$o")" ] || echo "$f"
done | xargs -r -P "${JOBS:-$(nproc)}" -I{} sh -c 'nvcc $NVCC_FLAGS -c "{}" -o "$OUT_DIR/$(basename "{}" .cu).o"'
shared_objs=()
for f in "${shared[@]}"; do shared_objs+=("$out/$(basename "$f" .cu).o"); done
for v in "$@"; do
  name=${v%%=*}; vflags=""; [ "$name" = "$v" ] || vflags=${v#*=}
  objs=()
  for f in "${per_variant[@]}"; do
    o="$out/$(basename "$f" .cu).$name.o"
    # shellcheck disable=SC2086  # vflags is a flag list
    nvcc "${flags[@]}" $vflags -c "$f" -o "$o"
    objs+=("$o")
  done
  nvcc "${flags[@]}" -o "$out/$name" "${shared_objs[@]}" "${objs[@]}"
  xz -T0 -6 -c "$out/$name" > ".carry/$name.xz"
done
ls -la .carry
