// fp16 / bf16 on the host and the judgement of a low-precision kernel (core/low_precision.h),
// and the backward's run beside a backend's fast kernels (core/run.h, RunRequest::lowPrecision):
// judged PASS within twice the plain error and FAIL past it, skipped with a note when a switch
// is on or the backend has no such kernels, not tried on the CPU, and a failure there never
// losing the run it sits beside.
#include "core/attention.h"
#include "core/backward.h"
#include "core/errors.h"
#include "core/low_precision.h"
#include "core/run.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace flashviz;
using namespace flashviz::test;

namespace {

// The CPU's arithmetic under another name: not the CPU, so the run asks it for its fast kernels,
// and it has none (Backend's default). Each format it was asked for is recorded.
class CpuUnderAnotherName : public Backend {
  public:
    explicit CpuUnderAnotherName(std::string name) : m_name(std::move(name)) {}
    std::string name() const override { return m_name; }
    FlashResult flash(const Problem& p, const FlashOptions& o) override { return m_cpu.flash(p, o); }
    Matrix standard(const Problem& p) override { return m_cpu.standard(p); }
    FlashTrace trace(const Problem& p, const FlashOptions& o) override { return m_cpu.trace(p, o); }
    Precision arithmetic(const ProblemSpec& spec) const override { return spec.precision; }
    BackwardResult backward(const Problem& p, const Matrix& dO, const FlashOptions& o) override {
        return m_cpu.backward(p, dO, o);
    }
    LowPrecisionBackward lowPrecisionBackward(const Problem& rounded, const Matrix& dO,
                                              HalfType type) override {
        typesAsked.push_back(toString(type));
        return Backend::lowPrecisionBackward(rounded, dO, type);
    }
    // "fp16" / "bf16", one for each call of lowPrecisionBackward, in order.
    std::vector<std::string> typesAsked;

  private:
    std::string m_name;
    CpuBackend m_cpu;
};

// A GPU backend stand-in whose "tensor-core kernels" are the plain low-precision gradients with
// `error` added to every entry of dK (NaN: dK poisoned), or a refusal.
class FakeGpu final : public CpuUnderAnotherName {
  public:
    FakeGpu() : CpuUnderAnotherName("FakeGpu") {}
    LowPrecisionBackward lowPrecisionBackward(const Problem& rounded, const Matrix& dO,
                                              HalfType type) override {
        ++lowPrecisionCalls;
        typesAsked.push_back(toString(type));
        if (refusal) throw EngineError(*refusal, "the fake kernels refuse this problem");
        seenInputs = rounded.q == roundedToHalf(rounded.q, type) &&
                     rounded.k == roundedToHalf(rounded.k, type) &&
                     rounded.v == roundedToHalf(rounded.v, type) && dO == roundedToHalf(dO, type);
        LowPrecisionBackward out{standardAttentionGradients(rounded.q, rounded.k, rounded.v, dO,
                                                            rounded.scale(), rounded.spec.causal,
                                                            type)
                                     .grads,
                                 "fake_fwd + fake_bwd"};
        out.grads.dk.array() += error;
        return out;
    }
    double error = 0;
    std::optional<ErrorKind> refusal;
    int lowPrecisionCalls = 0;
    bool seenInputs = false; // the last call's inputs were all in the format
};

// Tiles of 8 x 8, small enough for every problem here.
FlashOptions smallTiles() { return makeOptions(8, 8); }

RunRequest backwardRequest(const FlashOptions& options = smallTiles()) {
    RunRequest r;
    r.algorithm = Algorithm::Backward;
    r.options = options;
    return r;
}

Problem problemOf(int nq, int nk, int d, bool causal) {
    ProblemSpec spec = makeSpec(nq, nk, d, causal);
    spec.seed = 7;
    return makeProblem(spec);
}

} // namespace

class TstLowPrecision : public QObject {
    Q_OBJECT

