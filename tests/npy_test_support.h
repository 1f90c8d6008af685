#pragma once
// What the suites that write .npy files share: arrays of known values for xtensor's dump_npy (an
// independent writer) and the matrix FlashViz should read back from them.
#include "core/problem.h"
#include "core/types.h"

#include <xtensor/xarray.hpp>
#include <xtensor/xnpy.hpp>

#include <cstdint>
#include <vector>

namespace flashviz::test {

// Values of N(0, 1) from `seed` (core's generator: the same on every machine), as float32 or
// float64 arrays of `shape`.
template <class T>
xt::xarray<T> normalArray(const std::vector<std::size_t>& shape, std::uint64_t seed) {
    xt::xarray<T> a = xt::xarray<T>::from_shape(shape);
    NormalGenerator rng(seed);
    for (T& value : a)
        value = T(rng.next());
    return a;
}

// Head `head` of an array of rank 2 (which has only head 0) or 3, as a Matrix.
template <class T> Matrix headOf(const xt::xarray<T>& a, std::size_t head = 0) {
    const std::size_t rank = a.dimension();
    Matrix m(Eigen::Index(a.shape()[rank - 2]), Eigen::Index(a.shape()[rank - 1]));
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            m(r, c) = rank == 3 ? double(a(head, std::size_t(r), std::size_t(c)))
                                : double(a(std::size_t(r), std::size_t(c)));
    return m;
}

} // namespace flashviz::test
