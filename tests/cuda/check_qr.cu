// Standalone check of the QR entry points of cuda/launch.h (every size class behind them) against a
// float64 host Householder with the same (LAPACK) conventions: scaled residuals, R's signs, taus,
// orgqr / ormqr / fused qr / lstsq, NaN isolation across the batch, zero columns; then timings.
// Exits non-zero on any failure. Run: tests/cuda/run_checks.sh check_qr
// BATCHLA_CHECK_SANITIZE=1 (sanitize mode, tests/cuda/check_common.h): checks only, on the short
// shape lists of All().
#include <cmath>
#include <array>
#include <cstring>
#include <vector>

#include "cuda/launch.h"
#include "tests/cuda/check_common.h"

using std::vector;

// ---- float64 host reference (row-major) ---------------------------------------------------------
// geqr2 in place: R above, v below the diagonal, taus.
static void HostGeqrf(vector<double>& a, int m, int n, vector<double>& tau) {
  tau.assign(n, 0.0);
  for (int j = 0; j < n; ++j) {
    double ss = 0;
    for (int i = j + 1; i < m; ++i) ss += a[i * n + j] * a[i * n + j];
    const double alpha = a[j * n + j];
    if (ss == 0) continue;
    const double beta = -std::copysign(std::hypot(alpha, std::sqrt(ss)), alpha);
    const double t = (beta - alpha) / beta, scale = 1 / (alpha - beta);
    for (int i = j + 1; i < m; ++i) a[i * n + j] *= scale;
    a[j * n + j] = beta;
    tau[j] = t;
    for (int k = j + 1; k < n; ++k) {
      double w = a[j * n + k];
      for (int i = j + 1; i < m; ++i) w += a[i * n + j] * a[i * n + k];
      w *= t;
      a[j * n + k] -= w;
      for (int i = j + 1; i < m; ++i) a[i * n + k] -= w * a[i * n + j];
    }
  }
}

// c (m x p) <- op(Q) c with Q = H_0 ... H_{k-1} from reflectors below the diagonal of v (m x n).
template <typename V>
static void HostApplyQ(const V* v, const V* tau, int m, int n, int k, vector<double>& c, int p,
                       bool trans) {
  for (int s = 0; s < k; ++s) {
    const int j = trans ? s : k - 1 - s;
    for (int col = 0; col < p; ++col) {
      double w = c[j * p + col];
      for (int i = j + 1; i < m; ++i) w += double(v[i * n + j]) * c[i * p + col];
      w *= double(tau[j]);
      c[j * p + col] -= w;
      for (int i = j + 1; i < m; ++i) c[i * p + col] -= w * double(v[i * n + j]);
    }
  }
}

static double Norm1(const vector<double>& a, int m, int n) {  // max column sum
  double best = 0;
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < m; ++i) s += std::fabs(a[i * n + j]);
    best = std::fmax(best, s);
  }
  return best;
}

