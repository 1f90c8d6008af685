// The device query, the "device too old" rule, the GPU as a hardware profile, and what the
// registry says about the CUDA backend. The pure parts run everywhere; the rest needs a GPU.
#include "gpu_test_support.h"

#include "kernels/backend_registry.h"

#include "core/errors.h"
#include "core/flash_versions.h"

using namespace flashviz;

class TestCudaDevice : public QObject {
    Q_OBJECT

private:
    static CudaDeviceInfo h100Like() {
        CudaDeviceInfo info;
        info.name = "Test H100";
        info.computeMajor = 9;
        info.computeMinor = 0;
        info.smCount = 132;
        info.sharedMemoryPerSmBytes = 233472;
        info.sharedMemoryPerBlockBytes = 232448;
        info.reservedSharedPerBlockBytes = 1024;
        info.maxThreadsPerSm = 2048;
        info.maxBlocksPerSm = 32;
        info.globalMemoryBytes = std::size_t(80) << 30;
        info.smClockHz = 1.98e9;
        info.memoryClockHz = 2.619e9;
        info.memoryBusWidthBits = 5120;
        return info;
    }

private slots:
    void assessByComputeCapability_data() {
        QTest::addColumn<int>("major");
        QTest::addColumn<int>("minor");
        QTest::addColumn<bool>("usable");
        QTest::newRow("Volta 7.0") << 7 << 0 << false;
        QTest::newRow("Turing 7.5") << 7 << 5 << false;
        QTest::newRow("A100 8.0") << 8 << 0 << true;
        QTest::newRow("Ada 8.9") << 8 << 9 << true;
        QTest::newRow("Hopper 9.0") << 9 << 0 << true;
        QTest::newRow("Blackwell 10.0") << 10 << 0 << true;
    }
    void assessByComputeCapability() {
        QFETCH(int, major);
        QFETCH(int, minor);
        QFETCH(bool, usable);
        CudaDeviceInfo info = h100Like();
        info.name = "Some GPU";
        info.computeMajor = major;
        info.computeMinor = minor;
        const CudaDeviceStatus status = assessCudaDevice(info);
        QCOMPARE(status.usable, usable);
        if (!usable) {
            const QString reason = QString::fromStdString(status.reason);
            QVERIFY2(reason.contains("Some GPU") && reason.contains(QString("%1.%2").arg(major).arg(minor)) &&
                         reason.contains("8.0"),
                     qPrintable(reason));
        } else {
            QVERIFY(status.reason.empty());
        }
    }

    void profileFromDeviceFigures() {
        const HardwareProfile p = hardwareProfileFor(h100Like());
        QCOMPARE(p.id, std::string("cuda0"));
        QVERIFY(QString::fromStdString(p.name).contains("Test H100"));
        QCOMPARE(p.smCount.value, 132.0);
        QCOMPARE(p.sharedMemoryPerSmBytes.value, 233472.0);
        QCOMPARE(p.hbmBytes.value, double(std::size_t(80) << 30));
        // 2 x 2.619 GHz x 640 bytes = 3.35 TB/s, the H100 SXM datasheet figure.
        QVERIFY(std::fabs(p.hbmBandwidthBytesPerSecond.value - 3.352e12) < 0.01e12);
        // 2 x 128 lanes x 132 SMs x 1.98 GHz = 66.9 TFLOP/s.
        QVERIFY(std::fabs(p.fp32FlopsPerSecond.value - 66.9e12) < 0.1e12);
        QVERIFY(std::fabs(p.fp16TensorFlopsPerSecond.value - 1070e12) < 5e12);
        for (const Figure* f : {&p.smCount, &p.sharedMemoryPerSmBytes, &p.hbmBytes,
                                &p.hbmBandwidthBytesPerSecond, &p.sramBandwidthBytesPerSecond,
                                &p.fp32FlopsPerSecond, &p.fp16TensorFlopsPerSecond})
            QVERIFY(!f->source.empty());
        // The per-SM limits the FlashAttention-2 page's occupancy and grid need: the device's own.
        QCOMPARE(p.sharedMemoryPerBlockBytes.value, 232448.0);
        QCOMPARE(p.reservedSharedPerBlockBytes.value, 1024.0);
        QCOMPARE(p.maxThreadsPerSm.value, 2048.0);
        QCOMPARE(p.maxBlocksPerSm.value, 32.0);
        KernelShape k;
        k.name = "k";
        k.threads = 128;
        k.blockRows = 128;
        k.sharedBytes = 100 * 1024;
        QCOMPARE(occupancy(k, p).blocksPerSm, 2); // 228 KiB for two blocks of 100 KiB + 1 KiB
    }

