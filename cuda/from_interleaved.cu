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

#include "cuda/launch.h"

namespace batchla {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 2048;  // elements staged per tile: 8 per thread
constexpr int kPerThread = kTile / kThreads;

// n / d by one multiply, exact for n < 2^16 and 1 <= d <= 2^16 (m = floor(2^32 / d) + 1: the
// error n (m - 2^32 / d) / 2^32 < 2^-16 <= 1 / d never reaches the next integer).
struct SmallDiv {
  uint64_t m = 0;
  SmallDiv() = default;
  explicit SmallDiv(uint32_t d) : m((uint64_t(1) << 32) / d + 1) {}
  __device__ uint32_t operator()(uint32_t n) const { return uint32_t((n * m) >> 32); }
};

// A tile is g chunks x te matrix elements x tl lanes; either g == 1, or te == elems and tl == c
// (whole chunks, when one chunk is smaller than a tile). Always g * te * tl <= kTile.
struct Plan {
  int64_t chunks, c, count;  // per leading index
  uint32_t elems;            // rows * cols
  uint32_t g, te, tl;
  uint32_t tiles_e, tiles_l;  // tiles across a chunk group's elements and lanes
  int64_t tiles_per_lead, tiles;
  SmallDiv div_te, div_tl;
};

Plan MakePlan(int64_t lead, int64_t chunks, int64_t elems, int64_t c, int64_t count) {
  Plan p{};
  p.chunks = chunks, p.c = c, p.count = count, p.elems = uint32_t(elems);
  if (elems * c <= kTile) {  // whole chunks
    p.te = uint32_t(elems), p.tl = uint32_t(c);
    p.g = uint32_t(std::min<int64_t>(kTile / (elems * c), chunks));
  } else if (elems <= kTile / 32) {  // all elements, a multiple of 32 lanes
    p.te = uint32_t(elems), p.tl = uint32_t(kTile / elems / 32 * 32), p.g = 1;
  } else {  // runs of 64 elements x 32 lanes
    p.te = kTile / 32, p.tl = 32, p.g = 1;
  }
  p.tiles_e = uint32_t((elems + p.te - 1) / p.te);
  p.tiles_l = uint32_t((c + p.tl - 1) / p.tl);
  p.tiles_per_lead = (chunks + p.g - 1) / p.g * p.tiles_e * p.tiles_l;
  p.tiles = lead * p.tiles_per_lead;
  p.div_te = SmallDiv(p.te), p.div_tl = SmallDiv(p.tl);
  return p;
}

// Shared-memory index of tile position i: one pad slot per 32 spreads the strided stores of the
// read phase (stride te between lanes) over the banks.
__device__ __forceinline__ uint32_t Skew(uint32_t i) { return i + (i >> 5); }

template <typename T>
__global__ void __launch_bounds__(kThreads, 4) FromInterleavedKernel(const T* __restrict__ x, T* __restrict__ out,
                                                                  const Plan p) {
  __shared__ T tile[kTile + kTile / 32];
  const uint32_t size = p.g * p.te * p.tl;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const int64_t lead = t / p.tiles_per_lead;
    int64_t r = t - lead * p.tiles_per_lead;
    const uint32_t l0 = uint32_t(r % p.tiles_l) * p.tl;
    r /= p.tiles_l;
    const uint32_t e0 = uint32_t(r % p.tiles_e) * p.te;
    const int64_t k0 = r / p.tiles_e * p.g;  // first chunk of the tile
    const T* src = x + (lead * p.chunks + k0) * p.c * p.elems;
    // Read: lanes fastest (coalesced runs of tl), stored at the element's output position.
    T v[kPerThread];  // all loads in flight before the first store
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const uint32_t i = threadIdx.x + j * kThreads;
      const uint32_t q = p.div_tl(i), l = i - q * p.tl;
      const uint32_t g = p.div_te(q), e = q - g * p.te;
      const bool ok = i < size && k0 + g < p.chunks && l0 + l < p.c && e0 + e < p.elems;
      v[j] = ok ? src[(int64_t(g) * p.elems + e0 + e) * p.c + l0 + l] : T(0);
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {  // positions recomputed: fewer live registers
      const uint32_t i = threadIdx.x + j * kThreads;
      const uint32_t q = p.div_tl(i), l = i - q * p.tl;
      const uint32_t g = p.div_te(q), e = q - g * p.te;
      if (i < size) tile[Skew((g * p.tl + l) * p.te + e)] = v[j];
    }
    __syncthreads();
    // Write: elements fastest (runs of te; the whole tile is one run when te == elems). Matrix
    // k0 * c + l0 + s for tile row s (g > 1 means l0 == 0 and tl == c, so s = g * c + l).
    T* dst = out + lead * p.count * p.elems;
    const int64_t m0 = k0 * p.c + l0;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const uint32_t i = threadIdx.x + j * kThreads;
      const uint32_t s = p.div_te(i), e = i - s * p.te;
      const bool ok = i < size && m0 + s < p.count && (p.g > 1 || l0 + s < p.c) && e0 + e < p.elems;
      if (ok) dst[(m0 + s) * p.elems + e0 + e] = tile[Skew(i)];
    }
    __syncthreads();
  }
}

}  // namespace

template <typename T>
cudaError_t LaunchFromInterleaved(cudaStream_t stream, const T* x, T* out, int64_t lead, int64_t chunks,
                                  int64_t elems, int64_t c, int64_t count) {
  if (lead == 0 || count == 0 || elems == 0) return cudaGetLastError();  // nothing to write
  if (c <= 0 || count > chunks * c || elems > INT32_MAX) return cudaErrorInvalidValue;
  const Plan p = MakePlan(lead, chunks, elems, c, count);
  const int64_t blocks = std::min<int64_t>(p.tiles, int64_t(1) << 20);  // grid-stride beyond
  FromInterleavedKernel<T><<<unsigned(blocks), kThreads, 0, stream>>>(x, out, p);
  return cudaGetLastError();
}

template cudaError_t LaunchFromInterleaved<float>(cudaStream_t, const float*, float*, int64_t, int64_t,
                                                  int64_t, int64_t, int64_t);
template cudaError_t LaunchFromInterleaved<double>(cudaStream_t, const double*, double*, int64_t, int64_t,
                                                   int64_t, int64_t, int64_t);

}  // namespace batchla
