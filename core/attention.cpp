#include "core/attention.h"

#include "core/errors.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flashviz {

template <typename Scalar>
void maskScores(MatrixT<Scalar>& scores, int rowBegin, int colBegin, int queries, int keys,
                bool causal) {
    if (!causal) return;
    const int cols = int(scores.cols());
    for (int r = 0; r < scores.rows(); ++r) {
        const int lastCol = lastVisibleKey(rowBegin + r, queries, keys, true) - colBegin;
        if (lastCol >= cols - 1) continue;
        const int hidden = cols - 1 - std::max(lastCol, -1);
        scores.row(r).tail(hidden).setConstant(-std::numeric_limits<Scalar>::infinity());
    }
}

template <typename Scalar>
void softmaxRows(MatrixT<Scalar>& scores) {
    for (int r = 0; r < scores.rows(); ++r) {
        auto row = scores.row(r);
        const Scalar rowMax = row.maxCoeff();
        if (rowMax == -std::numeric_limits<Scalar>::infinity()) {
            row.setZero(); // no visible key: the output row is 0 by convention
            continue;
        }
        row = (row.array() - rowMax).exp();
        row /= row.sum();
    }
}

template <typename Scalar>
MatrixT<Scalar> referenceAttention(const MatrixT<Scalar>& q, const MatrixT<Scalar>& k,
                                   const MatrixT<Scalar>& v, double scale, bool causal) {
    const int queries = int(q.rows());
    const int keys = int(k.rows());
    requireScoreMatrixMemory(queries, keys, int(sizeof(Scalar)), 1);
    MatrixT<Scalar> p(queries, keys);
    p.noalias() = q * k.transpose();
    p *= Scalar(scale);
    maskScores(p, 0, 0, queries, keys, causal);
    softmaxRows(p);
    MatrixT<Scalar> o(queries, v.cols());
    o.noalias() = p * v;
    return o;
}

template void maskScores<float>(MatrixF&, int, int, int, int, bool);
template void maskScores<double>(Matrix&, int, int, int, int, bool);
template void softmaxRows<float>(MatrixF&);
template void softmaxRows<double>(Matrix&);
template MatrixF referenceAttention<float>(const MatrixF&, const MatrixF&, const MatrixF&, double,
                                           bool);
template Matrix referenceAttention<double>(const Matrix&, const Matrix&, const Matrix&, double,
                                           bool);

Matrix referenceAttention(const Problem& problem) {
    return referenceAttention<double>(problem.q, problem.k, problem.v, problem.scale(),
                                      problem.spec.causal);
}

Matrix localWindowAttention(const Problem& problem, int halfWidth) {
    if (halfWidth < 0)
        throw EngineError(ErrorKind::InvalidArgument, "The window half-width must be 0 or more");
    const auto& spec = problem.spec;
    requireScoreMatrixMemory(spec.queries, spec.keys, int(sizeof(double)), 1);
    Matrix p = (problem.q * problem.k.transpose()) * problem.scale();
    maskScores(p, 0, 0, spec.queries, spec.keys, spec.causal);
    const double minusInf = -std::numeric_limits<double>::infinity();
    for (int r = 0; r < spec.queries; ++r)
        for (int c = 0; c < spec.keys; ++c)
            if (std::abs(r - c) > halfWidth) p(r, c) = minusInf;
    softmaxRows(p);
    return p * problem.v;
}

Vector safeSoftmax(const Vector& scores) {
    Vector e = (scores.array() - scores.maxCoeff()).exp();
    return e / e.sum();
}

Vector naiveSoftmax(const Vector& scores) {
    Vector e = scores.array().exp();
    return e / e.sum();
}

OnlineSoftmaxResult onlineSoftmax(const Vector& scores, int block, bool rescale) {
    if (block <= 0)
        throw EngineError(ErrorKind::InvalidArgument, "The softmax block size must be at least 1");
    constexpr double minusInf = -std::numeric_limits<double>::infinity();
    OnlineSoftmaxResult result;
    double m = minusInf;
    double l = 0;
    const int n = int(scores.size());
    for (int begin = 0; begin < n; begin += block) {
        const int size = std::min(block, n - begin);
        const auto chunk = scores.segment(begin, size);
        const double mNew = std::max(m, chunk.maxCoeff());
        const double correction = (rescale && m > minusInf) ? std::exp(m - mNew) : 1.0;
        const double lNew = correction * l + (chunk.array() - mNew).exp().sum();
        result.blocks.push_back({{begin, begin + size}, m, mNew, l, lNew, correction});
        m = mNew;
        l = lNew;
    }
    // The whole vector again only to compare with the ordinary softmax; attention itself never
    // needs it, because it accumulates O as it goes.
    result.weights = (scores.array() - m).exp() / l;
    return result;
}

} // namespace flashviz
