// The fused QR ops of ONE m x n matrix (m >= n), CPU, composed from geqrf.h, orgqr.h and trsm.h
// so that they agree with geqrf + orgqr / ormqr + trsm: reduced QR (q and r), R only, and least
// squares. Storage: ROW-MAJOR; b is m x k and x is n x k with their k columns contiguous per row.
#pragma once

#include <algorithm>
#include <cstdint>

#include "bindings/cpu/blas1.h"
#include "bindings/cpu/geqrf.h"
#include "bindings/cpu/orgqr.h"
#include "bindings/cpu/trsm.h"

namespace batchla::cpu {

// Scratch of one call (the caller keeps it thread_local): `taus` n of T, `work` m * ncols of T
// where the op factors a copy (qr_r, lstsq), `rwork` n * n of T for lstsq's R, and the
// Householder scratch of an m x ncols factorization (ncols = n, or n + k for lstsq).
template <typename T>
struct QrScratch {
  T* taus;
  T* work;
  T* rwork;
  HouseholderScratch<T> h;
};

// r (n x n) = the upper triangle of the factored qr (row stride ld), zeros below the diagonal.
template <typename T>
void CopyR(const T* qr, int64_t ld, T* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    Fill(r + i * n, i, T(0));
    std::copy_n(qr + i * ld + i, n - i, r + i * n + i);
  }
}

// Reduced QR: q (m x n, may alias a) as orgqr of geqrf's output, r (n x n). No `work` used.
template <typename T>
void QrOf(const T* a, T* q, T* r, int64_t m, int64_t n, const QrScratch<T>& s) {
  if (a != q) std::copy_n(a, m * n, q);
  HouseholderInPlace(q, n, m, n, n, s.taus, s.h);
  CopyR(q, n, r, n);
  OrgqrInPlace(q, s.taus, m, n, n, s.h);
}

// R only (jnp.linalg.qr mode 'r'), factoring a copy of a in `work`.
template <typename T>
void QrROf(const T* a, T* r, int64_t m, int64_t n, const QrScratch<T>& s) {
  std::copy_n(a, m * n, s.work);
  HouseholderInPlace(s.work, n, m, n, n, s.taus, s.h);
  CopyR(s.work, n, r, n);
}

// Least squares by QR: factors [a | b] (m x (n + k), in `work`), so c = Q^T b is what the
// reflectors leave in the last k columns; x = R^-1 c(0:n) (trsm.h: a zero R(j, j) gives inf/NaN,
// this matrix only), rdiag = R's diagonal, resid(j) = sum_{i >= n} c(i, j)^2.
template <typename T>
void LstsqOf(const T* a, const T* b, T* x, T* rdiag, T* resid, int64_t m, int64_t n, int64_t k,
             const QrScratch<T>& s) {
  const int64_t ld = n + k;
  for (int64_t i = 0; i < m; ++i) {
    std::copy_n(a + i * n, n, s.work + i * ld);
    std::copy_n(b + i * k, k, s.work + i * ld + n);
  }
  HouseholderInPlace(s.work, ld, m, n, ld, s.taus, s.h);
  CopyR(s.work, ld, s.rwork, n);
  for (int64_t j = 0; j < n; ++j) rdiag[j] = s.work[j * ld + j];
  for (int64_t i = 0; i < n; ++i) std::copy_n(s.work + i * ld + n, k, x + i * k);
  TrsmInPlace(s.rwork, x, n, k, /*lower=*/false, /*trans=*/false, /*unit_diag=*/false);
  Fill(resid, k, T(0));
  for (int64_t i = n; i < m; ++i) {
    const T* c_i = s.work + i * ld + n;
    for (int64_t j = 0; j < k; ++j) resid[j] += c_i[j] * c_i[j];
  }
}

}  // namespace batchla::cpu
