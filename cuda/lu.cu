// Host entry points of the LU family (launch.h): validate, pick the size class (thresholds in
// cuda/tuning.h), and call the kernels of cuda/lu_small*.cu / cuda/lu_blocked*.cu.
#include "cuda/launch.h"
#include "cuda/lu_dispatch.h"
#include "cuda/tuning.h"

namespace batchla {
namespace {

using detail::LuArgs;
using detail::LuOutput;

// det of a 0 x 0 matrix is 1: sign 1, logabsdet 0 (what jnp.linalg.slogdet gives).
template <typename T>
__global__ void FillEmptySlogdetKernel(T* sign, T* logabsdet, int64_t batch) {
  for (int64_t m = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; m < batch;
       m += int64_t(gridDim.x) * blockDim.x) {
    sign[m] = T(1);
    logabsdet[m] = T(0);
  }
}

template <typename T>
cudaError_t Dispatch(cudaStream_t s, const LuArgs<T>& args, LuOutput out) {
  const int n = args.n;
  if (n < 0 || args.batch < 0 || args.k < 0) return cudaErrorInvalidValue;
  const bool factors = out == LuOutput::kFactor || (out == LuOutput::kSlogdet && args.lu);  // getrf's range
  const int max_n = factors ? GetrfMaxN<T>() : LuFusedMaxN<T>();
  if (n > max_n) return cudaErrorInvalidValue;
  if (args.batch == 0) return cudaGetLastError();
  if (n == 0) {  // empty matrices: info 0; det of the empty matrix is 1 (sign 1, log 0)
    if (args.info) cudaMemsetAsync(args.info, 0, sizeof(int32_t) * args.batch, s);
    if (out == LuOutput::kSlogdet) {
      const int64_t blocks = (args.batch + 255) / 256;
      FillEmptySlogdetKernel<T><<<unsigned(blocks < 65536 ? blocks : 65536), 256, 0, s>>>(
          args.sign, args.logabsdet, args.batch);
    }
    return cudaGetLastError();
  }
  if (n <= tuning::kLuSmallMaxN && !detail::LuTileTakes<T>(out, n, args.k)) return detail::LuSmall<T>(s, args, out);
  return detail::LuBlocked<T>(s, args, out);
}

}  // namespace

template <typename T>
int GetrfMaxN() {
  return detail::LuBlockedMaxN<T>();
}
template <typename T>
int LuFusedMaxN() {
  return detail::LuBlockedFusedMaxN<T>();
}

template <typename T>
bool LuFusedWins(int output, int n) {
  if (output < 1 || output > 3 || n < 0) return false;
  if (n <= tuning::kLuSmallMaxN) return true;
  return detail::LuBlockedFusedWins<T>(static_cast<LuOutput>(output), n);
}

template <typename T>
cudaError_t LaunchGetrf(cudaStream_t stream, const T* a, T* lu, int32_t* pivots, int32_t* perm,
                        int32_t* info, int64_t batch, int n) {
  LuArgs<T> args;
  args.a = a, args.batch = batch, args.n = n;
  args.lu = lu, args.pivots = pivots, args.perm = perm, args.info = info;
  return Dispatch(stream, args, LuOutput::kFactor);
}
template <typename T>
cudaError_t LaunchGesv(cudaStream_t stream, const T* a, const T* b, T* x, int32_t* info,
                       int64_t batch, int n, int k) {
  LuArgs<T> args;
  args.a = a, args.batch = batch, args.n = n;
  args.b = b, args.x = x, args.k = k, args.info = info;
  return Dispatch(stream, args, LuOutput::kSolve);
}
template <typename T>
cudaError_t LaunchInverse(cudaStream_t stream, const T* a, T* inv, int32_t* info, int64_t batch,
                          int n, int32_t* scratch) {
  LuArgs<T> args;
  args.a = a, args.batch = batch, args.n = n;
  args.inv = inv, args.info = info, args.scratch = scratch;
  return Dispatch(stream, args, LuOutput::kInverse);
}
template <typename T>
int64_t SlogdetScratchElems(int n) {
  return n > tuning::kLuSmallMaxN && detail::LuSlogdetOnLeft<T>(n) ? int64_t(n) * n : 0;
}
template <typename T>
cudaError_t LaunchSlogdet(cudaStream_t stream, const T* a, T* sign, T* logabsdet, int64_t batch,
                          int n, T* scratch) {
  LuArgs<T> args;
  args.a = a, args.batch = batch, args.n = n;
  args.sign = sign, args.logabsdet = logabsdet;
  if (SlogdetScratchElems<T>(n) > 0) {
    if (!scratch) return cudaErrorInvalidValue;
    args.lu = scratch;
  }
  return Dispatch(stream, args, LuOutput::kSlogdet);
}

#define BATCHLA_INSTANTIATE_LU(T)                                                                  \
  template int GetrfMaxN<T>();                                                                     \
  template int LuFusedMaxN<T>();                                                                   \
  template bool LuFusedWins<T>(int, int);                                                          \
  template cudaError_t LaunchGetrf<T>(cudaStream_t, const T*, T*, int32_t*, int32_t*, int32_t*,    \
                                      int64_t, int);                                               \
  template cudaError_t LaunchGesv<T>(cudaStream_t, const T*, const T*, T*, int32_t*, int64_t, int, \
                                     int);                                                         \
  template cudaError_t LaunchInverse<T>(cudaStream_t, const T*, T*, int32_t*, int64_t, int,        \
                                        int32_t*);                                                 \
  template int64_t SlogdetScratchElems<T>(int);                                                    \
  template cudaError_t LaunchSlogdet<T>(cudaStream_t, const T*, T*, T*, int64_t, int, T*);
BATCHLA_INSTANTIATE_LU(float)
BATCHLA_INSTANTIATE_LU(double)
#undef BATCHLA_INSTANTIATE_LU

}  // namespace batchla
