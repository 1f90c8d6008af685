// Ordinary attention on the GPU (cuBLAS, softmax kernel, cuBLAS) against the CPU reference:
// shapes, the causal mask, rows that see no key.
#include "gpu_test_support.h"

#include "core/attention.h"

using namespace flashviz;
using namespace flashviz::gputest;

class TestCudaStandard : public QObject {
    Q_OBJECT

private slots:
    void matchesReference_data() {
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("nk");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::newRow("toy 8x8 d4") << 8 << 8 << 4 << false;
        QTest::newRow("causal 37x37 d5") << 37 << 37 << 5 << true;
        QTest::newRow("odd n_k 70x33 d16") << 70 << 33 << 16 << false;
        QTest::newRow("causal nq>nk 100x30 d16") << 100 << 30 << 16 << true;
        QTest::newRow("causal nq<nk 30x100 d32") << 30 << 100 << 32 << true;
        QTest::newRow("1024x1024 d64") << 1024 << 1024 << 64 << false;
        QTest::newRow("causal 1000x1200 d128") << 1000 << 1200 << 128 << true;
        QTest::newRow("few rows 4x16384 d64") << 4 << 16384 << 64 << false;
        QTest::newRow("causal 4096x4096 d64") << 4096 << 4096 << 64 << true;
    }
    void matchesReference() {
        QFETCH(int, nq);
        QFETCH(int, nk);
        QFETCH(int, d);
        QFETCH(bool, causal);
        FLASHVIZ_REQUIRE_GPU();
        FLASHVIZ_SKIP_IF_LARGE(double(nq) * nk);
        const Problem p = makeProblem(spec(nq, nk, d, causal));
        const MatrixF gpu = cudaStandardAttention(p.q.cast<float>(), p.k.cast<float>(),
                                                  p.v.cast<float>(), p.scale(), causal);
        const CheckReport check = compareOutputs(gpu.cast<double>(), referenceAttention(p), 1e-4);
        QVERIFY2(check.passed(), check.summary().c_str());
        if (causal && nq > nk)
            for (int r = 0; r < nq - nk; ++r) QCOMPARE(gpu.row(r).cwiseAbs().maxCoeff(), 0.0f);
    }

    void agreesWithFlash() {
        FLASHVIZ_REQUIRE_GPU();
        const Problem p = makeProblem(spec(500, 700, 64, true));
        const MatrixF standard = cudaStandardAttention(p.q.cast<float>(), p.k.cast<float>(),
                                                       p.v.cast<float>(), p.scale(), true);
        const CudaFlashOutput flash = cudaFlashForward(p.q.cast<float>(), p.k.cast<float>(),
                                                       p.v.cast<float>(), p.scale(), true, blocks(64, 64));
        QVERIFY(mixedError(flash.result.o, standard) <= 1e-4);
    }
};

QTEST_GUILESS_MAIN(TestCudaStandard)
#include "tst_cuda_standard.moc"
