// The window's scenes with the CUDA backend chosen (issue 4, "In the app"): the output and the
// per-tile values a frame shows are the GPU's, the CPU's run is checked beside them, the rescale
// bug fails on the GPU as it does on the CPU, and a configuration the kernel refuses falls back
// to the CPU with a note. The backward: the mirror kernel's gradients shown, and the fast bf16
// tensor-core kernels judged beside them (issue 18, "In the app"). Needs a usable NVIDIA GPU;
// skips with the reason without one.
#include "present/check_model.h"
#include "session/scene.h"
#include "session/settings.h"

#include "kernels/backend_registry.h"

#include <QtTest>

#include <cmath>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

// Why the CUDA backend cannot run here; empty when it can.
QString cudaUnavailableReason() {
    for (const BackendAvailability& b : listBackends())
        if (b.kind == BackendKind::Cuda)
            return b.available ? QString() : QString::fromStdString(b.reason);
    return QStringLiteral("built without CUDA");
}

#define REQUIRE_CUDA()                                                                             \
    do {                                                                                           \
        const QString why_ = cudaUnavailableReason();                                              \
        if (!why_.isEmpty()) QSKIP(qPrintable(QStringLiteral("needs the CUDA backend: ") + why_)); \
    } while (false)

VizSettings onTheGpu(VizSettings s) {
    s.backend = BackendKind::Cuda;
    return s;
}

// A backward the tensor-core kernels take (d = 64), small enough to animate: 96 queries, 80 keys.
VizSettings backwardAtD64() {
    VizSettings s = onTheGpu(toySettings());
    s.algorithm = Algorithm::Backward;
    s.spec.queries = 96;
    s.spec.keys = 80;
    s.spec.headDim = 64;
    s.options.blockRows = 32;
    s.options.blockCols = 16;
    return s;
}

// Largest |a - b| relative to the largest |b| (1 when b is all zero).
double relativeDiff(const Matrix& a, const Matrix& b) {
    const double scale = std::max(1.0, b.cwiseAbs().maxCoeff());
    return (a - b).cwiseAbs().maxCoeff() / scale;
}

// Every tile update the frames show with the backend's record: the GPU's m, l, correction and
// O accumulator against the CPU step engine's state of the same step. Returns how many were
// compared, -1 on a mismatch.
int compareTraceWithSteps(const std::shared_ptr<const Scene>& scene, double tolerance) {
    int compared = 0;
    for (int step = 0; step < scene->stepCount(); ++step) {
        const auto frame = makeFrame(scene, step);
        if (!frame->trace || frame->state.info.kind != StepKind::UpdateOutput) continue;
        const TileTrace& gpu = *frame->trace;
        const StepState& cpu = frame->state;
        if (gpu.mNew.size() != cpu.mNew.size() || gpu.lNew.size() != cpu.lNew.size() ||
            gpu.correction.size() != cpu.correction.size() || gpu.accNew.rows() != cpu.accNew.rows() ||
            gpu.accNew.cols() != cpu.accNew.cols()) {
            qWarning("step %d: the trace's tile has other sizes than the step's", step);
            return -1;
        }
        const double worst = std::max({relativeDiff(gpu.mNew, cpu.mNew),
                                       relativeDiff(gpu.lNew, cpu.lNew),
                                       relativeDiff(gpu.correction, cpu.correction),
                                       relativeDiff(gpu.accNew, cpu.accNew)});
        if (!(worst <= tolerance)) {
            qWarning("step %d: GPU and CPU differ by %g (relative)", step, worst);
            return -1;
        }
        ++compared;
    }
    return compared;
}

} // namespace

class TestGpuScene : public QObject {
    Q_OBJECT

  private slots:
    void toyShowsTheGpusValues() {
        REQUIRE_CUDA();
        const VizSettings settings = onTheGpu(toySettings());
        validateForWindow(settings);
        const auto scene = buildScene(settings, nullptr);
        QVERIFY2(scene->backendNote.isEmpty(), qPrintable(scene->backendNote));
        QVERIFY2(scene->backendName != QStringLiteral("CPU"), qPrintable(scene->backendName));
        QVERIFY(scene->check.passed());
        QVERIFY(scene->cpuCheck.has_value());
        QVERIFY(scene->cpuCheck->passed());
        QVERIFY2(scene->trace, qPrintable(scene->traceNote));
        // The toy has 2 x 2 tiles: every tile update is shown with the GPU's record.
        QCOMPARE(compareTraceWithSteps(scene, 1e-5), 4);
        // The GPU computes in fp32: its check runs at fp32's tolerance, the CPU's at the
        // problem's own precision.
        QCOMPARE(scene->check.tolerance, defaultTolerance(Precision::Float));
        QCOMPARE(scene->cpuCheck->tolerance, defaultTolerance(settings.spec.precision));
    }

    void raggedCausalTilesMatchTheCpu() {
        REQUIRE_CUDA();
        VizSettings settings = onTheGpu(toySettings());
        settings.spec.queries = 37;
        settings.spec.keys = 53;
        settings.spec.headDim = 16;
        settings.spec.causal = true;
        settings.options.blockRows = 8;
        settings.options.blockCols = 16;
        const auto scene = buildScene(settings, nullptr);
        QVERIFY2(scene->backendNote.isEmpty(), qPrintable(scene->backendNote));
        QVERIFY(scene->check.passed());
        QVERIFY(compareTraceWithSteps(scene, 1e-5) > 0);
    }

