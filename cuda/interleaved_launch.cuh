// Table-driven dispatch of the interleaved solvers: the variant the autotuner picked for
// (dtype, op, n) (interleaved_tuning.h) is the only one instantiated for that n, so the library
// compiles a handful of kernels rather than the tuner's whole search space.
#pragma once

#include <type_traits>

#include "cuda/interleaved.cuh"
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
// order) for op: only those are instantiated.
template <typename T>
constexpr bool RuntimeNUsed(Op op, Kind kind, int nb, Order order) {
  for (int n = 1; n <= kTunedMaxN + 1; ++n) {
    const Variant v = TunedVariant<T>(op, n);
    if (v.kind == kind && v.nb == nb && v.order == order) return true;
  }
  return false;
}

// The runtime-n variants: kind (tile, shared) x tile size x order (left, top).
template <typename T, Op OP, int I = 0>
cudaError_t LaunchRuntimeN(cudaStream_t stream, const Args<T>& g, const Variant& v) {
  constexpr int kSizes = sizeof(kTileSizes) / sizeof(kTileSizes[0]);
  if constexpr (I == 4 * kSizes) {
    return cudaErrorInvalidValue;  // a table entry names a variant that does not exist
  } else {
    constexpr Kind kKind = I % 2 ? Kind::kShared : Kind::kTile;
    constexpr Order kOrder = (I / 2) % 2 ? Order::kTop : Order::kLeft;
    constexpr int kNB = kTileSizes[I / 4];
    if constexpr (RuntimeNUsed<T>(OP, kKind, kNB, kOrder)) {
      if (v.kind == kKind && v.nb == kNB && v.order == kOrder) {
        if constexpr (kKind == Kind::kTile) return Launch<T, TileBody<T, OP, kNB, kOrder>>(stream, g, v.warps);
        else return Launch<T, SharedBody<T, OP, kNB, kOrder>>(stream, g, v.warps);
      }
    }
    return LaunchRuntimeN<T, OP, I + 1>(stream, g, v);
  }
}

template <typename T, Op OP, int N = 1>
cudaError_t LaunchTuned(cudaStream_t stream, const Args<T>& g) {
  if constexpr (N > kMaxFullN) {
    return LaunchRuntimeN<T, OP>(stream, g, TunedVariant<T>(OP, g.n));
  } else {
    constexpr Variant v = TunedVariant<T>(OP, N);
    if constexpr (v.kind == Kind::kFull) {
      if (g.n == N) return Launch<T, FullBody<T, OP, N, v.order>>(stream, g, v.warps);
    }
    return LaunchTuned<T, OP, N + 1>(stream, g);
  }
}

}  // namespace il
}  // namespace batchla
