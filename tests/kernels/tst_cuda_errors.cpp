// Every refusal of the CUDA backend is an EngineError of the right kind with a sentence a user
// can act on: a d the kernels do not take, tiles too large for shared memory, a GPU out of
// memory, a trace too large to animate, the fast kernel asked to run the bug, no device at all,
// a launch the GPU refuses; the backward's own (d, tiles, trace, a mismatched dO). (A kernel
// that faults is tst_cuda_lost_context: it ends the context.)
#include "gpu_test_support.h"

#include "kernels/cuda/runtime/device_memory.h"
#include "kernels/cuda/launch.h"

#include "core/errors.h"

using namespace flashviz;
using namespace flashviz::gputest;

namespace {

MatrixF ones(int rows, int cols) { return MatrixF::Ones(rows, cols); }

} // namespace

class TestCudaErrors : public QObject {
    Q_OBJECT

private slots:
    // Checked before the device is touched: the same answer with or without a GPU.
    void headDimensionTooLarge() {
        const EngineError e = expectError([] {
            (void)cudaFlashForward(ones(4, 300), ones(4, 300), ones(4, 300), 0.1, false, blocks(4, 4));
        });
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(e.what()).contains("256") && QString(e.what()).contains("d = 300"), e.what());
    }

    void traceTooLargeToAnimate() {
        const EngineError e = expectError([] {
            (void)cudaFlashTrace(ones(16384, 64), ones(16384, 64), ones(16384, 64), 0.125, false,
                                 blocks(16, 16));
        });
        QCOMPARE(e.kind(), ErrorKind::LimitExceeded);
        QVERIFY2(QString(e.what()).contains("trace"), e.what());
    }

    void backwardHeadDimensionTooLarge() {
        const EngineError e = expectError([] {
            (void)cudaFlashBackward(ones(4, 300), ones(4, 300), ones(4, 300), ones(4, 300), 0.1,
                                    false, blocks(4, 4));
        });
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(e.what()).contains("256") && QString(e.what()).contains("d = 300"),
                 e.what());
    }

    void backwardTraceTooLargeToAnimate() {
        const EngineError e = expectError([] {
            (void)cudaFlashBackwardTrace(ones(16384, 64), ones(16384, 64), ones(16384, 64),
                                         ones(16384, 64), 0.125, false, blocks(16, 16));
        });
        QCOMPARE(e.kind(), ErrorKind::LimitExceeded);
        QVERIFY2(QString(e.what()).contains("backward trace") &&
                     QString(e.what()).contains("1024 x 1024 tiles"),
                 e.what());
    }

    void backwardUpstreamGradientMismatched() {
        const EngineError e = expectError([] {
            (void)cudaFlashBackward(ones(4, 8), ones(6, 8), ones(6, 8), ones(5, 8), 0.1, false,
                                    blocks(4, 4));
        });
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        QVERIFY2(QString(e.what()).contains("dO must be n_q x d like Q (4x8); it is 5x8"),
                 e.what());
    }

    // The backend checks the options against the problem (Br <= n_q) as the CPU does.
    void backwardBlocksPastTheProblem() {
        const Problem p = makeProblem(spec(8, 8, 4, false));
        const EngineError e = expectError([&] {
            CudaBackend backend;
            (void)backend.backward(p, Matrix::Ones(8, 4), blocks(16, 4));
        });
        if (!cudaDeviceStatus().usable) {
            QCOMPARE(e.kind(), ErrorKind::Unsupported); // no GPU: the backend itself is refused
            return;
        }
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
        QVERIFY2(QString(e.what()).contains("Br = 16 is larger than n_q = 8"), e.what());
    }

    void mismatchedShapes() {
        const EngineError e = expectError([] {
            (void)cudaFlashForward(ones(4, 8), ones(5, 8), ones(6, 8), 0.1, false, blocks(4, 4));
        });
        QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
    }

    void noDevice() {
        const CudaDeviceStatus status = cudaDeviceStatus();
        if (status.usable) QSKIP("a usable GPU is present: the no-device path cannot run here");
        const EngineError e = expectError([] {
            (void)cudaFlashForward(ones(4, 8), ones(4, 8), ones(4, 8), 0.1, false, blocks(4, 4));
        });
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(e.what()).contains(QString::fromStdString(status.reason)), e.what());
        const EngineError backward = expectError([] {
            (void)cudaFlashBackward(ones(4, 8), ones(4, 8), ones(4, 8), ones(4, 8), 0.1, false,
                                    blocks(4, 4));
        });
        QCOMPARE(backward.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(backward.what()).contains(QString::fromStdString(status.reason)),
                 backward.what());
        const EngineError e2 = expectError([] { CudaBackend backend; });
        QCOMPARE(e2.kind(), ErrorKind::Unsupported);
    }

    void tilesTooLargeForSharedMemory() {
        FLASHVIZ_REQUIRE_GPU();
        const EngineError e = expectError([] {
            (void)cudaFlashForward(ones(300, 128), ones(300, 128), ones(300, 128), 0.1, false,
                                   blocks(256, 256), CudaKernelPath::Mirror);
        });
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(e.what()).contains("smaller blocks"), e.what());
    }

    // Tiles the forward mirror kernel runs on an H200 (165 KiB of its 227 KiB) but the backward's
    // do not (265 KiB: K, V, dK, dV, Q, dO, P and dS): refused before the forward runs, naming
    // the backward's tiles.
    void backwardTilesTooLargeForSharedMemory() {
        FLASHVIZ_REQUIRE_GPU();
        const EngineError e = expectError([] {
            (void)cudaFlashBackward(ones(128, 128), ones(160, 128), ones(160, 128), ones(128, 128),
                                    0.1, false, blocks(64, 80));
        });
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(e.what()).contains("backward kernel") &&
                     QString(e.what()).contains("Br = 64, Bc = 80, d = 128") &&
                     QString(e.what()).contains("smaller blocks"),
                 e.what());
        const EngineError trace = expectError([] {
            (void)cudaFlashBackwardTrace(ones(128, 128), ones(160, 128), ones(160, 128),
                                         ones(128, 128), 0.1, false, blocks(64, 80));
        });
        QCOMPARE(trace.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(trace.what()).contains("smaller blocks"), trace.what());
    }

    void fastKernelRefusesTheBug() {
        FLASHVIZ_REQUIRE_GPU();
        const EngineError e = expectError([] {
            (void)cudaFlashForward(ones(64, 64), ones(64, 64), ones(64, 64), 0.1, false,
                                   blocks(64, 64, false), CudaKernelPath::Fast);
        });
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(e.what()).contains("mirror"), e.what());
    }

    void fastKernelRefusesOtherHeadDims() {
        FLASHVIZ_REQUIRE_GPU();
        const EngineError e = expectError([] {
            (void)cudaFlashForward(ones(64, 32), ones(64, 32), ones(64, 32), 0.1, false,
                                   blocks(64, 64), CudaKernelPath::Fast);
        });
        QCOMPARE(e.kind(), ErrorKind::Unsupported);
        QVERIFY2(QString(e.what()).contains("d = 32"), e.what());
    }

    void standardAttentionOutOfMemory() {
        FLASHVIZ_REQUIRE_GPU();
        const int n = 1 << 20; // the n x n scores alone would take 4 TiB
        const EngineError e = expectError([&] {
            (void)cudaStandardAttention(ones(n, 1), ones(n, 1), ones(n, 1), 1.0, false);
        });
        QCOMPARE(e.kind(), ErrorKind::OutOfMemory);
        QVERIFY2(QString(e.what()).contains("score matrix") && QString(e.what()).contains("flash"),
                 e.what());
    }

    void debugScoreCopyOutOfMemory() {
        FLASHVIZ_REQUIRE_GPU();
        FLASHVIZ_SKIP_UNDER_SANITIZER("a deliberately refused cudaMalloc");
        const int n = 1 << 19; // a 1 TiB debug copy of S
        FlashOptions o = blocks(64, 64);
        o.keepFullScores = true;
        const EngineError e = expectError([&] {
            (void)cudaFlashForward(ones(n, 1), ones(n, 1), ones(n, 1), 1.0, false, o);
        });
        QCOMPARE(e.kind(), ErrorKind::OutOfMemory);
        QVERIFY2(QString(e.what()).contains("out of memory"), e.what());
    }

    // A launch the GPU refuses is caught by the check after the launch, says which kernel and why,
    // and leaves nothing behind: the next launch runs. 65536 heads is one more than a grid's y
    // dimension takes, a limit the launchers do not check beforehand.
    void refusedLaunchIsReported() {
        FLASHVIZ_REQUIRE_GPU();
        FLASHVIZ_SKIP_UNDER_SANITIZER("a deliberately refused launch");
        const int heads = 65536, n = 1, d = 64;
        const std::size_t count = std::size_t(heads) * n * d;
        cuda::DeviceBuffer<float> q(count, "Q"), k(count, "K"), v(count, "V"), o(count, "O");
        cuda::AttentionParams p =
            cuda::denseSelfAttentionParams(q.get(), k.get(), v.get(), o.get(), 1, heads, n, d, false);
        // Every variant for d, 3xTF32 and fp32 FMA: each launcher checks its own launch.
        bool triedTf32x3 = false, triedFma = false;
        for (const auto& kernel : cudaFastKernels()) {
            if (kernel.headDim != d || !kernel.fitsDevice) continue;
            (kernel.tf32x3 ? triedTf32x3 : triedFma) = true;
            const EngineError e = expectError([&] { cuda::launchFlashFast(p, kernel.id); });
            QCOMPARE(e.kind(), ErrorKind::BackendFailure);
            // The H200 answers cudaErrorInvalidValue; the name is the runtime's to choose.
            const QString expected = QString("Launching the kernel flash (fast, %1) failed on the GPU: ")
                                         .arg(kernel.tf32x3 ? "3xTF32" : "fp32 FMA");
            QVERIFY2(QString(e.what()).startsWith(expected) && QString(e.what()).contains("(cudaError"),
                     e.what());
            QVERIFY2(!QString(e.what()).contains("restart"), e.what()); // not a lost context
        }
        QVERIFY(triedTf32x3 && triedFma);

        p = cuda::denseSelfAttentionParams(q.get(), k.get(), v.get(), o.get(), 1, 1, n, d, false);
        cuda::launchFlashFast(p);
        cuda::synchronize("The launch after a refused one");
        QVERIFY(cudaDeviceStatus().usable);
    }

    // After a refusal the backend still works: errors leave no state behind.
    void recoversAfterErrors() {
        FLASHVIZ_REQUIRE_GPU();
        (void)expectError([] {
            (void)cudaStandardAttention(ones(1 << 20, 1), ones(1 << 20, 1), ones(1 << 20, 1), 1.0, false);
        });
        const CudaFlashOutput out = cudaFlashForward(ones(16, 64), ones(16, 64), ones(16, 64), 0.125,
                                                     false, blocks(16, 16));
        QVERIFY(out.result.o.allFinite());
        QVERIFY((out.result.o.array() - 1.0f).abs().maxCoeff() < 1e-6f); // V = 1: every output 1
    }
};

QTEST_GUILESS_MAIN(TestCudaErrors)
#include "tst_cuda_errors.moc"
