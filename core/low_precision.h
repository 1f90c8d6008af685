#pragma once
// fp16 and bf16 on the host, and how a low-precision attention kernel is judged: as the
// flash-attention test suite judges one, against attention computed exactly (fp64) on the same
// rounded inputs, allowed at most twice the error of the plain low-precision computation
// (standard attention with every product's result and P rounded to the format). The GPU's fp16 /
// bf16 tensor-core kernels are checked this way by their tests, the CLI and the window alike.
#include "core/backward.h"
#include "core/problem.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashviz {

enum class HalfType { Fp16, Bf16 };
// The format a GPU backend's fast kernels run in beside the window's and the CLI's backward:
// bf16, the training format the benchmarks time.
inline constexpr HalfType kDefaultLowPrecision = HalfType::Bf16;
const char* toString(HalfType type); // "fp16", "bf16"
std::optional<HalfType> parseHalfType(std::string_view name);

// The tensor-core gradient check a backward on a GPU backend runs beside it (RunRequest::
// lowPrecision): its format, or std::nullopt for none. The CLI's `run --tc-check`, the window's
// --tc-check, its control and its saved settings all name it the same way: "fp16", "bf16" or
// "off" (kDefaultLowPrecision when not given).
using LowPrecisionCheck = std::optional<HalfType>;
inline constexpr const char* kLowPrecisionCheckOption = "tc-check"; // without the leading "--"
inline constexpr const char* kLowPrecisionCheckNames = "fp16, bf16 or off";
// Every choice, in the order the names above list them (the window's control offers these).
inline constexpr LowPrecisionCheck kLowPrecisionChecks[] = {HalfType::Fp16, HalfType::Bf16, std::nullopt};
const char* toString(const LowPrecisionCheck& check); // "fp16", "bf16" or "off"
// One of the names above; std::nullopt for anything else.
std::optional<LowPrecisionCheck> parseLowPrecisionCheck(std::string_view name);
// What every command line says when parseLowPrecisionCheck() does not know the name:
// "--tc-check 'fp32': use fp16, bf16 or off".
std::string unknownLowPrecisionCheckMessage(std::string_view name);

// Round to nearest even; inf and NaN kept (NaN stays a quiet NaN).
std::uint16_t toHalfBits(float value, HalfType type);
float fromHalfBits(std::uint16_t bits, HalfType type);
// The nearest value of the format (through float, as a kernel's inputs are converted).
double roundToHalf(double value, HalfType type);
Matrix roundedToHalf(const Matrix& m, HalfType type);

// Standard attention's output, log-sum-exp and gradients: exactly (fp64, rounding nullopt) or
// plainly in a low precision (each product's result and P rounded to `rounding`). Q is
// n_q x d, K and V n_k x d, dO n_q x d; causal is bottom-right aligned. A row that sees no key
// has O = 0, dQ = 0 and log-sum-exp -inf.
struct StandardGradients {
    Matrix o;
    Vector logSumExp;
    Gradients grads;
};
StandardGradients standardAttentionGradients(const Matrix& q, const Matrix& k, const Matrix& v,
                                             const Matrix& dO, double scale, bool causal,
                                             std::optional<HalfType> rounding);

// One output's errors: the kernel's and the plain computation's largest |difference| from the
// exact values. A kernel passes when it is finite and within kLowPrecisionErrorFactor times the
// plain error or within kLowPrecisionExactFloor, an absolute 1e-6 for where the plain
// computation is exact (one visible key: P = 1 and dS = 0 exactly, which a kernel reaches only
// to its own rounding); the floor also lets through a kernel on gradients far smaller than 1.
// Where the plain or the exact computation itself has inf or NaN (plain fp16 overflows past
// 65504), there is no yardstick: not passed.
inline constexpr double kLowPrecisionErrorFactor = 2.0;
inline constexpr double kLowPrecisionExactFloor = 1e-6;
struct LowPrecisionError {
    double kernel = 0, plain = 0;   // over the entries where all three are finite
    int nonFinite = 0;              // the kernel's inf and NaN values
    int referenceNonFinite = 0;     // entries where the plain or the exact value is not finite
    double ratio() const;           // kernel / plain (inf where plain is 0 and kernel is not)
    bool passed() const;
    // Two slices' errors as one output's: the larger of each error, the counts summed.
    void merge(const LowPrecisionError& other);
};
LowPrecisionError compareLowPrecision(const Matrix& kernel, const Matrix& plain,
                                      const Matrix& exact);
// One output's errors in words, worded once for the summary below and the window's tooltip:
// "dQ 2.12e-03 (plain 1.93e-03, 1.10×)"; "dK has 3 inf/NaN values" (the kernel's); or, first as
// in verdict() because then nothing is judged, "dQ: plain fp16 has 2 inf/NaN values".
std::string describe(const LowPrecisionError& error, std::string_view name, HalfType type);

// dQ, dK and dV of a low-precision kernel, judged.
struct LowPrecisionGradientCheck {
    HalfType type = HalfType::Bf16;
    std::string kernel; // what ran, e.g. "tc_d64_br128_bc64_w4_qreg + tc_bwd_d64_bc128_br128_w8"
    LowPrecisionError dq, dk, dv;
    bool passed() const { return dq.passed() && dk.passed() && dv.passed(); }
    // "PASS  dQ 2.12e-03 (plain 1.93e-03, 1.10×), dK ..., dV ...": describe() of each
    std::string summary() const;
    // The verdict in a few words, as the window's check panel and flashviz-cli print it:
    // "PASS, error ≤ 1.10× plain bf16's", "FAIL, dK's error 3.10× plain bf16's",
    // "FAIL, inf/NaN in dK", "FAIL, plain fp16 overflowed in dQ: no yardstick".
    std::string verdict() const;
};

// The gradients a kernel computed on rounded inputs (the problem's Q, K, V and dO already in
// `type`), judged against the exact and the plain low-precision gradients of those inputs.
LowPrecisionGradientCheck checkLowPrecisionGradients(const Problem& rounded, const Matrix& dO,
                                                     const Gradients& kernel, HalfType type,
                                                     std::string kernelName);

} // namespace flashviz