  private slots:
    void roundsToNearestEven() {
        // bf16 keeps 8 bits of significand: 1 + 2^-8 is halfway and goes to even (1).
        QCOMPARE(roundToHalf(1.0 + 0x1p-8, HalfType::Bf16), 1.0);
        QCOMPARE(roundToHalf(1.0 + 0x1p-8 + 0x1p-12, HalfType::Bf16), 1.0 + 0x1p-7);
        // fp16 keeps 11: 1 + 2^-11 is halfway; 1 + 3 * 2^-11 goes up to 1 + 2^-9.
        QCOMPARE(roundToHalf(1.0 + 0x1p-11, HalfType::Fp16), 1.0);
        QCOMPARE(roundToHalf(1.0 + 3 * 0x1p-11, HalfType::Fp16), 1.0 + 0x1p-9);
        QCOMPARE(roundToHalf(70000.0, HalfType::Fp16), std::numeric_limits<double>::infinity());
        QCOMPARE(roundToHalf(70000.0, HalfType::Bf16), 70144.0);
        QVERIFY(std::isnan(roundToHalf(std::nan(""), HalfType::Fp16)));
        QCOMPARE(roundToHalf(0x1p-24, HalfType::Fp16), 0x1p-24); // the smallest subnormal
        QCOMPARE(roundToHalf(0x1p-26, HalfType::Fp16), 0.0);
        QVERIFY(parseHalfType("bf16") == HalfType::Bf16);
        QVERIFY(parseHalfType("fp16") == HalfType::Fp16);
        QVERIFY(!parseHalfType("fp8"));
        QCOMPARE(QString::fromLatin1(toString(kDefaultLowPrecision)), QStringLiteral("bf16"));
    }

    void exactStandardGradientsAreTheReference() {
        for (const bool causal : {false, true})
            for (const auto& [nq, nk] : {std::pair{9, 9}, std::pair{12, 5}, std::pair{5, 12}}) {
                const Problem p = problemOf(nq, nk, 6, causal);
                const Matrix dO = upstreamGradient(p, BackwardOptions{});
                const StandardGradients exact = standardAttentionGradients(
                    p.q, p.k, p.v, dO, p.scale(), causal, std::nullopt);
                const Gradients reference = referenceGradients(p, dO);
                QVERIFY((exact.grads.dq - reference.dq).cwiseAbs().maxCoeff() < 1e-13);
                QVERIFY((exact.grads.dk - reference.dk).cwiseAbs().maxCoeff() < 1e-13);
                QVERIFY((exact.grads.dv - reference.dv).cwiseAbs().maxCoeff() < 1e-13);
                QVERIFY((exact.o - referenceAttention(p)).cwiseAbs().maxCoeff() < 1e-13);
                // Rows with no key (n_q > n_k under the mask): -inf and zero output.
                for (int i = 0; i < nq; ++i) {
                    const bool seesNone = causal && i + (nk - nq) < 0;
                    QCOMPARE(std::isinf(exact.logSumExp(i)), seesNone);
                    if (seesNone) QCOMPARE(exact.o.row(i).cwiseAbs().maxCoeff(), 0.0);
                }
            }
    }

    void plainComputationIsRoundedAndOff() {
        const Problem p = problemOf(16, 16, 8, false);
        const Matrix dO = roundedToHalf(upstreamGradient(p, BackwardOptions{}), HalfType::Bf16);
        const Matrix q = roundedToHalf(p.q, HalfType::Bf16), k = roundedToHalf(p.k, HalfType::Bf16),
                     v = roundedToHalf(p.v, HalfType::Bf16);
        const StandardGradients plain =
            standardAttentionGradients(q, k, v, dO, p.scale(), false, HalfType::Bf16);
        const StandardGradients exact =
            standardAttentionGradients(q, k, v, dO, p.scale(), false, std::nullopt);
        QCOMPARE(plain.grads.dq, roundedToHalf(plain.grads.dq, HalfType::Bf16));
        const double off = (plain.grads.dq - exact.grads.dq).cwiseAbs().maxCoeff();
        QVERIFY2(off > 1e-4 && off < 0.1, qPrintable(QString::number(off))); // bf16's 2^-8 steps
    }