    void a100HasHalfTheFp32Lanes() {
        CudaDeviceInfo info = h100Like();
        info.computeMajor = 8;
        info.computeMinor = 0;
        info.smCount = 108;
        info.smClockHz = 1.41e9;
        const HardwareProfile p = hardwareProfileFor(info);
        // 2 x 64 x 108 x 1.41 GHz = 19.5 TFLOP/s, the datasheet's fp32 figure.
        QVERIFY(std::fabs(p.fp32FlopsPerSecond.value - 19.5e12) < 0.1e12);
        QVERIFY(std::fabs(p.fp16TensorFlopsPerSecond.value - 312e12) < 1e12);
    }

    void registryAgreesWithStatus() {
        const CudaDeviceStatus status = cudaDeviceStatus();
        QVERIFY(cudaBackendBuilt());
        bool found = false;
        for (const auto& b : listBackends()) {
            if (b.kind != BackendKind::Cuda) continue;
            found = true;
            QCOMPARE(b.available, status.usable);
            QCOMPARE(b.reason, status.reason);
        }
        QVERIFY(found);
        if (status.usable) {
            const auto backend = makeBackend(BackendKind::Cuda);
            QVERIFY(backend);
            QVERIFY(QString::fromStdString(backend->name()).startsWith("CUDA"));
            QVERIFY(currentGpuProfile().has_value());
        } else {
            // Without a device the reason is a sentence and asking for the backend says it.
            QVERIFY(!status.reason.empty());
            try {
                (void)makeBackend(BackendKind::Cuda);
                QFAIL("makeBackend(Cuda) should refuse without a device");
            } catch (const EngineError& e) {
                QCOMPARE(e.kind(), ErrorKind::Unsupported);
                QVERIFY2(QString(e.what()).contains(QString::fromStdString(status.reason)), e.what());
            }
            QVERIFY(!currentGpuProfile().has_value());
        }
    }

    // Both arithmetics for both benchmark d: 3xTF32 on tensor cores and fp32 FMA, named apart.
    void fastKernelsCoverBenchmarkDims() {
        const auto kernels = cudaFastKernels();
        for (int d : {64, 128})
            for (bool tf32x3 : {true, false}) {
                bool any = false;
                for (const auto& k : kernels)
                    if (k.headDim == d && k.tf32x3 == tf32x3) {
                        any = true;
                        QCOMPARE(QString::fromStdString(k.name).startsWith("tf32x3_"), tf32x3);
                    }
                QVERIFY2(any, qPrintable(QString("no %1 fast kernel for d = %2")
                                             .arg(tf32x3 ? "3xTF32" : "fp32 FMA")
                                             .arg(d)));
            }
    }

    void deviceInfo() {
        FLASHVIZ_REQUIRE_GPU();
        const auto info = cudaDeviceInfo();
        QVERIFY(info.has_value());
        QVERIFY(!info->name.empty());
        QVERIFY(info->computeMajor >= kCudaMinComputeMajor);
        QVERIFY(info->smCount > 0);
        QVERIFY(info->sharedMemoryPerBlockBytes >= 48 * 1024);
        QVERIFY(info->sharedMemoryPerSmBytes >= info->sharedMemoryPerBlockBytes);
        QVERIFY(info->globalMemoryBytes > (std::size_t(1) << 30));
        QVERIFY(info->smClockHz > 1e8);
        QVERIFY(info->memoryClockHz > 1e8);
        QVERIFY(info->memoryBusWidthBits > 0);
        const auto profile = cudaDeviceProfile();
        QVERIFY(profile.has_value());
        QCOMPARE(profile->smCount.value, double(info->smCount));
        QVERIFY(profile->hbmBandwidthBytesPerSecond.value > 1e11);
        QVERIFY(profile->fp32FlopsPerSecond.value > 1e12);
        qInfo("%s: sm_%d%d, %d SMs, %.0f KiB shared/SM, %.0f KiB/block, %.1f GiB, %.0f MHz, "
              "%.0f GB/s, %.1f TFLOP/s fp32",
              info->name.c_str(), info->computeMajor, info->computeMinor, info->smCount,
              info->sharedMemoryPerSmBytes / 1024.0, info->sharedMemoryPerBlockBytes / 1024.0,
              double(info->globalMemoryBytes) / double(1 << 30), info->smClockHz / 1e6,
              profile->hbmBandwidthBytesPerSecond.value / 1e9,
              profile->fp32FlopsPerSecond.value / 1e12);
        // The A100 (163 KiB per block) and Hopper (227 KiB) run both benchmark d on the fast
        // kernel; GPUs with about 100 KiB run d = 64 there and d = 128 on the mirror kernel.
        bool fits64 = false, fits128 = false;
        for (const auto& k : cudaFastKernels()) {
            fits64 = fits64 || (k.headDim == 64 && k.fitsDevice);
            fits128 = fits128 || (k.headDim == 128 && k.fitsDevice);
        }
        QVERIFY(fits64);
        if (info->sharedMemoryPerBlockBytes >= 160 * 1024) QVERIFY(fits128);
    }
};

QTEST_GUILESS_MAIN(TestCudaDevice)
#include "tst_cuda_device.moc"