// ||A - Q R||_1 / (n ||A||_1 eps) and ||I - Q^T Q||_1 / (n eps) for Q (m x n), R (n x n).
template <typename T>
static void Residuals(const vector<double>& a, const T* q, const T* r, int m, int n, double* res,
                      double* orth) {
  vector<double> d(size_t(m) * n), o(size_t(n) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = a[i * n + j];
      for (int l = 0; l <= j; ++l) s -= double(q[i * n + l]) * double(r[l * n + j]);
      d[i * n + j] = s;
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = i == j ? 1.0 : 0.0;
      for (int l = 0; l < m; ++l) s -= double(q[l * n + i]) * double(q[l * n + j]);
      o[i * n + j] = s;
    }
  const double an = Norm1(a, m, n);
  *res = Norm1(d, m, n) / (n * (an > 0 ? an : 1) * Eps<T>());
  *orth = Norm1(o, n, n) / (n * Eps<T>());
}

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t count = 0;
  // NaN from the start: every byte a kernel may read is defined (compute-sanitizer initcheck).
  explicit Dev(size_t n) : count(n) {
    CK(cudaMalloc(&p, (n ? n : 1) * sizeof(T)));
    CK(cudaMemset(p, 0xff, (n ? n : 1) * sizeof(T)));
  }
  ~Dev() { cudaFree(p); }
  void Put(const vector<T>& h) { CK(cudaMemcpy(p, h.data(), count * sizeof(T), cudaMemcpyHostToDevice)); }
  vector<T> Get() const {
    vector<T> h(count);
    CK(cudaMemcpy(h.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// Scales outside dlarfg's usual range (cuda/qr_dispatch.h DlarfgRange): squares underflow or
// overflow in T, so every column takes the rescaled reflector.
template <typename T>
static T TinyScale() { return sizeof(T) == 4 ? T(1e-25) : T(1e-160); }
template <typename T>
static T HugeScale() { return sizeof(T) == 4 ? T(1e25) : T(1e160); }

// One (m, n) case over a small batch: matrix 0 random, 1 with a zero column (and a NaN-filled
// matrix 2 when `with_nan`), 3.. random (3 and 4 scaled by TinyScale / HugeScale when `scaled`).
// Checks every entry point on the same batch.
template <typename T>
static void CheckShape(int m, int n, bool with_nan, bool scaled = false) {
  const int batch = 5;
  const size_t mn = size_t(m) * n;
  vector<T> a(batch * mn);
  for (auto& x : a) x = T(Rand());
  for (size_t e = 0; scaled && e < mn; ++e) a[3 * mn + e] *= TinyScale<T>(), a[4 * mn + e] *= HugeScale<T>();
  for (int i = 0; i < m && n > 1; ++i) a[1 * mn + i * n + n / 2] = 0;  // a zero column
  if (with_nan) a[2 * mn + (m / 2) * n + n / 3] = NAN;
  Dev<T> da(a.size()), dqr(a.size()), dtau(size_t(batch) * n), dq(a.size()), dr(size_t(batch) * n * n),
      dq2(a.size()), dr2(size_t(batch) * n * n), dr3(size_t(batch) * n * n);
  da.Put(a);
  CK(batchla::LaunchGeqrf<T>(0, da.p, dqr.p, dtau.p, batch, m, n));
  CK(batchla::LaunchOrgqr<T>(0, dqr.p, dtau.p, dq.p, batch, m, n, n));
  const bool fused = batchla::QrFusedFits<T>(m, n);
  if (fused) {
    CK(batchla::LaunchQr<T>(0, da.p, dq2.p, dr2.p, batch, m, n));
    CK(batchla::LaunchQr<T>(0, da.p, nullptr, dr3.p, batch, m, n));
  }
  CK(cudaDeviceSynchronize());
  const vector<T> qr = dqr.Get(), tau = dtau.Get(), q = dq.Get(), q2 = dq2.Get(), r2 = dr2.Get(),
                  r3 = dr3.Get();
  double worst_res = 0, worst_orth = 0, worst_r = 0;
  for (int b = 0; b < batch; ++b) {
    const T* qb = &qr[b * mn];
    if (with_nan && b == 2) {  // NaN stays in its matrix
      bool any = false;
      for (size_t e = 0; e < mn; ++e) any |= std::isnan(double(qb[e]));
      if (!any) FAIL("%s %dx%d: NaN matrix gave no NaN", Name<T>(), m, n);
      continue;
    }
    vector<double> ad(a.begin() + b * mn, a.begin() + (b + 1) * mn), h = ad, ht;
    // A scaled matrix's squares are subnormal or overflow in float64 too: the host factors the
    // matrix at scale 1 and scales R back (the taus do not change).
    const double host_scale = !scaled || b < 3 ? 1.0 : b == 3 ? double(TinyScale<T>()) : double(HugeScale<T>());
    for (auto& x : h) x /= host_scale;
    HostGeqrf(h, m, n, ht);
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) h[i * n + j] *= host_scale;
    vector<T> r(size_t(n) * n, T(0));
    double rmax = 0, rdiff = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        r[i * n + j] = qb[i * n + j];
        rmax = std::fmax(rmax, std::fabs(h[i * n + j]));
        rdiff = std::fmax(rdiff, std::fabs(double(qb[i * n + j]) - h[i * n + j]));
      }
    for (int j = 0; j < n; ++j) {
      if (!std::isfinite(double(qb[j * n + j])) || !std::isfinite(double(tau[b * n + j])))
        FAIL("%s %dx%d b=%d: non-finite R(%d,%d) or tau", Name<T>(), m, n, b, j, j);
      if ((qb[j * n + j] < 0) != (h[j * n + j] < 0) && std::fabs(h[j * n + j]) > 1e-3 * rmax)
        FAIL("%s %dx%d b=%d: R(%d,%d) sign %g vs host %g", Name<T>(), m, n, b, j, j,
             double(qb[j * n + j]), h[j * n + j]);
      if (std::fabs(double(tau[b * n + j]) - ht[j]) > 1e3 * n * Eps<T>())
        FAIL("%s %dx%d b=%d: tau[%d] %g vs host %g", Name<T>(), m, n, b, j, double(tau[b * n + j]), ht[j]);
    }
    worst_r = std::fmax(worst_r, rdiff / (rmax * n * Eps<T>()));
    double res, orth;
    Residuals(ad, &q[b * mn], r.data(), m, n, &res, &orth);  // orgqr Q with geqrf R
    worst_res = std::fmax(worst_res, res), worst_orth = std::fmax(worst_orth, orth);
    if (fused) {
      Residuals(ad, &q2[b * mn], &r2[b * n * n], m, n, &res, &orth);  // fused qr
      worst_res = std::fmax(worst_res, res), worst_orth = std::fmax(worst_orth, orth);
      // qr_r may come from another size class than qr (cuda/qr_dispatch.h): equal to rounding
      double r2max = 0;
      for (size_t e = 0; e < size_t(n) * n; ++e) r2max = std::fmax(r2max, std::fabs(double(r2[b * n * n + e])));
      const double tol = 50.0 * n * Eps<T>() * r2max;
      for (size_t e = 0; e < size_t(n) * n; ++e) {
        const T x = r3[b * n * n + e], y = r2[b * n * n + e];
        const bool below = e % n < e / n;
        if (!(std::fabs(double(x) - double(y)) <= tol) || (below && (x != 0 || y != 0))) {
          FAIL("%s %dx%d b=%d: qr_r differs from qr's r, or r not upper at %zu", Name<T>(), m, n, b, e);
          break;
        }
      }
    }
  }
  const bool ok = worst_res <= 30 && worst_orth <= 30 && worst_r <= 1e3;
  std::printf("%-4s %5d x %-4d %-6s%s res %7.2f  orth %7.2f  R-vs-host %8.2f  %s\n", Name<T>(), m, n,
              fused ? "fused" : "global", scaled ? " scaled" : "", worst_res, worst_orth, worst_r,
              ok ? "ok" : "FAIL");
  if (!ok) FAIL("%s %dx%d residuals", Name<T>(), m, n);
}

// ormqr (both directions, k < n too) and lstsq against the host on one random batch.
template <typename T>
static void CheckApply(int m, int n, int p) {
  const int batch = 3, k = n > 1 ? n - 1 : n;
  const size_t mn = size_t(m) * n, mp = size_t(m) * p;
  vector<T> a(batch * mn), c(batch * mp);
  for (auto& x : a) x = T(Rand());
  for (auto& x : c) x = T(Rand());
  Dev<T> da(a.size()), dqr(a.size()), dtau(size_t(batch) * n), dc(c.size()), dx(c.size()),
      dy(c.size());
  da.Put(a);
  dc.Put(c);
  CK(batchla::LaunchGeqrf<T>(0, da.p, dqr.p, dtau.p, batch, m, n));
  CK(cudaDeviceSynchronize());
  vector<T> tau = dtau.Get(), tauk(size_t(batch) * k);  // the first k taus of each matrix
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < k; ++j) tauk[b * k + j] = tau[b * n + j];
  Dev<T> dtauk(tauk.size()), dq(a.size());
  dtauk.Put(tauk);
  CK(batchla::LaunchOrmqr<T>(0, dqr.p, dtauk.p, dc.p, dx.p, batch, m, n, k, p, true));
  CK(batchla::LaunchOrmqr<T>(0, dqr.p, dtauk.p, dc.p, dy.p, batch, m, n, k, p, false));
  CK(batchla::LaunchOrgqr<T>(0, dqr.p, dtauk.p, dq.p, batch, m, n, k));
  CK(cudaDeviceSynchronize());
  const vector<T> qr = dqr.Get(), x = dx.Get(), y = dy.Get(), q = dq.Get();
  double worst = 0;
  for (int b = 0; b < batch; ++b) {  // orgqr with k < n reflectors: Q (I[:, :n]) on the host
    vector<double> h(mn, 0.0);
    for (int j = 0; j < n; ++j) h[j * n + j] = 1;
    HostApplyQ(&qr[b * mn], &tau[b * n], m, n, k, h, n, false);
    vector<double> d(mn);
    for (size_t e = 0; e < mn; ++e) d[e] = double(q[b * mn + e]) - h[e];
    worst = std::fmax(worst, Norm1(d, m, n) / (m * Eps<T>()));
  }
  for (int b = 0; b < batch; ++b)
    for (int trans = 0; trans < 2; ++trans) {
      vector<double> h(c.begin() + b * mp, c.begin() + (b + 1) * mp);
      const double cn = Norm1(h, m, p);
      HostApplyQ(&qr[b * mn], &tau[b * n], m, n, k, h, p, trans);
      const vector<T>& got = trans ? x : y;
      vector<double> d(mp);
      for (size_t e = 0; e < mp; ++e) d[e] = double(got[b * mp + e]) - h[e];
      worst = std::fmax(worst, Norm1(d, m, p) / (m * cn * Eps<T>()));
    }
  // lstsq with p right-hand sides (when it fits on chip)
  double worst_x = 0;
  if (batchla::QrFusedFits<T>(m, n + p)) {
    Dev<T> lx(size_t(batch) * n * p), rd(size_t(batch) * n), rs(size_t(batch) * p);
    CK(batchla::LaunchLstsq<T>(0, da.p, dc.p, lx.p, rd.p, rs.p, batch, m, n, p));
    CK(cudaDeviceSynchronize());
    const vector<T> xs = lx.Get(), rdiag = rd.Get(), resid = rs.Get();
    for (int b = 0; b < batch; ++b) {
      vector<double> h(a.begin() + b * mn, a.begin() + (b + 1) * mn), ht;
      HostGeqrf(h, m, n, ht);
      vector<double> qtc(c.begin() + b * mp, c.begin() + (b + 1) * mp);
      HostApplyQ(h.data(), ht.data(), m, n, n, qtc, p, true);
      for (int col = 0; col < p; ++col) {
        double xn = 0, dn = 0, rr = 0;
        for (int j = n - 1; j >= 0; --j) {  // host back substitution
          double s = qtc[j * p + col];
          for (int l = j + 1; l < n; ++l) s -= h[j * n + l] * qtc[l * p + col];
          qtc[j * p + col] = s / h[j * n + j];
          xn = std::fmax(xn, std::fabs(qtc[j * p + col]));
          dn = std::fmax(dn, std::fabs(qtc[j * p + col] - double(xs[(b * n + j) * p + col])));
        }
        for (int i = n; i < m; ++i) rr += qtc[i * p + col] * qtc[i * p + col];
        worst_x = std::fmax(worst_x, dn / (xn * n * Eps<T>()));
        if (std::fabs(rr - double(resid[b * p + col])) > 1e-2 * rr + 1e3 * Eps<T>())
          FAIL("%s %dx%d lstsq resid %g vs host %g", Name<T>(), m, n, double(resid[b * p + col]), rr);
      }
      for (int j = 0; j < n; ++j)
        if (std::fabs(double(rdiag[b * n + j]) - h[j * n + j]) > 1e2 * n * Eps<T>() * std::fabs(h[0]))
          FAIL("%s %dx%d lstsq rdiag[%d] %g vs host %g", Name<T>(), m, n, j, double(rdiag[b * n + j]), h[j * n + j]);
    }
  }
  const bool ok = worst <= 30 && worst_x <= 1e4;
  std::printf("%-4s %5d x %-4d p=%-3d orgqr/ormqr %7.2f  lstsq x %8.2f  %s\n", Name<T>(), m, n, p, worst,
              worst_x, ok ? "ok" : "FAIL");
  if (!ok) FAIL("%s %dx%d apply/lstsq", Name<T>(), m, n);
}

