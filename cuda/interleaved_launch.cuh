// Table-driven dispatch of the interleaved solvers: the variant the autotuner picked for
// (dtype, op, n) (interleaved_tuning.h) is the only one instantiated for that n, so the library
// compiles a handful of kernels rather than the tuner's whole search space.
#pragma once

#include <type_traits>
#include <utility>

#include "cuda/interleaved.cuh"
#include "cuda/interleaved_block.cuh"
#include "cuda/interleaved_group.cuh"
#include "cuda/interleaved_tuning.h"

namespace batchla {
namespace il {

template <typename T>
constexpr int kDtype = std::is_same_v<T, float> ? 0 : 1;

template <typename T>
constexpr Variant TunedVariant(Op op, int n) {
  return n <= kTunedMaxN ? kTuned[kDtype<T>][int(op)][n] : kTileDefault[kDtype<T>];
}

// Whether any n of the table (or the default beyond it) runs runtime-n variant (kind, nb,
// order, pad) for op: only those are instantiated.
template <typename T>
constexpr bool RuntimeNUsed(Op op, Kind kind, int nb, Order order, int pad) {
  if (op == Op::kPosv && kind == Kind::kTile) return false;  // composed instead (IlPosvFused)
  for (int n = 1; n <= kTunedMaxN + 1; ++n) {
    const Variant v = TunedVariant<T>(op, n);
    if (v.kind == kind && v.nb == nb && v.order == order && v.pad == pad) return true;
  }
  return false;
}

// The variant families past the register kind: global tiles, shared memory at runtime n, and
// shared memory compiled for each padded size.
constexpr int kPads = sizeof(kSharedPads) / sizeof(kSharedPads[0]);
constexpr int kFamilies = 2 + kPads;
constexpr Kind FamilyKind(int f) { return f == 0 ? Kind::kTile : Kind::kShared; }
constexpr int FamilyPad(int f) { return f < 2 ? 0 : kSharedPads[f - 2]; }

// Every (family, tile size, order) the table uses, instantiated; the one `v` names is launched.
template <typename T, Op OP, int I = 0>
cudaError_t LaunchRuntimeN(cudaStream_t stream, const Args<T>& g, const Variant& v) {
  constexpr int kSizes = sizeof(kTileSizes) / sizeof(kTileSizes[0]);
  if constexpr (I == kFamilies * kSizes * 2) {
    return cudaErrorInvalidValue;  // a table entry names a variant that does not exist
  } else {
    constexpr Kind kKind = FamilyKind(I / (kSizes * 2));
    constexpr int kPad = FamilyPad(I / (kSizes * 2));
    constexpr int kNB = kTileSizes[(I / 2) % kSizes];
    constexpr Order kOrder = I % 2 ? Order::kTop : Order::kLeft;
    if constexpr (RuntimeNUsed<T>(OP, kKind, kNB, kOrder, kPad)) {
      if (v.kind == kKind && v.nb == kNB && v.order == kOrder && v.pad == kPad) {
        if constexpr (kKind == Kind::kTile) return Launch<T, TileBody<T, OP, kNB, kOrder>>(stream, g, v.warps);
        else return Launch<T, SharedBody<T, OP, kNB, kOrder, kPad>>(stream, g, v.warps);
      }
    }
    return LaunchRuntimeN<T, OP, I + 1>(stream, g, v);
  }
}

// Whether any n of the table runs the group variant (lanes, pad, order, alt) for op: only those
// are instantiated.
template <typename T>
constexpr bool GroupUsed(Op op, int lanes, int pad, Order order, int alt) {
  for (int n = 1; n <= kTunedMaxN; ++n) {
    const Variant v = TunedVariant<T>(op, n);
    if (v.kind == Kind::kGroup && v.nb == lanes && v.pad == pad && v.order == order && v.alt == alt)
      return true;
  }
  return false;
}

// Every table row's group shape runs its n (its padding rows in the last slot: GroupRuns).
template <typename T>
constexpr bool GroupRowsRun() {
  for (int op = 0; op < kNumOps; ++op)
    for (int n = 1; n <= kTunedMaxN; ++n) {
      const Variant v = TunedVariant<T>(Op(op), n);
      if (v.kind == Kind::kGroup && !GroupRuns(v.nb, v.pad, n)) return false;
    }
  return true;
}
static_assert(GroupRowsRun<float>() && GroupRowsRun<double>(), "a group row of the table does not run its n");

// Every group variant the table uses, instantiated: lanes, pad (up to kTunedMaxN), order (kRight
// folds posv's first right-hand side into the factor, kLeft does not) and alt (the load form,
// GroupLoad). Variant I launches (result in *e) if it is the one `v` names.
template <typename T, Op OP, int I>
bool LaunchGroupIf(cudaStream_t stream, const Args<T>& g, const Variant& v, cudaError_t* e) {
  constexpr int kPadCount = kTunedMaxN;
  constexpr int kLanes = kGroupLanes[I / (kPadCount * 2 * kGroupLoads)];
  constexpr int kPad = (I / (2 * kGroupLoads)) % kPadCount + 1;
  constexpr Order kOrder = I % 2 ? Order::kLeft : Order::kRight;
  constexpr int kAlt = (I / 2) % kGroupLoads;
  if constexpr (kPad >= kLanes && GroupUsed<T>(OP, kLanes, kPad, kOrder, kAlt)) {
    using Body = GroupBody<T, OP, kPad, kLanes, kOrder == Order::kRight, kAlt>;
    using Wide = GroupBody<T, OP, kPad, kLanes, kOrder == Order::kRight,
                           kLoad64 + (GroupBcast(kAlt) ? kGroupBcast : 0)>;  // any launch
    if (v.nb == kLanes && v.pad == kPad && v.order == kOrder && v.alt == kAlt) {
      if (!Body::Holds(g.n)) *e = cudaErrorInvalidValue;  // a table row past its shape's size
      else *e = Body::Fits(g) ? Launch<T, Body>(stream, g, v.warps) : Launch<T, Wide>(stream, g, v.warps);
      return true;
    }
  }
  return false;
}

template <typename T, Op OP, int... I>
cudaError_t LaunchGroupOf(cudaStream_t stream, const Args<T>& g, const Variant& v,
                          std::integer_sequence<int, I...>) {
  cudaError_t e = cudaErrorInvalidValue;  // stays if a table entry names a variant that does not exist
  (void)(LaunchGroupIf<T, OP, I>(stream, g, v, &e) || ...);
  return e;
}

template <typename T, Op OP>
cudaError_t LaunchGroup(cudaStream_t stream, const Args<T>& g, const Variant& v) {
  constexpr int kVariants = int(sizeof(kGroupLanes) / sizeof(kGroupLanes[0])) * kTunedMaxN * 2 * kGroupLoads;
  return LaunchGroupOf<T, OP>(stream, g, v, std::make_integer_sequence<int, kVariants>{});
}

// Whether any n of the table runs the block variant (pad, alt) for op: only those are instantiated.
template <typename T>
constexpr bool BlockUsed(Op op, int pad, int alt) {
  for (int n = 1; n <= kTunedMaxN; ++n) {
    const Variant v = TunedVariant<T>(op, n);
    if (v.kind == Kind::kBlock && v.pad == pad && v.alt == alt) return true;
  }
  return false;
}

// Every block variant the table uses (pad a multiple of 8 up to kTunedMaxN, alt the form).
template <typename T, Op OP, int I = 0>
cudaError_t LaunchBlock(cudaStream_t stream, const Args<T>& g, const Variant& v) {
  constexpr int kPads = kTunedMaxN / 8;
  if constexpr (I == kPads * kBlockForms) {
    return cudaErrorInvalidValue;  // a table entry names a variant that does not exist
  } else {
    constexpr int kPad = 8 * (I / kBlockForms + 1), kAlt = I % kBlockForms;
    if constexpr (BlockFormBuilt(OP, kAlt, int(sizeof(T)), kPad) && BlockUsed<T>(OP, kPad, kAlt)) {
      if (v.pad == kPad && v.alt == kAlt) return Launch<T, BlockBody<T, OP, kPad, kAlt>>(stream, g, 0);
    }
    return LaunchBlock<T, OP, I + 1>(stream, g, v);
  }
}

template <typename T, Op OP, int N = 1>
cudaError_t LaunchFullOrRuntimeN(cudaStream_t stream, const Args<T>& g) {
  if constexpr (N > kMaxFullN) {
    return LaunchRuntimeN<T, OP>(stream, g, TunedVariant<T>(OP, g.n));
  } else {
    constexpr Variant v = TunedVariant<T>(OP, N);
    if constexpr (v.kind == Kind::kFull) {
      if (g.n == N) return Launch<T, FullBody<T, OP, N, v.order>>(stream, g, v.warps);
    }
    return LaunchFullOrRuntimeN<T, OP, N + 1>(stream, g);
  }
}

template <typename T, Op OP>
cudaError_t LaunchTuned(cudaStream_t stream, const Args<T>& g) {
  const Variant v = TunedVariant<T>(OP, g.n);
  if (v.kind == Kind::kGroup) return LaunchGroup<T, OP>(stream, g, v);
  if (v.kind == Kind::kBlock) return LaunchBlock<T, OP>(stream, g, v);
  return LaunchFullOrRuntimeN<T, OP>(stream, g);
}

}  // namespace il
}  // namespace batchla
