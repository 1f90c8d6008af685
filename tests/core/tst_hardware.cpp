// Hardware profiles: the four GPUs exist, every figure is positive and says where it comes from,
// and the figures agree with the vendors' published numbers.
#include "core/hardware.h"

#include <QtTest/QtTest>

#include <set>
#include <string>

using namespace flashviz;

namespace {

constexpr double KiB = 1024.0;
constexpr double GB = 1e9;
constexpr double TB = 1e12;

const HardwareProfile* byName(std::initializer_list<const char*> parts) {
    for (const HardwareProfile& p : hardwareProfiles()) {
        bool all = true;
        for (const char* part : parts)
            if (p.name.find(part) == std::string::npos && p.id.find(part) == std::string::npos)
                all = false;
        if (all) return &p;
    }
    return nullptr;
}

std::vector<std::pair<const char*, const Figure*>> figures(const HardwareProfile& p) {
    return {{"SMs", &p.smCount},
            {"shared memory per SM", &p.sharedMemoryPerSmBytes},
            {"HBM size", &p.hbmBytes},
            {"HBM bandwidth", &p.hbmBandwidthBytesPerSecond},
            {"SRAM bandwidth", &p.sramBandwidthBytesPerSecond},
            {"fp32 rate", &p.fp32FlopsPerSecond},
            {"fp16 tensor rate", &p.fp16TensorFlopsPerSecond}};
}

bool within(double value, double low, double high) {
    return value >= low && value <= high;
}

} // namespace

class TstHardware : public QObject {
    Q_OBJECT

  private slots:
    void everyProfileIsComplete();
    void idsAreUniqueAndFindable();
    void publishedFigures_data();
    void publishedFigures();
    void ordering();
    void ridgePointPerArithmetic();
};

void TstHardware::everyProfileIsComplete() {
    QVERIFY(hardwareProfiles().size() >= 4);
    for (const HardwareProfile& p : hardwareProfiles()) {
        QVERIFY(!p.id.empty());
        QVERIFY(!p.name.empty());
        for (const auto& [what, figure] : figures(p)) {
            QVERIFY2(figure->value > 0, qPrintable(QStringLiteral("%1: %2 is not positive")
                                                       .arg(QString::fromStdString(p.id), what)));
            QVERIFY2(!figure->source.empty(),
                     qPrintable(QStringLiteral("%1: %2 has no source")
                                    .arg(QString::fromStdString(p.id), what)));
        }
        QCOMPARE(p.totalSramBytes(), p.smCount.value * p.sharedMemoryPerSmBytes.value);
        // The premise of the whole paper: on-chip memory is far faster than HBM and far smaller.
        QVERIFY(p.sramBandwidthBytesPerSecond.value > 5 * p.hbmBandwidthBytesPerSecond.value);
        QVERIFY(p.totalSramBytes() * 1000 < p.hbmBytes.value);
        QVERIFY(p.fp16TensorFlopsPerSecond.value > p.fp32FlopsPerSecond.value);
    }
}

void TstHardware::idsAreUniqueAndFindable() {
    std::set<std::string> ids;
    for (const HardwareProfile& p : hardwareProfiles()) {
        QVERIFY2(ids.insert(p.id).second, p.id.c_str());
        QCOMPARE(&findHardwareProfile(p.id), &p);
        QVERIFY(p.id.find(' ') == std::string::npos); // typed on a command line
    }
    QCOMPARE(findHardwareProfile("a100-40gb").smCount.value, 108.0);
}

void TstHardware::publishedFigures_data() {
    QTest::addColumn<QStringList>("nameParts");
    QTest::addColumn<double>("sms");
    QTest::addColumn<double>("sharedPerSm");
    QTest::addColumn<double>("hbmLow");
    QTest::addColumn<double>("hbmHigh");
    QTest::addColumn<double>("bandwidth");
    QTest::addColumn<double>("fp32");
    QTest::addColumn<double>("fp16");
    // SMs, usable shared memory per SM, HBM capacity (GB or GiB), HBM bandwidth, fp32 and dense
    // fp16 tensor rates, from NVIDIA's datasheets and architecture whitepapers.
    QTest::newRow("A100 40 GB") << QStringList{"A100", "40"} << 108.0 << 164 * KiB << 40 * GB
                                << 43 * GB << 1.555 * TB << 19.5 * TB << 312 * TB;
    QTest::newRow("A100 80 GB") << QStringList{"A100", "80"} << 108.0 << 164 * KiB << 80 * GB
                                << 86 * GB << 2.039 * TB << 19.5 * TB << 312 * TB;
    QTest::newRow("H100 SXM") << QStringList{"H100"} << 132.0 << 228 * KiB << 80 * GB << 86 * GB
                              << 3.35 * TB << 67 * TB << 989 * TB;
    QTest::newRow("H200") << QStringList{"H200"} << 132.0 << 228 * KiB << 141 * GB << 152 * GB
                          << 4.8 * TB << 67 * TB << 989 * TB;
}