// Time one entry point on a ~256 MiB batch of n x n matrices; prints GB/s of the minimal traffic.
template <typename T>
static void Time(const char* what, int n) {
  const size_t mat = size_t(n) * n * sizeof(T);
  // BATCHLA_CHECK_QR_BATCH overrides the batch (e.g. one matrix a SM, to time a kernel's chain alone)
  const char* batch_env = std::getenv("BATCHLA_CHECK_QR_BATCH");
  const int64_t batch = batch_env ? std::atoll(batch_env) : int64_t((256ull << 20) / mat);
  Dev<T> a(batch * n * n), out(batch * n * n), out2(batch * n * n), tau(batch * n);
  std::vector<T> h(1 << 20);
  for (auto& x : h) x = T(Rand());
  for (size_t off = 0; off < a.count; off += h.size())
    CK(cudaMemcpy(a.p + off, h.data(), std::min(h.size(), a.count - off) * sizeof(T), cudaMemcpyHostToDevice));
  const bool r_only = !std::strcmp(what, "qr_r"), qr = !std::strcmp(what, "qr");
  auto run = [&] {
    if (r_only) CK(batchla::LaunchQr<T>(0, a.p, nullptr, out.p, batch, n, n));
    else if (qr) CK(batchla::LaunchQr<T>(0, a.p, out2.p, out.p, batch, n, n));
    else CK(batchla::LaunchGeqrf<T>(0, a.p, out.p, tau.p, batch, n, n));
  };
  if ((r_only || qr) && !batchla::QrFusedFits<T>(n, n)) return;
  run();
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int reps = 3;
  CK(cudaEventRecord(e0));
  for (int i = 0; i < reps; ++i) run();
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  const double s = ms / 1e3 / reps, bytes = double(batch) * mat * (qr ? 3 : 2);
  const double flops = double(batch) * (4.0 / 3.0) * n * n * n * (qr ? 2 : 1);
  std::printf("time %-6s %-4s n=%-4d batch=%-8lld %9.3f ms  %7.1f GB/s  %6.3f of 4.2 TB/s  %6.2f TFLOP/s\n",
              what, Name<T>(), n, (long long)batch, s * 1e3, bytes / s / 1e9, bytes / s / 4.2e12,
              flops / s / 1e12);
}

