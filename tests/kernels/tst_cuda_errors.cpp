// Every refusal of the CUDA backend is an EngineError of the right kind with a sentence a user
// can act on: a d the kernels do not take, tiles too large for shared memory, a GPU out of
// memory, a trace too large to animate, the fast kernel asked to run the bug, no device at all.
#include "gpu_test_support.h"

#include "core/errors.h"

using namespace flashviz;
using namespace flashviz::gputest;

namespace {

template <typename F>
EngineError expectError(F&& run) {
    try {
        run();
    } catch (const EngineError& e) {
        return e;
    }
    return EngineError(ErrorKind::InvalidArgument, "no error was thrown");
}

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
