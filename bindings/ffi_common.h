// Helpers shared by the CPU and CUDA FFI handlers: shape decoding and the one dtype dispatch.
// Shapes arrive row-major as (..., rows, cols); the leading dims collapse into one batch count.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "xla/ffi/api/ffi.h"

namespace batchla_ffi {

namespace ffi = xla::ffi;

struct MatrixShape {
  int64_t batch = 0;  // product of the leading dims (0 is legal)
  int64_t rows = 0;
  int64_t cols = 0;
};

// Decodes (..., rows, cols). `what` names the operand in error messages.
inline ffi::ErrorOr<MatrixShape> MatrixShapeOf(const ffi::AnyBuffer& buf, const char* what) {
  auto dims = buf.dimensions();
  if (dims.size() < 2) {
    return ffi::Unexpected(ffi::Error::InvalidArgument(
        std::string("jax_batchla: ") + what + " must have rank >= 2, got rank " +
        std::to_string(dims.size())));
  }
  MatrixShape s;
  s.batch = 1;
  for (size_t d = 0; d + 2 < dims.size(); ++d) s.batch *= dims[d];
  s.rows = dims[dims.size() - 2];
  s.cols = dims[dims.size() - 1];
  return s;
}

inline ffi::Error ShapeError(const std::string& msg) {
  return ffi::Error::InvalidArgument("jax_batchla: " + msg);
}

// The one dtype switch: calls fn(T{}) with T = float or double; any other dtype is an error.
template <typename Fn>
ffi::Error DispatchFloat(ffi::DataType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case ffi::DataType::F32:
      return std::forward<Fn>(fn)(float{});
    case ffi::DataType::F64:
      return std::forward<Fn>(fn)(double{});
    default:
      return ffi::Error::InvalidArgument(std::string("jax_batchla: ") + op +
                                         " supports float32 and float64 only");
  }
}

template <typename T>
T* DataAs(ffi::AnyBuffer buf) {
  return static_cast<T*>(buf.untyped_data());
}
template <typename T>
T* DataAs(ffi::Result<ffi::AnyBuffer> buf) {
  return static_cast<T*>(buf->untyped_data());
}

}  // namespace batchla_ffi
