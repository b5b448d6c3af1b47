// Standalone check of LaunchGetrs (cuda/launch.h) on a GPU: LU factors and permutations from a host
// partial-pivoting LU (float64) of random matrices, scaled residuals ||b - op(A) x||_1 /
// (||op(A)||_1 ||x||_1 n eps) <= 30 against the original A, every n in 1..40 and a sample to 512,
// k in {1, 2, 3, 8, 33, n}, both orders, in-place (b == x) and out-of-place with poisoned outputs,
// odd batches, unaligned pointers, every size class forced where it can run, batch/n/k 0, a zero
// pivot mixed into a batch (neighbours bit-identical to a clean run), then a timing table.
// Build: tests/cuda/run_checks.sh check_getrs. Exits non-zero on any failure.
// --no-timing: checks only; --timing-only: timing table only. BATCHLA_CHECK_SANITIZE=1 (sanitize
// mode, tests/cuda/check_common.h): checks only, batches <= 40, n in 1..40, 64, 65, 128, 129.
//
// Row-major throughout: lu (i, j) of matrix m at m*n*n + i*n + j; perm at m*n + i; B, X (n x k)
// at m*n*k + i*k + c. A = P^T L U with A(perm[i], :) = (L U)(i, :).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cuda/getrs.cuh"  // getrs_detail::LaunchGetrsAs / GetrsClass: per-class checks and timing
#include "cuda/launch.h"
#include "tests/cuda/check_common.h"  // CK, sanitize mode


