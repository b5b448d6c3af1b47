// Standalone check of LaunchTrsm / LaunchPotrs (cuda/launch.h) on a GPU: scaled residuals against
// a host computation in double, poisoned outputs, NaN in every element the kernel must not read,
// batch 0, a zero pivot mixed into a batch (its neighbours must be bit-identical to a clean run),
// and a timing table (k = 1, 256 MiB batches, n = 1..20, 24, 28, 32, 64..512) in GB/s and as a fraction of 4.24 TB/s.
// Build: tests/cuda/run_checks.sh check_solves. Exits non-zero on any failure. BATCHLA_CHECK_SANITIZE=1
// (sanitize mode, tests/cuda/check_common.h): checks only, batches <= 40, n in 1..40, 64, 100.
//
// Row-major throughout: element (i, j) of matrix m at m*n*n + i*n + j; B, X (n x k) at m*n*k + i*k + c.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda/launch.h"
#include "tests/cuda/check_common.h"  // CK, sanitize mode


namespace {

int g_failures = 0;
constexpr double kThreshold = 30.0;
constexpr double kCopyBw = 4.24e12;

struct Variant {
  bool potrs;
  bool lower, trans, unit;
  std::string Name() const {
    if (potrs) return std::string("potrs ") + (lower ? "L" : "U");
    return std::string("trsm ") + (lower ? "L" : "U") + (trans ? "T" : "N") + (unit ? "U" : "N");
  }
};

std::vector<Variant> AllVariants() {
  std::vector<Variant> v;
  for (int lower = 0; lower < 2; ++lower)
    for (int trans = 0; trans < 2; ++trans)
      for (int unit = 0; unit < 2; ++unit) v.push_back({false, bool(lower), bool(trans), bool(unit)});
  v.push_back({true, true, false, false});
  v.push_back({true, false, false, false});
  return v;
}

// Random base data: off-diagonal in (-1, 1) * 2/n, diagonal in [1, 2), B in (-1, 1).
template <typename T>
void MakeBase(int n, int k, int64_t batch, uint64_t seed, std::vector<T>& A, std::vector<T>& B) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  A.resize(size_t(batch) * n * n);
  B.resize(size_t(batch) * n * k);
  const double s = 2.0 / n;
  for (int64_t m = 0; m < batch; ++m)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        A[(size_t(m) * n + i) * n + j] = T(i == j ? 1.5 + 0.5 * u(rng) : s * u(rng));
  for (auto& e : B) e = T(u(rng));
}

// NaN in every element the variant must not read (other triangle; diagonal when unit).
template <typename T>
void Mask(const Variant& v, int n, int64_t batch, std::vector<T>& A) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t m = 0; m < batch; ++m)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const bool in = v.lower ? j <= i : j >= i;
        if (!in || (i == j && v.unit && !v.potrs)) A[(size_t(m) * n + i) * n + j] = nan;
      }
}

// The triangular matrix the variant uses, as a dense double matrix (zeros elsewhere).
void Tri(const Variant& v, int n, const double* a, std::vector<double>& t) {
  t.assign(size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const bool in = v.lower ? j <= i : j >= i;
      if (i == j) t[i * n + j] = (v.unit && !v.potrs) ? 1.0 : a[i * n + j];
      else if (in) t[i * n + j] = a[i * n + j];
    }
}
// y = op(t) x for an n x k block.
void MatMul(const std::vector<double>& t, bool trans, int n, int k, const double* x, double* y) {
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < k; ++c) {
      double s = 0;
      for (int j = 0; j < n; ++j) s += (trans ? t[j * n + i] : t[i * n + j]) * x[j * k + c];
      y[i * k + c] = s;
    }
}
double Norm1(const double* x, int rows, int cols) {  // max column sum
  double best = 0;
  for (int c = 0; c < cols; ++c) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += std::fabs(x[i * cols + c]);
    best = std::max(best, s);
  }
  return best;
}
double NormInf(const std::vector<double>& t, int n) {
  double best = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += std::fabs(t[i * n + j]);
    best = std::max(best, s);
  }
  return best;
}

