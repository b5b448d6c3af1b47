// tiny class of the batched triangular solves (trsm, potrs): a THREAD per (matrix, k = 1), small n.
// Included by cuda/trsm_kernels.cuh (after its cp.async / Vec16 helpers); thresholds in
// cuda/tuning.h ("trsm / potrs"), measurements in bench/NOTES.md ("trsm", "potrs").
//
// Storage: ROW-MAJOR (launch.h). Element (i, j) of matrix m at a + m*N*N + i*N + j; b, x at m*N + i.
// The sweeps think in rows of A (see trsm.cuh): dot form (op(A) = A) reads row r of A at step r,
// axpy form (op(A) = A^T) reads row r of A and updates the rows after it. Only the triangle of the
// sweep is used (the other one is loaded with its 16-byte units but never enters arithmetic).
//
// Persistent blocks of kMT threads walk chunks of kMT matrices (grid-stride). Each chunk is staged in
// shared memory by cp.async, double-buffered: the next chunk's loads are in flight while the current
// one is solved. Global reads/writes are coalesced 16-byte units; in shared memory each matrix (and
// each rhs) gets an odd number of 16-byte units (16-byte loads conflict-free) or, when its size is
// not a multiple of 16 bytes (odd N), an odd number of elements (scalar loads conflict-free).
#pragma once

#include <type_traits>

#include "cuda/common.cuh"

namespace batchla {
namespace trsm_detail {

using detail::StaticFor;

// Shared-memory layout of E elements per matrix.
template <typename T, int E>
struct TinyLay {
  static constexpr int kV = 16 / int(sizeof(T));
  static constexpr bool kVec = (E * int(sizeof(T))) % 16 == 0;
  static constexpr int kUnits = kVec ? E / kV : 0;                  // 16-byte units per matrix
  static constexpr int kStride = kVec ? (kUnits | 1) * kV : E;     // elements per matrix in smem
};

template <typename T, int N>
struct TinyCfg {
  using LA = TinyLay<T, N * N>;
  using LB = TinyLay<T, N>;
  static constexpr int kPer = (LA::kStride + LB::kStride) * int(sizeof(T));
  static constexpr int kBudget = tuning::kTrsmTinyStageBytes;
  static constexpr int kMT = 128 * kPer <= kBudget ? 128 : (64 * kPer <= kBudget ? 64 : 32);
  static constexpr int kStageElems = kMT * (LA::kStride + LB::kStride);
  static constexpr size_t kSmem = size_t(2) * kStageElems * sizeof(T);
};

__device__ __forceinline__ void CpAsync16N(void* dst, const void* src, int src_bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes)
               : "memory");
}

// Global (mc matrices of E elements, contiguous) -> shared (layout TinyLay<T, E>).
template <typename T, int E, int MT>
__device__ __forceinline__ void TinyStageIn(T* dst, const T* __restrict__ src, int mc, bool aligned) {
  using L = TinyLay<T, E>;
  const int total = mc * E;
  if (aligned) {
    constexpr int V = L::kV;
    const int units = (total + V - 1) / V;
    for (int u = threadIdx.x; u < units; u += MT) {
      int d;
      if constexpr (L::kVec) {
        const int m = u / L::kUnits;
        d = (m * (L::kUnits | 1) + (u - m * L::kUnits)) * V;
      } else {
        d = u * V;
      }
      const int rem = total - u * V;
      if (rem >= V) {
        CpAsync16N(dst + d, src + u * V, 16);
      } else {  // the tail unit: element copies, so no 16-byte access reaches past the buffer
        for (int i = 0; i < rem; ++i) CpAsync<sizeof(T)>(dst + d + i, src + u * V + i, true);
      }
    }
  } else {
    for (int e = threadIdx.x; e < total; e += MT) {
      const int m = e / E;
      CpAsync<sizeof(T)>(dst + m * L::kStride + (e - m * E), src + e, true);
    }
  }
}

// Shared (layout TinyLay<T, E>) -> global (mc matrices of E elements, contiguous).
template <typename T, int E, int MT>
__device__ __forceinline__ void TinyStageOut(T* __restrict__ dst, const T* src, int mc, bool aligned) {
  using L = TinyLay<T, E>;
  constexpr int V = L::kV;
  const int total = mc * E;
  if constexpr (L::kVec) {
    if (aligned) {
      const int units = total / V;
      for (int u = threadIdx.x; u < units; u += MT) {
        const int m = u / L::kUnits;
        const int d = (m * (L::kUnits | 1) + (u - m * L::kUnits)) * V;
        *reinterpret_cast<uint4*>(dst + u * V) = *reinterpret_cast<const uint4*>(src + d);
      }
      return;
    }
  }
  if (aligned) {
    const int units = total / V;
    for (int u = threadIdx.x; u < units; u += MT)
      *reinterpret_cast<uint4*>(dst + u * V) = *reinterpret_cast<const uint4*>(src + u * V);
    for (int e = units * V + threadIdx.x; e < total; e += MT) dst[e] = src[e];
  } else {
    for (int e = threadIdx.x; e < total; e += MT) {
      const int m = e / E;
      dst[e] = src[m * L::kStride + (e - m * E)];
    }
  }
}

