#pragma once
// What tc_api.cpp shares with the rest of kernels/cuda: a public HalfAttentionProblem as the
// launch layer's TcParams (pointers left null). Internal to kernels/cuda.
#include "kernels/cuda/params/tc_params.h"
#include "kernels/cuda_backend.h"

namespace flashviz::cuda {

TcParams tcParamsFor(const HalfAttentionProblem& problem);

} // namespace flashviz::cuda
