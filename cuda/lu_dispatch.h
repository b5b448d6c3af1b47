// Internal contract between cuda/lu.cu (the LaunchGetrf / LaunchGesv / LaunchInverse /
// LaunchSlogdet entry points of launch.h) and the LU size classes, each in its own files:
//   small   n <= tuning::kLuSmallMaxN      cuda/lu_small*.{cuh,cu}    LuSmall<T>
//   blocked n in (kLuSmallMaxN, GetrfMaxN] cuda/lu_blocked*.{cuh,cu}  LuBlocked<T>
//     (and n <= kLuSmallMaxN where the tile class takes the output: LuTileTakes)
// getrs (any n) is separate: cuda/getrs*.{cuh,cu}. Semantics of every output: cuda/launch.h.
// Storage is ROW-MAJOR (launch.h); offsets int64_t.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/tuning.h"

namespace batchla {
namespace detail {

// What a kernel does with the factors once a matrix is factored on chip.
enum class LuOutput : int {
  kFactor = 0,   // write lu, pivots, perm, info (LaunchGetrf)
  kSolve = 1,    // write x = A^-1 b and info (LaunchGesv); lu/pivots/perm never written
  kInverse = 2,  // write inv = A^-1 and info (LaunchInverse)
  kSlogdet = 3,  // write sign, logabsdet (LaunchSlogdet); no info; lu: scratch where LuSlogdetOnLeft
};

// One argument pack for every LU launch; the pointers an output kind does not use are null.
template <typename T>
struct LuArgs {
  const T* a = nullptr;  // batch x n x n
  int64_t batch = 0;     // > 0 when a size class is called
  int n = 0;             // >= 1 when a size class is called
  // kFactor
  T* lu = nullptr;
  int32_t* pivots = nullptr;  // batch x n
  int32_t* perm = nullptr;    // batch x n; null: not wanted (lu_factor), not written
  // kFactor, kSolve, kInverse
  int32_t* info = nullptr;    // batch
  // kSolve: b, x are batch x n x k (may alias); k may be 0 (then only info is written)
  const T* b = nullptr;
  T* x = nullptr;
  int k = 0;
  // kInverse: batch x n x n
  T* inv = nullptr;
  // kInverse: batch x 2n int32 of scratch, for getrf's pivots and perm where the inverse is getrf
  // into inv + getri in place (LuGetriTakes; null there: cudaErrorInvalidValue)
  int32_t* scratch = nullptr;
  // kSlogdet: batch each (and lu as scratch, LuSlogdetOnLeft)
  T* sign = nullptr;
  T* logabsdet = nullptr;
};

// kFactor, kSlogdet and kSolve with k = 1 on the tile class (cuda/lu_blocked_tile.cuh), 1 <= n <= 96; LuBlocked calls it
// where LuTileTakes, for n <= kLuSmallMaxN too (cuda/lu.cu sends those n to LuBlocked).
template <typename T>
cudaError_t LuTileRun(cudaStream_t stream, const LuArgs<T>& args, LuOutput out);
// k: right-hand sides of a kSolve (the tile class solves k = 1).
template <typename T>
bool LuTileTakes(LuOutput out, int n, int k) {
  const bool f64 = sizeof(T) == 8;
  if (n < 1 || (out == LuOutput::kSolve && k != 1)) return false;
  if (n <= tuning::kLuSmallMaxN)  // a set of n there (cuda/tuning.h)
    return ((f64 ? tuning::kLuTileSmallNsF64 : tuning::kLuTileSmallNsF32)[int(out)] >> (n - 1)) & 1u;
  return n >= tuning::kLuTileMinN && n <= (f64 ? tuning::kLuTileMaxNF64 : tuning::kLuTileMaxNF32)[int(out)];
}

// kInverse as getrf + getri (cuda/lu_blocked_getri.cuh) for these n, where the left class factors
// them (LuBlocked asks both). LuGetriLaunch (64 < n <= 128): inv holds the factors, perm getrf's
// permutation; the inverse replaces the factors.
template <typename T>
bool LuGetriTakes(int n) {
  const bool f64 = sizeof(T) == 8;
  return n >= tuning::kLuGetriMinN.Of(f64) && n <= tuning::kLuGetriMaxN.Of(f64);
}
template <typename T>
cudaError_t LuGetriLaunch(cudaStream_t stream, T* inv, const int32_t* perm, int64_t batch, int n);

// n <= tuning::kLuSmallMaxN, every output kind.
template <typename T>
cudaError_t LuSmall(cudaStream_t stream, const LuArgs<T>& args, LuOutput out);

// kLuSmallMaxN < n <= LuBlockedMaxN<T>(); kSolve / kInverse / kSlogdet only for
// n <= LuBlockedFusedMaxN<T>() (on chip); larger returns cudaErrorInvalidValue.
template <typename T>
cudaError_t LuBlocked(cudaStream_t stream, const LuArgs<T>& args, LuOutput out);
template <typename T>
int LuBlockedMaxN();       // 512 on sm_90; less where the device has less shared memory
template <typename T>
int LuBlockedFusedMaxN();  // largest n the fused (on-chip) outputs handle
template <typename T>
bool LuBlockedFusedWins(LuOutput out, int n);  // fused kernel faster than the composition at n
// kSlogdet on the left-looking getrf class at n: it keeps the factors in global memory, so the
// call needs args.lu = batch x n x n of scratch (LaunchSlogdet's `scratch`); without it the
// on-chip classes take n <= LuBlockedFusedMaxN.
template <typename T>
bool LuSlogdetOnLeft(int n);

}  // namespace detail
}  // namespace batchla