    void judgesWithinTwiceThePlainError() {
        const Matrix exact = Matrix::Zero(2, 2);
        Matrix plain = exact, kernel = exact;
        plain(0, 0) = 1e-3;
        kernel(1, 1) = -2e-3;
        LowPrecisionError e = compareLowPrecision(kernel, plain, exact);
        QCOMPARE(e.kernel, 2e-3);
        QCOMPARE(e.plain, 1e-3);
        QCOMPARE(e.ratio(), 2.0);
        QVERIFY(e.passed());
        kernel(1, 1) = -2.1e-3;
        QVERIFY(!compareLowPrecision(kernel, plain, exact).passed());
        // Where the plain computation is exact, the kernel's own rounding up to 1e-6 passes.
        kernel = exact;
        kernel(0, 1) = 5e-7;
        e = compareLowPrecision(kernel, exact, exact);
        QVERIFY(e.passed());
        QCOMPARE(e.ratio(), std::numeric_limits<double>::infinity());
        kernel(0, 1) = 2e-6;
        QVERIFY(!compareLowPrecision(kernel, exact, exact).passed());
        // A NaN is counted and fails, never hidden in the maximum.
        kernel = exact;
        kernel(0, 0) = std::nan("");
        e = compareLowPrecision(kernel, plain, exact);
        QCOMPARE(e.nonFinite, 1);
        QVERIFY(!e.passed());
        // Where the plain computation overflowed (fp16 past 65504) there is no yardstick: the
        // entry is counted, not judged, and the output does not pass.
        plain(1, 0) = std::numeric_limits<double>::infinity();
        kernel = exact;
        e = compareLowPrecision(kernel, plain, exact);
        QCOMPARE(e.referenceNonFinite, 1);
        QCOMPARE(e.plain, 1e-3);
        QVERIFY(!e.passed());
        LowPrecisionGradientCheck overflowed;
        overflowed.type = HalfType::Fp16;
        overflowed.dq = e;
        QCOMPARE(QString::fromStdString(overflowed.verdict()),
                 QStringLiteral("FAIL, plain fp16 overflowed in dQ: no yardstick"));
        QVERIFY(QString::fromStdString(overflowed.summary()).contains("dQ: plain fp16 has 1 inf/NaN"));
        plain(1, 0) = 0;
        // Exact everywhere: the floor judges, and the verdict says so.
        LowPrecisionGradientCheck exactEverywhere;
        exactEverywhere.dq = exactEverywhere.dk = exactEverywhere.dv = compareLowPrecision(exact, exact, exact);
        QCOMPARE(QString::fromStdString(exactEverywhere.verdict()),
                 QStringLiteral("PASS, within 1e-06 where plain bf16 is exact"));
        // Slices merge to the worse.
        LowPrecisionError a{1e-3, 1e-3, 0, 2}, b{3e-3, 2e-3, 1, 1};
        a.merge(b);
        QCOMPARE(a.kernel, 3e-3);
        QCOMPARE(a.plain, 2e-3);
        QCOMPARE(a.nonFinite, 1);
        QCOMPARE(a.referenceNonFinite, 3);
        QVERIFY_THROWS_EXCEPTION(EngineError, compareLowPrecision(Matrix::Zero(2, 3), plain, exact));
    }

