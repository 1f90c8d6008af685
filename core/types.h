#pragma once
// Matrix aliases shared by the whole engine. Row-major so that a row block is contiguous,
// the same layout the CUDA kernels read.
#include "core/tiling.h" // Range

#include <Eigen/Core>

namespace flashviz {

template <typename Scalar>
using MatrixT = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Scalar>
using VectorT = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

using Matrix = MatrixT<double>;
using Vector = VectorT<double>;
using MatrixF = MatrixT<float>;
using VectorF = VectorT<float>;

} // namespace flashviz
