// The interleaved solvers' host entry points (launch.h), instantiated per dtype in
// interleaved_f32.cu / interleaved_f64.cu so the two compile in parallel.
#pragma once

#include "cuda/interleaved_launch.cuh"
#include "cuda/launch.h"

namespace batchla {
namespace il {

// n = 0: the matrices have no elements, so only info (one per matrix, 0 as LAPACK) is written.
// The tuned table has no variant for n = 0 (its row 0 is unused), so this never reaches it.
inline cudaError_t LaunchEmpty(cudaStream_t stream, int32_t* info, int64_t chunks, int64_t c) {
  if (info != nullptr && chunks > 0 && c > 0)
    cudaMemsetAsync(info, 0, sizeof(int32_t) * size_t(chunks) * size_t(c), stream);
  return cudaGetLastError();
}

}  // namespace il

template <typename T>
cudaError_t LaunchIlPotrf(cudaStream_t stream, const T* a, T* l, int32_t* info, int64_t chunks,
                          int64_t c, int n, bool symmetrize) {
  if (n == 0) return il::LaunchEmpty(stream, info, chunks, c);
  const il::Args<T> g{a, nullptr, l, info, nullptr, chunks, c, n, 0,
                      symmetrize ? il::kSymmetrize : il::kReadLower, false, false};
  return il::LaunchTuned<T, il::Op::kPotrf>(stream, g);
}

template <typename T>
cudaError_t LaunchIlPotrs(cudaStream_t stream, const T* l, const T* b, T* x, int64_t chunks,
                          int64_t c, int n, int k, bool lower) {
  if (n == 0) return il::LaunchEmpty(stream, nullptr, chunks, c);
  const il::Args<T> g{l, b, x, nullptr, nullptr, chunks, c, n, k,
                      lower ? il::kReadLower : il::kReadUpper, false, false};
  return il::LaunchTuned<T, il::Op::kPotrs>(stream, g);
}

template <typename T>
bool IlPosvFused(int n) {
  return n >= 0 && il::TunedVariant<T>(il::Op::kPosv, n).kind != il::Kind::kTile;
}

template <typename T>
cudaError_t LaunchIlPosv(cudaStream_t stream, const T* a, const T* b, T* x, int32_t* info, int64_t chunks,
                         int64_t c, int n, int k, bool lower) {
  if (!IlPosvFused<T>(n)) return cudaErrorInvalidValue;
  if (n == 0) return il::LaunchEmpty(stream, info, chunks, c);
  const il::Args<T> g{a, b, x, info, nullptr, chunks, c, n, k,
                      lower ? il::kReadLower : il::kReadUpper, false, false};
  return il::LaunchTuned<T, il::Op::kPosv>(stream, g);
}

template <typename T>
cudaError_t LaunchIlTrsm(cudaStream_t stream, const T* a, const T* b, T* x, int64_t chunks, int64_t c,
                         int n, int k, bool lower, bool trans, bool unit_diag) {
  if (n == 0) return il::LaunchEmpty(stream, nullptr, chunks, c);
  const il::Args<T> g{a, b, x, nullptr, nullptr, chunks, c, n, k,
                      lower ? il::kReadLower : il::kReadUpper, trans, unit_diag};
  return il::LaunchTuned<T, il::Op::kTrsm>(stream, g);
}

template <typename T>
int IlDefaultChunk(int n) {
  return il::kTunedChunk[il::kDtype<T>][n < 1 ? 1 : (n > il::kTunedMaxN ? il::kTunedMaxN : n)];
}

}  // namespace batchla

// Explicit instantiation of every entry point for one dtype.
#define BATCHLA_INSTANTIATE_IL(T)                                                                   \
  template cudaError_t batchla::LaunchIlPotrf<T>(cudaStream_t, const T*, T*, int32_t*, int64_t,     \
                                                 int64_t, int, bool);                               \
  template cudaError_t batchla::LaunchIlPotrs<T>(cudaStream_t, const T*, const T*, T*, int64_t,     \
                                                 int64_t, int, int, bool);                          \
  template bool batchla::IlPosvFused<T>(int);                                                       \
  template cudaError_t batchla::LaunchIlPosv<T>(cudaStream_t, const T*, const T*, T*, int32_t*,     \
                                                int64_t, int64_t, int, int, bool);                  \
  template cudaError_t batchla::LaunchIlTrsm<T>(cudaStream_t, const T*, const T*, T*, int64_t,      \
                                                int64_t, int, int, bool, bool, bool);               \
  template int batchla::IlDefaultChunk<T>(int);