void TstHardware::publishedFigures() {
    QFETCH(QStringList, nameParts);
    QFETCH(double, sms);
    QFETCH(double, sharedPerSm);
    QFETCH(double, hbmLow);
    QFETCH(double, hbmHigh);
    QFETCH(double, bandwidth);
    QFETCH(double, fp32);
    QFETCH(double, fp16);
    const HardwareProfile* p = nullptr;
    if (nameParts.size() == 2) {
        const std::string a = nameParts[0].toStdString(), b = nameParts[1].toStdString();
        p = byName({a.c_str(), b.c_str()});
    } else {
        const std::string a = nameParts[0].toStdString();
        p = byName({a.c_str()});
    }
    QVERIFY2(p, qPrintable(nameParts.join(' ') + " has no profile"));
    QCOMPARE(p->smCount.value, sms);
    QCOMPARE(p->sharedMemoryPerSmBytes.value, sharedPerSm);
    QVERIFY2(within(p->hbmBytes.value, hbmLow, hbmHigh),
             qPrintable(QString::number(p->hbmBytes.value)));
    QVERIFY2(within(p->hbmBandwidthBytesPerSecond.value, 0.99 * bandwidth, 1.01 * bandwidth),
             qPrintable(QString::number(p->hbmBandwidthBytesPerSecond.value)));
    QVERIFY2(within(p->fp32FlopsPerSecond.value, 0.99 * fp32, 1.01 * fp32),
             qPrintable(QString::number(p->fp32FlopsPerSecond.value)));
    QVERIFY2(within(p->fp16TensorFlopsPerSecond.value, 0.99 * fp16, 1.01 * fp16),
             qPrintable(QString::number(p->fp16TensorFlopsPerSecond.value)));
}

void TstHardware::ordering() {
    const HardwareProfile* a40 = byName({"A100", "40"});
    const HardwareProfile* a80 = byName({"A100", "80"});
    const HardwareProfile* h100 = byName({"H100"});
    const HardwareProfile* h200 = byName({"H200"});
    QVERIFY(a40 && a80 && h100 && h200);
    QVERIFY(a80->hbmBytes.value > a40->hbmBytes.value);
    QVERIFY(a80->hbmBandwidthBytesPerSecond.value > a40->hbmBandwidthBytesPerSecond.value);
    QVERIFY(h100->hbmBandwidthBytesPerSecond.value > a80->hbmBandwidthBytesPerSecond.value);
    QVERIFY(h200->hbmBandwidthBytesPerSecond.value > h100->hbmBandwidthBytesPerSecond.value);
    QVERIFY(h200->hbmBytes.value > h100->hbmBytes.value);
    QVERIFY(h100->totalSramBytes() > a80->totalSramBytes());
}

// The ridge point is the arithmetic's peak over the HBM bandwidth; fp16/bf16 values are half as
// wide as fp32's, and tensor cores put the ridge far to the right of the CUDA cores'.
void TstHardware::ridgePointPerArithmetic() {
    QCOMPARE(valueBytes(Arithmetic::Fp32CudaCores), 4.0);
    QCOMPARE(valueBytes(Arithmetic::Fp16TensorCores), 2.0);
    for (const HardwareProfile& p : hardwareProfiles()) {
        const double bandwidth = p.hbmBandwidthBytesPerSecond.value;
        QCOMPARE(ridgeFlopsPerByte(p, Arithmetic::Fp32CudaCores),
                 p.fp32FlopsPerSecond.value / bandwidth);
        QCOMPARE(ridgeFlopsPerByte(p, Arithmetic::Fp16TensorCores),
                 p.fp16TensorFlopsPerSecond.value / bandwidth);
        QVERIFY(ridgeFlopsPerByte(p, Arithmetic::Fp16TensorCores) >
                10 * ridgeFlopsPerByte(p, Arithmetic::Fp32CudaCores));
    }
    QCOMPARE(QString::fromStdString(arithmeticName(Arithmetic::Fp16TensorCores)),
             QStringLiteral("fp16/bf16 tensor cores"));
}

QTEST_APPLESS_MAIN(TstHardware)
#include "tst_hardware.moc"
