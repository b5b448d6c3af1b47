// The interleaved solvers' autotuner (driven by bench/autotune_interleaved.py): for each
// (dtype, op, n) it prunes the variants that cannot win (ptxas spilled more than kMaxSpillBytes to
// local memory; fewer than kMinWarpsPerSM warps fit on an SM, 1 for the shared-memory kind whose
// staging keeps a whole matrix per thread in flight; more shared memory than
// kSharedPortableBytes), times the rest on a batch of the benchmark's size, checks every timed variant's result on sampled matrices (scaled residuals <= 30, in
// double), and prints one JSON object per timing and per winner on stdout.
//
// Search, per (dtype, n): posv first: (1) every kind/order/tile at c = 32, 2 warps; (2) the best
// of (1) with 1, 2, 4, 8 warps; (3) the best of (2) at c = 32..512: that chunk becomes the
// layout's default for n. Then potrf, potrs, trsm: steps (1) and (2) at that chunk.
// Usage: autotune_il --dtypes f32,f64 --ops posv,potrf,potrs,trsm --nmin 1 --nmax 64 --bytes B
//                    [--kinds full,tile,shared,group,block] [--posv-read lower|upper]
// (--posv-read upper: posv reads A's upper triangle, as interleaved.solve's default; A is
// symmetric, so the check is the same.)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/autotune/registry.h"
#include "cuda/interleaved.cuh"
#include "tests/cuda/il_check.h"

using namespace batchla::il;
using iltune::Entry;

namespace {

constexpr int kMinWarpsPerSM = 4;
// A few spilled words (L1-resident local memory) can still win when a register cap buys
// occupancy; more cannot.
#ifndef IL_MAX_SPILL_BYTES  // a quick A/B may time what spills more
#define IL_MAX_SPILL_BYTES 64
#endif
constexpr int kMaxSpillBytes = IL_MAX_SPILL_BYTES;
constexpr int kMinWarpsPerSMShared = 1;
constexpr int kReps = 7;
const char* kOpNames[] = {"potrf", "potrs", "posv", "trsm"};
const char* kOrderNames[] = {"right", "left", "top"};
const char* kKindNames[] = {"full", "tile", "shared", "group", "block"};

// Deterministic test data, the same on host and device: matrix m's symmetric (i, j) entry in
// [-1, 1), diagonal n + 1 (diagonally dominant, so SPD and well conditioned; its lower
// triangle is also a well-conditioned factor for potrs and trsm); rhs entries in [-1, 1).
__host__ __device__ inline double Hash01(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return (x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
__host__ __device__ inline double AValue(int64_t m, int i, int j, int n) {
  if (i == j) return n + 1.0;
  const int r = i > j ? i : j, s = i > j ? j : i;
  return Hash01((uint64_t(m) * 4096 + r) * 4096 + s);
}
__host__ __device__ inline double BValue(int64_t m, int i) { return Hash01(~(uint64_t(m) * 4096 + i)); }

template <typename T>
__global__ void Generate(T* a, T* b, int64_t count, int n, int64_t c) {
  for (int64_t m = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; m < count; m += int64_t(gridDim.x) * blockDim.x) {
    T* am = a + (m / c) * int64_t(n) * n * c + m % c;
    T* bm = b + (m / c) * int64_t(n) * c + m % c;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) am[(int64_t(i) * n + j) * c] = T(AValue(m, i, j, n));
      bm[int64_t(i) * c] = T(BValue(m, i));
    }
  }
}

struct Buffers {
  void *a = nullptr, *b = nullptr, *out = nullptr, *scratch = nullptr;
  int32_t* info = nullptr;
};

Mode g_posv_mode = kReadLower;  // --posv-read

template <typename T>
struct Problem {
  int n;
  int64_t batch, c, chunks;
  Buffers buf;
  Args<T> args(Op op) const {
    return Args<T>{static_cast<const T*>(buf.a), static_cast<const T*>(buf.b), static_cast<T*>(buf.out),
                   buf.info, static_cast<T*>(buf.scratch), chunks, c, n, 1,
                   op == Op::kPosv ? g_posv_mode : kReadLower, false, false};
  }
};

// Gathers matrix m's (rows x cols) block from an interleaved device buffer.
template <typename T>
std::vector<double> Fetch(const void* base, int64_t m, int rows, int cols, int64_t c) {
  std::vector<T> h(size_t(rows) * cols);
  const T* p = static_cast<const T*>(base) + (m / c) * int64_t(rows) * cols * c + m % c;
  CK(cudaMemcpy2D(h.data(), sizeof(T), p, c * sizeof(T), sizeof(T), h.size(), cudaMemcpyDeviceToHost));
  return std::vector<double>(h.begin(), h.end());
}

// Worst scaled residual over sampled matrices (the first and last lanes of the first and last
// chunks) of the result currently in the output buffer.
template <typename T>
double CheckSample(Op op, const Problem<T>& p) {
  const int n = p.n;
  const double eps = Eps<T>();
  double worst = 0;
  std::vector<int64_t> ms;
  for (int64_t q : {int64_t(0), p.chunks - 1})
    for (int64_t lane : {int64_t(0), int64_t(1), int64_t(2), p.c - 2, p.c - 1})
      if (lane >= 0 && lane < p.c) ms.push_back(q * p.c + lane);
  for (int64_t m : ms) {
    std::vector<double> a(size_t(n) * n), b(n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) a[i * n + j] = double(T(AValue(m, i, j, n)));
      b[i] = double(T(BValue(m, i)));
    }
    double r;
    if (op == Op::kPotrf) {
      int32_t info = -1;
      CK(cudaMemcpy(&info, p.buf.info + m, sizeof(int32_t), cudaMemcpyDeviceToHost));
      r = info != 0 ? INFINITY : ilcheck::PotrfResidual(a.data(), Fetch<T>(p.buf.out, m, n, n, p.c).data(), n, eps);
    } else {
      const auto x = Fetch<T>(p.buf.out, m, n, 1, p.c);
      std::vector<double> mat = a;
      if (op != Op::kPosv) {  // potrs: M = L Lᵀ; trsm: M = L (lower triangle of a)
        const auto l = ilcheck::TriangularOp(a.data(), n, true, false, false);
        if (op == Op::kTrsm) {
          mat = l;
        } else {
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              double s = 0;
              for (int k = 0; k < n; ++k) s += l[i * n + k] * l[j * n + k];
              mat[i * n + j] = s;
            }
        }
      }
      r = ilcheck::SolveResidual(mat.data(), b.data(), x.data(), n, 1, eps);
    }
    if (!(r <= worst)) worst = r;
  }
  return worst;
}

