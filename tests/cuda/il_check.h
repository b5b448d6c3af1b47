// Host side of the interleaved-layout checks, shared by tests/cuda/check_interleaved.cu (the
// library's dispatch) and bench/autotune_interleaved.cu (every variant the tuner times): test
// matrices, the layout conversion on the host, and LAPACK-style scaled residuals in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/cuda/check_common.h"

namespace ilcheck {

// Standard layout (batch, rows, cols) -> interleaved (batch / c, rows, cols, c); batch % c == 0.
template <typename T>
std::vector<T> ToInterleaved(const std::vector<double>& s, int64_t batch, int rows, int cols, int64_t c) {
  std::vector<T> out(s.size());
  const int64_t e = int64_t(rows) * cols;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < e; ++i) out[((b / c) * e + i) * c + b % c] = T(s[b * e + i]);
  return out;
}
template <typename T>
std::vector<double> FromInterleaved(const std::vector<T>& x, int64_t batch, int rows, int cols, int64_t c) {
  std::vector<double> out(x.size());
  const int64_t e = int64_t(rows) * cols;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < e; ++i) out[b * e + i] = double(x[((b / c) * e + i) * c + b % c]);
  return out;
}

// SPD matrices B Bᵀ / n + I (well conditioned), rounded to T so the residuals see the exact input.
template <typename T>
std::vector<double> SpdBatch(int64_t batch, int n) {
  std::vector<double> a(size_t(batch) * n * n), m(size_t(n) * n);
  for (int64_t b = 0; b < batch; ++b) {
    for (auto& v : m) v = Rand();
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = i == j ? 1.0 : 0.0;
        for (int k = 0; k < n; ++k) s += m[i * n + k] * m[j * n + k] / n;
        a[(b * n + i) * n + j] = a[(b * n + j) * n + i] = double(T(s));
      }
  }
  return a;
}
inline std::vector<double> RandomBatch(int64_t count) {
  std::vector<double> v(count);
  for (auto& x : v) x = Rand();
  return v;
}

inline double Norm1(const double* a, int rows, int cols) {  // max column sum
  double best = 0;
  for (int j = 0; j < cols; ++j) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += std::fabs(a[i * cols + j]);
    best = s > best ? s : best;
  }
  return best;
}

// ‖A − L Lᵀ‖₁ / (n ‖A‖₁ ε) for one matrix (L = l's lower triangle); +inf if l's strict upper
// triangle is not exactly 0.
inline double PotrfResidual(const double* a, const double* l, int n, double eps) {
  std::vector<double> r(size_t(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (j > i && l[i * n + j] != 0.0) return INFINITY;
      double s = 0;
      for (int k = 0; k <= (i < j ? i : j); ++k) s += l[i * n + k] * l[j * n + k];
      r[i * n + j] = a[i * n + j] - s;
    }
  return Norm1(r.data(), n, n) / (n * Norm1(a, n, n) * eps);
}

// ‖B − M X‖₁ / (‖M‖₁ ‖X‖₁ n ε) for one system, M n x n, B and X n x k.
inline double SolveResidual(const double* m, const double* b, const double* x, int n, int k, double eps) {
  std::vector<double> r(size_t(n) * k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) {
      double s = b[i * k + j];
      for (int p = 0; p < n; ++p) s -= m[i * n + p] * x[p * k + j];
      r[i * k + j] = s;
    }
  const double den = Norm1(m, n, n) * Norm1(x, n, k) * n * eps;
  return den > 0 ? Norm1(r.data(), n, k) / den : Norm1(r.data(), n, k);
}

// op(A) of a triangular solve as a dense matrix: the `lower` (or upper) triangle of a, the unit
// diagonal when `unit`, transposed when `trans`.
inline std::vector<double> TriangularOp(const double* a, int n, bool lower, bool trans, bool unit) {
  std::vector<double> m(size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const bool in = lower ? j <= i : j >= i;
      const double v = !in ? 0.0 : (i == j && unit ? 1.0 : a[i * n + j]);
      m[trans ? j * n + i : i * n + j] = v;
    }
  return m;
}

}  // namespace ilcheck
