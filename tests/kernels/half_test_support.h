#pragma once
// Shared by the fp16 / bf16 suites (tst_cuda_tensor_core, tst_cuda_tensor_core_backward): random
// inputs in the low precision, one (batch, head) slice widened to fp64, rounding, problems.
#include "core/errors.h"
#include "core/tiling.h"
#include "kernels/cuda_backend.h"

#include <Eigen/Dense>

#include <QtTest/QtTest>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace flashviz::halftest {

// `count` standard normal values rounded to the problem's type.
inline std::vector<std::uint16_t> randomHalf(std::size_t count, HalfType type, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<std::uint16_t> out(count);
    for (auto& x : out) x = toHalfBits(normal(rng), type);
    return out;
}

// Where row i of (batch b, head h) starts, in a tensor of `rows` rows per head.
inline std::size_t offset(const HalfAttentionProblem& p, int rows, int b, int h, int i) {
    const std::size_t d = std::size_t(p.headDim);
    if (p.layout == HalfLayout::BatchHeadSeqDim) return ((std::size_t(b) * p.heads + h) * rows + i) * d;
    return ((std::size_t(b) * rows + i) * p.heads + h) * d;
}

inline float roundTo(float x, HalfType type) { return fromHalfBits(toHalfBits(x, type), type); }

// One matrix of a (batch, head) slice, widened.
inline Eigen::MatrixXd slice(const HalfAttentionProblem& p, const std::vector<std::uint16_t>& data,
                             int rows, int b, int h) {
    Eigen::MatrixXd m(rows, p.headDim);
    for (int i = 0; i < rows; ++i) {
        const std::size_t base = offset(p, rows, b, h, i);
        for (int c = 0; c < p.headDim; ++c) m(i, c) = fromHalfBits(data[base + std::size_t(c)], p.type);
    }
    return m;
}

inline HalfAttentionProblem problem(HalfType type, int d, int nq, int nk, bool causal, int batch = 1,
                                    int heads = 1, HalfLayout layout = HalfLayout::BatchHeadSeqDim) {
    HalfAttentionProblem p;
    p.type = type;
    p.layout = layout;
    p.batch = batch;
    p.heads = heads;
    p.queries = nq;
    p.keys = nk;
    p.headDim = d;
    p.causal = causal;
    return p;
}

inline const char* typeName(HalfType t) { return t == HalfType::Fp16 ? "fp16" : "bf16"; }

// Keys row i sees: all, or under the bottom-right causal mask up to its diagonal (core's rule).
inline int visibleKeys(const HalfAttentionProblem& p, int i) {
    return lastVisibleKey(i, p.queries, p.keys, p.causal) + 1;
}

// `call` with a problem of each head dimension the kernels were not built for: each is refused
// as Unsupported, in a message naming the ones they take. No GPU needed: the checks come first.
template <class Call>
void verifyHeadDimensionsRefused(Call call) {
    for (int d : {32, 96, 256}) {
        try {
            call(problem(HalfType::Fp16, d, 8, 8, false));
            QFAIL(qPrintable(QStringLiteral("head dimension %1 accepted").arg(d)));
        } catch (const EngineError& e) {
            QCOMPARE(e.kind(), ErrorKind::Unsupported);
            QVERIFY2(QString::fromUtf8(e.what()).contains("64 and 128"), e.what());
        }
    }
}

} // namespace flashviz::halftest