    void bugFailsOnTheGpuAsOnTheCpu() {
        REQUIRE_CUDA();
        const Preset* bites = nullptr;
        for (const Preset& p : presets())
            if (p.id == QStringLiteral("bug-bites")) bites = &p;
        QVERIFY(bites);
        const VizSettings settings = onTheGpu(bites->settings);
        QVERIFY(!settings.options.rescale);
        const auto scene = buildScene(settings, nullptr);
        QVERIFY2(scene->backendNote.isEmpty(), qPrintable(scene->backendNote));
        QVERIFY(!scene->check.passed());
        QVERIFY(scene->cpuCheck.has_value());
        QVERIFY(!scene->cpuCheck->passed());
        // The same wrong answer: the GPU's error equals the CPU's to float precision.
        QVERIFY(std::abs(scene->check.maxAbsDiff - scene->cpuCheck->maxAbsDiff) <=
                1e-5 * std::max(1.0, scene->cpuCheck->maxAbsDiff));
        // The frames still carry the GPU's (buggy) values and the correct run beside them.
        QVERIFY(compareTraceWithSteps(scene, 1e-5) > 0);
        const auto last = makeFrame(scene, scene->stepCount() - 1);
        QVERIFY(last->correct.has_value());
    }

    // The backward at d = 64: the gradients and the check are the mirror kernel's, and the bf16
    // tensor-core kernels ran on the same inputs, within twice plain bf16's error; the check
    // panel's model carries their verdict. At the toy's d = 4 they refuse, and say why.
    void backwardJudgesTheTensorCoreKernels() {
        REQUIRE_CUDA();
        VizSettings settings = backwardAtD64();
        settings.spec.causal = true;
        validateForWindow(settings);
        const auto scene = buildScene(settings, nullptr);
        QVERIFY2(scene->backendNote.isEmpty(), qPrintable(scene->backendNote));
        const BackwardScene& b = *scene->backward;
        QVERIFY2(b.check.passed(), b.check.summary().c_str());
        QVERIFY2(b.lowPrecisionCheck, qPrintable(b.lowPrecisionNote));
        const LowPrecisionGradientCheck& c = *b.lowPrecisionCheck;
        qInfo("%s: %s", c.kernel.c_str(), c.summary().c_str());
        QCOMPARE(c.type, HalfType::Bf16);
        QVERIFY2(c.passed(), c.summary().c_str());
        QVERIFY2(QString::fromStdString(c.kernel).contains(QStringLiteral("bwd_d64")), c.kernel.c_str());
        QVERIFY(checkModel(*makeFrame(scene, scene->stepCount() - 1)).lowPrecision->passed());

        VizSettings toy = onTheGpu(toySettings());
        toy.algorithm = Algorithm::Backward;
        const auto toyScene = buildScene(toy, nullptr);
        QVERIFY(!toyScene->backward->lowPrecisionCheck);
        QVERIFY2(toyScene->backward->lowPrecisionNote.contains(QStringLiteral("64 and 128")),
                 qPrintable(toyScene->backward->lowPrecisionNote));
    }

    // The check the settings choose: fp16's kernels judged against plain fp16, the build's stage
    // named for it; off runs none, says nothing and names no such stage.
    void backwardRunsTheTensorCoreCheckChosen() {
        REQUIRE_CUDA();
        VizSettings settings = backwardAtD64();
        struct Stages final : BuildProgress {
            QStringList seen;
            void report(int, const QString& stage) override {
                if (!seen.contains(stage)) seen << stage;
            }
            bool cancelled() const override { return false; }
        };
        for (const LowPrecisionCheck check :
             {LowPrecisionCheck(HalfType::Fp16), LowPrecisionCheck()}) {
            settings.tensorCoreCheck = check;
            Stages stages;
            const auto scene = buildScene(settings, &stages);
            QVERIFY2(scene->backendNote.isEmpty(), qPrintable(scene->backendNote));
            const BackwardScene& b = *scene->backward;
            const bool named = stages.seen.contains(
                QStringLiteral("The fp16 tensor-core kernels, judged against plain fp16"));
            if (check) {
                QVERIFY2(b.lowPrecisionCheck, qPrintable(b.lowPrecisionNote));
                QCOMPARE(b.lowPrecisionCheck->type, HalfType::Fp16);
                QVERIFY2(b.lowPrecisionCheck->passed(), b.lowPrecisionCheck->summary().c_str());
                QVERIFY2(named, qPrintable(stages.seen.join(QStringLiteral("; "))));
            } else {
                QVERIFY(!b.lowPrecisionCheck && b.lowPrecisionNote.isEmpty());
                QVERIFY2(!named, qPrintable(stages.seen.join(QStringLiteral("; "))));
                QVERIFY(checkModel(*makeFrame(scene, scene->stepCount() - 1)).lowPrecision ==
                        std::nullopt);
            }
        }
    }

    void refusedConfigurationFallsBackToTheCpu() {
        REQUIRE_CUDA();
        VizSettings settings = onTheGpu(toySettings());
        settings.spec.headDim = 300; // the CUDA kernels take d <= 256
        validateForWindow(settings);
        const auto scene = buildScene(settings, nullptr);
        QVERIFY2(scene->backendNote.contains(QStringLiteral("the CPU computed instead")),
                 qPrintable(scene->backendNote));
        QVERIFY2(scene->backendNote.contains(QStringLiteral("256")), qPrintable(scene->backendNote));
        QCOMPARE(scene->backendName, QStringLiteral("CPU"));
        QVERIFY(scene->check.passed());
    }
};

QTEST_MAIN(TestGpuScene)
#include "tst_gpu_scene.moc"
