// The GPU backward pass (kernels/cuda/mirror/backward_mirror.cuh) against the CPU engine's backward in
// float (core's flashBackward<float>) and against the closed-form gradients: ragged tiles,
// causal, n_q != n_k both ways (rows that see no key), Br != Bc; each bug switch failing on the
// GPU as on the CPU with the CPU's wrong answer; the stored-P trade; the per-tile trace against
// the CPU backend's trace; the Backend interface; the fast fp16 / bf16 tensor-core kernels run
// beside it (core/run.h) as the window and the CLI run them. (Its refusals are in tst_cuda_errors.)
#include "gpu_test_support.h"

#include "core/backend.h"
#include "core/backward.h"
#include "core/run.h"

#include <tuple>

using namespace flashviz;
using namespace flashviz::gputest;

namespace {

// GPU against CPU, both in fp32, as mixedError measures it (|a - b| / max(1, |b|)). The two
// run the same steps but sum in different orders (the kernel's sequential FMAs, Eigen's blocked
// SIMD products) and with their own expf and logf (each within 2 ulp); a gradient entry sums up
// to n_q (dK, dV) or n_k (dQ) products of the forward's P, itself within 1e-5 of the CPU's
// (tst_cuda_trace). fp32's unit roundoff 6e-8 times the longest sum here (1024 terms) bounds
// the worst case at about 6e-5. Measured on an H200: at most 4.5e-7 for correct gradients,
// 1.4e-6 for D, 4.1e-6 with the no-lse bug (whose P is not normalised), 7.2e-7 in a trace.
constexpr double kGpuCpuTolerance = 1e-4;

// The kernel runs each head on one thread block, so compute-sanitizer's slow-down (racecheck's
// above all: a 256 x 256 x 64 trace took half a minute) is not spread over the GPU: under the
// checkers only shapes up to this many n_q · n_k · d products run.
constexpr double kSanitizerMaxProducts = 2.5e6;
#define SKIP_IF_SLOW_UNDER_SANITIZER(nq, nk, d)                                                    \
    do {                                                                                           \
        if (underSanitizer() && double(nq) * (nk) * (d) > kSanitizerMaxProducts)                   \
            QSKIP("large shape skipped under compute-sanitizer (FLASHVIZ_GPU_TEST_SANITIZER)");    \
    } while (false)

FlashOptions withSwitch(FlashOptions o, const QString& name) {
    for (const BackwardSwitch& flag : backwardSwitches())
        if (name == flag.name) o.backward.*flag.field = flag.onValue;
    return o;
}

struct Difference {
    double dq = 0, dk = 0, dv = 0;
    // False when an entry is finite on one side only (mixedError's NaN).
    bool within(double tolerance) const {
        return dq <= tolerance && dk <= tolerance && dv <= tolerance;
    }
    QString text() const { return QString("dQ %1, dK %2, dV %3").arg(dq).arg(dk).arg(dv); }
};

Difference differenceOf(const Gradients& a, const Gradients& b) {
    return {mixedError(a.dq, b.dq), mixedError(a.dk, b.dk), mixedError(a.dv, b.dv)};
}

bool sameValues(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j)
            if (!(a(i, j) == b(i, j) || (std::isnan(a(i, j)) && std::isnan(b(i, j))))) return false;
    return true;
}

bool sameGradients(const Gradients& a, const Gradients& b) {
    return sameValues(a.dq, b.dq) && sameValues(a.dk, b.dk) && sameValues(a.dv, b.dv);
}

// The shapes every data-driven test runs: the toy, ragged tiles, n_q != n_k both ways (with rows
// that see no key at all), Br != Bc, blocks of one, blocks past the sequence, d up to 256.
void addShapes() {
    QTest::addColumn<int>("nq");
    QTest::addColumn<int>("nk");
    QTest::addColumn<int>("d");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("br");
    QTest::addColumn<int>("bc");
    auto row = [](const char* name, int nq, int nk, int d, bool causal, int br, int bc) {
        QTest::newRow(name) << nq << nk << d << causal << br << bc;
    };
    row("toy 8x8 d4 4x4", 8, 8, 4, false, 4, 4);
    row("ragged 37x29 d5 8x6", 37, 29, 5, false, 8, 6);
    row("causal 40x40 d4 8x8", 40, 40, 4, true, 8, 8);
    row("causal ragged 33x33 d3 7x5", 33, 33, 3, true, 7, 5);
    row("causal nq>nk 50x20 d4 8x6 (rows see no key)", 50, 20, 4, true, 8, 6);
    row("causal nq<nk 30x50 d3 8x12", 30, 50, 3, true, 8, 12);
    row("blocks of one 5x4 d2 causal", 5, 4, 2, true, 1, 1);
    row("one block 12x9 d6", 12, 9, 6, false, 12, 9);
    row("130x70 d16 32x16", 130, 70, 16, false, 32, 16);
    row("causal ragged 130x128 d64 64x64", 130, 128, 64, true, 64, 64);
    row("causal 256x256 d64 64x64", 256, 256, 64, true, 64, 64);
    row("causal nq>nk 300x257 d128 32x64", 300, 257, 128, true, 32, 64);
    row("nq<nk 100x700 d32 16x48", 100, 700, 32, false, 16, 48);
    row("d256 48x40 16x16 causal", 48, 40, 256, true, 16, 16);
    row("1024x1024 d64 64x64", 1024, 1024, 64, false, 64, 64);
    row("causal 1024x1024 d128 64x32", 1024, 1024, 128, true, 64, 32);
}