    // One output's errors in words (the CLI's summary and the window's tooltip): the ordinary
    // case with its plain error and ratio, the kernel's inf/NaN, and the plain or exact value's,
    // which is named first because then nothing is judged.
    void describesAnOutputsErrors() {
        const auto text = [](const LowPrecisionError& e, const char* name, HalfType type) {
            return QString::fromStdString(describe(e, name, type));
        };
        QCOMPARE(text({2.5e-3, 1.25e-3, 0, 0}, "dQ", HalfType::Bf16),
                 QStringLiteral("dQ 2.50e-03 (plain 1.25e-03, 2.00×)"));
        QCOMPARE(text({4e-7, 0, 0, 0}, "dQ", HalfType::Bf16), QStringLiteral("dQ 4.00e-07 (plain exact)"));
        QCOMPARE(text({1e-3, 1e-3, 3, 0}, "dK", HalfType::Bf16),
                 QStringLiteral("dK has 3 inf/NaN values"));
        QCOMPARE(text({1e-3, 1e-3, 0, 2}, "dV", HalfType::Fp16),
                 QStringLiteral("dV: plain fp16 has 2 inf/NaN values"));
        QCOMPARE(text({1e-3, 1e-3, 3, 2}, "dV", HalfType::Bf16),
                 QStringLiteral("dV: plain bf16 has 2 inf/NaN values"));
        // The summary is the verdict's word and the three descriptions.
        LowPrecisionGradientCheck c;
        c.type = HalfType::Fp16;
        c.dq = {2.5e-3, 1.25e-3, 0, 0};
        c.dk = {0, 0, 3, 0};
        c.dv = {0, 0, 0, 1};
        QCOMPARE(QString::fromStdString(c.summary()),
                 QStringLiteral("FAIL  dQ 2.50e-03 (plain 1.25e-03, 2.00×), dK has 3 inf/NaN values, "
                                "dV: plain fp16 has 1 inf/NaN values"));
    }

    void runsBesideTheBackwardOnAGpuBackend() {
        for (const bool causal : {false, true}) {
            const Problem p = problemOf(24, 17, 8, causal);
            FakeGpu gpu;
            const BackwardRunResult run = runBackwardAndCheck(p, gpu, backwardRequest());
            QVERIFY(run.check.passed()); // the run shown is the backend's own backward
            QCOMPARE(gpu.lowPrecisionCalls, 1);
            QVERIFY(gpu.seenInputs);
            QVERIFY(run.lowPrecisionCheck);
            QVERIFY(run.lowPrecisionNote.empty());
            const LowPrecisionGradientCheck& c = *run.lowPrecisionCheck;
            QCOMPARE(c.type, kDefaultLowPrecision);
            QCOMPARE(QString::fromStdString(c.kernel), QStringLiteral("fake_fwd + fake_bwd"));
            QVERIFY(c.passed());
            QVERIFY(c.dq.passed() && c.dk.passed() && c.dv.passed());
            QCOMPARE(c.dq.ratio(), 1.0); // the plain computation judged against itself
            QCOMPARE(c.dk.ratio(), 1.0);
            QCOMPARE(c.dv.ratio(), 1.0);
            QCOMPARE(QString::fromStdString(c.verdict()), QStringLiteral("PASS, error ≤ 1.00× plain bf16's"));
            QVERIFY(c.dq.kernel > 0);
            QVERIFY(QString::fromStdString(c.summary()).startsWith("PASS  dQ "));
        }
    }

    void failsAKernelPastTwiceThePlainError() {
        const Problem p = problemOf(16, 16, 8, false);
        FakeGpu gpu;
        gpu.error = 0.05;
        BackwardRunResult run = runBackwardAndCheck(p, gpu, backwardRequest());
        QVERIFY(run.check.passed());
        QVERIFY(run.lowPrecisionCheck && !run.lowPrecisionCheck->passed());
        QVERIFY(run.lowPrecisionCheck->dq.passed() && !run.lowPrecisionCheck->dk.passed());
        QVERIFY(run.lowPrecisionCheck->dk.ratio() > 2);
        QVERIFY(QString::fromStdString(run.lowPrecisionCheck->summary()).startsWith("FAIL"));
        QVERIFY2(QString::fromStdString(run.lowPrecisionCheck->verdict()).startsWith("FAIL, dK's error "),
                 run.lowPrecisionCheck->verdict().c_str());
        gpu.error = std::nan("");
        run = runBackwardAndCheck(p, gpu, backwardRequest());
        QCOMPARE(run.lowPrecisionCheck->dk.nonFinite, 16 * 8);
        QVERIFY(QString::fromStdString(run.lowPrecisionCheck->summary()).contains("dK has 128 inf/NaN values"));
        QCOMPARE(QString::fromStdString(run.lowPrecisionCheck->verdict()), QStringLiteral("FAIL, inf/NaN in dK"));
    }

