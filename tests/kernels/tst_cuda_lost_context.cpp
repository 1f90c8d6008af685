// A kernel that faults on the GPU (here: reads through an address no allocation owns) makes the
// CUDA context unusable until the process ends. FlashViz must say so once, plainly, and then
// stop trying the GPU: listBackends() marks CUDA unavailable with the reason, the backend
// refuses with it, the window (whose backend list was read at start) computes each scene on the
// CPU and says why in its note, and the CPU keeps working. The functions
// run in order and share one process, which is why this is a suite of its own. The window's
// part is built when the GUI is (FLASHVIZ_TEST_WINDOW).
#include "gpu_test_support.h"

#include "kernels/backend_registry.h"
#include "kernels/cuda/runtime/check.h"
#include "kernels/cuda/launch.h"

#include "core/attention.h"
#include "core/backend.h"
#include "core/errors.h"

#include <cstdint>

#if FLASHVIZ_TEST_WINDOW
#include "session/controller.h"
#include "widgets/controls_panel.h"
#include "shell/main_window.h"
#include "session/scene.h"
#include "session/settings.h"

#include <QComboBox>
#include <QStandardItemModel>

#include <memory>
#endif

using namespace flashviz;
using namespace flashviz::gputest;

namespace {

#if FLASHVIZ_TEST_WINDOW
// The window's toy scene with the CUDA backend chosen, by flash or by standard attention.
std::shared_ptr<const gui::Scene> toySceneOnTheGpu(Algorithm algorithm = Algorithm::Flash) {
    gui::VizSettings settings = gui::toySettings();
    settings.backend = BackendKind::Cuda;
    settings.algorithm = algorithm;
    return gui::buildScene(settings, nullptr);
}

// The window's backend list: the CUDA entry.
QStandardItem* cudaEntry(gui::MainWindow& window) {
    auto* box = window.controls()->findChild<QComboBox*>(QStringLiteral("backend"));
    if (!box) return nullptr;
    auto* model = static_cast<QStandardItemModel*>(box->model());
    const int at = box->findData(int(BackendKind::Cuda), Qt::UserRole);
    return at < 0 ? nullptr : model->item(at);
}
#endif

} // namespace

class TestCudaLostContext : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        FLASHVIZ_REQUIRE_GPU();
        // The checker would (rightly) report the deliberate fault as an error of the test.
        FLASHVIZ_SKIP_UNDER_SANITIZER("the suite faults a kernel on purpose");
    }

#if FLASHVIZ_TEST_WINDOW
    // The window has seen a working GPU before the fault. This also fills the window's list of
    // backends, read once as at start, which still offers CUDA afterwards (a fresh start would
    // refuse CUDA with the reason instead of falling back).
    void theWindowFirstComputesOnTheGpu() {
        const auto scene = toySceneOnTheGpu();
        QVERIFY2(scene->backendNote.isEmpty(), qPrintable(scene->backendNote));
        QVERIFY2(scene->backendName.startsWith(QStringLiteral("CUDA")), qPrintable(scene->backendName));
        QVERIFY(scene->check.passed());
        // A window opened now offers CUDA, and keeps its list until a scene falls back.
        gui::StartOptions options;
        options.restore = false;
        options.save = false;
        m_window = std::make_unique<gui::MainWindow>(options);
        QVERIFY(m_window->waitUntilIdle());
        QStandardItem* cuda = cudaEntry(*m_window);
        QVERIFY(cuda && cuda->isEnabled());
    }
