// Shared device helpers for the batched kernels (cuda/*.cu). Small and stable on purpose: other
// kernel families include it. Nothing here knows about a particular op.
//
// Storage convention (see launch.h): ROW-MAJOR; matrix b of a batch starts at b * rows * cols,
// element (i, j) at i * cols + j; every offset that can exceed 2^31 is int64_t.
#pragma once

#include <cstdint>
#include <type_traits>
#include <cuda_runtime.h>

namespace batchla {
namespace detail {

// ---- index math -------------------------------------------------------------------------------
__host__ __device__ constexpr inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
__host__ __device__ constexpr inline int RoundUp(int a, int b) { return (a + b - 1) / b * b; }

// Largest grid.x we launch; kernels walk blocks with a grid-stride loop over int64_t block ids, so
// any batch works (gridDim.x is limited to 2^31 - 1).
constexpr int64_t kMaxGridX = 1 << 30;
inline unsigned GridFor(int64_t blocks) {
  return static_cast<unsigned>(blocks < kMaxGridX ? blocks : kMaxGridX);
}

// Grid of a persistent kernel: enough blocks to fill every SM once (at most `blocks_needed`).
// The SM count and the kernel's occupancy are queried once per (kernel, device) and cached, so
// launches do no device queries on the hot path. Call from one template instantiation per kernel
// (`Tag` keeps the caches of different kernels apart). Where the dynamic shared memory, and so the
// occupancy, varies with a runtime size, PersistentGridKeyed caches per `key` < KEYS (e.g. n).
template <typename Tag, int KEYS, typename Kernel>
cudaError_t PersistentGridKeyed(Kernel kernel, int threads, size_t smem, int64_t blocks_needed, int key,
                                unsigned* grid) {
  constexpr int kMaxDevices = 64;
  static int resident[kMaxDevices][KEYS] = {};  // 0 = not queried yet; benign race: same value written
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const bool cacheable = dev < kMaxDevices && key >= 0 && key < KEYS;
  int cached = cacheable ? resident[dev][key] : 0;
  if (cached == 0) {
    int sms = 0, per_sm = 0;
    if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return e;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem)) != cudaSuccess)
      return e;
    cached = (per_sm < 1 ? 1 : per_sm) * sms;
    if (cacheable) resident[dev][key] = cached;
  }
  *grid = static_cast<unsigned>(blocks_needed < cached ? blocks_needed : cached);
  return cudaSuccess;
}
template <typename Tag, typename Kernel>
cudaError_t PersistentGrid(Kernel kernel, int threads, size_t smem, int64_t blocks_needed, unsigned* grid) {
  return PersistentGridKeyed<Tag, 1>(kernel, threads, smem, blocks_needed, 0, grid);
}

// Shared memory a block may opt in to on the current device (227 KB on sm_90, 163 KB on sm_80),
// queried once per device and cached, so launches make no device queries; 0 if no device answers.
inline size_t SmemOptin() {
  constexpr int kMaxDevices = 64;
  static int cache[kMaxDevices] = {};  // 0 = not queried yet; benign race: same value written
  int dev = 0, v = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (dev < kMaxDevices && cache[dev] > 0) return size_t(cache[dev]);
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) return 0;
  if (dev < kMaxDevices) cache[dev] = v;
  return size_t(v);
}

// A block per unit of `batch` (grid-stride kernels, GridFor), with `smem` bytes of dynamic shared
// memory (the opt-in attribute set first when past the 48 KB default).
template <typename Kernel, typename... Args>
cudaError_t LaunchBlocks(Kernel kernel, int threads, size_t smem, cudaStream_t stream,
                         int64_t batch, Args... args) {
  if (smem > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  kernel<<<GridFor(batch), threads, smem, stream>>>(args...);
  return cudaGetLastError();
}

// ---- compile-time loop: f(std::integral_constant<int, I>{}) for I = B .. E - 1, so that the body
// can index register arrays and pick template arguments with I.
template <int B, int E, typename F>
__device__ __forceinline__ void StaticFor(F&& f) {
  if constexpr (B < E) {
    f(std::integral_constant<int, B>{});
    StaticFor<B + 1, E>(f);
  }
}

// ---- 8 consecutive values by 16-byte vector accesses (p 16-byte aligned; from shared memory these
// are broadcasts when every lane reads the same address) -----------------------------------------
template <typename T>
__device__ __forceinline__ void Load8(const T* p, T (&v)[8]) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  if constexpr (sizeof(T) == 4) {
    const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      const double2 a = reinterpret_cast<const double2*>(p)[h];
      v[2 * h] = a.x, v[2 * h + 1] = a.y;
    }
  }
}
template <typename T>
__device__ __forceinline__ void Store8(T* p, const T (&v)[8]) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  if constexpr (sizeof(T) == 4) {
    reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
#pragma unroll
    for (int h = 0; h < 4; ++h) reinterpret_cast<double2*>(p)[h] = make_double2(v[2 * h], v[2 * h + 1]);
  }
}

