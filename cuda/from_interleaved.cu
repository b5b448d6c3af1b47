// from_interleaved as one kernel: interleaved (lead, chunks, rows, cols, c) back to the first
// `count` row-major matrices (lead, count, rows, cols) of each leading index.
//
// Why a kernel: XLA's tiled transpose does this at 0.91-0.95 of copy bandwidth when count is a
// multiple of c, but with the slice that drops the padding fused in, the fusion leaves the tiled
// emitter and reaches 0.44-0.48 (bench/NOTES.md, "from_interleaved kernel"). Within one chunk the
// op is a transpose of an (E = rows * cols) x c matrix into c x E, both contiguous; a block stages a
// tile of it through shared memory so that both the reads (runs of lanes) and the writes (runs of
// matrix elements) are coalesced.
#include <algorithm>
#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/launch.h"

namespace batchla {
namespace {

constexpr int kThreads = 256;
// Elements per thread: 64 bytes, so a tile is 16 KB in either dtype.
template <typename T>
constexpr int kPerThread = 64 / sizeof(T);
template <typename T>
constexpr int kTile = kThreads * kPerThread<T>;

// The read phase loads 16 bytes of consecutive lanes at once (c and every lane offset are
// multiples of 32, so the loads are aligned): a quarter (f32) or half (f64) of the index work.
template <typename T>
constexpr int kVec = detail::Vec16<T>::kN;

// A tile is g chunks x te matrix elements x tl lanes, g * te * tl <= the tile size; tl is 32 * 2^k
// <= kThreads, and g > 1 only when tl == c (whole lane runs: the tile's matrices are consecutive).
// Threads walk a tile in steps (kThreads vectors of kVec lanes when reading, kThreads elements
// when writing); the index decompositions advance by the precomputed quotient and remainder of
// that step, so no division runs per element.
struct Plan {
  int64_t chunks, c, count;  // per leading index
  uint32_t elems;            // rows * cols
  uint32_t g, te, tl, row_threads_log2;  // log2 of the threads that read one row of tl lanes
  uint32_t tiles_e, tiles_l;  // tiles across a chunk group's elements and lanes
  int64_t tiles_per_lead, tiles;
  uint32_t in_step_g, in_step_e;    // rows of the input order per step = in_step_g * te + in_step_e
  uint32_t out_step_s, out_step_e;  // kThreads = out_step_s * te + out_step_e
};

Plan MakePlan(int64_t lead, int64_t chunks, int64_t elems, int64_t c, int64_t count, int64_t tile, int vec) {
  Plan p{};
  p.chunks = chunks, p.c = c, p.count = count, p.elems = uint32_t(elems);
  // Lanes: the largest 32 * 2^k <= min(c, kThreads) with whole matrices still fitting (at least 32).
  int64_t tl = 32;
  while (2 * tl <= std::min<int64_t>(c, kThreads) && 2 * tl * elems <= tile) tl *= 2;
  // Elements: split into tiles_e parts of te; the first split that fills >= 7/8 of the tile with
  // useful elements (longest runs), else the best fill among the next few splits.
  const int64_t first = (elems * tl + tile - 1) / tile;
  double best = -1;
  for (int64_t parts = first; parts <= std::min(elems, first + 8); ++parts) {
    const int64_t te = (elems + parts - 1) / parts, tiles_e = (elems + te - 1) / te;  // tiles_e <= parts
    if (te * tl > tile || (parts > first && te < 8)) continue;
    const int64_t g = tl == c ? std::min(tile / (te * tl), std::max<int64_t>(chunks, 1)) : 1;
    const double fill = double(g * tl * elems) / double(tiles_e * tile);
    if (fill > best) best = fill, p.te = uint32_t(te), p.tiles_e = uint32_t(tiles_e), p.g = uint32_t(g);
    if (fill >= 0.875) break;
  }
  p.tl = uint32_t(tl);
  while ((int64_t(vec) << p.row_threads_log2) < tl) ++p.row_threads_log2;
  p.tiles_l = uint32_t((c + tl - 1) / tl);
  p.tiles_per_lead = (chunks + p.g - 1) / p.g * p.tiles_e * p.tiles_l;
  p.tiles = lead * p.tiles_per_lead;
  const uint32_t rows_per_step = kThreads >> p.row_threads_log2;
  p.in_step_g = rows_per_step / p.te, p.in_step_e = rows_per_step % p.te;
  p.out_step_s = kThreads / p.te, p.out_step_e = kThreads % p.te;
  return p;
}

// Shared-memory index of tile position i: one pad slot per 32 spreads the strided stores of the
// read phase (stride te between lanes) over the banks.
__device__ __forceinline__ uint32_t Skew(uint32_t i) { return i + (i >> 5); }

// (q, r) += (dq, dr) with 0 <= r < d kept.
__device__ __forceinline__ void Advance(uint32_t& q, uint32_t& r, uint32_t dq, uint32_t dr, uint32_t d) {
  q += dq, r += dr;
  if (r >= d) q += 1, r -= d;
}

template <typename T>
__global__ void __launch_bounds__(kThreads, 4) FromInterleavedKernel(const T* __restrict__ x, T* __restrict__ out,
                                                                     const Plan p) {
  __shared__ T tile[kTile<T> + kTile<T> / 32];
  // This thread's first position in the tile: input order (row g * te + e, lane l), output order
  // (tile matrix s, element es). Later positions follow by Advance.
  const uint32_t l = (threadIdx.x & ((1u << p.row_threads_log2) - 1)) * kVec<T>;
  const uint32_t row = threadIdx.x >> p.row_threads_log2;
  const uint32_t g_start = row / p.te, e_start = row % p.te;
  const uint32_t s_start = threadIdx.x / p.te, es_start = threadIdx.x % p.te;
  const uint32_t tile_matrices = p.g * p.tl;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const int64_t lead = t / p.tiles_per_lead;
    int64_t r = t - lead * p.tiles_per_lead;
    const uint32_t l0 = uint32_t(r % p.tiles_l) * p.tl;
    r /= p.tiles_l;
    const uint32_t e0 = uint32_t(r % p.tiles_e) * p.te;
    const int64_t k0 = r / p.tiles_e * p.g;  // first chunk of the tile
    // The tile's extent within the arrays (32-bit, so the per-element tests are one compare each).
    const uint32_t g_end = uint32_t(std::min<int64_t>(p.g, p.chunks - k0));
    const uint32_t e_end = std::min(p.te, p.elems - e0);
    const int64_t m0 = k0 * p.c + l0;  // matrix of tile row s = 0
    const int64_t rows_here = p.g > 1 ? tile_matrices : std::min<int64_t>(p.tl, p.c - l0);
    const uint32_t s_end = uint32_t(std::max<int64_t>(0, std::min(p.count - m0, rows_here)));  // 0: padding
    const bool lane_ok = l0 + l < p.c;
    const T* src = x + ((lead * p.chunks + k0) * p.elems + e0) * p.c + l0 + l;
    // Read: lanes fastest (coalesced runs of tl), all loads in flight before the first store.
    // The walks below depend only on the thread: opaque starts keep ptxas from hoisting every
    // step's indices out of the tile loop into (spilled) registers.
    using Vec = typename detail::Vec16<T>::type;
    constexpr int kLoads = kPerThread<T> / kVec<T>;
    Vec v[kLoads];
    uint32_t g = g_start, e = e_start;
    asm volatile("" : "+r"(g), "+r"(e));
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      v[j] = lane_ok && g < g_end && e < e_end ? *reinterpret_cast<const Vec*>(src + int64_t(g * p.elems + e) * p.c)
                                               : Vec{};
      Advance(g, e, p.in_step_g, p.in_step_e, p.te);
    }
    g = g_start, e = e_start;  // replayed rather than kept: fewer live registers
    asm volatile("" : "+r"(g), "+r"(e));
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      if (g < p.g) {  // each lane at its output position
        const uint32_t pos = (g * p.tl + l) * p.te + e;
        const T* lanes = reinterpret_cast<const T*>(&v[j]);
#pragma unroll
        for (int k = 0; k < kVec<T>; ++k) tile[Skew(pos + k * p.te)] = lanes[k];
      }
      Advance(g, e, p.in_step_g, p.in_step_e, p.te);
    }
    __syncthreads();
    // Write: elements fastest (runs of te; the whole tile is one run when te == elems). Tile
    // matrix s is matrix m0 + s (g > 1 means l0 == 0 and tl == c, so s = g * c + l).
    if (s_end > 0) {
      T* dst = out + (lead * p.count + m0) * p.elems + e0;
      uint32_t s = s_start, es = es_start;
      asm volatile("" : "+r"(s), "+r"(es));
#pragma unroll
      for (int j = 0; j < kPerThread<T>; ++j) {
        if (s < s_end && es < e_end) dst[int64_t(s) * p.elems + es] = tile[Skew(threadIdx.x + j * kThreads)];
        Advance(s, es, p.out_step_s, p.out_step_e, p.te);
      }
    }
    __syncthreads();
  }
}

}  // namespace

