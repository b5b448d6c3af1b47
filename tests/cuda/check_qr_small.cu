// Standalone check + timing of the SMALL QR class (m <= 64, ncols <= 64; cuda/qr_small.cuh)
// through detail::QrSmall (cuda/qr_dispatch.h), every output kind, float and double, both unit
// widths (a warp for ncols <= 32, a pair of warps above), and of the TILE class (cuda/qr_tile.cuh)
// for the kR calls it takes, as cuda/qr.cu dispatches them. Exits non-zero on any failure. Build
// (links only what it needs; the M = 64 kernels live in cuda/qr_small_{f32,f64}_{tall,wide}.cu):
//   nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -o /tmp/chk \
//        tests/cuda/check_qr_small.cu cuda/qr_small_*.cu cuda/qr_tile.cu
// Reference: a float64 host Householder QR with the kernel's (LAPACK dlarfg) conventions.
// Checks per matrix: ||A - QR||_1 / (n ||A||_1 eps) and ||I - Q^T Q||_1 / (n eps) <= 30 (Q from
// geqrf's reflectors and from kQr), R and taus against the host's (same signs; scaled
// differences <= 30; kR / kQr too, with zeros below the diagonal), lstsq x / rdiag / resid against the host.
// Outputs are poisoned with NaN first (unwritten elements fail); zero columns must give tau = 0
// and no NaN; tiny- and huge-scaled matrices (dlarfg's rescue branch) pass the same relative
// checks; a NaN matrix must leave its neighbours bit-identical to a NaN-free run.
// BATCHLA_CHECK_SANITIZE=1 (sanitize mode, tests/cuda/check_common.h): checks only, every shape
// below (each padded height M and unit width is its own kernel) with batches <= 40 (the 1M- and
// 30011-matrix grid-stride cases become 40: a few units per block, same code).
// Usage: check_qr_small [--no-timing | --timing-only [--r-only]] [--m64-only] | --time-one N f32|f64
// Timing: kR n = 2..64, kQr n = 16..64, geqrf n = 16, 32 (both dtypes), kQr / lstsq / geqrf at
// n = 8, 31, 63 (256 MiB inputs, median of 7).
// (--m64-only: only the shapes that run the M = 64 kernels, e.g. for compute-sanitizer;
// --r-only: only the kR timings.)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda/qr_dispatch.h"
#include "tests/cuda/check_common.h"

using batchla::detail::QrArgs;
using batchla::detail::QrOutput;
using batchla::detail::QrSmall;
using batchla::detail::QrSmallFits;
using batchla::detail::QrTile;
using batchla::detail::QrTileTakes;

static const double kTol = 30;

// Householder QR of the m x nc row-major matrix `a` (float64, in place): reflectors for
// columns j < nr, applied to all nc columns (lstsq: the b columns get Q^T b). Conventions of
// launch.h: xnorm == 0 -> tau = 0; beta = -copysign(hypot(alpha, xnorm), alpha).
static void HostHouseholder(int m, int nc, int nr, double* a, double* tau) {
  for (int j = 0; j < nr; ++j) {
    double xn = 0;
    for (int i = j + 1; i < m; ++i) xn = std::hypot(xn, a[i * nc + j]);
    const double alpha = a[j * nc + j];
    if (xn == 0) { tau[j] = 0; continue; }
    const double beta = -std::copysign(std::hypot(alpha, xn), alpha);
    tau[j] = (beta - alpha) / beta;
    for (int i = j + 1; i < m; ++i) a[i * nc + j] /= (alpha - beta);
    a[j * nc + j] = beta;
    for (int c = j + 1; c < nc; ++c) {
      double w = a[j * nc + c];
      for (int i = j + 1; i < m; ++i) w += a[i * nc + j] * a[i * nc + c];
      w *= tau[j];
      a[j * nc + c] -= w;
      for (int i = j + 1; i < m; ++i) a[i * nc + c] -= w * a[i * nc + j];
    }
  }
}

