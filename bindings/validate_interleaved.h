// Operand validation of the interleaved-layout targets (bindings/TARGETS.md, "Interleaved
// layout"), shared by the CPU and CUDA handlers. A buffer (..., rows, cols, c) is `chunks`
// (the product of the leading dims) chunks of c matrices rows x cols.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "bindings/validate.h"

namespace batchla_ffi {

struct InterleavedShape {
  int64_t chunks = 0;  // product of the leading dims (0 is legal)
  int64_t rows = 0, cols = 0;
  int64_t c = 0;       // matrices per chunk
};

inline ffi::ErrorOr<InterleavedShape> InterleavedShapeOf(const char* op, const ffi::AnyBuffer& buf,
                                                         const char* name) {
  auto d = buf.dimensions();
  if (d.size() < 3) {
    return ffi::Unexpected(ShapeError(Operand(op, name) + " must have rank >= 3 (..., rows, cols, c), got " +
                                      DimsString(d)));
  }
  InterleavedShape s;
  s.chunks = 1;
  for (size_t i = 0; i + 3 < d.size(); ++i) s.chunks *= d[i];
  s.rows = d[d.size() - 3];
  s.cols = d[d.size() - 2];
  s.c = d[d.size() - 1];
  if (s.rows > INT32_MAX || s.cols > INT32_MAX)
    return ffi::Unexpected(ShapeError(Operand(op, name) + " has a dimension over 2^31 - 1"));
  return s;
}

// info: int32 (..., c) with a's leading dims.
inline ffi::Error InterleavedInfo(const char* op, const ffi::AnyBuffer& info, const ffi::AnyBuffer& a) {
  auto id = info.dimensions(), ad = a.dimensions();
  const bool ok = id.size() + 2 == ad.size() && std::equal(ad.begin(), ad.end() - 3, id.begin()) &&
                  id[id.size() - 1] == ad[ad.size() - 1];
  if (!ok) {
    return ShapeError(Operand(op, "info") + " must have shape (..., c) of a " + DimsString(ad) +
                      ", got " + DimsString(id));
  }
  if (info.element_type() != ffi::DataType::S32) return ShapeError(Operand(op, "info") + " must be int32");
  return ffi::Error::Success();
}

// A factorization: a (..., n, n, c) -> out (like a), info (..., c).
inline ffi::ErrorOr<InterleavedShape> CheckInterleavedFactor(const char* op, const ffi::AnyBuffer& a,
                                                             const ffi::AnyBuffer& out,
                                                             const char* out_name,
                                                             const ffi::AnyBuffer& info) {
  auto as = InterleavedShapeOf(op, a, "a");
  if (!as) return as;
  if (as->rows != as->cols)
    return ffi::Unexpected(ShapeError(Operand(op, "a") + " must be square, got " + DimsString(a.dimensions())));
  if (auto e = SameAs(op, out, out_name, a, "a"); e.failure()) return ffi::Unexpected(e);
  if (auto e = InterleavedInfo(op, info, a); e.failure()) return ffi::Unexpected(e);
  return as;
}

// A solve: a (..., n, n, c) named a_name, b (..., n, k, c) with a's chunks, c and dtype ->
// x (like b) [, info (..., c)]. Returns b's shape.
inline ffi::ErrorOr<InterleavedShape> CheckInterleavedSolve(const char* op, const ffi::AnyBuffer& a,
                                                            const char* a_name, const ffi::AnyBuffer& b,
                                                            const ffi::AnyBuffer& x,
                                                            const ffi::AnyBuffer* info = nullptr) {
  auto as = InterleavedShapeOf(op, a, a_name);
  if (!as) return as;
  if (as->rows != as->cols) {
    return ffi::Unexpected(ShapeError(Operand(op, a_name) + " must be square, got " +
                                      DimsString(a.dimensions())));
  }
  auto bs = InterleavedShapeOf(op, b, "b");
  if (!bs) return bs;
  if (bs->rows != as->rows || bs->chunks != as->chunks || bs->c != as->c) {
    return ffi::Unexpected(ShapeError(Operand(op, "b") + " " + DimsString(b.dimensions()) +
                                      " does not match " + a_name + " " + DimsString(a.dimensions()) +
                                      " (rows, chunk count and c must agree)"));
  }
  if (b.element_type() != a.element_type())
    return ffi::Unexpected(ShapeError(Operand(op, "b") + " must have the dtype of " + a_name));
  if (auto e = SameAs(op, x, "x", b, "b"); e.failure()) return ffi::Unexpected(e);
  if (info) {
    if (auto e = InterleavedInfo(op, *info, a); e.failure()) return ffi::Unexpected(e);
  }
  return bs;
}

// from_interleaved: x (..., chunks, rows, cols, c), c a multiple of 32 (as jax_batchla.interleaved
// makes it; the CUDA kernel reads whole warps of lanes) -> out (..., count, rows, cols) with x's
// leading dims and dtype, count <= chunks * c.
struct FromInterleavedShape {
  int64_t lead = 0;  // product of the leading dims
  int64_t chunks = 0, elems = 0, c = 0, count = 0;
};

inline ffi::ErrorOr<FromInterleavedShape> CheckFromInterleaved(const char* op, const ffi::AnyBuffer& x,
                                                               const ffi::AnyBuffer& out) {
  auto xd = x.dimensions(), od = out.dimensions();
  if (xd.size() < 4) {
    return ffi::Unexpected(ShapeError(Operand(op, "x") + " must have rank >= 4 (..., chunks, rows, cols, c), got " +
                                      DimsString(xd)));
  }
  const size_t r = xd.size();
  FromInterleavedShape s;
  s.lead = 1;
  for (size_t i = 0; i + 4 < r; ++i) s.lead *= xd[i];
  s.chunks = xd[r - 4], s.elems = xd[r - 3] * xd[r - 2], s.c = xd[r - 1];
  const bool ok = od.size() + 1 == r && std::equal(xd.begin(), xd.end() - 4, od.begin()) &&
                  od[r - 3] == xd[r - 3] && od[r - 2] == xd[r - 2] && od[r - 4] <= s.chunks * s.c;
  if (!ok) {
    return ffi::Unexpected(ShapeError(Operand(op, "out") + " must have shape (..., count, rows, cols) of x " +
                                      DimsString(xd) + " with count <= chunks * c, got " + DimsString(od)));
  }
  if (out.element_type() != x.element_type())
    return ffi::Unexpected(ShapeError(Operand(op, "out") + " must have the dtype of x"));
  if (s.c % 32 != 0)
    return ffi::Unexpected(ShapeError(Operand(op, "x") + " must have a chunk c (last dim) that is a multiple of 32, got " +
                                      DimsString(xd)));
  if (s.elems > INT32_MAX)
    return ffi::Unexpected(ShapeError(Operand(op, "x") + " has matrices of over 2^31 - 1 elements"));
  s.count = od[r - 4];
  return s;
}

}  // namespace batchla_ffi