int SmallestPad(int n) {
  for (int pad : kSharedPads)
    if (pad >= n) return pad;
  return 0;
}

struct Timing {
  const Entry* e = nullptr;
  int warps = 0;
  int64_t c = 0;
  double seconds = INFINITY;
};

int g_sms = 0;
std::string g_kinds;  // --kinds: only these kinds are timed (empty: all)

// Why a variant cannot win (nullptr if it may): spills, shared memory, too few resident warps.
const char* Pruned(const Entry& e, int n, int warps, int* regs, int* local) {
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, e.kernel));
  *regs = attr.numRegs;
  *local = int(attr.localSizeBytes);
  if (attr.localSizeBytes > kMaxSpillBytes) return "spills";
  const size_t smem = e.shared_bytes(n, 32 * (e.pad && e.kind == Kind::kShared ? 1 : warps));
  if (smem > size_t(kSharedPortableBytes)) return "shared memory";
  if (smem > 48 * 1024)
    CK(cudaFuncSetAttribute(e.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int blocks = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, e.kernel, 32 * warps, smem));
  if (blocks * warps < (e.kind == Kind::kShared ? kMinWarpsPerSMShared : kMinWarpsPerSM)) return "occupancy";
  return nullptr;
}

template <typename T>
Timing TimeOne(const Entry& e, Op op, Problem<T>& p, int warps, const char* stage) {
  const bool one_warp = e.pad && e.kind == Kind::kShared;  // padded shared: compiled for one warp
  if (one_warp) warps = 1;
  int regs = 0, local = 0;
  const char* why = Pruned(e, p.n, warps, &regs, &local);
  const char* dt = sizeof(T) == 4 ? "float32" : "float64";
  auto head = [&] {
    std::printf("{\"record\": \"timing\", \"stage\": \"%s\", \"op\": \"%s\", \"dtype\": \"%s\", \"n\": %d, "
                "\"kind\": \"%s\", \"order\": \"%s\", \"nb\": %d, \"warps\": %d, \"c\": %lld, \"regs\": %d, "
                "\"local_bytes\": %d, \"pad\": %d, \"alt\": %d",
                stage, kOpNames[int(op)], dt, p.n, kKindNames[int(e.kind)],
                kOrderNames[int(e.order)], e.nb, warps, (long long)p.c, regs, local, e.pad, e.alt);
  };
  Timing t{&e, warps, p.c, INFINITY};
  if (why) {
    head();
    std::printf(", \"pruned\": \"%s\"}\n", why);
    return t;
  }
  const Args<T> g = p.args(op);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r <= kReps; ++r) {
    CK(cudaEventRecord(e0));
    CK(e.launch(0, &g, warps));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float x = 0;
    CK(cudaEventElapsedTime(&x, e0, e1));
    if (r > 0) ms.push_back(x);  // the first run is the warm-up
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  const double residual = CheckSample<T>(op, p);
  const bool ok = residual <= 30.0;
  t.seconds = ok ? ms[ms.size() / 2] * 1e-3 : INFINITY;
  head();
  std::printf(", \"seconds\": %.6g, \"residual\": %.3g, \"ok\": %s}\n", ms[ms.size() / 2] * 1e-3, residual,
              ok ? "true" : "false");
  if (!ok) std::fprintf(stderr, "FAIL: %s %s n=%d variant residual %.3g\n", dt, kOpNames[int(op)], p.n, residual);
  return t;
}