// Q (m x n) from packed reflectors (ld n) and taus, in float64.
template <typename T>
static void HostFormQ(int m, int n, const T* packed, const T* tau, double* q) {
  for (int i = 0; i < m; ++i)
    for (int c = 0; c < n; ++c) q[i * n + c] = i == c;
  for (int j = n - 1; j >= 0; --j)
    for (int c = 0; c < n; ++c) {
      double w = q[j * n + c];
      for (int i = j + 1; i < m; ++i) w += double(packed[i * n + j]) * q[i * n + c];
      w *= double(tau[j]);
      q[j * n + c] -= w;
      for (int i = j + 1; i < m; ++i) q[i * n + c] -= w * double(packed[i * n + j]);
    }
}

template <typename T>
static double Norm1(const T* a, int rows, int cols) {
  double best = 0;
  for (int j = 0; j < cols; ++j) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += std::fabs(double(a[i * cols + j]));
    best = std::max(best, s);
  }
  return best;
}

// ||A - Q R||_1 / (n ||A||_1 eps) and ||I - Q^T Q||_1 / (n eps); R upper n x n taken from r (ld n).
template <typename T>
static void Residuals(int m, int n, const T* a, const double* q, const T* r, int r_ld, double* res,
                      double* orth) {
  std::vector<double> d(size_t(m) * n), o(size_t(n) * n);
  for (int i = 0; i < m; ++i)
    for (int c = 0; c < n; ++c) {
      double s = double(a[i * n + c]);
      for (int l = 0; l <= c; ++l) s -= q[i * n + l] * double(r[l * r_ld + c]);
      d[i * n + c] = s;
    }
  for (int x = 0; x < n; ++x)
    for (int y = 0; y < n; ++y) {
      double s = x == y;
      for (int i = 0; i < m; ++i) s -= q[i * n + x] * q[i * n + y];
      o[x * n + y] = s;
    }
  const double an = std::max(Norm1(a, m, n), 1e-300);
  *res = Norm1(d.data(), m, n) / (n * an * Eps<T>());
  *orth = Norm1(o.data(), n, n) / (n * Eps<T>());
}

