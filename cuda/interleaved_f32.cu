// Interleaved solvers, float32 (interleaved_api.cuh).
#include "cuda/interleaved_api.cuh"

BATCHLA_INSTANTIATE_IL(float)