// v[c] = element (R*W + c) of one matrix in layout TinyLay<T, E>, for c in [LO, HI].
template <typename T, int E, int W, int R, int LO, int HI, int NV>
__device__ __forceinline__ void TinyLoadSeg(const T* m, T (&v)[NV]) {
  using L = TinyLay<T, E>;
  constexpr int e0 = R * W + LO, e1 = R * W + HI;
  if constexpr (L::kVec) {
    constexpr int V = L::kV;
    StaticFor<e0 / V, e1 / V + 1>([&](auto uc) {
      constexpr int u = decltype(uc)::value;
      T t[V];
      Vec16<T>::Load(m + u * V, t);
      StaticFor<0, V>([&](auto qc) {
        constexpr int c = u * V + decltype(qc)::value - R * W;
        if constexpr (c >= LO && c <= HI) v[c] = t[decltype(qc)::value];
      });
    });
  } else {
    StaticFor<LO, HI + 1>([&](auto cc) {
      constexpr int c = decltype(cc)::value;
      v[c] = m[R * W + c];
    });
  }
}

// Stores v[0..N) to one rhs in layout TinyLay<T, N>.
template <typename T, int N>
__device__ __forceinline__ void TinyStoreVec(T* m, const T (&v)[N]) {
  using L = TinyLay<T, N>;
  if constexpr (L::kVec) {
    constexpr int V = L::kV;
    StaticFor<0, N / V>([&](auto uc) {
      constexpr int u = decltype(uc)::value;
      Vec16<T>::Store(m + u * V, v + u * V);
    });
  } else {
    StaticFor<0, N>([&](auto cc) { m[decltype(cc)::value] = v[decltype(cc)::value]; });
  }
}

// One sweep over the thread's matrix (see the file comment); inv[r] = 1 / A[r][r], unused if unit.
template <typename T, int N, bool FWD, bool TR>
__device__ __forceinline__ void TinySweep(const T* am, T (&x)[N], const T (&inv)[N], bool unit) {
  StaticFor<0, N>([&](auto sc) {
    constexpr int r = FWD ? decltype(sc)::value : N - 1 - decltype(sc)::value;
    const T dr = unit ? T(1) : inv[r];
    T rv[N];
    if constexpr (!TR) {
      // x_r = (x_r - sum_j A[r][j] x_j) / A[r][r], j over the solved rows; the newest x_j last, so
      // the dependency chain is one FMA + one MUL per row.
      constexpr int lo = FWD ? 0 : r + 1, hi = FWD ? r - 1 : N - 1;
      T acc = x[r];
      if constexpr (lo <= hi) {
        TinyLoadSeg<T, N * N, N, r, lo, hi>(am, rv);
        StaticFor<0, hi - lo + 1>([&](auto tc) {
          constexpr int j = FWD ? lo + decltype(tc)::value : hi - decltype(tc)::value;
          acc = fma(-rv[j], x[j], acc);
        });
      }
      x[r] = acc * dr;
    } else {
      // x_r is final; x_i -= A[r][i] x_r for the rows i after r.
      x[r] = x[r] * dr;
      constexpr int lo = FWD ? r + 1 : 0, hi = FWD ? N - 1 : r - 1;
      if constexpr (lo <= hi) {
        TinyLoadSeg<T, N * N, N, r, lo, hi>(am, rv);
        StaticFor<lo, hi + 1>([&](auto ic) {
          constexpr int i = decltype(ic)::value;
          x[i] = fma(-rv[i], x[r], x[i]);
        });
      }
    }
  });
}