// Scaled residual ||B - op(A) X||_1 / (||op(A)||_1 ||X||_1 n eps) of one matrix. For potrs the
// normalizer uses ||A||_1 <= ||L||_1 ||L^T||_1 (computing L L^T is O(n^3)).
double Residual(const Variant& v, int n, int k, const double* a, const double* b, const double* x,
                double eps) {
  std::vector<double> t, y(size_t(n) * k), z(size_t(n) * k);
  Tri(v, n, a, t);
  double anorm;
  if (!v.potrs) {
    MatMul(t, v.trans, n, k, x, z.data());
    anorm = v.trans ? NormInf(t, n) : Norm1(t.data(), n, n);
  } else if (v.lower) {  // A = L L^T
    MatMul(t, true, n, k, x, y.data());
    MatMul(t, false, n, k, y.data(), z.data());
    anorm = Norm1(t.data(), n, n) * NormInf(t, n);
  } else {  // A = U^T U
    MatMul(t, false, n, k, x, y.data());
    MatMul(t, true, n, k, y.data(), z.data());
    anorm = Norm1(t.data(), n, n) * NormInf(t, n);
  }
  for (size_t e = 0; e < z.size(); ++e) z[e] = b[e] - z[e];
  const double r = Norm1(z.data(), n, k) / (anorm * Norm1(x, n, k) * n * eps);
  return std::isnan(r) ? std::numeric_limits<double>::infinity() : r;
}

template <typename T>
cudaError_t Launch(const Variant& v, const T* a, const T* b, T* x, int64_t batch, int n, int k) {
  if (v.potrs) return batchla::LaunchPotrs<T>(0, a, b, x, batch, n, k, v.lower);
  return batchla::LaunchTrsm<T>(0, a, b, x, batch, n, k, v.lower, v.trans, v.unit);
}