// Sanitize mode keeps one shape per class and path (cuda/qr_dispatch.h, qr_engine_launch.cuh),
// each as cheap as it can be (racecheck pays per shared-memory access): small class in a warp
// (5 x 3, 16 x 16) and in a pair of warps (33 x 33); engine: short-shape lstsq (64 x 64, p = 3:
// ncols 67 > 64), the panel class (f32 100 x 37 and both types' 129 x 17: four and five rows a
// lane, a last panel of 5 and 1 columns; their fused qr runs the engine's medium shape), medium
// shape on chip (128 x 40; f64 100 x 37), tall shape on chip (170 x 20) and in
// global memory (4096 x 15: 240 / 480 KB, over the 227 KB of shared memory, so geqrf and orgqr work
// in place; m = kQrMaxM), the f32 huge shape (260 x 257: more than 256 columns, in global memory),
// ormqr in global memory (4096 x 15, p = 16); orgqr / ormqr with k < n.
// The full list's 512 x 512 and 4096 x 64 run the same global-memory kernels for much longer.
template <typename T>
static void All() {
  const std::vector<std::array<int, 2>> shapes = SanitizeMode()
      ? std::vector<std::array<int, 2>>{{1, 1}, {5, 3}, {16, 16}, {33, 33}, {100, 37}, {129, 17}, {170, 20},
                                        {4096, 15}, {260, 257}}
      : std::vector<std::array<int, 2>>{{1, 1}, {2, 2}, {5, 3}, {16, 16}, {32, 32}, {33, 33}, {40, 20},
                                        {64, 64}, {65, 65}, {72, 72}, {96, 96}, {100, 37}, {104, 104}, {128, 100},
                                        {128, 128}, {129, 17}, {150, 33}, {160, 160}, {200, 200}, {256, 256},
                                        {300, 299}, {512, 512}, {1024, 32}, {4096, 64}};
  for (auto& s : shapes) CheckShape<T>(s[0], s[1], true);
  // Matrices of tiny and huge scale through the tile, small, column and panel / engine classes.
  if (!SanitizeMode())
    for (auto& s : std::vector<std::array<int, 2>>{{28, 28}, {64, 64}, {72, 72}, {100, 37}, {128, 128}, {160, 160}})
      CheckShape<T>(s[0], s[1], true, /*scaled=*/true);
  const std::vector<std::array<int, 3>> apply = SanitizeMode()
      ? std::vector<std::array<int, 3>>{{8, 8, 1}, {64, 64, 3}, {128, 40, 1}, {170, 20, 5}, {4096, 15, 16}}
      : std::vector<std::array<int, 3>>{{8, 8, 1}, {64, 64, 3}, {128, 40, 1}, {200, 100, 5}, {512, 512, 2},
                                        {4096, 64, 1}};
  for (auto& s : apply) CheckApply<T>(s[0], s[1], s[2]);
}

int main(int argc, char** argv) {
  if (argc == 4 && !std::strcmp(argv[1], "--time")) {  // --time <qr_r|qr|geqrf> <n>: that timing only
    Time<float>(argv[2], std::atoi(argv[3]));
    Time<double>(argv[2], std::atoi(argv[3]));
    return 0;
  }
  All<float>();
  All<double>();
  const bool timing = !(argc > 1 && !std::strcmp(argv[1], "--no-timing")) && !SanitizeMode();
  for (int n : {16, 32, 64, 128, 256, 512})
    for (const char* what : {"qr_r", "qr", "geqrf"}) {
      if (!timing) break;
      Time<float>(what, n);
      Time<double>(what, n);
    }
  std::printf(g_fail ? "check_qr: %d FAILED\n" : "check_qr: PASS\n", g_fail);
  return g_fail ? 1 : 0;
}