template <typename T, int N>
__global__ void __launch_bounds__(TinyCfg<T, N>::kMT)
    TinySolveKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ x,
                    int64_t batch, SolvePlan plan, bool aligned) {
  using C = TinyCfg<T, N>;
  using LA = typename C::LA;
  using LB = typename C::LB;
  constexpr int MT = C::kMT;
  extern __shared__ __align__(16) unsigned char trsm_smem[];
  T* const smem = reinterpret_cast<T*>(trsm_smem);
  const int64_t chunks = (batch + MT - 1) / MT;
  int64_t c = blockIdx.x;
  if (c >= chunks) return;
  auto issue = [&](int64_t ch, int st) {
    const int64_t m0 = ch * MT;
    const int mc = static_cast<int>(batch - m0 < MT ? batch - m0 : MT);
    T* as = smem + st * C::kStageElems;
    TinyStageIn<T, N * N, MT>(as, a + m0 * (N * N), mc, aligned);
    TinyStageIn<T, N, MT>(as + MT * LA::kStride, b + m0 * N, mc, aligned);
  };
  bool any_diag = false;
  for (int p = 0; p < plan.npasses; ++p) any_diag |= !PassOf(plan, p).unit_diag;

  issue(c, 0);
  CpAsyncCommit();
  for (int it = 0; c < chunks; c += gridDim.x, ++it) {
    const int st = it & 1;
    if (c + gridDim.x < chunks) issue(c + gridDim.x, st ^ 1);  // that buffer was freed by the last sync
    CpAsyncCommit();
    CpAsyncWait<1>();
    __syncthreads();
    const int64_t m0 = c * MT;
    const int mc = static_cast<int>(batch - m0 < MT ? batch - m0 : MT);
    const T* as = smem + st * C::kStageElems;
    T* bs = const_cast<T*>(as) + MT * LA::kStride;
    if (int(threadIdx.x) < mc) {
      const T* am = as + threadIdx.x * LA::kStride;
      T* bm = bs + threadIdx.x * LB::kStride;
      T xv[N];
      TinyLoadSeg<T, N, N, 0, 0, N - 1>(bm, xv);
      T inv[N];
      StaticFor<0, N>([&](auto ic) {
        constexpr int i = decltype(ic)::value;
        inv[i] = T(1);
        if (any_diag) {
          T dv[N];
          TinyLoadSeg<T, N * N, N, i, i, i>(am, dv);
          inv[i] = T(1) / dv[i];
        }
      });
      for (int p = 0; p < plan.npasses; ++p) {
        const SweepPass sp = PassOf(plan, p);
        const bool u = sp.unit_diag;
        if (sp.forward) {
          if (sp.transposed) TinySweep<T, N, true, true>(am, xv, inv, u);
          else TinySweep<T, N, true, false>(am, xv, inv, u);
        } else {
          if (sp.transposed) TinySweep<T, N, false, true>(am, xv, inv, u);
          else TinySweep<T, N, false, false>(am, xv, inv, u);
        }
      }
      TinyStoreVec<T, N>(bm, xv);
    }
    __syncthreads();
    TinyStageOut<T, N, MT>(x + m0 * N, bs, mc, aligned);
    __syncthreads();  // the next iteration refills this buffer
  }
}

template <typename T, int N>
cudaError_t LaunchTinyN(cudaStream_t stream, const T* a, const T* b, T* x, int64_t batch,
                        const SolvePlan& plan) {
  using C = TinyCfg<T, N>;
  auto kernel = TinySolveKernel<T, N>;
  cudaError_t e;
  if (C::kSmem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::kSmem));
    if (e != cudaSuccess) return e;
  }
  const int64_t chunks = (batch + C::kMT - 1) / C::kMT;
  unsigned grid = 0;
  if ((e = detail::PersistentGrid<C>(kernel, C::kMT, C::kSmem, chunks, &grid)) != cudaSuccess) return e;
  const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(b) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(x) % 16 == 0;
  kernel<<<grid, C::kMT, C::kSmem, stream>>>(a, b, x, batch, plan, aligned);
  return cudaGetLastError();
}

template <typename T>
constexpr int TinyMaxN() {
  return sizeof(T) == 4 ? tuning::kTrsmTinyMaxNF32 : tuning::kTrsmTinyMaxNF64;
}

// n in 1..TinyMaxN<T>() (the compile-time sizes instantiated), k == 1.
template <typename T, int N = 1>
cudaError_t LaunchTiny(cudaStream_t stream, const T* a, const T* b, T* x, int64_t batch, int n,
                       const SolvePlan& plan) {
  if constexpr (N <= TinyMaxN<T>()) {
    if (n == N) return LaunchTinyN<T, N>(stream, a, b, x, batch, plan);
    return LaunchTiny<T, N + 1>(stream, a, b, x, batch, n, plan);
  } else {
    return cudaErrorInvalidValue;
  }
}

}  // namespace trsm_detail
}  // namespace batchla