namespace {

using batchla::getrs_detail::GetrsClass;
int g_failures = 0;
constexpr double kThreshold = 30.0;
constexpr double kCopyBw = 4.24e12;
constexpr double kPeakFlops = 67e12;

const char* ClassName(GetrsClass c) {
  switch (c) {
    case GetrsClass::kTiny: return "tiny";
    case GetrsClass::kSmall: return "small";
    case GetrsClass::kTile: return "tile";
    case GetrsClass::kPanel: return "panel";
    default: return "auto";
  }
}

// A random matrix (entries in (-1, 1)) and its partial-pivoting LU (getf2's pivot rule), float64.
struct Factor {
  int n = 0;
  std::vector<double> a, lu;
  std::vector<int32_t> perm;
};
Factor MakeFactor(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Factor f;
  f.n = n;
  f.a.resize(size_t(n) * n);
  for (auto& e : f.a) e = u(rng);
  f.lu = f.a;
  f.perm.resize(n);
  for (int i = 0; i < n; ++i) f.perm[i] = i;
  double* lu = f.lu.data();
  for (int j = 0; j < n; ++j) {
    int p = j;
    for (int r = j + 1; r < n; ++r)
      if (std::fabs(lu[size_t(r) * n + j]) > std::fabs(lu[size_t(p) * n + j])) p = r;
    if (p != j) {
      std::swap_ranges(lu + size_t(j) * n, lu + size_t(j + 1) * n, lu + size_t(p) * n);
      std::swap(f.perm[j], f.perm[p]);
    }
    const double piv = lu[size_t(j) * n + j];
    if (piv == 0) continue;
    for (int r = j + 1; r < n; ++r) {
      double* row = lu + size_t(r) * n;
      const double l = row[j] /= piv;
      const double* prow = lu + size_t(j) * n;
      for (int c = j + 1; c < n; ++c) row[c] -= l * prow[c];
    }
  }
  return f;
}

// A batch built from a few distinct factorizations (matrix m uses factor m % size).
template <typename T>
struct Problem {
  int n = 0, k = 0;
  int64_t batch = 0;
  const std::vector<Factor>* factors = nullptr;
  std::vector<T> lu, b;
  std::vector<int32_t> perm;
};
template <typename T>
Problem<T> MakeProblem(const std::vector<Factor>& fs, int n, int k, int64_t batch, uint64_t seed) {
  Problem<T> p;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.factors = &fs;
  p.lu.resize(size_t(batch) * n * n);
  p.perm.resize(size_t(batch) * n);
  p.b.resize(size_t(batch) * n * k);
  for (int64_t m = 0; m < batch; ++m) {
    const Factor& f = fs[m % fs.size()];
    for (size_t e = 0; e < size_t(n) * n; ++e) p.lu[size_t(m) * n * n + e] = T(f.lu[e]);
    std::copy(f.perm.begin(), f.perm.end(), p.perm.begin() + size_t(m) * n);
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto& e : p.b) e = T(u(rng));
  return p;
}

// Runs the solve on the device. in_place: x is b's buffer; else x is poisoned (NaN) first.
// off: elements of offset on every pointer (off = 1: not 16-byte aligned).
template <typename T>
std::vector<T> RunDevice(const Problem<T>& p, bool trans, bool in_place, GetrsClass cls, int off = 0,
                         cudaError_t* status = nullptr) {
  T *dlu, *db, *dx;
  int32_t* dp;
  const size_t nlu = p.lu.size(), nb = p.b.size(), np = p.perm.size();
  CK(cudaMalloc(&dlu, (nlu + off + 1) * sizeof(T)));
  CK(cudaMalloc(&dp, (np + off + 1) * sizeof(int32_t)));
  CK(cudaMalloc(&db, (nb + off + 1) * sizeof(T)));
  CK(cudaMalloc(&dx, (nb + off + 1) * sizeof(T)));
  // Every byte defined (compute-sanitizer initcheck): the slack around the copies too.
  CK(cudaMemset(dlu, 0, (nlu + off + 1) * sizeof(T)));
  CK(cudaMemset(dp, 0, (np + off + 1) * sizeof(int32_t)));
  CK(cudaMemset(db, 0, (nb + off + 1) * sizeof(T)));
  CK(cudaMemcpy(dlu + off, p.lu.data(), nlu * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dp + off, p.perm.data(), np * sizeof(int32_t), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db + off, p.b.data(), nb * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemset(dx, 0xff, (nb + off + 1) * sizeof(T)));  // NaN poison
  T* xout = in_place ? db + off : dx + off;
  const cudaError_t e = batchla::getrs_detail::LaunchGetrsAs<T>(0, dlu + off, dp + off, db + off, xout,
                                                                p.batch, p.n, p.k, trans, cls);
  if (status) *status = e;
  else CK(e);
  CK(cudaDeviceSynchronize());
  std::vector<T> X(nb);
  CK(cudaMemcpy(X.data(), xout, nb * sizeof(T), cudaMemcpyDeviceToHost));
  CK(cudaFree(dlu));
  CK(cudaFree(dp));
  CK(cudaFree(db));
  CK(cudaFree(dx));
  return X;
}

double Norm1(const double* x, int rows, int cols) {  // max column sum
  double best = 0;
  for (int c = 0; c < cols; ++c) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += std::fabs(x[size_t(i) * cols + c]);
    best = std::max(best, s);
  }
  return best;
}

// Scaled residual of one matrix against the original A (float64).
double Residual(const Factor& f, bool trans, int k, const double* b, const double* x, double eps) {
  const int n = f.n;
  std::vector<double> r(b, b + size_t(n) * k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double aij = trans ? f.a[size_t(j) * n + i] : f.a[size_t(i) * n + j];
      const double* xj = x + size_t(j) * k;
      double* ri = r.data() + size_t(i) * k;
      for (int c = 0; c < k; ++c) ri[c] -= aij * xj[c];
    }
  double anorm = 0;  // ||op(A)||_1
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::fabs(trans ? f.a[size_t(j) * n + i] : f.a[size_t(i) * n + j]);
    anorm = std::max(anorm, s);
  }
  const double res = Norm1(r.data(), n, k) / (anorm * Norm1(x, n, k) * n * eps);
  return std::isnan(res) ? std::numeric_limits<double>::infinity() : res;
}