// ---- scalar traits ----------------------------------------------------------------------------
template <typename T>
struct Scalar;
template <>
struct Scalar<float> {
  __device__ static float NaN() { return __int_as_float(0x7fc00000); }
  __device__ static float Sqrt(float x) { return sqrtf(x); }   // IEEE-rounded (no fast-math)
  static constexpr float kEps = 1.1920928955078125e-07f;
  static constexpr float kMinNormal = 1.17549435e-38f;  // FLT_MIN
};
template <>
struct Scalar<double> {
  __device__ static double NaN() { return __longlong_as_double(0x7ff8000000000000ll); }
  __device__ static double Sqrt(double x) { return sqrt(x); }
  static constexpr double kEps = 2.220446049250313e-16;
  static constexpr double kMinNormal = 2.2250738585072014e-308;  // DBL_MIN
};

// 16 bytes of T as one vector: the mapping behind every class's 16-byte shared- and global-memory
// accesses. type and kN elements; Get (element e, e a constant once unrolled), Make (a vector from
// kN consecutive values), Split (the reverse), Load / Store (kN values from / to 16-byte aligned
// memory).
template <typename T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int kN = 4;
  __device__ static float Get(const float4& v, int e) { return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w; }
  __device__ static float4 Make(const float* w) { return float4{w[0], w[1], w[2], w[3]}; }
  __device__ static void Split(const float4& v, float* out) { out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w; }
  __device__ static void Load(const float* p, float* out) {
    const float4 v = *reinterpret_cast<const float4*>(p);  // one 16-byte load (a reference would not be)
    Split(v, out);
  }
  __device__ static void Store(float* p, const float* w) { *reinterpret_cast<float4*>(p) = Make(w); }
  // From shared memory as one 16-byte load even where some of the kN values are dead: nvcc narrows
  // such plain loads to 8-byte and scalar ones, differently from one compile to the next
  // (bench/NOTES.md "Lane-group broadcast loads kept whole"). Ordered as volatile asm is: after
  // the __syncwarp / __syncthreads that publishes p's values.
  __device__ static void LoadSharedWhole(const float* p, float* out) {
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(out[0]), "=f"(out[1]), "=f"(out[2]), "=f"(out[3])
                 : "r"(unsigned(__cvta_generic_to_shared(p))));
  }
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int kN = 2;
  __device__ static double Get(const double2& v, int e) { return e == 0 ? v.x : v.y; }
  __device__ static double2 Make(const double* w) { return double2{w[0], w[1]}; }
  __device__ static void Split(const double2& v, double* out) { out[0] = v.x, out[1] = v.y; }
  __device__ static void Load(const double* p, double* out) {
    const double2 v = *reinterpret_cast<const double2*>(p);
    Split(v, out);
  }
  __device__ static void Store(double* p, const double* w) { *reinterpret_cast<double2*>(p) = Make(w); }
  __device__ static void LoadSharedWhole(const double* p, double* out) {
    asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];" : "=d"(out[0]), "=d"(out[1])
                 : "r"(unsigned(__cvta_generic_to_shared(p))));
  }
};

// 1 / x and 1 / sqrt(x) without IEEE division or square root: those carry range-check branches
// that end the compiler's scheduling region at every column of a QR panel or step. Hardware
// approximation plus Newton steps (float one, double two: ~1 ulp). Denormal f64 inputs flush to
// zero. kFtz (float): the .ftz forms, for x and the result normal (the caller's range test
// guarantees it), without the denormal fix-up (a compare, a select and a scaling multiply) that
// ptxas puts around the plain forms' MUFU; doubles are .ftz either way.
template <bool kFtz = false>
__device__ __forceinline__ float ApproxRcp(float x) {
  float r;
  if constexpr (kFtz) asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  else asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return fmaf(r, fmaf(-x, r, 1.f), r);
}
template <bool kFtz = false>
__device__ __forceinline__ double ApproxRcp(double x) {
  double r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  r = fma(r, fma(-x, r, 1.0), r);
  return fma(r, fma(-x, r, 1.0), r);
}
template <bool kFtz = false>
__device__ __forceinline__ float ApproxRsqrt(float x) {
  float y;
  if constexpr (kFtz) asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  else asm("rsqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y * fmaf(-0.5f * x, y * y, 1.5f);
}
template <bool kFtz = false>
__device__ __forceinline__ double ApproxRsqrt(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  y *= fma(-0.5 * x, y * y, 1.5);
  return y * fma(-0.5 * x, y * y, 1.5);
}

// ---- warp shuffles (float and double; width = sub-warp size, a power of two <= 32) ------------
template <typename T>
__device__ __forceinline__ T ShflIdx(T v, int src, int width = 32, unsigned mask = 0xffffffffu) {
  return __shfl_sync(mask, v, src, width);
}
template <typename T>
__device__ __forceinline__ T ShflXor(T v, int lane_mask, int width = 32, unsigned mask = 0xffffffffu) {
  return __shfl_xor_sync(mask, v, lane_mask, width);
}

// Sum over each aligned group of kWidth lanes (a power of two <= 32) by an xor butterfly: every lane
// of a group gets the same, bit-identical total.
template <int kWidth, typename T>
__device__ __forceinline__ T LanesSum(T v) {
#pragma unroll
  for (int o = kWidth / 2; o > 0; o >>= 1) v += ShflXor(v, o);
  return v;
}

// d (8 x 8, lane: row lane / 4, columns 2 (lane % 4) + {0, 1}) += a (8 x 4, lane: row lane / 4,
// column lane % 4) * b (4 x 8, lane: row lane % 4, column lane / 4): the f64 tensor-core MMA
// (sm_80+; exact f64 FMA), used by the LU, Cholesky and interleaved trailing updates.
__device__ __forceinline__ void MmaF64m8n8k4(double (&d)[2], double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(d[0]), "+d"(d[1])
      : "d"(a), "d"(b));
#else  // the same product by shuffles (for completeness: we build sm_80 and sm_90)
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const double av = __shfl_sync(0xffffffffu, a, g * 4 + kk);
    d[0] = fma(av, __shfl_sync(0xffffffffu, b, kk + 4 * (2 * q)), d[0]);
    d[1] = fma(av, __shfl_sync(0xffffffffu, b, kk + 4 * (2 * q + 1)), d[1]);
  }