template <typename T>
struct Dev {  // device buffer poisoned with NaN (all bits set)
  T* p = nullptr;
  size_t count = 0;
  explicit Dev(size_t c) : count(c) { CK(cudaMalloc(&p, std::max<size_t>(c, 1) * sizeof(T))); Poison(); }
  ~Dev() { cudaFree(p); }
  void Poison() { CK(cudaMemset(p, 0xff, std::max<size_t>(count, 1) * sizeof(T))); }
  void Up(const std::vector<T>& h) { CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> Down() const {
    std::vector<T> h(count);
    CK(cudaMemcpy(h.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// One factorization as cuda/qr.cu dispatches it within these sizes: the tile class where it takes
// the shape, else the small class.
template <typename T>
static cudaError_t Run(const QrArgs<T>& args, QrOutput out) {
  return QrTileTakes<T>(args.m, args.n, out) ? QrTile<T>(0, args) : QrSmall<T>(0, args, out);
}

struct Stats {  // worst scaled errors over a case
  double res = 0, orth = 0, rdiff = 0, tdiff = 0, qres = 0, qorth = 0, xdiff = 0, rd = 0, rs = 0;
  long checked = 0;
};

static bool Bad(double v) { return !(v <= kTol); }

// Powers of two whose squares leave dlarfg's safe range (cuda/qr_small.cuh, QrSmallScalar kLo /
// kHi), so every reflector of such a matrix takes the rescue branch: squares below kLo, or past
// the type's largest finite value.
template <typename T>
struct ExtremeScale;
template <>
struct ExtremeScale<float> {
  static constexpr double kTiny = 0x1p-64, kHuge = 0x1p64;
};
template <>
struct ExtremeScale<double> {
  static constexpr double kTiny = 0x1p-500, kHuge = 0x1p520;
};

// One shape, one batch: every output kind. zero_col: matrices b % 5 == 3 get column n/2 zeroed;
// b % 5 == 1 / 2 are scaled by ExtremeScale's tiny / huge factor (the checks are relative to each
// matrix's norm); nan_at: that matrix gets a NaN (its neighbours must be bit-identical to a
// NaN-free run).
template <typename T>
static void Case(int m, int n, int64_t batch, int64_t stride_check) {
  batch = SanitizeBatch(batch);
  const int fails0 = g_fail;
  const int64_t nan_at = batch >= 3 ? 1 : -1;
  const bool zero_cols = n >= 2;
  std::vector<T> a(size_t(batch) * m * n);
  for (int64_t b = 0; b < batch; ++b)
    for (int i = 0; i < m; ++i)
      for (int c = 0; c < n; ++c) {
        // Diagonal shift keeps cond(A) small, so R and x are compared forward.
        double v = Rand() + (i == c ? 2.0 * std::sqrt(double(m)) : 0.0);
        if (zero_cols && b % 5 == 3 && c == n / 2) v = 0;
        if (b % 5 == 1) v *= ExtremeScale<T>::kTiny;
        if (b % 5 == 2) v *= ExtremeScale<T>::kHuge;
        a[size_t(b) * m * n + size_t(i) * n + c] = T(v);
      }
  auto is_zero_col = [&](int64_t b) { return zero_cols && b % 5 == 3; };
  auto checked = [&](int64_t b) { return b % stride_check == 0 || b >= batch - 3 || b == nan_at + 1; };

  Dev<T> da(a.size()), dqr(a.size()), dtau(size_t(batch) * n), dr(size_t(batch) * n * n),
      dq(a.size());
  da.Up(a);
  QrArgs<T> args;
  args.a = da.p; args.batch = batch; args.m = m; args.n = n;
  args.qr = dqr.p; args.taus = dtau.p; args.q = dq.p; args.r = dr.p;
  if (!QrSmallFits<T>(m, n)) { FAIL("%s QrSmallFits(%d, %d) false", Name<T>(), m, n); return; }
  CK(Run(args, QrOutput::kGeqrf));
  CK(Run(args, QrOutput::kR));
  auto r_only = dr.Down();
  dr.Poison();
  CK(Run(args, QrOutput::kQr));
  CK(cudaDeviceSynchronize());
  auto qr = dqr.Down(), tau = dtau.Down(), r = dr.Down(), q = dq.Down();

  Stats s;
  std::vector<double> h(size_t(m) * n), ht(n), hq(size_t(m) * n);
  for (int64_t b = 0; b < batch; ++b) {
    if (!checked(b) || b == nan_at) continue;
    const T* A = &a[size_t(b) * m * n];
    const T* QR = &qr[size_t(b) * m * n];
    const T* TA = &tau[size_t(b) * n];
    const T* R = &r[size_t(b) * n * n];
    const T* RO = &r_only[size_t(b) * n * n];
    const T* Q = &q[size_t(b) * m * n];
    for (size_t e = 0; e < size_t(m) * n; ++e) h[e] = double(A[e]);
    HostHouseholder(m, n, n, h.data(), ht.data());
    const double an = std::max(Norm1(A, m, n), 1e-300);
    for (int i = 0; i < m; ++i)
      for (int c = 0; c < n; ++c) {
        const double g = double(QR[i * n + c]);
        if (g != g) { FAIL("%s %dx%d b=%lld geqrf NaN/unwritten at (%d,%d)", Name<T>(), m, n, (long long)b, i, c); return; }
        if (i <= c) {
          s.rdiff = std::max(s.rdiff, std::fabs(g - h[i * n + c]) / (n * an * Eps<T>()));
          if (i == c && std::signbit(g) != std::signbit(h[i * n + c]) && h[i * n + c] != 0)
            FAIL("%s %dx%d b=%lld R(%d,%d) sign %g vs host %g", Name<T>(), m, n, (long long)b, i, i, g, h[i * n + c]);
          // kR / kQr keep the reflectors unscaled (cuda/qr_small.cuh): R equal up to rounding.
          for (const T* rr : {RO, R}) {
            const double x = double(rr[i * n + c]);
            if (x != x) FAIL("%s %dx%d b=%lld kR/kQr r(%d,%d) NaN/unwritten", Name<T>(), m, n, (long long)b, i, c);
            s.rdiff = std::max(s.rdiff, std::fabs(x - h[i * n + c]) / (n * an * Eps<T>()));
            if (i == c && std::signbit(x) != std::signbit(h[i * n + c]) && h[i * n + c] != 0)
              FAIL("%s %dx%d b=%lld kR/kQr R(%d,%d) sign", Name<T>(), m, n, (long long)b, i, i);
          }
        } else if (i < n && (RO[i * n + c] != T(0) || R[i * n + c] != T(0))) {
          FAIL("%s %dx%d b=%lld r(%d,%d) below the diagonal not 0", Name<T>(), m, n, (long long)b, i, c);
        }
      }
    for (int j = 0; j < n; ++j) {
      s.tdiff = std::max(s.tdiff, std::fabs(double(TA[j]) - ht[j]) / (n * Eps<T>()));
      if (ht[j] == 0 && TA[j] != T(0)) FAIL("%s %dx%d b=%lld tau(%d) = %g, host 0", Name<T>(), m, n, (long long)b, j, double(TA[j]));
    }
    if (is_zero_col(b) && TA[n / 2] != T(0)) FAIL("%s %dx%d b=%lld zero column: tau %g", Name<T>(), m, n, (long long)b, double(TA[n / 2]));
    double res, orth;
    HostFormQ(m, n, QR, TA, hq.data());
    Residuals(m, n, A, hq.data(), QR, n, &res, &orth);
    s.res = std::max(s.res, res); s.orth = std::max(s.orth, orth);
    for (size_t e = 0; e < size_t(m) * n; ++e) {
      if (Q[e] != Q[e]) { FAIL("%s %dx%d b=%lld q NaN/unwritten", Name<T>(), m, n, (long long)b); return; }
      hq[e] = double(Q[e]);
    }
    Residuals(m, n, A, hq.data(), R, n, &res, &orth);
    s.qres = std::max(s.qres, res); s.qorth = std::max(s.qorth, orth);
    ++s.checked;
  }
  // A NaN matrix leaves its neighbours bit-identical.
  if (nan_at >= 0) {
    a[size_t(nan_at) * m * n + (size_t(m) * n) / 2] = T(NAN);
    da.Up(a);
    dqr.Poison();
    dr.Poison();
    CK(Run(args, QrOutput::kGeqrf));
    CK(Run(args, QrOutput::kR));
    CK(cudaDeviceSynchronize());
    auto qr2 = dqr.Down(), r2 = dr.Down();
    for (int64_t b : {nan_at - 1, nan_at + 1})
      if (b >= 0 && b < batch &&
          (std::memcmp(&qr2[size_t(b) * m * n], &qr[size_t(b) * m * n], size_t(m) * n * sizeof(T)) != 0 ||
           std::memcmp(&r2[size_t(b) * n * n], &r_only[size_t(b) * n * n], size_t(n) * n * sizeof(T)) != 0))
        FAIL("%s %dx%d NaN matrix %lld changed neighbour %lld", Name<T>(), m, n, (long long)nan_at, (long long)b);
  }
  const bool bad = Bad(s.res) || Bad(s.orth) || Bad(s.rdiff) || Bad(s.tdiff) || Bad(s.qres) ||
                   Bad(s.qorth) || g_fail > fails0;
  if (bad) FAIL("%s %dx%d batch %lld residuals over %g", Name<T>(), m, n, (long long)batch, kTol);
  std::printf("%s %4s %2dx%-2d batch %8lld checked %6ld  res %5.2f orth %5.2f  R %5.2f tau %5.2f  kQr res %5.2f orth %5.2f\n",
              bad ? "FAIL" : "ok  ", Name<T>(), m, n, (long long)batch, s.checked, s.res, s.orth,
              s.rdiff, s.tdiff, s.qres, s.qorth);
}

// Least squares: [A | B] with k right-hand sides; x vs the host's, rdiag, resid.
template <typename T>
static void LstsqCase(int m, int n, int k, int64_t batch) {
  batch = SanitizeBatch(batch);
  const int nc = n + k, fails0 = g_fail;
  std::vector<T> a(size_t(batch) * m * n), bb(size_t(batch) * m * k);
  for (int64_t b = 0; b < batch; ++b)
    for (int i = 0; i < m; ++i) {
      for (int c = 0; c < n; ++c)
        a[size_t(b) * m * n + i * n + c] = T(Rand() + (i == c ? 2.0 * std::sqrt(double(m)) : 0.0));
      for (int c = 0; c < k; ++c) bb[size_t(b) * m * k + i * k + c] = T(Rand());
    }
  Dev<T> da(a.size()), db(bb.size()), dx(size_t(batch) * n * k), drd(size_t(batch) * n),
      drs(size_t(batch) * k);
  da.Up(a);
  if (k > 0) db.Up(bb);
  QrArgs<T> args;
  args.a = da.p; args.b = db.p; args.k = k; args.batch = batch; args.m = m; args.n = n;
  args.x = dx.p; args.rdiag = drd.p; args.resid = drs.p;
  CK(Run(args, QrOutput::kLstsq));
  CK(cudaDeviceSynchronize());
  auto x = dx.Down(), rd = drd.Down(), rs = drs.Down();
  Stats s;
  std::vector<double> h(size_t(m) * nc), ht(n), hx(size_t(n) * k);
  for (int64_t b = 0; b < batch; ++b) {
    for (int i = 0; i < m; ++i) {
      for (int c = 0; c < n; ++c) h[i * nc + c] = double(a[size_t(b) * m * n + i * n + c]);
      for (int c = 0; c < k; ++c) h[i * nc + n + c] = double(bb[size_t(b) * m * k + i * k + c]);
    }
    HostHouseholder(m, nc, n, h.data(), ht.data());
    const double an = Norm1(&a[size_t(b) * m * n], m, n);
    for (int j = 0; j < n; ++j) {
      const double g = double(rd[size_t(b) * n + j]);
      if (g != g) { FAIL("%s lstsq %dx%d k=%d rdiag NaN/unwritten", Name<T>(), m, n, k); return; }
      s.rd = std::max(s.rd, std::fabs(g - h[j * nc + j]) / (n * an * Eps<T>()));
    }
    for (int c = 0; c < k; ++c) {
      double res = 0, bn = 0;
      for (int i = n; i < m; ++i) res += h[i * nc + n + c] * h[i * nc + n + c];
      for (int i = 0; i < m; ++i) bn += h[i * nc + n + c] * h[i * nc + n + c];
      // x: back substitution on the host's R and Q^T b.
      for (int j = n - 1; j >= 0; --j) {
        double v = h[j * nc + n + c];
        for (int l = j + 1; l < n; ++l) v -= h[j * nc + l] * hx[l * k + c];
        hx[j * k + c] = v / h[j * nc + j];
      }
      // x's forward error scales with ||x|| + cond * ||r|| / ||A||: where b is nearly orthogonal
      // to range(A), x is tiny against ||b|| / ||A|| and its error relative to ||x|| alone is
      // not bounded by the backward stability of QR; so the error is taken relative to
      // max(||x||, ||b|| / ||A||) (1-norms).
      double xn = 0, dn = 0, b1 = 0;
      for (int i = 0; i < m; ++i) b1 += std::fabs(double(bb[size_t(b) * m * k + i * k + c]));
      for (int j = 0; j < n; ++j) {
        const double g = double(x[size_t(b) * n * k + j * k + c]);
        if (g != g) { FAIL("%s lstsq %dx%d k=%d x NaN/unwritten", Name<T>(), m, n, k); return; }
        xn += std::fabs(hx[j * k + c]);
        dn += std::fabs(g - hx[j * k + c]);
      }
      s.xdiff = std::max(s.xdiff, dn / (std::max({xn, b1 / std::max(an, 1e-300), 1e-300}) * n * Eps<T>()));
      const double g = double(rs[size_t(b) * k + c]);
      if (g != g) { FAIL("%s lstsq %dx%d k=%d resid NaN/unwritten", Name<T>(), m, n, k); return; }
      s.rs = std::max(s.rs, std::fabs(g - res) / (bn * m * Eps<T>()));
    }
    ++s.checked;
  }
  const bool bad = Bad(s.xdiff) || Bad(s.rd) || Bad(s.rs) || g_fail > fails0;
  if (bad) FAIL("%s lstsq %dx%d k=%d batch %lld over %g", Name<T>(), m, n, k, (long long)batch, kTol);
  std::printf("%s %4s lstsq %2dx%-2d k=%d batch %6lld  x %5.2f rdiag %5.2f resid %5.2f\n",
              bad ? "FAIL" : "ok  ", Name<T>(), m, n, k, (long long)batch, s.xdiff, s.rd, s.rs);
}

// Time one output kind on a 256 MiB batch of n x n inputs (m x n for kLstsq with k = 1).
template <typename T>
static void Time(int n, QrOutput out, const char* what) {
  const int m = n, k = out == QrOutput::kLstsq ? 1 : 0;
  const int64_t batch = (int64_t(256) << 20) / (int64_t(m) * n * sizeof(T));
  const size_t mn = size_t(batch) * m * n;
  std::vector<T> h(mn);
  for (size_t e = 0; e < mn; ++e) h[e] = T(Rand() + ((e % (size_t(n) * n)) % (n + 1) == 0 ? 2.0 : 0.0));
  Dev<T> a(mn), r(out == QrOutput::kR || out == QrOutput::kQr ? size_t(batch) * n * n : 0),
      q(out == QrOutput::kQr ? mn : 0), b(size_t(batch) * m * k), x(size_t(batch) * n * k),
      rd(out == QrOutput::kLstsq ? size_t(batch) * n : 0), rs(size_t(batch) * k),
      qr(out == QrOutput::kGeqrf ? mn : 0), taus(out == QrOutput::kGeqrf ? size_t(batch) * n : 0);
  a.Up(h);
  if (k) CK(cudaMemcpy(b.p, a.p, b.count * sizeof(T), cudaMemcpyDeviceToDevice));
  QrArgs<T> args;
  args.a = a.p; args.batch = batch; args.m = m; args.n = n; args.r = r.p; args.q = q.p;
  args.qr = qr.p; args.taus = taus.p;
  args.b = b.p; args.k = k; args.x = x.p; args.rdiag = rd.p; args.resid = rs.p;
  double bytes = double(m) * n + (out == QrOutput::kR ? double(n) * n : 0) +
                 (out == QrOutput::kQr ? double(n) * n + double(m) * n : 0) +
                 (out == QrOutput::kLstsq ? double(m) * k + double(n) * k + n + k : 0) +
                 (out == QrOutput::kGeqrf ? double(m) * n + n : 0);
  bytes *= double(batch) * sizeof(T);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(Run(args, out));
  std::vector<float> ms;
  for (int rep = 0; rep < 7; ++rep) {
    CK(cudaEventRecord(e0));
    CK(Run(args, out));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t; CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const double t = ms[ms.size() / 2] * 1e-3, gbs = bytes / t * 1e-9;
  std::printf("time %s %-5s n=%2d batch %9lld  %8.3f ms  %7.1f GB/s  %.2f of 4.2 TB/s\n", Name<T>(), what, n,
              (long long)batch, t * 1e3, gbs, gbs * 1e9 / 4.2e12);
  cudaEventDestroy(e0); cudaEventDestroy(e1);
}

static bool g_m64_only = false;
static bool Wanted(int m, int ncols) { return !g_m64_only || m > 32 || ncols > 32; }

template <typename T>
static void Checks() {
  const int shapes[][2] = {{1, 1}, {2, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 3}, {7, 7}, {8, 8}, {9, 4},
                           {12, 12}, {16, 16}, {17, 9}, {20, 20}, {24, 13}, {31, 31}, {32, 32},
                           {32, 8}, {32, 1},
                           // the tile class's kR (n >= 9; M = 12, 16, 20, 24, 28, 32; square
                           // and tall)
                           {17, 17}, {23, 23}, {24, 17}, {24, 24}, {25, 25}, {28, 28}, {32, 17},
                           {30, 24}, {13, 13}, {16, 9}, {15, 12}, {9, 9}, {10, 10}, {11, 9}, {12, 9}, {27, 20},
                           // M = 64: tall (ncols <= 32, a warp) and wide (a pair of warps).
                           {33, 33}, {40, 17}, {48, 48}, {64, 64}, {64, 1}, {64, 32}, {63, 40},
                           {33, 2}, {64, 33}};
  for (auto& s : shapes) {
    if (!Wanted(s[0], s[1])) continue;
    Case<T>(s[0], s[1], 1, 1);
    Case<T>(s[0], s[1], 7, 1);
    if (!SanitizeMode()) Case<T>(s[0], s[1], 1001, 1);  // capped it would repeat the 7
  }
  if (Wanted(4, 4)) {
    Case<T>(4, 4, int64_t(1) << 20, 997);
    Case<T>(3, 2, (int64_t(1) << 20) + 3, 997);
  }
  Case<T>(64, 48, 30011, 997);  // pairs of warps, many grid-stride rounds
  // The tile class's staged chunks (tuning.h kQrTileBulkStageMinM): many chunks a block, each
  // refilled while the block factors the one before, a partial last chunk, odd m n (M = 32).
  const int staged[][2] = {{28, 28}, {27, 20}, {32, 32}, {29, 29}};
  for (auto& s : staged)
    if (!SanitizeMode()) Case<T>(s[0], s[1], 40009, 97);
  const int ls[][2] = {{1, 1}, {4, 2}, {5, 3}, {8, 8}, {16, 9}, {17, 9}, {30, 30}, {32, 16}, {32, 30},
                       {33, 31}, {50, 30}, {64, 62}, {64, 64}};
  for (auto& s : ls)
    for (int k : {0, 1, 2})
      if (s[1] + k <= 64 && Wanted(s[0], s[1] + k)) LstsqCase<T>(s[0], s[1], k, 333);
  if (Wanted(6, 31)) LstsqCase<T>(6, 2, 29, 45);  // ncols = 31 > m: a full warp per matrix
  LstsqCase<T>(60, 3, 5, 333);  // tall, 8 lanes per matrix
  LstsqCase<T>(6, 2, 40, 45);   // ncols = 42 > 32 >= m: a pair of warps on 6 rows
  LstsqCase<T>(40, 30, 4, 77);  // ncols = 34: a pair of warps
}

int main(int argc, char** argv) {
  bool timing = !SanitizeMode(), checks = true, r_only = false;
  if (argc == 4 && !std::strcmp(argv[1], "--time-one")) {  // one kR timing (for a profiler)
    const int n = std::atoi(argv[2]);
    if (!std::strcmp(argv[3], "f64")) Time<double>(n, QrOutput::kR, "r");
    else Time<float>(n, QrOutput::kR, "r");
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-timing")) timing = false;
    if (!std::strcmp(argv[i], "--timing-only")) checks = false;
    if (!std::strcmp(argv[i], "--m64-only")) g_m64_only = true;
    if (!std::strcmp(argv[i], "--r-only")) r_only = true;
  }
  if (checks) { Checks<float>(); Checks<double>(); }
  if (timing) {
    for (int n : {2, 4, 8, 10, 12, 16, 20, 24, 28, 32, 48, 64}) {
      Time<float>(n, QrOutput::kR, "r");
      Time<double>(n, QrOutput::kR, "r");
    }
  }
  if (timing && !r_only) {
    for (int n : {16, 24, 32, 48, 64}) { Time<float>(n, QrOutput::kQr, "qr"); Time<double>(n, QrOutput::kQr, "qr"); }
    for (int n : {16, 32}) { Time<float>(n, QrOutput::kGeqrf, "geqrf"); Time<double>(n, QrOutput::kGeqrf, "geqrf"); }
    for (int n : {8, 31, 63}) {  // lstsq needs n + k <= 64
      Time<float>(n, QrOutput::kQr, "qr"); Time<double>(n, QrOutput::kQr, "qr");
      Time<float>(n, QrOutput::kLstsq, "lstsq"); Time<double>(n, QrOutput::kLstsq, "lstsq");
      Time<float>(n, QrOutput::kGeqrf, "geqrf");
    }
  }
  CK(cudaGetLastError());
  std::printf("%s: %d failure(s)\n", g_fail ? "FAILED" : "PASSED", g_fail);
  return g_fail ? 1 : 0;
}
