// The autotuner's registry of interleaved-solver variants (bench/autotune_interleaved.py).
// variants.cu is compiled once per (dtype, op) and appends its whole search space here at
// static-initialisation time; main.cu times and checks them.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "cuda/interleaved_variants.h"

namespace iltune {

struct Entry {
  int op;     // batchla::il::Op
  int dtype;  // 0 float32, 1 float64
  batchla::il::Kind kind;
  batchla::il::Order order;
  int nb;  // kTile: tile size
  int n;   // kFull: the one n it handles (0 for kTile)
  int pad;  // kShared compiled for a padded size (0: runtime n); one warp per block; kGroup: its pad
  int alt;  // kGroup: the load form (il::Variant::alt)
  const void* kernel;  // for cudaFuncGetAttributes and the occupancy calculator
  size_t (*shared_bytes)(int n, int threads);  // dynamic shared memory of a launch
  cudaError_t (*launch)(cudaStream_t stream, const void* args, int warps);  // args: il::Args<T>*
};

inline std::vector<Entry>& Registry() {
  static std::vector<Entry> entries;
  return entries;
}

}  // namespace iltune
