#include "core/low_precision.h"

#include "core/attention.h"
#include "core/errors.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace flashviz {

const char* toString(HalfType type) { return type == HalfType::Fp16 ? "fp16" : "bf16"; }

std::optional<HalfType> parseHalfType(std::string_view name) {
    if (name == "fp16") return HalfType::Fp16;
    if (name == "bf16") return HalfType::Bf16;
    return std::nullopt;
}

const char* toString(const LowPrecisionCheck& check) { return check ? toString(*check) : "off"; }

std::optional<LowPrecisionCheck> parseLowPrecisionCheck(std::string_view name) {
    if (name == "off") return std::optional<LowPrecisionCheck>(std::in_place); // no check
    if (const auto type = parseHalfType(name)) return std::optional<LowPrecisionCheck>(*type);
    return std::nullopt;
}

std::string unknownLowPrecisionCheckMessage(std::string_view name) {
    return std::string("--") + kLowPrecisionCheckOption + " '" + std::string(name) +
           "': use " + kLowPrecisionCheckNames;
}

std::uint16_t toHalfBits(float value, HalfType type) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    if (type == HalfType::Bf16) {
        if (std::isnan(value)) return std::uint16_t((x >> 16) | 0x40);
        return std::uint16_t((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
    }
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const int exponent = int((x >> 23) & 0xFFu);
    std::uint32_t mantissa = x & 0x7FFFFFu;
    if (exponent == 0xFF) return std::uint16_t(sign | 0x7C00u | (mantissa ? 0x200u : 0u));
    const int e = exponent - 127 + 15;
    if (e >= 31) return std::uint16_t(sign | 0x7C00u);
    if (e <= 0) { // subnormal half (or zero)
        if (e < -10) return std::uint16_t(sign);
        mantissa |= 0x800000u;
        const int shift = 14 - e;
        std::uint32_t h = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1u))) ++h;
        return std::uint16_t(sign | h);
    }
    std::uint32_t h = sign | (std::uint32_t(e) << 10) | (mantissa >> 13);
    const std::uint32_t rest = mantissa & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; // a carry rounds up to inf
    return std::uint16_t(h);
}

