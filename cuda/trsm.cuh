// Internal entry point shared by LaunchTrsm and LaunchPotrs (cuda/trsm.cu, cuda/potrs.cu): a
// triangular solve is a list of one or two *sweeps* over the same matrix A, applied in place to the
// right-hand side block. Implementation: cuda/trsm_kernels.cuh, instantiated in cuda/trsm_f32.cu
// and cuda/trsm_f64.cu.
//
// Storage: ROW-MAJOR (see launch.h). A sweep solves M Y = R where M(i, j) = A[i][j] (i.e. the
// element at i * n + j) when !transposed and M(i, j) = A[j][i] when transposed; `forward` means M
// is lower triangular (rows solved 0..n-1), otherwise upper (rows n-1..0). Only the triangle of A
// that M uses is read; with unit_diag the diagonal is taken as 1 and not used.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace batchla {
namespace trsm_detail {

struct SweepPass {
  bool forward;
  bool transposed;
  bool unit_diag;
};

struct SolvePlan {
  int npasses;  // 1 or 2
  SweepPass pass[2];
};

// X = M_last^{-1} ... M_first^{-1} B for `batch` matrices A (n x n) and B, X (n x k).
template <typename T>
cudaError_t LaunchTriSolve(cudaStream_t stream, const T* a, const T* b, T* x, int64_t batch, int n,
                           int k, SolvePlan plan);

}  // namespace trsm_detail
}  // namespace batchla