#endif

    void aFaultingKernelIsReported() {
        // 16-byte aligned, so the launcher accepts it; nothing is mapped there.
        float* nowhere = reinterpret_cast<float*>(std::uintptr_t(1) << 12);
        const cuda::AttentionParams p =
            cuda::denseSelfAttentionParams(nowhere, nowhere, nowhere, nowhere, 1, 1, 256, 64, false);
        cuda::launchFlashFast(p); // the launch itself is accepted
        const QString text = errorText([] { cuda::synchronize("The flash kernel"); });
        QVERIFY2(text.contains("The flash kernel failed on the GPU") &&
                     text.contains("cudaErrorIllegalAddress") && text.contains("restart FlashViz"),
                 qPrintable(text));
    }

    void theGpuIsThenReportedLost() {
        const CudaDeviceStatus status = cudaDeviceStatus();
        QVERIFY(!status.usable);
        QVERIFY2(QString::fromStdString(status.reason).contains("context is lost"),
                 status.reason.c_str());
        bool listed = false;
        for (const BackendAvailability& b : listBackends())
            if (b.kind == BackendKind::Cuda) {
                listed = true;
                QVERIFY(!b.available);
                QCOMPARE(b.reason, status.reason);
            }
        QVERIFY(listed);
    }

    void theBackendRefusesWithTheReason() {
        const MatrixF ones = MatrixF::Ones(16, 64);
        const QString run = errorText([&] {
            (void)cudaFlashForward(ones, ones, ones, 0.125, false, blocks(16, 16));
        });
        QVERIFY2(run.contains("not available") && run.contains("restart FlashViz"), qPrintable(run));
        const QString made = errorText([] { (void)makeBackend(BackendKind::Cuda); });
        QVERIFY2(made.contains("restart FlashViz"), qPrintable(made));
    }

#if FLASHVIZ_TEST_WINDOW
    // The same request now falls back: the CPU's scene, passing, with the reason in its note.
    void theWindowThenFallsBackToTheCpu() {
        const auto scene = toySceneOnTheGpu();
        QCOMPARE(scene->backendName, QStringLiteral("CPU"));
        QVERIFY2(scene->backendNote.contains(QStringLiteral("the CPU computed instead")) &&
                     scene->backendNote.contains(QStringLiteral("restart FlashViz")),
                 qPrintable(scene->backendNote));
        QVERIFY(scene->check.passed());
        QVERIFY(!scene->cpuCheck.has_value());
        QVERIFY2(scene->trace, qPrintable(scene->traceNote)); // the CPU's per-tile record

        const auto standard = toySceneOnTheGpu(Algorithm::Standard);
        QCOMPARE(standard->backendName, QStringLiteral("CPU"));
        QVERIFY2(standard->backendNote.contains(QStringLiteral("restart FlashViz")),
                 qPrintable(standard->backendNote));
        QVERIFY(standard->check.passed());
        QVERIFY(!standard->cpuCheck.has_value());
    }

    // The window opened before the fault: asked for CUDA, it shows the CPU's scene, and its
    // backend list now greys CUDA out with the reason instead of offering it.
    void theWindowsListThenGreysCudaOut() {
        QVERIFY(m_window);
        gui::VizSettings settings = gui::toySettings();
        settings.backend = BackendKind::Cuda;
        QVERIFY(m_window->controller()->apply(settings, QString()));
        QVERIFY(m_window->waitUntilIdle());
        QCOMPARE(m_window->controller()->scene()->backendName, QStringLiteral("CPU"));
        QStandardItem* cuda = cudaEntry(*m_window);
        QVERIFY(cuda && !cuda->isEnabled());
        QVERIFY2(cuda->text().contains(QStringLiteral("unavailable")) &&
                     cuda->toolTip().contains(QStringLiteral("restart FlashViz")),
                 qPrintable(cuda->text() + QStringLiteral(" | ") + cuda->toolTip()));
        m_window.reset();
    }
#endif

    void theCpuStillComputes() {
        const Problem problem = makeProblem(spec(48, 48, 16, true));
        const std::unique_ptr<Backend> cpu = makeBackend(BackendKind::Cpu);
        const FlashResult result = cpu->flash(problem, blocks(16, 16));
        QVERIFY(compareOutputs(result.o, referenceAttention(problem),
                               checkTolerance(*cpu, problem.spec))
                    .passed());
    }

#if FLASHVIZ_TEST_WINDOW
  private:
    std::unique_ptr<gui::MainWindow> m_window; // opened before the fault
#endif
};

#if FLASHVIZ_TEST_WINDOW
QTEST_MAIN(TestCudaLostContext)
#else
QTEST_GUILESS_MAIN(TestCudaLostContext)
#endif
#include "tst_cuda_lost_context.moc"