template <typename T>
double CheckCase(const std::vector<Factor>& fs, int n, int k, int64_t batch, bool trans, bool in_place,
                 GetrsClass cls, uint64_t seed, int off = 0) {
  batch = SanitizeBatch(batch);
  const Problem<T> p = MakeProblem<T>(fs, n, k, batch, seed);
  const std::vector<T> X = RunDevice<T>(p, trans, in_place, cls, off);
  const double eps = std::numeric_limits<T>::epsilon();
  double worst = 0;
  std::vector<double> b(size_t(n) * k), x(size_t(n) * k);
  for (int64_t m = 0; m < batch; ++m) {
    for (size_t e = 0; e < b.size(); ++e) b[e] = double(p.b[size_t(m) * n * k + e]);
    for (size_t e = 0; e < x.size(); ++e) x[e] = double(X[size_t(m) * n * k + e]);
    const double r = Residual(fs[m % fs.size()], trans, k, b.data(), x.data(), eps);
    worst = std::max(worst, r);
    if (!(r <= kThreshold)) {
      if (g_failures < 30)
        std::printf("FAIL %s n=%d k=%d batch=%lld %s %s class=%s off=%d matrix %lld: residual %.3g\n",
                    sizeof(T) == 4 ? "f32" : "f64", n, k, (long long)batch, trans ? "T" : "N",
                    in_place ? "in-place" : "out", ClassName(cls), off, (long long)m, r);
      ++g_failures;
      break;
    }
  }
  return worst;
}

// U(p, p) = 0 in matrix `bad`: its X must hold a non-finite value, every other matrix must be
// bit-identical to a clean run.
template <typename T>
void CheckZeroPivot(const std::vector<Factor>& fs, int n, int k, bool trans, GetrsClass cls) {
  const int64_t batch = 7, bad = 3;
  Problem<T> p = MakeProblem<T>(fs, n, k, batch, 99 + n);
  const std::vector<T> X0 = RunDevice<T>(p, trans, false, cls);
  const int q = n / 2;
  p.lu[(size_t(bad) * n + q) * n + q] = T(0);
  const std::vector<T> X1 = RunDevice<T>(p, trans, false, cls);
  const size_t per = size_t(n) * k;
  bool same = true, nonfinite = false;
  for (int64_t m = 0; m < batch; ++m) {
    if (m == bad) {
      for (size_t e = 0; e < per; ++e) nonfinite |= !std::isfinite(double(X1[m * per + e]));
    } else if (std::memcmp(&X0[m * per], &X1[m * per], per * sizeof(T)) != 0) {
      same = false;
    }
  }
  if (!same || !nonfinite) {
    std::printf("FAIL zero pivot %s n=%d k=%d %s class=%s: neighbours %s, bad matrix %s\n",
                sizeof(T) == 4 ? "f32" : "f64", n, k, trans ? "T" : "N", ClassName(cls),
                same ? "identical" : "CHANGED", nonfinite ? "non-finite" : "FINITE");
    ++g_failures;
  }
}