float fromHalfBits(std::uint16_t bits, HalfType type) {
    if (type == HalfType::Bf16) return std::bit_cast<float>(std::uint32_t(bits) << 16);
    const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
    const int exponent = (bits >> 10) & 0x1F;
    const std::uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    if (exponent == 0) {
        const float magnitude = std::ldexp(float(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | (std::uint32_t(exponent - 15 + 127) << 23) | (mantissa << 13));
}

double roundToHalf(double value, HalfType type) {
    return double(fromHalfBits(toHalfBits(float(value), type), type));
}

Matrix roundedToHalf(const Matrix& m, HalfType type) {
    return m.unaryExpr([type](double x) { return roundToHalf(x, type); });
}

StandardGradients standardAttentionGradients(const Matrix& q, const Matrix& k, const Matrix& v,
                                             const Matrix& dO, double scale, bool causal,
                                             std::optional<HalfType> rounding) {
    const auto rounded = [&](Matrix m) {
        return rounding ? roundedToHalf(m, *rounding) : m;
    };
    const int queries = int(q.rows()), keys = int(k.rows());
    // S, P, dP, dS and the rounding's copies in flight.
    requireScoreMatrixMemory(queries, keys, int(sizeof(double)), 6);
    // S unscaled, as a kernel's QK^T product; the scale goes into the exponent.
    const Matrix s = rounded(q * k.transpose());
    Matrix p = Matrix::Zero(queries, keys);
    StandardGradients out;
    out.logSumExp = Vector::Constant(queries, -std::numeric_limits<double>::infinity());
    for (int i = 0; i < queries; ++i) {
        const int visible = lastVisibleKey(i, queries, keys, causal) + 1;
        if (visible == 0) continue;
        const double mx = s.row(i).head(visible).maxCoeff();
        double sum = 0;
        for (int j = 0; j < visible; ++j) sum += std::exp((s(i, j) - mx) * scale);
        for (int j = 0; j < visible; ++j) p(i, j) = std::exp((s(i, j) - mx) * scale) / sum;
        out.logSumExp(i) = mx * scale + std::log(sum);
    }
    p = rounded(p);
    out.o = rounded(p * v);
    out.grads.dv = rounded(p.transpose() * dO);
    const Matrix dp = rounded(dO * v.transpose());
    const Vector delta = dp.cwiseProduct(p).rowwise().sum();
    const Matrix ds = rounded(p.cwiseProduct((dp.colwise() - delta).matrix()));
    out.grads.dq = rounded(scale * (ds * k));
    out.grads.dk = rounded(scale * (ds.transpose() * q));
    return out;
}

double LowPrecisionError::ratio() const {
    if (plain > 0) return kernel / plain;
    return kernel > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

bool LowPrecisionError::passed() const {
    return nonFinite == 0 && referenceNonFinite == 0 &&
           kernel <= std::max(kLowPrecisionErrorFactor * plain, kLowPrecisionExactFloor);
}

void LowPrecisionError::merge(const LowPrecisionError& other) {
    kernel = std::max(kernel, other.kernel);
    plain = std::max(plain, other.plain);
    nonFinite += other.nonFinite;
    referenceNonFinite += other.referenceNonFinite;
}

LowPrecisionError compareLowPrecision(const Matrix& kernel, const Matrix& plain,
                                      const Matrix& exact) {
    if (kernel.rows() != exact.rows() || kernel.cols() != exact.cols() ||
        plain.rows() != exact.rows() || plain.cols() != exact.cols())
        throw EngineError(ErrorKind::InvalidArgument,
                          "A low-precision result and its reference differ in shape.");
    LowPrecisionError e;
    for (Eigen::Index i = 0; i < exact.size(); ++i) {
        const double got = kernel.data()[i], want = exact.data()[i], rounded = plain.data()[i];
        if (!std::isfinite(want) || !std::isfinite(rounded)) {
            ++e.referenceNonFinite;
            continue;
        }
        if (!std::isfinite(got)) {
            ++e.nonFinite;
            continue;
        }
        e.kernel = std::max(e.kernel, std::fabs(got - want));
        e.plain = std::max(e.plain, std::fabs(rounded - want));
    }
    return e;
}

std::string describe(const LowPrecisionError& error, std::string_view name, HalfType type) {
    const std::string output(name);
    if (error.referenceNonFinite > 0)
        return output + ": plain " + toString(type) + " has " +
               std::to_string(error.referenceNonFinite) + " inf/NaN values";
    if (error.nonFinite > 0)
        return output + " has " + std::to_string(error.nonFinite) + " inf/NaN values";
    char text[80];
    if (error.plain == 0.0) // a ratio to an exact plain computation would be infinite
        std::snprintf(text, sizeof text, " %.2e (plain exact)", error.kernel);
    else
        std::snprintf(text, sizeof text, " %.2e (plain %.2e, %.2f×)", error.kernel, error.plain,
                      error.ratio());
    return output + text;
}

std::string LowPrecisionGradientCheck::summary() const {
    return std::string(passed() ? "PASS  " : "FAIL  ") + describe(dq, "dQ", type) + ", " +
           describe(dk, "dK", type) + ", " + describe(dv, "dV", type);
}

std::string LowPrecisionGradientCheck::verdict() const {
    const std::pair<const char*, const LowPrecisionError*> grads[] = {{"dQ", &dq}, {"dK", &dk}, {"dV", &dv}};
    const std::string plainName = std::string("plain ") + toString(type) + "'s";
    for (const auto& [name, e] : grads)
        if (e->referenceNonFinite > 0)
            return std::string("FAIL, plain ") + toString(type) + " overflowed in " + name + ": no yardstick";
    for (const auto& [name, e] : grads)
        if (e->nonFinite > 0) return std::string("FAIL, inf/NaN in ") + name;
    char text[120];
    for (const auto& [name, e] : grads)
        if (!e->passed()) {
            if (e->plain > 0)
                std::snprintf(text, sizeof text, "FAIL, %s's error %.2f× %s", name, e->ratio(),
                              plainName.c_str());
            else
                std::snprintf(text, sizeof text, "FAIL, %s's error %.1e where plain %s is exact",
                              name, e->kernel, toString(type));
            return text;
        }
    // The worst ratio where the plain error is not 0 (where it is, the floor judged).
    double worst = -1;
    for (const auto& [name, e] : grads)
        if (e->plain > 0) worst = std::max(worst, e->ratio());
    if (worst < 0) return std::string("PASS, within 1e-06 where plain ") + toString(type) + " is exact";
    std::snprintf(text, sizeof text, "PASS, error ≤ %.2f× %s", worst, plainName.c_str());
    return text;
}

LowPrecisionGradientCheck checkLowPrecisionGradients(const Problem& rounded, const Matrix& dO,
                                                     const Gradients& kernel, HalfType type,
                                                     std::string kernelName) {
    const double scale = rounded.scale();
    const bool causal = rounded.spec.causal;
    const Gradients exact = referenceGradients(rounded, dO);
    const StandardGradients plain =
        standardAttentionGradients(rounded.q, rounded.k, rounded.v, dO, scale, causal, type);
    LowPrecisionGradientCheck check;
    check.type = type;
    check.kernel = std::move(kernelName);
    check.dq = compareLowPrecision(kernel.dq, plain.grads.dq, exact.dq);
    check.dk = compareLowPrecision(kernel.dk, plain.grads.dk, exact.dk);
    check.dv = compareLowPrecision(kernel.dv, plain.grads.dv, exact.dv);
    return check;
}

} // namespace flashviz