// Runs one variant on the device; returns X (poisoned with NaN before the launch).
// `off` elements of offset on a, b and x (off = 1: pointers not 16-byte aligned).
template <typename T>
std::vector<T> RunDevice(const Variant& v, const std::vector<T>& A, const std::vector<T>& B,
                         int64_t batch, int n, int k, int off = 0) {
  T *da, *db, *dx;
  CK(cudaMalloc(&da, (std::max<size_t>(1, A.size()) + off) * sizeof(T)));
  CK(cudaMalloc(&db, (std::max<size_t>(1, B.size()) + off) * sizeof(T)));
  CK(cudaMalloc(&dx, (std::max<size_t>(1, B.size()) + off) * sizeof(T)));
  // Every byte defined (compute-sanitizer initcheck): the slack before an unaligned copy too.
  CK(cudaMemset(da, 0, (std::max<size_t>(1, A.size()) + off) * sizeof(T)));
  CK(cudaMemset(db, 0, (std::max<size_t>(1, B.size()) + off) * sizeof(T)));
  CK(cudaMemcpy(da + off, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db + off, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemset(dx, 0xff, (B.size() + off) * sizeof(T)));  // NaN poison
  CK(Launch<T>(v, da + off, db + off, dx + off, batch, n, k));
  CK(cudaDeviceSynchronize());
  std::vector<T> X(B.size());
  CK(cudaMemcpy(X.data(), dx + off, X.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dx));
  return X;
}

template <typename T>
double CheckCase(const Variant& v, int n, int k, int64_t batch, uint64_t seed, int off = 0) {
  batch = SanitizeBatch(batch);
  std::vector<T> A, B;
  MakeBase<T>(n, k, batch, seed, A, B);
  Mask<T>(v, n, batch, A);
  const std::vector<T> X = RunDevice<T>(v, A, B, batch, n, k, off);
  const double eps = std::numeric_limits<T>::epsilon();
  double worst = 0;
  std::vector<double> a(size_t(n) * n), b(size_t(n) * k), x(size_t(n) * k);
  for (int64_t m = 0; m < batch; ++m) {
    for (size_t e = 0; e < a.size(); ++e) a[e] = double(A[size_t(m) * n * n + e]);
    for (size_t e = 0; e < b.size(); ++e) b[e] = double(B[size_t(m) * n * k + e]);
    for (size_t e = 0; e < x.size(); ++e) x[e] = double(X[size_t(m) * n * k + e]);
    const double r = Residual(v, n, k, a.data(), b.data(), x.data(), eps);
    worst = std::max(worst, r);
    if (!(r <= kThreshold)) {
      if (g_failures < 20)
        std::printf("FAIL %s %s n=%d k=%d batch=%lld matrix %lld: residual %.3g\n",
                    sizeof(T) == 4 ? "f32" : "f64", v.Name().c_str(), n, k, (long long)batch,
                    (long long)m, r);
      ++g_failures;
      break;
    }
  }
  return worst;
}

// A zero pivot in matrix `bad` of the batch: the other matrices must be bit-identical to a clean
// run, and the bad one must contain a non-finite value.
template <typename T>
void CheckZeroPivot(const Variant& v, int n, int k) {
  const int64_t batch = 7, bad = 3;
  std::vector<T> A, B;
  MakeBase<T>(n, k, batch, 1234 + n, A, B);
  Mask<T>(v, n, batch, A);
  const std::vector<T> X0 = RunDevice<T>(v, A, B, batch, n, k);
  const int p = n / 2;
  A[(size_t(bad) * n + p) * n + p] = T(0);
  const std::vector<T> X1 = RunDevice<T>(v, A, B, batch, n, k);
  const size_t per = size_t(n) * k;
  bool ok = true, nonfinite = false;
  for (int64_t m = 0; m < batch; ++m) {
    if (m == bad) {
      for (size_t e = 0; e < per; ++e) nonfinite |= !std::isfinite(double(X1[m * per + e]));
    } else if (std::memcmp(&X0[m * per], &X1[m * per], per * sizeof(T)) != 0) {
      ok = false;
    }
  }
  if (!ok || !nonfinite) {
    std::printf("FAIL zero pivot %s %s n=%d k=%d: neighbours %s, bad matrix %s\n",
                sizeof(T) == 4 ? "f32" : "f64", v.Name().c_str(), n, k,
                ok ? "identical" : "CHANGED", nonfinite ? "non-finite" : "FINITE");
    ++g_failures;
  }
}

template <typename T>
void CheckAll() {
  const char* tn = sizeof(T) == 4 ? "f32" : "f64";
  std::vector<int> ns;
  for (int n = 1; n <= 40; ++n) ns.push_back(n);  // every tiny / small instantiation, tile above 32
  // Sanitize mode: the tile class with its 2-stage ring (n = 64), 3 stages and a partial tile
  // (f32 n = 100); larger n run the same kernels for longer.
  const std::vector<int> large = SanitizeMode() ? std::vector<int>{64, 100}
                                                : std::vector<int>{64, 100, 128, 200, 256, 384, 512};
  for (int n : large) ns.push_back(n);
  const auto variants = AllVariants();
  std::vector<double> worst(variants.size(), 0.0);
  uint64_t seed = 1;
  for (int n : ns)
    for (int k : {1, 3, 17}) {
      if (SanitizeMode() && k == 3 && n % 4 != 1) continue;  // racecheck time: 1 and 17 cover the classes
      int64_t batch;
      if (n <= 40) {
        const int64_t choices[3] = {1000, 33, 1};
        batch = choices[(n + k) % 3];
      } else if (n <= 128) {
        batch = k == 17 ? 5 : 33;
      } else {
        batch = k == 17 ? 2 : 3;
      }
      for (size_t vi = 0; vi < variants.size(); ++vi)
        worst[vi] = std::max(worst[vi], CheckCase<T>(variants[vi], n, k, batch, seed++));
    }
  // many right-hand sides (sanitize mode: not 100, whose 300 columns are the same tile kernel as k = 17)
  for (int n : SanitizeMode() ? std::vector<int>{4, 32} : std::vector<int>{4, 32, 100})
    for (size_t vi = 0; vi < variants.size(); ++vi)
      worst[vi] = std::max(worst[vi], CheckCase<T>(variants[vi], n, 300, 3, seed++));
  // pointers off 16-byte alignment (the staged kernels' scalar fallback), odd batch
  for (int n : {2, 3, 4, 8, 13, 16, 19, 24})
    for (size_t vi = 0; vi < variants.size(); ++vi)
      worst[vi] = std::max(worst[vi], CheckCase<T>(variants[vi], n, 1, 517, seed++, /*off=*/1));
  std::printf("%s worst scaled residual (threshold %.0f) over n in 1..40,%s, k in {1,3,17,300}, unaligned:\n",
              tn, kThreshold, SanitizeMode() ? "64,100" : "64,100,128,200,256,384,512");
  for (size_t vi = 0; vi < variants.size(); ++vi)
    std::printf("  %-10s %8.3f\n", variants[vi].Name().c_str(), worst[vi]);
  // zero pivot (non-unit variants)
  for (const Variant& v : variants) {
    if (v.unit) continue;
    for (int n : {5, 32, 40, 100})
      for (int k : {1, 3}) CheckZeroPivot<T>(v, n, k);
  }
  // batch 0 launches nothing and succeeds (null pointers are never touched)
  for (const Variant& v : variants) {
    const cudaError_t e = Launch<T>(v, nullptr, nullptr, nullptr, 0, 16, 1);
    if (e != cudaSuccess) {
      std::printf("FAIL batch 0 %s %s: %s\n", tn, v.Name().c_str(), cudaGetErrorString(e));
      ++g_failures;
    }
  }
  CK(cudaDeviceSynchronize());
}

// ---- timing -------------------------------------------------------------------------------------

template <typename T>
__global__ void FillKernel(T* a, int64_t count, int n, bool matrix) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < count;
       e += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t h = uint32_t(e * 2654435761u) >> 8;
    const T u = T(h) / T(1 << 24) - T(0.5);  // [-0.5, 0.5)
    if (matrix) {
      const int64_t r = e % (int64_t(n) * n);
      a[e] = (r / n == r % n) ? T(1.5) + u : u / T(n);
    } else {
      a[e] = u;
    }
  }
}