template <typename T>
void Prepare(Problem<T>& p, int64_t c) {
  p.c = c;
  p.chunks = (p.batch + c - 1) / c;
  const int64_t count = p.chunks * c;
  Generate<T><<<1024, 256>>>(static_cast<T*>(p.buf.a), static_cast<T*>(p.buf.b), count, p.n, c);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}

template <typename T>
Timing Search(Op op, Problem<T>& p, const std::vector<int64_t>& chunks, int dtype) {
  Timing best;
  for (const Entry& e : iltune::Registry()) {  // (1) kinds, orders, tiles
    if (e.op != int(op) || e.dtype != dtype || (e.kind == Kind::kFull && e.n != p.n)) continue;
    if (e.kind == Kind::kShared && e.pad && e.pad != SmallestPad(p.n)) continue;
    if (e.kind == Kind::kGroup && !GroupRuns(e.nb, e.pad, p.n)) continue;
    if (e.kind == Kind::kBlock && e.pad != BlockPad(p.n)) continue;
    if (!g_kinds.empty() && g_kinds.find(kKindNames[int(e.kind)]) == std::string::npos) continue;
    Timing t = TimeOne<T>(e, op, p, e.kind == Kind::kBlock ? BlockWarps(int(sizeof(T))) : 2, "variant");
    if (e.kind == Kind::kShared && !(t.seconds < INFINITY))  // may fit one warp per block only
      t = TimeOne<T>(e, op, p, 1, "variant");
    if (t.seconds < best.seconds) best = t;
  }
  if (!best.e) return best;
  for (int w : {1, 4, 8}) {  // (2) warps per block
    if ((best.e->pad && best.e->kind == Kind::kShared) || best.e->kind == Kind::kBlock) break;  // fixed warps
    const Timing t = TimeOne<T>(*best.e, op, p, w, "warps");
    if (t.seconds < best.seconds) best = t;
  }
  for (int64_t c : chunks) {  // (3) chunk sizes
    if (c == p.c) continue;
    const int64_t keep = p.c;
    Prepare(p, c);
    const Timing t = TimeOne<T>(*best.e, op, p, best.warps, "chunk");
    if (t.seconds < best.seconds) best = t;
    Prepare(p, keep);
  }
  return best;
}

