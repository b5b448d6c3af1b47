// Operand validation shared by the CPU and CUDA handlers: every check names the op and operand.
// The Python layer checks user input at trace time first; these guard the raw FFI targets.
#pragma once

#include <algorithm>
#include <cstdint>
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
                                      std::to_string(as.rows) + " rows (the order of a), got " +
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
  if (auto e = VectorOperand(op, perm, "perm", a, as->rows); e.failure()) return ffi::Unexpected(e);
  return as;
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

}  // namespace batchla_ffi
