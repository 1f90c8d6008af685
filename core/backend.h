#pragma once
// What a backend offers: the same flash forward pass and standard attention, plus a trace of
// the running statistics per tile so the app can animate values the backend itself computed.
// The CPU backend is here; the CUDA backend lives in kernels/ and mirrors it.
#include "core/backward.h"
#include "core/flash.h"
#include "core/low_precision.h"

#include <memory>
#include <string>
#include <vector>

namespace flashviz {

// The values a backend recorded after one (query block, key block) update.
struct TileTrace {
    int queryBlock = 0;
    int keyBlock = 0;
    Range rows;
    Vector mNew, lNew, correction;
    Matrix accNew; // rows x d, unnormalised
};

struct FlashTrace {
    std::vector<TileTrace> tiles; // in the order the backend processed them within a query block
    const TileTrace* find(int queryBlock, int keyBlock) const;
};

// What a backend's low-precision backward computed (widened to double) and which kernels ran.
struct LowPrecisionBackward {
    Gradients grads;
    std::string kernel; // "forward kernel + backward kernel"
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Throws EngineError(Unsupported) for configurations this backend cannot run.
    virtual FlashResult flash(const Problem& problem, const FlashOptions& options) = 0;
    virtual Matrix standard(const Problem& problem) = 0;
    // Problems small enough to animate (the CLI and app keep it to n <= 1024).
    virtual FlashTrace trace(const Problem& problem, const FlashOptions& options) = 0;
    // The arithmetic this backend runs a problem in, which sets the tolerance of its check: the
    // CPU follows spec.precision, a GPU kernel may compute in float whatever was asked.
    virtual Precision arithmetic(const ProblemSpec& spec) const = 0;
    // The backward pass (the forward first, with the options' forward switches), given the
    // upstream gradient dO. A backend without one throws EngineError(Unsupported).
    virtual BackwardResult backward(const Problem& problem, const Matrix& dO,
                                    const FlashOptions& options);
    virtual BackwardTrace backwardTrace(const Problem& problem, const Matrix& dO,
                                        const FlashOptions& options);
    // The forward and backward on the backend's fp16 / bf16 tensor-core kernels, built for speed
    // and with no switches: the problem's Q, K, V and dO already rounded to `type`. A backend
    // without them throws EngineError(Unsupported), as one does for a d they were not built for.
    virtual LowPrecisionBackward lowPrecisionBackward(const Problem& rounded, const Matrix& dO,
                                                      HalfType type);
};

class CpuBackend final : public Backend {
public:
    std::string name() const override { return "CPU"; }
    FlashResult flash(const Problem& problem, const FlashOptions& options) override;
    Matrix standard(const Problem& problem) override;
    FlashTrace trace(const Problem& problem, const FlashOptions& options) override;
    Precision arithmetic(const ProblemSpec& spec) const override { return spec.precision; }
    BackwardResult backward(const Problem& problem, const Matrix& dO,
                            const FlashOptions& options) override;
    BackwardTrace backwardTrace(const Problem& problem, const Matrix& dO,
                                const FlashOptions& options) override;
};

// The tolerance `backend`'s output meets against ordinary attention when it is correct.
double checkTolerance(const Backend& backend, const ProblemSpec& spec);

} // namespace flashviz