template <typename T>
void CheckAll() {
  const char* tn = sizeof(T) == 4 ? "f32" : "f64";
  std::vector<int> ns;
  for (int n = 1; n <= 40; ++n) ns.push_back(n);  // every tiny / small instantiation, tile above 32
  // Sanitize mode: the tile class at 64 / 65 (a partial 32 x 32 tile), the auto panel class from
  // n = 128 (few items) and 129; the panel kernel itself is forced from n = 20 below anyway. k = n
  // only up to 65 there (racecheck pays per shared-memory access).
  const std::vector<int> large = SanitizeMode() ? std::vector<int>{64, 65, 128, 129}
                                                : std::vector<int>{48, 64, 65, 100, 128, 129, 200, 256, 300, 512};
  for (int n : large) ns.push_back(n);
  std::mt19937_64 rng(7);
  double worst = 0;
  uint64_t seed = 1;
  for (int n : ns) {
    std::vector<Factor> fs;
    for (int f = 0; f < (n <= 128 ? 4 : 2); ++f) fs.push_back(MakeFactor(n, rng));
    // Sanitize mode (racecheck pays per shared-memory access): k = 1 (the tiny class) and 9 (the
    // small class where k = 1 is tiny; two column blocks, the second partial) for every n, 3 and n
    // on every 4th / 8th n, out of place for N and in place for T; the forced classes (the panel's
    // block of 8 warps costs ~20 s per n for 33 matrices) on 3 matrices, every 8th n and the ends
    // of their ranges.
    const bool san_few = SanitizeMode() && n <= 40 && n % 8 != 1 && n != 20 && n != 32 && n != 40;
    std::vector<int> ks = {1, 2, 3, 8, 33, n};
    if (SanitizeMode()) {
      ks = {1, 9};
      if (n % 4 == 1) ks.push_back(3);
      if (n % 8 == 0 && n <= 64) ks.push_back(n);
    }
    for (int k : ks) {
      if (k == n && n <= 3) continue;  // already in the list
      int64_t batch;
      static const int64_t kSmallBatches[3] = {1000, 33, 1};
      if (n <= 40) batch = k <= 3 ? kSmallBatches[(n + k) % 3] : ((n + k) % 2 ? 33 : 1);
      else if (k <= 33) batch = n <= 256 ? 33 : 5;
      else batch = n <= 129 ? 5 : 2;
      // Sanitize mode: racecheck took ~40 s for 33 matrices at n = 128 (panel) and ~5-10 s for 33 of
      // n = 16..32 with k = 9 (small class); 7 still leave a partial group.
      if (SanitizeMode()) batch = std::min<int64_t>(batch, n > 65 ? 3 : k > 1 ? 7 : batch);
      for (int trans = 0; trans < 2; ++trans)
        for (int in_place = 0; in_place < 2; ++in_place)
          if (!SanitizeMode() || in_place == trans)
            worst = std::max(worst, CheckCase<T>(fs, n, k, batch, trans, in_place, GetrsClass::kAuto, seed++));
    }
    // every class forced where it can run (each class checked off its usual range too)
    std::vector<GetrsClass> classes = {GetrsClass::kTile};
    if (n <= 32) classes.push_back(GetrsClass::kSmall);
    if (n >= 20) classes.push_back(GetrsClass::kPanel);
    if (san_few) classes.clear();
    for (GetrsClass cls : classes)
      for (int k : {1, 3, 9})
        for (int trans = 0; trans < 2; ++trans)
          if (!SanitizeMode() || k != 3)
            worst = std::max(worst, CheckCase<T>(fs, n, k, n <= 40 && !SanitizeMode() ? 33 : 3, trans, trans,
                                                 cls, seed++));
    if (n <= 40 && (n % 5 == 1 || n == 2 || n == 4 || n == 8 || n == 16))  // unaligned pointers
      for (int trans = 0; trans < 2; ++trans)
        worst = std::max(worst, CheckCase<T>(fs, n, 1, 517, trans, false, GetrsClass::kAuto, seed++, 1));
    if (n == 1 || n == 5 || n == 17 || n == 32 || n == 40 || n == 100 || n == 300)
      for (int k : {1, 3})
        for (int trans = 0; trans < 2; ++trans) {
          CheckZeroPivot<T>(fs, n, k, trans, GetrsClass::kAuto);
          if (n >= 32) CheckZeroPivot<T>(fs, n, k, trans, n >= 256 ? GetrsClass::kTile : GetrsClass::kPanel);
        }
    if (SanitizeMode()) std::printf("  %s n=%d done, worst so far %.3f\n", tn, n, worst);  // progress
  }
  std::printf("%s worst scaled residual (threshold %.0f): %.3f over n in 1..40,%s, k in %s, "
              "N/T, in-place/out, forced classes, unaligned\n",
              tn, kThreshold, worst, SanitizeMode() ? "64,65,128,129" : "48,64,65,100,128,129,200,256,300,512",
              SanitizeMode() ? "{1,3,9,n}" : "{1,2,3,8,33,n}");
  // batch 0, n 0, k 0 launch nothing and succeed (null pointers are never touched)
  for (int trans = 0; trans < 2; ++trans) {
    const cudaError_t e0 = batchla::LaunchGetrs<T>(0, nullptr, nullptr, nullptr, nullptr, 0, 16, 1, trans);
    const cudaError_t e1 = batchla::LaunchGetrs<T>(0, nullptr, nullptr, nullptr, nullptr, 5, 0, 1, trans);
    const cudaError_t e2 = batchla::LaunchGetrs<T>(0, nullptr, nullptr, nullptr, nullptr, 5, 16, 0, trans);
    if (e0 != cudaSuccess || e1 != cudaSuccess || e2 != cudaSuccess) {
      std::printf("FAIL empty %s: %s %s %s\n", tn, cudaGetErrorString(e0), cudaGetErrorString(e1),
                  cudaGetErrorString(e2));
      ++g_failures;
    }
  }
  CK(cudaDeviceSynchronize());
}