template <typename T>
cudaError_t LaunchFromInterleaved(cudaStream_t stream, const T* x, T* out, int64_t lead, int64_t chunks,
                                  int64_t elems, int64_t c, int64_t count) {
  if (lead == 0 || count == 0 || elems == 0) return cudaGetLastError();  // nothing to write
  // c a multiple of 32 (as jax_batchla.interleaved makes it): whole warps of lanes, aligned loads
  if (c <= 0 || c % 32 != 0 || count > chunks * c || elems > INT32_MAX) return cudaErrorInvalidValue;
  const Plan p = MakePlan(lead, chunks, elems, c, count, kTile<T>, kVec<T>);
  const int64_t blocks = std::min<int64_t>(p.tiles, int64_t(1) << 20);  // grid-stride beyond
  FromInterleavedKernel<T><<<unsigned(blocks), kThreads, 0, stream>>>(x, out, p);
  return cudaGetLastError();
}

template cudaError_t LaunchFromInterleaved<float>(cudaStream_t, const float*, float*, int64_t, int64_t,
                                                  int64_t, int64_t, int64_t);
template cudaError_t LaunchFromInterleaved<double>(cudaStream_t, const double*, double*, int64_t, int64_t,
                                                   int64_t, int64_t, int64_t);

}  // namespace batchla
