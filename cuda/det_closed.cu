// det of 2 x 2 and 3 x 3 matrices by jnp's closed forms (jax.numpy.linalg's _det_2x2 / _det_3x3):
// the same products and sums in the same order, each rounded on its own (__fmul_rn / __fadd_rn
// keep ptxas from contracting them into FMAs).
//
// Why a kernel: XLA runs jnp's closed form as one fusion that reads each matrix as n^2 scalars
// 16 (36) bytes apart, and reaches 0.41 (float32) / 0.35 (float64) of the copy roofline on an
// H200 (bench/NOTES.md "det n = 2 and 3"). Here a block stages a tile of whole matrices through
// shared memory with 16-byte loads (coalesced, every byte used) and each thread reads its matrices
// back from there: a stream at the copy roofline, bounded only by DRAM.
#include <algorithm>
#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/launch.h"

namespace batchla {
namespace {

constexpr int kThreads = 256;
constexpr int kTileBytes = 16 * 1024;  // per block and tile: enough bytes in flight per SM at 8 blocks

__device__ __forceinline__ float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double Mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float Add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double Add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float Sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double Sub(double a, double b) { return __dsub_rn(a, b); }

// m: row-major N x N.
template <typename T, int N>
__device__ __forceinline__ T DetClosed(const T (&m)[N * N]) {
  if constexpr (N == 2) {
    return Sub(Mul(m[0], m[3]), Mul(m[1], m[2]));
  } else {
    T s = Mul(Mul(m[0], m[4]), m[8]);
    s = Add(s, Mul(Mul(m[1], m[5]), m[6]));
    s = Add(s, Mul(Mul(m[2], m[3]), m[7]));
    s = Sub(s, Mul(Mul(m[2], m[4]), m[6]));
    s = Sub(s, Mul(Mul(m[0], m[5]), m[7]));
    return Sub(s, Mul(Mul(m[1], m[3]), m[8]));
  }
}

// One tile = kThreads * R matrices, R of them a thread, R such that a tile is ~kTileBytes.
template <typename T, int N>
struct Tile {
  static constexpr int kElems = N * N;
  static constexpr int kR = std::max<int>(1, kTileBytes / (kThreads * kElems * int(sizeof(T))));
  static constexpr int kMatrices = kThreads * kR;
  static constexpr int kVec = detail::Vec16<T>::kN;
  static constexpr int kVectors = kMatrices * kElems / kVec;  // a tile's elements as 16-byte vectors
  static_assert(kMatrices * kElems % kVec == 0, "a tile is whole 16-byte vectors");
};

// A thread's matrix from the staged tile: 16-byte reads where a matrix is whole vectors (N = 2;
// float64 ones are two-way conflicted), else scalars (N = 3: word strides 9 / 18, no conflicts).
template <typename T, int N>
__device__ __forceinline__ void ReadMatrix(const T* s, T (&m)[N * N]) {
  constexpr int kElems = N * N, kVec = detail::Vec16<T>::kN;
  if constexpr (kElems % kVec == 0) {
#pragma unroll
    for (int v = 0; v < kElems / kVec; ++v) detail::Vec16<T>::Load(s + v * kVec, m + v * kVec);
  } else {
#pragma unroll
    for (int e = 0; e < kElems; ++e) m[e] = s[e];
  }
}

// `vectors`: a is 16-byte aligned (every full tile then starts on a 16-byte boundary: a tile is
// whole vectors); the last, partial tile and unaligned arrays are copied by scalars.
template <typename T, int N>
__global__ void __launch_bounds__(kThreads) DetClosedKernel(const T* __restrict__ a, T* __restrict__ det,
                                                            int64_t batch, bool vectors) {
  using TL = Tile<T, N>;
  using V = typename detail::Vec16<T>::type;
  __shared__ __align__(16) T tile[TL::kMatrices * TL::kElems];
  for (int64_t m0 = int64_t(blockIdx.x) * TL::kMatrices; m0 < batch; m0 += int64_t(gridDim.x) * TL::kMatrices) {
    const int count = int(std::min<int64_t>(TL::kMatrices, batch - m0));
    const T* src = a + m0 * TL::kElems;
    if (vectors && count == TL::kMatrices) {
      constexpr int kPerThread = (TL::kVectors + kThreads - 1) / kThreads;
      V v[kPerThread];  // every load in flight before the first store
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const int k = int(threadIdx.x) + i * kThreads;
        if (k < TL::kVectors) v[i] = reinterpret_cast<const V*>(src)[k];
      }
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const int k = int(threadIdx.x) + i * kThreads;
        if (k < TL::kVectors) reinterpret_cast<V*>(tile)[k] = v[i];
      }
    } else {
      for (int e = threadIdx.x; e < count * TL::kElems; e += kThreads) tile[e] = src[e];
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < TL::kR; ++r) {
      const int j = int(threadIdx.x) + r * kThreads;
      if (j < count) {
        T m[N * N];
        ReadMatrix<T, N>(tile + j * TL::kElems, m);
        det[m0 + j] = DetClosed<T, N>(m);
      }
    }
    __syncthreads();  // the tile is read before the next one is staged
  }
}

template <typename T, int N>
cudaError_t Launch(cudaStream_t stream, const T* a, T* det, int64_t batch) {
  const int64_t tiles = (batch + Tile<T, N>::kMatrices - 1) / Tile<T, N>::kMatrices;
  const bool vectors = (reinterpret_cast<uintptr_t>(a) & 15u) == 0;
  DetClosedKernel<T, N><<<detail::GridFor(tiles), kThreads, 0, stream>>>(a, det, batch, vectors);
  return cudaGetLastError();
}

}  // namespace

template <typename T>
cudaError_t LaunchDetClosed(cudaStream_t stream, const T* a, T* det, int64_t batch, int n) {
  if (n != 2 && n != 3) return cudaErrorInvalidValue;
  if (batch == 0) return cudaGetLastError();
  return n == 2 ? Launch<T, 2>(stream, a, det, batch) : Launch<T, 3>(stream, a, det, batch);
}

template cudaError_t LaunchDetClosed<float>(cudaStream_t, const float*, float*, int64_t, int);
template cudaError_t LaunchDetClosed<double>(cudaStream_t, const double*, double*, int64_t, int);

}  // namespace batchla