    void notRunWithASwitchOnOrOnTheCpu() {
        const Problem p = problemOf(16, 16, 8, false);
        FakeGpu gpu;
        FlashOptions bug = smallTiles();
        bug.backward.subtractRowDot = false;
        BackwardRunResult run = runBackwardAndCheck(p, gpu, backwardRequest(bug));
        QVERIFY(!run.check.passed());
        QCOMPARE(gpu.lowPrecisionCalls, 0);
        QVERIFY(!run.lowPrecisionCheck);
        QVERIFY(QString::fromStdString(run.lowPrecisionNote).contains("no switches"));
        FlashOptions noRescale = smallTiles();
        noRescale.rescale = false;
        run = runBackwardAndCheck(p, gpu, backwardRequest(noRescale));
        QCOMPARE(gpu.lowPrecisionCalls, 0);
        QVERIFY(!run.lowPrecisionNote.empty());
        // Storing P is no bug: the gradients are the same, and the kernels run.
        FlashOptions storeP = smallTiles();
        storeP.backward.storeWeights = true;
        run = runBackwardAndCheck(p, gpu, backwardRequest(storeP));
        QVERIFY(run.lowPrecisionCheck && run.lowPrecisionCheck->passed());
        // Not asked for: nothing.
        RunRequest none = backwardRequest();
        none.lowPrecision.reset();
        run = runBackwardAndCheck(p, gpu, none);
        QVERIFY(!run.lowPrecisionCheck && run.lowPrecisionNote.empty());
        // The CPU has no such kernels and is not asked.
        CpuBackend cpu;
        run = runBackwardAndCheck(p, cpu, backwardRequest());
        QVERIFY(!run.lowPrecisionCheck && run.lowPrecisionNote.empty());
    }

    // The names every face takes for the check (the CLI's and the window's --tc-check, the
    // window's saved settings): the two formats and "off", nothing else.
    void namesTheCheck() {
        QCOMPARE(QString::fromLatin1(kLowPrecisionCheckOption), QStringLiteral("tc-check"));
        // Every choice, named in the order the names' list gives them, read back by its name.
        QStringList names;
        for (const LowPrecisionCheck& check : kLowPrecisionChecks) {
            const auto parsed = parseLowPrecisionCheck(toString(check));
            QVERIFY2(parsed && *parsed == check, toString(check));
            names << QLatin1String(toString(check));
        }
        QCOMPARE(names, (QStringList{"fp16", "bf16", "off"}));
        QCOMPARE(QString::fromLatin1(kLowPrecisionCheckNames), QStringLiteral("fp16, bf16 or off"));
        QCOMPARE(QString::fromLatin1(toString(LowPrecisionCheck())), QStringLiteral("off"));
        QCOMPARE(QString::fromLatin1(toString(LowPrecisionCheck(HalfType::Fp16))),
                 QStringLiteral("fp16"));
        for (const char* bad : {"", "fp32", "FP16", "bf16 ", "none", "on"})
            QVERIFY2(!parseLowPrecisionCheck(bad), bad);
        QCOMPARE(QString::fromStdString(unknownLowPrecisionCheckMessage("fp32")),
                 QStringLiteral("--tc-check 'fp32': use fp16, bf16 or off"));
    }