struct Case {
    Problem problem;
    FlashOptions options;
    Matrix dO;
};

Case caseOf(int nq, int nk, int d, bool causal, int br, int bc, const FlashOptions& base = {}) {
    FlashOptions o = base;
    o.blockRows = br;
    o.blockCols = bc;
    Problem p = makeProblem(spec(nq, nk, d, causal));
    Matrix dO = upstreamGradient(p.spec, o.backward);
    return {std::move(p), o, std::move(dO)};
}

#define FETCH_CASE()                                                                               \
    QFETCH(int, nq);                                                                               \
    QFETCH(int, nk);                                                                               \
    QFETCH(int, d);                                                                                \
    QFETCH(bool, causal);                                                                          \
    QFETCH(int, br);                                                                               \
    QFETCH(int, bc)

} // namespace

class TestCudaBackward : public QObject {
    Q_OBJECT

  private slots:
    // The GPU's gradients equal the CPU's fp32 pass and pass the check against the closed form.
    void gradientsMatchCpu_data() { addShapes(); }
    void gradientsMatchCpu() {
        FETCH_CASE();
        FLASHVIZ_REQUIRE_GPU();
        SKIP_IF_SLOW_UNDER_SANITIZER(nq, nk, d);
        const Case c = caseOf(nq, nk, d, causal, br, bc);
        CudaBackend gpuBackend;
        const BackwardResult gpu = gpuBackend.backward(c.problem, c.dO, c.options);
        const BackwardResult cpu = CpuBackend().backward(c.problem, c.dO, c.options);
        const Difference diff = differenceOf(gpu.grads, cpu.grads);
        qInfo("GPU vs CPU: %s; D %g", qPrintable(diff.text()), mixedError(gpu.delta, cpu.delta));
        QVERIFY2(diff.within(kGpuCpuTolerance), qPrintable(diff.text()));
        QVERIFY(mixedError(gpu.delta, cpu.delta) <= kGpuCpuTolerance);
        QVERIFY(gpu.counters == cpu.counters);

        const GradientCheck check = compareGradients(gpu.grads, referenceGradients(c.problem, c.dO),
                                                     checkTolerance(gpuBackend, c.problem.spec));
        QVERIFY2(check.passed(), check.summary().c_str());
    }