template <typename T>
void TuneDtype(const std::vector<Op>& ops, int nmin, int nmax, int64_t bytes) {
  const int dtype = sizeof(T) == 4 ? 0 : 1;
  for (int n = nmin; n <= nmax; ++n) {
    Problem<T> p;
    p.n = n;
    p.batch = std::max<int64_t>(1, bytes / (int64_t(n) * n * sizeof(T)));
    const int64_t padded = (p.batch + 511) / 512 * 512;  // room for every chunk size tried
    CK(cudaMalloc(&p.buf.a, padded * n * n * sizeof(T)));
    CK(cudaMalloc(&p.buf.b, padded * n * sizeof(T)));
    CK(cudaMalloc(&p.buf.out, padded * n * n * sizeof(T)));
    CK(cudaMalloc(&p.buf.scratch, padded * (int64_t(n) * (n + 1) / 2) * sizeof(T)));
    CK(cudaMalloc(&p.buf.info, padded * sizeof(int32_t)));
    int64_t chunk = 32;
    Prepare(p, chunk);
    for (Op op : ops) {  // posv first (the caller orders ops): it picks the chunk
      const bool picks_chunk = op == Op::kPosv;
      const Timing best = Search<T>(op, p, picks_chunk ? std::vector<int64_t>{32, 64, 128, 256, 512}
                                                       : std::vector<int64_t>{}, dtype);
      if (!best.e) {
        std::fprintf(stderr, "no variant survived for %s n=%d\n", kOpNames[int(op)], n);
        continue;
      }
      if (picks_chunk && best.c != p.c) Prepare(p, best.c);
      chunk = p.c;
      std::printf("{\"record\": \"winner\", \"op\": \"%s\", \"dtype\": \"%s\", \"n\": %d, \"kind\": \"%s\", "
                  "\"order\": \"%s\", \"nb\": %d, \"warps\": %d, \"pad\": %d, \"alt\": %d, \"c\": %lld, "
                  "\"seconds\": %.6g, \"batch\": %lld}\n",
                  kOpNames[int(op)], dtype ? "float64" : "float32", n,
                  kKindNames[int(best.e->kind)], kOrderNames[int(best.e->order)], best.e->nb,
                  best.e->pad && best.e->kind == Kind::kShared ? 1 : best.warps, best.e->pad, best.e->alt,
                  (long long)best.c, best.seconds, (long long)p.batch);
      std::fflush(stdout);
    }
    cudaFree(p.buf.a);
    cudaFree(p.buf.b);
    cudaFree(p.buf.out);
    cudaFree(p.buf.scratch);
    cudaFree(p.buf.info);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dtypes = "f32,f64", ops = "posv,potrf,potrs,trsm";
  int nmin = 1, nmax = kTunedMaxN;
  int64_t bytes = 256ll << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dtypes") dtypes = v;
    else if (k == "--ops") ops = v;
    else if (k == "--nmin") nmin = std::stoi(v);
    else if (k == "--nmax") nmax = std::stoi(v);
    else if (k == "--bytes") bytes = std::stoll(v);
    else if (k == "--kinds") g_kinds = v;
    else if (k == "--posv-read" && (v == "upper" || v == "lower"))
      g_posv_mode = v == "upper" ? kReadUpper : kReadLower;
    else {
      std::fprintf(stderr, "autotune_il: unknown argument %s %s\n", k.c_str(), v.c_str());
      return 2;
    }
  }
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<Op> op_list;
  for (int o : {2, 0, 1, 3})  // posv first: it picks the chunk the others are tuned at
    if (ops.find(kOpNames[o]) != std::string::npos) op_list.push_back(Op(o));
  std::fprintf(stderr, "%zu variants registered\n", iltune::Registry().size());
  if (dtypes.find("f32") != std::string::npos) TuneDtype<float>(op_list, nmin, nmax, bytes);
  if (dtypes.find("f64") != std::string::npos) TuneDtype<double>(op_list, nmin, nmax, bytes);
  return g_fail ? 1 : 0;
}