    // The format asked for is the one the backend's kernels get, the inputs rounded to it, and
    // the one the check reports; nullopt asks the backend for nothing and reports no stage.
    void runsTheFormatAsked() {
        const Problem p = problemOf(16, 12, 8, true);
        for (const HalfType type : {HalfType::Fp16, HalfType::Bf16}) {
            FakeGpu gpu;
            RunRequest request = backwardRequest();
            request.lowPrecision = type;
            const BackwardRunResult run = runBackwardAndCheck(p, gpu, request);
            QCOMPARE(gpu.typesAsked, std::vector<std::string>{toString(type)});
            QVERIFY(gpu.seenInputs); // rounded to that format, not the default's
            QVERIFY(run.lowPrecisionCheck);
            QCOMPARE(QString::fromLatin1(toString(run.lowPrecisionCheck->type)),
                     QString::fromLatin1(toString(type)));
            QVERIFY(run.lowPrecisionCheck->passed());
            // A backend without the kernels is asked for the same format, and says it has none.
            CpuUnderAnotherName plain("Plain");
            const BackwardRunResult refused = runBackwardAndCheck(p, plain, request);
            QCOMPARE(plain.typesAsked, std::vector<std::string>{toString(type)});
            QVERIFY(!refused.lowPrecisionCheck);
        }
        // fp16 rounds the inputs differently from bf16: the two checks are of different inputs.
        FakeGpu fp16, bf16;
        RunRequest request = backwardRequest();
        request.lowPrecision = HalfType::Fp16;
        const BackwardRunResult a = runBackwardAndCheck(p, fp16, request);
        request.lowPrecision = HalfType::Bf16;
        const BackwardRunResult b = runBackwardAndCheck(p, bf16, request);
        QVERIFY(a.lowPrecisionCheck->dq.plain != b.lowPrecisionCheck->dq.plain);
        // Off: nothing asked, no stage, no check and no note, on either backend.
        for (const bool fake : {true, false}) {
            FakeGpu gpu;
            CpuUnderAnotherName plain("Plain");
            CpuUnderAnotherName& backend = fake ? gpu : plain;
            std::vector<RunStage> stages;
            RunRequest off = backwardRequest();
            off.lowPrecision = std::nullopt;
            off.onStage = [&](RunStage s) { stages.push_back(s); };
            const BackwardRunResult run = runBackwardAndCheck(p, backend, off);
            QVERIFY(run.check.passed());
            QVERIFY(backend.typesAsked.empty());
            QCOMPARE(gpu.lowPrecisionCalls, 0);
            QVERIFY(!run.lowPrecisionCheck && run.lowPrecisionNote.empty());
            QVERIFY(stages == (std::vector{RunStage::Reference, RunStage::Run}));
        }
    }

    void aRefusalIsANoteAndTheRunStays() {
        const Problem p = problemOf(16, 16, 8, false);
        for (const ErrorKind kind : {ErrorKind::Unsupported, ErrorKind::OutOfMemory}) {
            FakeGpu gpu;
            gpu.refusal = kind;
            std::vector<RunStage> stages;
            RunRequest request = backwardRequest();
            request.onStage = [&](RunStage s) { stages.push_back(s); };
            const BackwardRunResult run = runBackwardAndCheck(p, gpu, request);
            QVERIFY(run.check.passed());
            QVERIFY(!run.lowPrecisionCheck);
            QCOMPARE(QString::fromStdString(run.lowPrecisionNote),
                     QStringLiteral("the fake kernels refuse this problem"));
            QVERIFY(stages == (std::vector{RunStage::Reference, RunStage::Run, RunStage::LowPrecision}));
        }
        // A backend without such kernels says so.
        CpuUnderAnotherName plain("Plain");
        const BackwardRunResult run = runBackwardAndCheck(p, plain, backwardRequest());
        QCOMPARE(QString::fromStdString(run.lowPrecisionNote),
                 QStringLiteral("Plain has no fp16/bf16 tensor-core kernels"));
    }
};

QTEST_APPLESS_MAIN(TstLowPrecision)
#include "tst_low_precision.moc"