    // Each bug fails against the closed form on the GPU as on the CPU, and the GPU's wrong
    // answer is the CPU's wrong answer (non-finite entries in the same places).
    void eachBugFailsAsOnTheCpu_data() {
        QTest::addColumn<QString>("bug");
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("br");
        QTest::addColumn<int>("bc");
        for (const char* bug : {"no-row-dot", "no-lse", "overwrite-dq", "no-mask-recompute"}) {
            const auto row = [&](const char* shape, int nq, int nk, int d, bool causal, int br,
                                 int bc) {
                QTest::addRow("%s, %s", bug, shape)
                    << QString(bug) << nq << nk << d << causal << br << bc;
            };
            row("causal 40x40 d4 8x8", 40, 40, 4, true, 8, 8);
            row("causal ragged nq<nk 30x50 d3 8x12", 30, 50, 3, true, 8, 12);
            row("causal nq>nk 50x20 d4 8x6", 50, 20, 4, true, 8, 6);
            row("causal 200x180 d64 32x16", 200, 180, 64, true, 32, 16);
        }
    }
    void eachBugFailsAsOnTheCpu() {
        QFETCH(QString, bug);
        FETCH_CASE();
        FLASHVIZ_REQUIRE_GPU();
        SKIP_IF_SLOW_UNDER_SANITIZER(nq, nk, d);
        const Case c = caseOf(nq, nk, d, causal, br, bc, withSwitch({}, bug));
        QVERIFY(c.options.backward.anyBug());
        CudaBackend gpuBackend;
        const BackwardResult gpu = gpuBackend.backward(c.problem, c.dO, c.options);
        const BackwardResult cpu = CpuBackend().backward(c.problem, c.dO, c.options);
        const Gradients reference = referenceGradients(c.problem, c.dO);
        const double tolerance = checkTolerance(gpuBackend, c.problem.spec);
        const GradientCheck gpuCheck = compareGradients(gpu.grads, reference, tolerance);
        const GradientCheck cpuCheck = compareGradients(cpu.grads, reference, tolerance);
        QVERIFY2(!cpuCheck.passed(),
                 qPrintable("CPU: " + QString::fromStdString(cpuCheck.summary())));
        QVERIFY2(!gpuCheck.passed(),
                 qPrintable("GPU: " + QString::fromStdString(gpuCheck.summary())));
        // Which gradients the bug breaks is the same on both.
        QCOMPARE(gpuCheck.dq.passed(), cpuCheck.dq.passed());
        QCOMPARE(gpuCheck.dk.passed(), cpuCheck.dk.passed());
        QCOMPARE(gpuCheck.dv.passed(), cpuCheck.dv.passed());
        const Difference diff = differenceOf(gpu.grads, cpu.grads);
        qInfo("%s: GPU %s; GPU vs CPU %s", qPrintable(bug), gpuCheck.summary().c_str(),
              qPrintable(diff.text()));
        QVERIFY2(diff.within(kGpuCpuTolerance), qPrintable("GPU vs CPU: " + diff.text()));
    }

    // The trade undone: P as the forward stored it is correct whatever the recompute bugs say, and
    // the GPU gives the same gradients, bit for bit, as its recompute (the same arithmetic).
    void storedWeightsPass() {
        FLASHVIZ_REQUIRE_GPU();
        const Case recompute = caseOf(40, 56, 8, true, 8, 16);
        const FlashOptions stored = withSwitch(recompute.options, "store-p");
        const FlashOptions storedWithBugs =
            withSwitch(withSwitch(stored, "no-lse"), "no-mask-recompute");
        CudaBackend gpuBackend;
        const Gradients reference = referenceGradients(recompute.problem, recompute.dO);
        const double tolerance = checkTolerance(gpuBackend, recompute.problem.spec);
        const BackwardResult a =
            gpuBackend.backward(recompute.problem, recompute.dO, recompute.options);
        for (const FlashOptions& o : {stored, storedWithBugs}) {
            const BackwardResult b = gpuBackend.backward(recompute.problem, recompute.dO, o);
            const GradientCheck check = compareGradients(b.grads, reference, tolerance);
            QVERIFY2(check.passed(), check.summary().c_str());
            QVERIFY(sameGradients(a.grads, b.grads));
            QVERIFY(b.counters == flashBackwardCounts(40, 56, 8, true, o));
        }
        // The recompute's bugs do break it without the stored P.
        const FlashOptions bugs =
            withSwitch(withSwitch(recompute.options, "no-lse"), "no-mask-recompute");
        QVERIFY(!compareGradients(gpuBackend.backward(recompute.problem, recompute.dO, bugs).grads,
                                  reference, tolerance)
                     .passed());
    }

