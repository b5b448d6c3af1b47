// Operand validation shared by the CPU and CUDA handlers: every check names the op and operand.
// The Python layer checks user input at trace time first; these guard the raw FFI targets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "bindings/ffi_common.h"

namespace batchla_ffi {

inline std::string DimsString(ffi::AnyBuffer::Dimensions dims) {
  std::string s = "(";
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

inline std::string Operand(const char* op, const char* name) {
  return std::string(op) + " operand " + name;
}

// a: (..., n, n).
inline ffi::ErrorOr<MatrixShape> SquareOperand(const char* op, const ffi::AnyBuffer& a, const char* name) {
  auto s = MatrixShapeOf(a, Operand(op, name).c_str());
  if (!s) return s;
  if (s->rows != s->cols) {
    return ffi::Unexpected(ShapeError(Operand(op, name) + " must be square, got shape " +
                                      DimsString(a.dimensions())));
  }
  return s;
}

// b: (..., n, k) with the batch count and dtype of a.
inline ffi::ErrorOr<MatrixShape> RhsOperand(const char* op, const ffi::AnyBuffer& b, const char* name,
                                     const ffi::AnyBuffer& a, const MatrixShape& as) {
  auto s = MatrixShapeOf(b, Operand(op, name).c_str());
  if (!s) return s;
  if (s->rows != as.rows) {
    return ffi::Unexpected(ShapeError(Operand(op, name) + " must have " +
                                      std::to_string(as.rows) + " rows (the rows of a), got " +
                                      DimsString(b.dimensions())));
  }
  if (s->batch != as.batch) {
    return ffi::Unexpected(ShapeError(Operand(op, name) + " has batch count " +
                                      std::to_string(s->batch) + " but a has " +
                                      std::to_string(as.batch)));
  }
  if (b.element_type() != a.element_type()) {
    return ffi::Unexpected(ShapeError(Operand(op, name) + " must have the dtype of a"));
  }
  return s;
}

// A result that must match an operand exactly (shape and dtype).
inline ffi::Error SameAs(const char* op, const ffi::AnyBuffer& out, const char* out_name,
                  const ffi::AnyBuffer& in, const char* in_name) {
  auto od = out.dimensions(), id = in.dimensions();
  if (!std::equal(od.begin(), od.end(), id.begin(), id.end())) {
    return ShapeError(Operand(op, out_name) + " must have the shape of " + in_name + " " +
                      DimsString(id) + ", got " + DimsString(od));
  }
  if (out.element_type() != in.element_type()) {
    return ShapeError(Operand(op, out_name) + " must have the dtype of " + in_name);
  }
  return ffi::Error::Success();
}

// info: int32 with the leading (batch) dims of a.
inline ffi::Error InfoOperand(const char* op, const ffi::AnyBuffer& info, const ffi::AnyBuffer& a) {
  auto id = info.dimensions(), ad = a.dimensions();
  if (!std::equal(id.begin(), id.end(), ad.begin(), ad.end() - 2)) {
    return ShapeError(Operand(op, "info") + " must have the batch shape of a, got " +
                      DimsString(id) + " for a of shape " + DimsString(ad));
  }
  if (info.element_type() != ffi::DataType::S32) {
    return ShapeError(Operand(op, "info") + " must be int32");
  }
  return ffi::Error::Success();
}

// Orders and column counts reach the kernels as int: larger ones are refused (they could never fit).
inline ffi::Error IntSized(const char* op, const MatrixShape& s, const char* name) {
  if (s.rows > INT32_MAX || s.cols > INT32_MAX)
    return ShapeError(Operand(op, name) + " has a dimension over 2^31 - 1");
  return ffi::Error::Success();
}

// The checks of a factorization a (..., n, n) -> out (like a), info (...) int32.
inline ffi::ErrorOr<MatrixShape> CheckFactor(const char* op, const ffi::AnyBuffer& a,
                                             const ffi::AnyBuffer& out, const char* out_name,
                                             const ffi::AnyBuffer& info) {
  auto as = SquareOperand(op, a, "a");
  if (!as) return as;
  if (auto e = IntSized(op, *as, "a"); e.failure()) return ffi::Unexpected(e);
  if (auto e = SameAs(op, out, out_name, a, "a"); e.failure()) return ffi::Unexpected(e);
  if (auto e = InfoOperand(op, info, a); e.failure()) return ffi::Unexpected(e);
  return as;
}

// The checks of a solve with a matrix operand (..., n, n) named `a_name`, b (..., n, k) -> x
// (like b) and, where the op has one, info (...) int32. Returns b's shape (batch, n, k).
inline ffi::ErrorOr<MatrixShape> CheckSolve(const char* op, const ffi::AnyBuffer& a,
                                            const char* a_name, const ffi::AnyBuffer& b,
                                            const ffi::AnyBuffer& x,
                                            const ffi::AnyBuffer* info = nullptr) {
  auto as = SquareOperand(op, a, a_name);
  if (!as) return as;
  auto bs = RhsOperand(op, b, "b", a, *as);
  if (!bs) return bs;
  if (auto e = IntSized(op, *bs, "b"); e.failure()) return ffi::Unexpected(e);
  if (auto e = SameAs(op, x, "x", b, "b"); e.failure()) return ffi::Unexpected(e);
  if (info) {
    if (auto e = InfoOperand(op, *info, a); e.failure()) return ffi::Unexpected(e);
  }
  return bs;
}

// A per-matrix vector (..., n) of int32 (pivots, perm), or of a's dtype when `float_like` (sign,
// logabsdet have shape (...): pass n = -1), with the batch dims of a.
inline ffi::Error VectorOperand(const char* op, const ffi::AnyBuffer& v, const char* name,
                                const ffi::AnyBuffer& a, int64_t n, bool float_like = false) {
  auto vd = v.dimensions(), ad = a.dimensions();
  const size_t want_rank = ad.size() - 2 + (n >= 0 ? 1 : 0);
  bool ok = vd.size() == want_rank && std::equal(ad.begin(), ad.end() - 2, vd.begin());
  if (ok && n >= 0) ok = vd[vd.size() - 1] == n;
  if (!ok) {
    return ShapeError(Operand(op, name) + " must have the batch shape of a" +
                      (n >= 0 ? " followed by " + std::to_string(n) : std::string()) + ", got " +
                      DimsString(vd) + " for a of shape " + DimsString(ad));
  }
  if (float_like ? v.element_type() != a.element_type() : v.element_type() != ffi::DataType::S32) {
    return ShapeError(Operand(op, name) + (float_like ? " must have the dtype of a" : " must be int32"));
  }
  return ffi::Error::Success();
}

// getrf: a (..., n, n) -> lu (like a), pivots (..., n), perm (..., n), info (...).
inline ffi::ErrorOr<MatrixShape> CheckGetrf(const char* op, const ffi::AnyBuffer& a,
                                            const ffi::AnyBuffer& lu, const ffi::AnyBuffer& pivots,
                                            const ffi::AnyBuffer& perm, const ffi::AnyBuffer& info) {
  auto as = CheckFactor(op, a, lu, "lu", info);
  if (!as) return as;
  if (auto e = VectorOperand(op, pivots, "pivots", a, as->rows); e.failure()) return ffi::Unexpected(e);
  // perm (..., n), or (..., 0) when the caller does not want it (GetrfPerm gives nullptr then)
  const int64_t perm_len = perm.dimensions().size() == 0 ? -1 : perm.dimensions().back();
  if (auto e = VectorOperand(op, perm, "perm", a, perm_len == 0 ? 0 : as->rows); e.failure())
    return ffi::Unexpected(e);
  return as;
}

// getrf's perm result, or nullptr where it has no entries (not wanted, or n == 0).
template <typename R>
int32_t* GetrfPerm(R& perm) {
  auto d = perm->dimensions();
  return d.size() > 0 && d.back() == 0 ? nullptr : static_cast<int32_t*>(perm->untyped_data());
}

// getrs: lu (..., n, n), perm (..., n), b (..., n, k) -> x (like b). Returns b's shape.
inline ffi::ErrorOr<MatrixShape> CheckGetrs(const char* op, const ffi::AnyBuffer& lu,
                                            const ffi::AnyBuffer& perm, const ffi::AnyBuffer& b,
                                            const ffi::AnyBuffer& x) {
  auto bs = CheckSolve(op, lu, "lu", b, x);
  if (!bs) return bs;
  if (auto e = VectorOperand(op, perm, "perm", lu, bs->rows); e.failure()) return ffi::Unexpected(e);
  return bs;
}

// slogdet: a (..., n, n) -> sign (...), logabsdet (...) of a's dtype.
inline ffi::ErrorOr<MatrixShape> CheckSlogdet(const char* op, const ffi::AnyBuffer& a,
                                              const ffi::AnyBuffer& sign,
                                              const ffi::AnyBuffer& logabsdet) {
  auto as = SquareOperand(op, a, "a");
  if (!as) return as;
  if (auto e = IntSized(op, *as, "a"); e.failure()) return ffi::Unexpected(e);
  if (auto e = VectorOperand(op, sign, "sign", a, -1, true); e.failure()) return ffi::Unexpected(e);
  if (auto e = VectorOperand(op, logabsdet, "logabsdet", a, -1, true); e.failure())
    return ffi::Unexpected(e);
  return as;
}

// det by the closed forms: a (..., n, n) with n = 2 or 3 -> det (...), a's dtype.
inline ffi::ErrorOr<MatrixShape> CheckDetClosed(const char* op, const ffi::AnyBuffer& a, const ffi::AnyBuffer& det) {
  auto as = SquareOperand(op, a, "a");
  if (!as) return as;
  if (as->rows != 2 && as->rows != 3) {
    return ffi::Unexpected(ShapeError(Operand(op, "a") + " must be 2 x 2 or 3 x 3 matrices (the closed forms), got " +
                                      DimsString(a.dimensions())));
  }
  if (auto e = VectorOperand(op, det, "det", a, -1, true); e.failure()) return ffi::Unexpected(e);
  return as;
}

// ---- QR family: a (..., m, n) with m >= n; results shaped by a's batch dims ---------------------

// A QR operand a (..., m, n): m >= n, dimensions that fit an int.
inline ffi::ErrorOr<MatrixShape> TallOperand(const char* op, const ffi::AnyBuffer& a, const char* name) {
  auto s = MatrixShapeOf(a, Operand(op, name).c_str());
  if (!s) return s;
  if (s->rows < s->cols) {
    return ffi::Unexpected(ShapeError(Operand(op, name) + " must have at least as many rows as " +
                                      "columns (m >= n), got shape " + DimsString(a.dimensions())));
  }
  if (auto e = IntSized(op, *s, name); e.failure()) return ffi::Unexpected(e);
  return s;
}

// `out` must have the batch dims of a followed by `tail`, and a's dtype (taus, r, x, rdiag, ...).
inline ffi::Error BatchedLikeA(const char* op, const ffi::AnyBuffer& out, const char* name,
                               const ffi::AnyBuffer& a, std::initializer_list<int64_t> tail) {
  auto od = out.dimensions(), ad = a.dimensions();
  const size_t batch_rank = ad.size() - 2;
  bool ok = od.size() == batch_rank + tail.size() &&
            std::equal(ad.begin(), ad.end() - 2, od.begin()) &&
            std::equal(tail.begin(), tail.end(), od.begin() + batch_rank);
  if (!ok) {
    std::string want;
    for (int64_t t : tail) want += (want.empty() ? "" : ", ") + std::to_string(t);
    return ShapeError(Operand(op, name) + " must have the batch shape of a followed by (" + want +
                      (tail.size() == 1 ? ",)" : ")") + ", got " + DimsString(od) +
                      " for a of shape " + DimsString(ad));
  }
  if (out.element_type() != a.element_type())
    return ShapeError(Operand(op, name) + " must have the dtype of a");
  return ffi::Error::Success();
}

// The shapes of a QR-family call: a's (batch, m, n), the reflector count k (orgqr, ormqr) and the
// columns of c / b (ormqr's p, lstsq's k, both in `cols`).
struct QrShape {
  MatrixShape a;
  int64_t k = 0;     // reflectors: taus' length
  int64_t cols = 0;  // columns of c (ormqr) or b (lstsq)
};

// geqrf: a (..., m, n) -> qr (like a), taus (..., n).
inline ffi::ErrorOr<MatrixShape> CheckGeqrf(const char* op, const ffi::AnyBuffer& a,
                                            const ffi::AnyBuffer& qr, const ffi::AnyBuffer& taus) {
  auto as = TallOperand(op, a, "a");
  if (!as) return as;
  if (auto e = SameAs(op, qr, "qr", a, "a"); e.failure()) return ffi::Unexpected(e);
  if (auto e = BatchedLikeA(op, taus, "taus", a, {as->cols}); e.failure()) return ffi::Unexpected(e);
  return as;
}

// The reflectors of orgqr / ormqr: a (..., m, n), taus (..., k) with k <= n.
inline ffi::ErrorOr<QrShape> ReflectorOperands(const char* op, const ffi::AnyBuffer& a,
                                               const ffi::AnyBuffer& taus) {
  auto as = TallOperand(op, a, "a");
  if (!as) return ffi::Unexpected(as.error());
  auto td = taus.dimensions();
  const int64_t k = td.size() == 0 ? -1 : td[td.size() - 1];
  if (k < 0 || k > as->cols) {
    return ffi::Unexpected(ShapeError(Operand(op, "taus") + " must have a last dimension k <= " +
                                      std::to_string(as->cols) + " (the columns of a), got " +
                                      DimsString(td)));
  }
  if (auto e = BatchedLikeA(op, taus, "taus", a, {k}); e.failure()) return ffi::Unexpected(e);
  return QrShape{*as, k, 0};
}

// orgqr: a (..., m, n), taus (..., k) -> q (like a).
inline ffi::ErrorOr<QrShape> CheckOrgqr(const char* op, const ffi::AnyBuffer& a,
                                        const ffi::AnyBuffer& taus, const ffi::AnyBuffer& q) {
  auto qs = ReflectorOperands(op, a, taus);
  if (!qs) return qs;
  if (auto e = SameAs(op, q, "q", a, "a"); e.failure()) return ffi::Unexpected(e);
  return qs;
}

// ormqr: a (..., m, n), taus (..., k), c (..., m, p) -> x (like c).
inline ffi::ErrorOr<QrShape> CheckOrmqr(const char* op, const ffi::AnyBuffer& a,
                                        const ffi::AnyBuffer& taus, const ffi::AnyBuffer& c,
                                        const ffi::AnyBuffer& x) {
  auto qs = ReflectorOperands(op, a, taus);
  if (!qs) return qs;
  auto cs = RhsOperand(op, c, "c", a, qs->a);
  if (!cs) return ffi::Unexpected(cs.error());
  if (auto e = IntSized(op, *cs, "c"); e.failure()) return ffi::Unexpected(e);
  if (auto e = SameAs(op, x, "x", c, "c"); e.failure()) return ffi::Unexpected(e);
  qs->cols = cs->cols;
  return qs;
}

// qr / qr_r: a (..., m, n) -> q (like a; qr only, pass nullptr for qr_r), r (..., n, n).
inline ffi::ErrorOr<MatrixShape> CheckQr(const char* op, const ffi::AnyBuffer& a,
                                         const ffi::AnyBuffer* q, const ffi::AnyBuffer& r) {
  auto as = TallOperand(op, a, "a");
  if (!as) return as;
  if (q) {
    if (auto e = SameAs(op, *q, "q", a, "a"); e.failure()) return ffi::Unexpected(e);
  }
  if (auto e = BatchedLikeA(op, r, "r", a, {as->cols, as->cols}); e.failure())
    return ffi::Unexpected(e);
  return as;
}

// lstsq: a (..., m, n), b (..., m, k) -> x (..., n, k), rdiag (..., n), resid (..., k).
inline ffi::ErrorOr<QrShape> CheckLstsq(const char* op, const ffi::AnyBuffer& a,
                                        const ffi::AnyBuffer& b, const ffi::AnyBuffer& x,
                                        const ffi::AnyBuffer& rdiag, const ffi::AnyBuffer& resid) {
  auto as = TallOperand(op, a, "a");
  if (!as) return ffi::Unexpected(as.error());
  auto bs = RhsOperand(op, b, "b", a, *as);
  if (!bs) return ffi::Unexpected(bs.error());
  if (auto e = IntSized(op, *bs, "b"); e.failure()) return ffi::Unexpected(e);
  if (as->cols + bs->cols > INT32_MAX)
    return ffi::Unexpected(ShapeError(Operand(op, "b") + " has too many columns"));
  const int64_t n = as->cols, k = bs->cols;
  if (auto e = BatchedLikeA(op, x, "x", a, {n, k}); e.failure()) return ffi::Unexpected(e);
  if (auto e = BatchedLikeA(op, rdiag, "rdiag", a, {n}); e.failure()) return ffi::Unexpected(e);
  if (auto e = BatchedLikeA(op, resid, "resid", a, {k}); e.failure()) return ffi::Unexpected(e);
  return QrShape{*as, 0, k};
}

}  // namespace batchla_ffi