#endif
}

// Copies `count` consecutive elements from global `src` into shared `dst`, where element e
// (e = m * rows * cols + i * cols + j) lands at dst[m * mat_stride + i * row_stride + j], or at
// dst[m * mat_stride + j * row_stride + i] when `transpose` (square matrices only). Padding the
// strides to odd values keeps per-thread row/matrix reads free of bank conflicts. Block-wide;
// the caller synchronizes. ROWS/COLS compile-time so the divisions are cheap. `lower_only` skips
// source elements that do not land in the lower triangle of dst (square matrices; those dst
// elements are left unwritten). `count` is a per-block count (fits int).
template <typename T, int ROWS, int COLS>
__device__ __forceinline__ void StageIn(const T* __restrict__ src, int count, T* dst,
                                        int row_stride, int mat_stride, bool transpose = false,
                                        bool lower_only = false) {
  constexpr int kMat = ROWS * COLS;
  constexpr int kU = 8;  // loads in flight per thread before their shared-memory stores
  for (int e0 = threadIdx.x; e0 < count; e0 += kU * blockDim.x) {
    T v[kU];
    int at[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int e = e0 + u * blockDim.x;
      const int m = e / kMat, r = e % kMat;
      const int i = r / COLS, j = r % COLS;
      const bool keep = e < count && !(lower_only && (transpose ? j < i : j > i));
      at[u] = keep ? m * mat_stride + (transpose ? j * row_stride + i : i * row_stride + j) : -1;
      if (keep) v[u] = src[e];
    }
#pragma unroll
    for (int u = 0; u < kU; ++u)
      if (at[u] >= 0) dst[at[u]] = v[u];
  }
}
// Inverse of StageIn (no transpose).
template <typename T, int ROWS, int COLS>
__device__ __forceinline__ void StageOut(const T* src, int count, T* __restrict__ dst,
                                         int row_stride, int mat_stride) {
  constexpr int kMat = ROWS * COLS;
  for (int e = threadIdx.x; e < count; e += blockDim.x) {
    const int m = e / kMat;
    const int r = e % kMat;
    const int i = r / COLS, j = r % COLS;
    dst[e] = src[m * mat_stride + i * row_stride + j];
  }
}

// ---- cp.async helpers (sm_80+): global -> shared memory without registers ------------------------
// BYTES of src to dst (shared). 16-byte copies skip L1 (.cg) unless kCacheL1; smaller ones always
// go through it (.ca: .cg takes 16 bytes only).
template <int BYTES, bool kCacheL1 = BYTES != 16>
__device__ __forceinline__ void CpAsync(void* dst, const void* src) {
  static_assert(kCacheL1 || BYTES == 16, ".cg copies 16 bytes");
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (kCacheL1)
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(d), "l"(src), "n"(BYTES) : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}
// The same, where `valid == false` zero-fills the destination and reads nothing (src-size 0).
template <int BYTES>
__device__ __forceinline__ void CpAsync(void* dst, const void* src, bool valid) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int src_size = valid ? BYTES : 0;
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
                 "r"(src_size)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src),
                 "n"(BYTES), "r"(src_size)
                 : "memory");
  }
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Every copy this thread issued, committed or not.
__device__ __forceinline__ void CpAsyncWaitAll() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// Waits until at most `pending` groups are in flight (pending clamped to 0..7).
__device__ __forceinline__ void CpAsyncWaitDyn(int pending) {
  switch (pending) {
    case 0: CpAsyncWait<0>(); break;
    case 1: CpAsyncWait<1>(); break;
    case 2: CpAsyncWait<2>(); break;
    case 3: CpAsyncWait<3>(); break;
    case 4: CpAsyncWait<4>(); break;
    case 5: CpAsyncWait<5>(); break;
    case 6: CpAsyncWait<6>(); break;
    default: CpAsyncWait<7>(); break;
  }
}

}  // namespace detail
}  // namespace batchla