    // The window animates this: every (key block, query block) tile's dQ_i as written back and
    // dK_j, dV_j after the tile, in the CPU's order and equal to the CPU's, with a bug or not;
    // the last tiles hold the final gradients, bit for bit.
    void traceMatchesCpu_data() {
        QTest::addColumn<QString>("bug");
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("br");
        QTest::addColumn<int>("bc");
        const auto row = [](const char* name, const char* bug, int nq, int nk, int d, bool causal,
                            int br, int bc) {
            QTest::newRow(name) << QString(bug) << nq << nk << d << causal << br << bc;
        };
        row("toy 8x8 d4 4x4", "", 8, 8, 4, false, 4, 4);
        row("causal ragged 37x37 d5 8x8", "", 37, 37, 5, true, 8, 8);
        row("causal nq>nk 40x20 d8 8x6", "", 40, 20, 8, true, 8, 6);
        row("nq<nk 24x70 d7 16x8, overwrite-dq", "overwrite-dq", 24, 70, 7, false, 16, 8);
        row("causal 33x33 d3 7x5, no-mask-recompute", "no-mask-recompute", 33, 33, 3, true, 7, 5);
        row("causal 30x50 d4 8x12, no-lse", "no-lse", 30, 50, 4, true, 8, 12);
        row("toy, no-row-dot", "no-row-dot", 8, 8, 4, false, 4, 4);
        row("causal ragged 130x100 d64 64x32", "", 130, 100, 64, true, 64, 32);
        row("causal 256x256 d64 32x64", "", 256, 256, 64, true, 32, 64);
        row("1024x1024 d32 64x64", "", 1024, 1024, 32, false, 64, 64);
    }
    void traceMatchesCpu() {
        QFETCH(QString, bug);
        FETCH_CASE();
        FLASHVIZ_REQUIRE_GPU();
        SKIP_IF_SLOW_UNDER_SANITIZER(nq, nk, d);
        const Case c = caseOf(nq, nk, d, causal, br, bc, withSwitch({}, bug));
        CudaBackend gpuBackend;
        const BackwardTrace gpu = gpuBackend.backwardTrace(c.problem, c.dO, c.options);
        const BackwardTrace cpu = CpuBackend().backwardTrace(c.problem, c.dO, c.options);
        QCOMPARE(gpu.tiles.size(), cpu.tiles.size());
        QVERIFY(!gpu.tiles.empty());
        double worst = 0;
        for (std::size_t t = 0; t < gpu.tiles.size(); ++t) {
            const BackwardTileTrace& g = gpu.tiles[t];
            const BackwardTileTrace& h = cpu.tiles[t];
            const QString where =
                QString("tile (key block %1, query block %2)").arg(g.keyBlock).arg(g.queryBlock);
            QCOMPARE(g.keyBlock, h.keyBlock);
            QCOMPARE(g.queryBlock, h.queryBlock);
            QVERIFY(g.rows == h.rows && g.cols == h.cols);
            for (const auto& [name, a, b] :
                 {std::tuple{"dQ", &g.dQ, &h.dQ}, std::tuple{"dK", &g.dK, &h.dK},
                  std::tuple{"dV", &g.dV, &h.dV}}) {
                const double e = mixedError(*a, *b);
                QVERIFY2(e <= kGpuCpuTolerance,
                         qPrintable(where + " " + name + QString(": %1").arg(e)));
                worst = std::max(worst, e);
            }
            QVERIFY(gpu.find(g.keyBlock, g.queryBlock) == &g);
        }
        qInfo("%zu tiles, largest GPU vs CPU difference %g", gpu.tiles.size(), worst);

        // A tile's values are the pass's: the last tile of each key block holds its final dK_j
        // and dV_j, the last to touch a query block its final dQ_i (the kernel is deterministic).
        const BackwardResult pass = gpuBackend.backward(c.problem, c.dO, c.options);
        for (std::size_t t = 0; t < gpu.tiles.size(); ++t) {
            const BackwardTileTrace& g = gpu.tiles[t];
            const bool lastOfKeyBlock =
                t + 1 == gpu.tiles.size() || gpu.tiles[t + 1].keyBlock != g.keyBlock;
            if (lastOfKeyBlock) {
                QVERIFY(sameValues(g.dK, pass.grads.dk.middleRows(g.cols.begin, g.cols.size())));
                QVERIFY(sameValues(g.dV, pass.grads.dv.middleRows(g.cols.begin, g.cols.size())));
            }
            bool lastOfQueryBlock = true;
            for (std::size_t later = t + 1; later < gpu.tiles.size(); ++later)
                lastOfQueryBlock = lastOfQueryBlock && gpu.tiles[later].queryBlock != g.queryBlock;
            if (lastOfQueryBlock)
                QVERIFY(sameValues(g.dQ, pass.grads.dq.middleRows(g.rows.begin, g.rows.size())));
        }
    }

    // One thread block walks the key blocks in order: the same inputs give the same bits.
    void deterministic() {
        FLASHVIZ_REQUIRE_GPU();
        const Case c = caseOf(200, 160, 32, true, 16, 32);
        CudaBackend gpuBackend;
        const BackwardResult a = gpuBackend.backward(c.problem, c.dO, c.options);
        const BackwardResult b = gpuBackend.backward(c.problem, c.dO, c.options);
        QVERIFY(sameGradients(a.grads, b.grads));
    }