// ---- timing -------------------------------------------------------------------------------------

// LU-like values (diagonal 1.5 + u, elsewhere u / n: well conditioned), rhs u, perm a bijection.
template <typename T>
__global__ void FillKernel(T* lu, T* b, int32_t* perm, int64_t batch, int n, int k, int mul) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t start = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int64_t e = start; e < batch * n * n; e += stride) {
    const uint32_t h = uint32_t(e * 2654435761u) >> 8;
    const T u = T(h) / T(1 << 24) - T(0.5);
    const int64_t r = e % (int64_t(n) * n);
    lu[e] = (r / n == r % n) ? T(1.5) + u : u / T(n);
  }
  for (int64_t e = start; e < batch * n * k; e += stride) {
    const uint32_t h = uint32_t(e * 2246822519u) >> 8;
    b[e] = T(h) / T(1 << 24) - T(0.5);
  }
  for (int64_t e = start; e < batch * n; e += stride)
    perm[e] = int32_t((int64_t(e % n) * mul + e / n) % n);
}

__global__ void SpinKernel(long long cycles) {  // keeps the GPU busy while the host enqueues
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

template <typename T>
void TimeAll() {
  const char* tn = sizeof(T) == 4 ? "f32" : "f64";
  const size_t budget = size_t(256) << 20;
  T *dlu, *db, *dx;
  int32_t* dp;
  CK(cudaMalloc(&dlu, budget));
  CK(cudaMalloc(&db, budget));
  CK(cudaMalloc(&dx, budget));
  CK(cudaMalloc(&dp, budget));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  {
    std::vector<float> ms;
    for (int it = 0; it < 12; ++it) {
      CK(cudaEventRecord(e0));
      CK(cudaMemcpyAsync(dx, dlu, budget, cudaMemcpyDeviceToDevice));
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float t;
      CK(cudaEventElapsedTime(&t, e0, e1));
      if (it >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%s copy bandwidth (D2D 256 MiB, read+write): %.0f GB/s\n", tn,
                2.0 * budget / (ms[ms.size() / 2] * 1e-3) / 1e9);
  }
  std::printf("%s timing: batch = 256 MiB / (n*n + n*k elements + n perm); bytes = n*n + 2*n*k elements "
              "+ 4n; frac = max(bytes/4.24 TB/s, 2n^2k/67 TF)/time\n", tn);
  std::printf("  %5s %4s %5s %2s %6s %9s %10s %8s %6s\n", "n", "k", "dtype", "op", "class", "batch",
              "time(us)", "GB/s", "frac");
  struct Row {
    int n, k;
    GetrsClass cls;
    int64_t batch = 0;  // 0: 256 MiB of input
  };
  std::vector<Row> rows;
  for (int n : {2, 4, 8, 16, 32, 64, 128, 256, 384, 512}) {
    rows.push_back({n, 1, GetrsClass::kAuto});
    if (n >= 64) rows.push_back({n, 1, n >= batchla::getrs_detail::kGetrsPanelMinN ? GetrsClass::kTile
                                                                                     : GetrsClass::kPanel});
  }
  for (int n : {20, 24, 28}) rows.push_back({n, 1, GetrsClass::kAuto});
  for (int n : {64, 128, 256, 384}) {  // a batch of fewer matrices than SMs
    rows.push_back({n, 1, GetrsClass::kTile, 66});
    rows.push_back({n, 1, GetrsClass::kPanel, 66});
  }
  for (int n : {64, 128, 512}) {
    rows.push_back({n, n, GetrsClass::kAuto});
    rows.push_back({n, n, n >= batchla::getrs_detail::kGetrsPanelMinN ? GetrsClass::kTile : GetrsClass::kPanel});
  }
  for (const Row& row : rows) {
    const int n = row.n, k = row.k;
    const int64_t batch = row.batch ? row.batch :
        int64_t(budget / ((size_t(n) * n + size_t(n) * k) * sizeof(T) + size_t(n) * sizeof(int32_t)));
    FillKernel<T><<<1024, 256>>>(dlu, db, dp, batch, n, k, n % 5 ? 5 : 1);
    CK(cudaGetLastError());
    for (int trans = 0; trans < 2; ++trans) {
      std::vector<float> ms;
      bool ok = true;
      for (int it = 0; it < 10 && ok; ++it) {
        SpinKernel<<<1, 1>>>(100000);
        CK(cudaEventRecord(e0));
        const cudaError_t e = batchla::getrs_detail::LaunchGetrsAs<T>(0, dlu, dp, db, dx, batch, n, k, trans,
                                                                      row.cls);
        if (e != cudaSuccess) {
          ok = false;
          std::printf("  %5d %4d %5s %2s %6s: %s\n", n, k, tn, trans ? "T" : "N", ClassName(row.cls),
                      cudaGetErrorString(e));
          (void)cudaGetLastError();
          break;
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (it >= 2) ms.push_back(t);
      }
      if (!ok) continue;
      std::sort(ms.begin(), ms.end());
      const double sec = ms[ms.size() / 2] * 1e-3;
      const double bytes = double(batch) * ((double(n) * n + 2.0 * n * k) * sizeof(T) + 4.0 * n);
      const double flops = double(batch) * 2.0 * n * n * k;
      const double frac = std::max(bytes / kCopyBw, flops / kPeakFlops) / sec;
      std::printf("  %5d %4d %5s %2s %6s %9lld %10.1f %8.0f %6.2f\n", n, k, tn, trans ? "T" : "N",
                  ClassName(row.cls), (long long)batch, sec * 1e6, bytes / sec / 1e9, frac);
    }
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(dlu));
  CK(cudaFree(db));
  CK(cudaFree(dx));
  CK(cudaFree(dp));
}

}  // namespace

int main(int argc, char** argv) {
  const bool timing = !(argc > 1 && std::strcmp(argv[1], "--no-timing") == 0) && !SanitizeMode();
  const bool checks = !(argc > 1 && std::strcmp(argv[1], "--timing-only") == 0);
  if (checks) {
    CheckAll<float>();
    CheckAll<double>();
  }
  if (timing) {
    TimeAll<float>();
    TimeAll<double>();
  }
  if (g_failures) {
    std::printf("check_getrs: %d FAILURES\n", g_failures);
    return 1;
  }
  std::printf("check_getrs: all passed\n");
  return 0;
}
