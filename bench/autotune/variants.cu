// The whole search space of one (dtype, op) of the interleaved solvers, registered with the
// autotuner. Compiled once per pair: -DIL_DTYPE=float|double -DIL_OP=0..3 (il::Op).
#include "bench/autotune/registry.h"
#include "cuda/interleaved.cuh"

namespace {

using namespace batchla::il;
using T = IL_DTYPE;
constexpr Op kOp = Op(IL_OP);
constexpr bool kFactors = kOp == Op::kPotrf || kOp == Op::kPosv;  // only these have loop orders

template <class Body>
cudaError_t LaunchBody(cudaStream_t stream, const void* args, int warps) {
  return Launch<T, Body>(stream, *static_cast<const Args<T>*>(args), warps);
}

template <class Body>
size_t SharedBytes(int n, int threads) {
  return SharedBytesOf<Body>::Get(n, threads);
}

template <class Body>
void Add(Kind kind, Order order, int nb, int n) {
  iltune::Registry().push_back({int(kOp), sizeof(T) == 4 ? 0 : 1, kind, order, nb, n,
                                reinterpret_cast<const void*>(&Kernel<T, Body>), &SharedBytes<Body>,
                                &LaunchBody<Body>});
}

template <int N>
void AddFull() {
  if constexpr (N <= kMaxFullN) {
    Add<FullBody<T, kOp, N, Order::kRight>>(Kind::kFull, Order::kRight, 0, N);
    if constexpr (kFactors) {
      Add<FullBody<T, kOp, N, Order::kLeft>>(Kind::kFull, Order::kLeft, 0, N);
      Add<FullBody<T, kOp, N, Order::kTop>>(Kind::kFull, Order::kTop, 0, N);
    }
    AddFull<N + 1>();
  }
}

template <int I = 0>
void AddTiles() {
  if constexpr (I < int(sizeof(kTileSizes) / sizeof(kTileSizes[0]))) {
    constexpr int kNB = kTileSizes[I];
    Add<TileBody<T, kOp, kNB, Order::kLeft>>(Kind::kTile, Order::kLeft, kNB, 0);
    Add<SharedBody<T, kOp, kNB, Order::kLeft>>(Kind::kShared, Order::kLeft, kNB, 0);
    if constexpr (kFactors) {
      Add<TileBody<T, kOp, kNB, Order::kTop>>(Kind::kTile, Order::kTop, kNB, 0);
      Add<SharedBody<T, kOp, kNB, Order::kTop>>(Kind::kShared, Order::kTop, kNB, 0);
    }
    AddTiles<I + 1>();
  }
}

[[maybe_unused]] const bool registered = (AddFull<1>(), AddTiles(), true);

}  // namespace