    // A double problem runs in fp32 (arithmetic() says so) and meets fp32's tolerance; the
    // forward switches reach the backward's forward, as on the CPU.
    void backendInterface() {
        FLASHVIZ_REQUIRE_GPU();
        ProblemSpec s = spec(48, 40, 8, true);
        s.precision = Precision::Double;
        const Problem p = makeProblem(s);
        FlashOptions o;
        o.blockRows = 16;
        o.blockCols = 8;
        o.backward.onesUpstream = true;
        const Matrix dO = upstreamGradient(p.spec, o.backward);
        CudaBackend gpuBackend;
        QCOMPARE(checkTolerance(gpuBackend, s), defaultTolerance(Precision::Float));
        const GradientCheck check =
            compareGradients(gpuBackend.backward(p, dO, o).grads, referenceGradients(p, dO),
                             checkTolerance(gpuBackend, s));
        QVERIFY2(check.passed(), check.summary().c_str());

        ProblemSpec f = s;
        f.precision = Precision::Float;
        const Problem pf = makeProblem(f);
        FlashOptions rescaleBug = o;
        rescaleBug.rescale = false;
        const BackwardResult gpu = gpuBackend.backward(pf, dO, rescaleBug);
        const BackwardResult cpu = CpuBackend().backward(pf, dO, rescaleBug);
        QVERIFY(
            !compareGradients(gpu.grads, referenceGradients(pf, dO), checkTolerance(gpuBackend, f))
                 .passed());
        const Difference diff = differenceOf(gpu.grads, cpu.grads);
        QVERIFY2(diff.within(kGpuCpuTolerance), qPrintable(diff.text()));
    }

    // The window's and the CLI's backward on the GPU: the fast tensor-core kernels on the same
    // inputs rounded to fp16 / bf16, judged within twice plain low-precision attention's error.
    void tensorCoreKernelsBesideTheRun_data() {
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("type");
        QTest::newRow("bf16 d64 200x200") << 200 << 200 << 64 << false << int(HalfType::Bf16);
        QTest::newRow("bf16 d64 causal 150x97") << 150 << 97 << 64 << true << int(HalfType::Bf16);
        QTest::newRow("fp16 d128 77x130") << 77 << 130 << 128 << false << int(HalfType::Fp16);
        QTest::newRow("bf16 d128 causal 256x256") << 256 << 256 << 128 << true << int(HalfType::Bf16);
    }
    void tensorCoreKernelsBesideTheRun() {
        QFETCH(int, nq);
        QFETCH(int, nk);
        QFETCH(int, d);
        QFETCH(bool, causal);
        QFETCH(int, type);
        FLASHVIZ_REQUIRE_GPU();
        SKIP_IF_SLOW_UNDER_SANITIZER(nq, nk, d);
        RunRequest request;
        request.algorithm = Algorithm::Backward;
        request.options.blockRows = 16;
        request.options.blockCols = 16;
        request.lowPrecision = HalfType(type);
        CudaBackend gpuBackend;
        const BackwardRunResult run = runBackwardAndCheck(makeProblem(spec(nq, nk, d, causal)),
                                                          gpuBackend, request);
        QVERIFY2(run.check.passed(), run.check.summary().c_str()); // the mirror's run, shown
        QVERIFY2(run.lowPrecisionCheck, run.lowPrecisionNote.c_str());
        const LowPrecisionGradientCheck& c = *run.lowPrecisionCheck;
        qInfo("%s: %s", c.kernel.c_str(), c.summary().c_str());
        QCOMPARE(c.type, HalfType(type));
        QVERIFY2(c.passed(), c.summary().c_str());
        QVERIFY(c.dq.plain > 0 && c.dk.plain > 0 && c.dv.plain > 0); // a real low-precision error
        QVERIFY2(QString::fromStdString(c.kernel).contains(QStringLiteral("bwd_d%1").arg(d)),
                 c.kernel.c_str());
    }

    // A head dimension the tensor-core kernels were not built for: the run stands, with the
    // kernels' refusal as its note.
    void tensorCoreKernelsRefuseOtherHeadDimensions() {
        FLASHVIZ_REQUIRE_GPU();
        RunRequest request;
        request.algorithm = Algorithm::Backward;
        request.options.blockRows = 8;
        request.options.blockCols = 8;
        CudaBackend gpuBackend;
        const BackwardRunResult run =
            runBackwardAndCheck(makeProblem(spec(40, 40, 32, false)), gpuBackend, request);
        QVERIFY(run.check.passed());
        QVERIFY(!run.lowPrecisionCheck);
        QVERIFY2(QString::fromStdString(run.lowPrecisionNote).contains("64 and 128"),
                 run.lowPrecisionNote.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCudaBackward)
#include "tst_cuda_backward.moc"