// Keeps the GPU busy while the host enqueues the timed launch, so the events time the kernel only.
__global__ void SpinKernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

template <typename T>
void TimeAll() {
  const char* tn = sizeof(T) == 4 ? "f32" : "f64";
  const size_t budget = size_t(256) << 20;
  T *da, *db, *dx;
  CK(cudaMalloc(&da, budget));
  CK(cudaMalloc(&db, budget));  // generous: b and x are at most budget/(n+1)... sized for n = 1
  CK(cudaMalloc(&dx, budget));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  // copy bandwidth in this run, for reference
  {
    std::vector<float> ms;
    for (int it = 0; it < 12; ++it) {
      CK(cudaEventRecord(e0));
      CK(cudaMemcpyAsync(dx, da, budget, cudaMemcpyDeviceToDevice));
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
  std::printf("%s timing, k = 1, batch = 256 MiB / ((n*n + n) * %zu B); bytes = n*n + 2n elements\n",
              tn, sizeof(T));
  std::printf("  %-10s %5s %9s %10s %9s %6s\n", "op", "n", "batch", "time(us)", "GB/s", "frac");
  const Variant ops[3] = {{false, true, false, false}, {false, true, true, false}, {true, true, false, false}};
  std::vector<int> tns;
  for (int n = 1; n <= 16; ++n) tns.push_back(n);
  for (int n : {17, 18, 19, 20, 24, 28, 32, 64, 128, 256, 512}) tns.push_back(n);
  for (int n : tns) {
    const int64_t batch = int64_t(budget / ((size_t(n) * n + n) * sizeof(T)));
    const int64_t acount = batch * n * n, bcount = batch * n;
    FillKernel<T><<<1024, 256>>>(da, acount, n, true);
    FillKernel<T><<<1024, 256>>>(db, bcount, n, false);
    CK(cudaGetLastError());
    for (const Variant& v : ops) {
      std::vector<float> ms;
      for (int it = 0; it < 13; ++it) {
        SpinKernel<<<1, 1>>>(100000);
        CK(cudaEventRecord(e0));
        CK(Launch<T>(v, da, db, dx, batch, n, 1));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (it >= 3) ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      const double sec = ms[ms.size() / 2] * 1e-3;
      const double bytes = double(batch) * (double(n) * n + 2.0 * n) * sizeof(T);
      std::printf("  %-10s %5d %9lld %10.1f %9.0f %6.2f\n", v.Name().c_str(), n, (long long)batch,
                  sec * 1e6, bytes / sec / 1e9, bytes / sec / kCopyBw);
    }
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dx));
}

}  // namespace

int main(int argc, char** argv) {
  // --no-timing: checks only; --timing-only: timing table only (benchmark variants)
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
    std::printf("check_solves: %d FAILURES\n", g_failures);
    return 1;
  }
  std::printf("check_solves: all passed\n");
  return 0;
}
