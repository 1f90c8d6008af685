// The .npy reader (core/npy.h) and the inputs from files (core/problem.h, core/setup.h): files
// written by an independent writer (xtensor's dump_npy) read back to the same values, and every
// malformed file, written here byte by byte, is refused with a message that names the file and
// says what is wrong.
#include "core/backward.h"
#include "core/errors.h"
#include "core/npy.h"
#include "core/options.h"
#include "core/problem.h"
#include "core/setup.h"
#include "core/steps.h"
#include "tests/npy_test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace flashviz;
using flashviz::test::headOf;
using flashviz::test::normalArray;

namespace {

// An .npy file as numpy.save lays it out: magic, version, header length, the header padded with
// spaces to a multiple of 64 bytes and ended by a newline, then the data.
std::string npyFile(const std::string& header, const std::string& data, int major = 1) {
    const std::size_t lengthBytes = major == 1 ? 2 : 4;
    std::string padded = header;
    const std::size_t total = 8 + lengthBytes + padded.size() + 1;
    padded += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::string out = "\x93NUMPY";
    out += char(major);
    out += char(0);
    for (std::size_t i = 0; i < lengthBytes; ++i)
        out += char((padded.size() >> (8 * i)) & 0xff);
    return out + padded + data;
}

std::string header(const std::string& descr, const std::string& shape, bool fortran = false) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
           ", 'shape': " + shape + ", }";
}

template <class T> std::string dataOf(const std::vector<T>& values) {
    std::string bytes(values.size() * sizeof(T), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

std::vector<float> counting(int count) {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i)
        v[std::size_t(i)] = 0.5f * float(i) - 3.0f;
    return v;
}

// A float32 (rows, cols) file of 0.5 i - 3.
std::string floatFile(int rows, int cols) {
    return npyFile(header("<f4", "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")"),
                   dataOf(counting(rows * cols)));
}

QString refusal(const std::string& bytes, std::optional<int> head = std::nullopt) {
    try {
        (void)readNpyMatrix(bytes, "x.npy", head);
    } catch (const EngineError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

void writeFile(const QString& path, const std::string& bytes) {
    std::ofstream out(path.toStdString(), std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

QString messageOf(const std::function<void()>& run) {
    try {
        run();
    } catch (const EngineError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

} // namespace

class TestNpy : public QObject {
    Q_OBJECT
  private slots:
    void xtensorFilesReadBack_data();
    void xtensorFilesReadBack();
    void versionsTwoAndThreeRead();
    void nativeOrderMarksRead();
    void malformedFilesAreRefused_data();
    void malformedFilesAreRefused();
    void headsAreChosenWithTheirRange();
    void filesOnDiskAreReadAndRefusedAlike();
    void missingFilesAreNamed();
    void problemFromFilesHasTheirValues();
    void shapesThatDisagreeNameBothFiles();
    void upstreamFromAFileIsTheBackwardsDo();
    void filesAndDesignAreRefusedTogether();
    void choosingFilesReadsOnlyTheirHeaders();
    void commandLineReadsTheFiles();
    void commandLineRefusesWhatDoesNotFit_data();
    void commandLineRefusesWhatDoesNotFit();

  private:
    QTemporaryDir m_dir;
    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }
    std::string file(const char* name, const std::string& bytes) const {
        writeFile(path(name), bytes);
        return path(name).toStdString();
    }
};

void TestNpy::xtensorFilesReadBack_data() {
    QTest::addColumn<bool>("single");
    QTest::addColumn<std::vector<std::size_t>>("shape");
    QTest::addColumn<int>("head");
    QTest::newRow("float32 (7, 5)") << true << std::vector<std::size_t>{7, 5} << -1;
    QTest::newRow("float64 (9, 3)") << false << std::vector<std::size_t>{9, 3} << -1;
    QTest::newRow("float32 (4, 6, 3), head 2") << true << std::vector<std::size_t>{4, 6, 3} << 2;
    QTest::newRow("float64 (3, 5, 2), head 0") << false << std::vector<std::size_t>{3, 5, 2} << 0;
    QTest::newRow("float64 (3, 5, 2), head 2") << false << std::vector<std::size_t>{3, 5, 2} << 2;
}

void TestNpy::xtensorFilesReadBack() {
    QFETCH(bool, single);
    QFETCH(std::vector<std::size_t>, shape);
    QFETCH(int, head);
    const std::optional<int> chosen = head < 0 ? std::nullopt : std::optional(head);
    const auto check = [&](const auto& array) {
        const std::string bytes = xt::dump_npy(array);
        const Matrix read = readNpyMatrix(bytes, "fixture.npy", chosen);
        QVERIFY(read ==
                headOf(array, std::size_t(std::max(head, 0)))); // exactly: float32 widens exactly
        const NpyHeader h = readNpyHeader(bytes, "fixture.npy");
        QCOMPARE(h.dtype, single ? NpyDtype::Float32 : NpyDtype::Float64);
        QCOMPARE(h.shape.size(), shape.size());
        // The same through a file on disk, which reads only the chosen head.
        const std::string onDisk = path("fixture.npy").toStdString();
        xt::dump_npy(onDisk, array);
        QVERIFY(loadNpyMatrix(onDisk, chosen) == read);
        QCOMPARE(describe(loadNpyHeader(onDisk)), describe(h));
    };
    if (single)
        check(normalArray<float>(shape, 7));
    else
        check(normalArray<double>(shape, 7));
}

void TestNpy::versionsTwoAndThreeRead() {
    const std::vector<double> values{1.5, -2.0, 0.25, 8.0, 3.0, -0.5};
    for (const int major : {1, 2, 3}) {
        const Matrix m =
            readNpyMatrix(npyFile(header("<f8", "(3, 2)"), dataOf(values), major), "v.npy");
        QCOMPARE(m.rows(), 3);
        QCOMPARE(m(2, 1), -0.5);
        QCOMPARE(readNpyHeader(npyFile(header("<f8", "(3, 2)"), dataOf(values), major), "v.npy")
                     .majorVersion,
                 major);
    }
    // Double quotes, no trailing comma, keys in another order: still numpy's dict literal.
    const Matrix m =
        readNpyMatrix(npyFile("{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f4\"}",
                              dataOf(counting(6))),
                      "q.npy");
    QCOMPARE(m(1, 2), 0.5 * 5 - 3);
}

void TestNpy::nativeOrderMarksRead() {
    for (const char* descr : {"=f4", "|f4"})
        QCOMPARE(
            readNpyMatrix(npyFile(header(descr, "(2, 2)"), dataOf(counting(4))), "n.npy")(1, 1),
            0.5 * 3 - 3);
}

void TestNpy::malformedFilesAreRefused_data() {
    QTest::addColumn<std::string>("bytes");
    QTest::addColumn<QStringList>("words");
    const std::string f4x8x4 = dataOf(counting(32));
    const std::string good = npyFile(header("<f4", "(8, 4)"), f4x8x4);
    QTest::newRow("bad magic") << ("\x93NUMPX" + good.substr(6))
                               << QStringList{"not an .npy file", "magic"};
    QTest::newRow("empty") << std::string() << QStringList{"not an .npy file"};
    QTest::newRow("a text file") << std::string("q,k,v\n1,2,3\n")
                                 << QStringList{"not an .npy file"};
    std::string version4 = good;
    version4[6] = 4;
    QTest::newRow("version 4.0") << version4
                                 << QStringList{"unsupported .npy version 4.0", "1.0, 2.0 and 3.0"};
    std::string version11 = good;
    version11[7] = 1;
    QTest::newRow("version 1.1") << version11 << QStringList{"unsupported .npy version 1.1"};
    QTest::newRow("ends in the version")
        << good.substr(0, 7) << QStringList{"truncated", "version"};
    QTest::newRow("ends in the length") << good.substr(0, 9) << QStringList{"truncated", "length"};
    QTest::newRow("ends in the header") << good.substr(0, 40) << QStringList{"truncated", "header"};
    std::string hugeHeader = good;
    hugeHeader[8] = char(0xff);
    hugeHeader[9] = char(0xff);
    QTest::newRow("header length past the file")
        << hugeHeader << QStringList{"truncated", "header is 65535 bytes"};
    std::string v2huge = npyFile(header("<f4", "(8, 4)"), f4x8x4, 2);
    v2huge[10] = char(0x10); // 1 MiB and more
    QTest::newRow("header past 64 KiB") << v2huge << QStringList{"header is", "up to 65536 bytes"};
    QTest::newRow("no shape key") << npyFile("{'descr': '<f4', 'fortran_order': False, }", f4x8x4)
                                  << QStringList{"malformed .npy header", "no 'shape' key"};
    QTest::newRow("no descr key") << npyFile("{'fortran_order': False, 'shape': (8, 4), }", f4x8x4)
                                  << QStringList{"malformed .npy header", "no 'descr' key"};
    QTest::newRow("unknown key")
        << npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (8, 4), 'extra': 1}", f4x8x4)
        << QStringList{"malformed .npy header", "unknown key 'extra'"};
    QTest::newRow("key twice")
        << npyFile("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (8, 4)}",
                   f4x8x4)
        << QStringList{"malformed .npy header", "'descr' appears twice"};
    QTest::newRow("junk in the shape") << npyFile(header("<f4", "(8, 4x)"), f4x8x4)
                                       << QStringList{"malformed .npy header", "'shape'"};
    QTest::newRow("negative shape") << npyFile(header("<f4", "(-8, 4)"), f4x8x4)
                                    << QStringList{"malformed .npy header", "'shape'"};
    QTest::newRow("shape past 2^63") << npyFile(header("<f4", "(99999999999999999999, 4)"), f4x8x4)
                                     << QStringList{"malformed .npy header", "2^63"};
    QTest::newRow("fortran_order not a bool")
        << npyFile("{'descr': '<f4', 'fortran_order': 0, 'shape': (8, 4), }", f4x8x4)
        << QStringList{"malformed .npy header", "'fortran_order' must be True or False"};
    QTest::newRow("text after the dict")
        << npyFile(header("<f4", "(8, 4)") + " x", f4x8x4)
        << QStringList{"malformed .npy header", "after the closing"};
    QTest::newRow("not a dict") << npyFile("[1, 2]", f4x8x4)
                                << QStringList{"malformed .npy header", "'{'"};
    QTest::newRow("int32") << npyFile(header("<i4", "(8, 4)"), f4x8x4)
                           << QStringList{"int32 ('<i4')", "float32", "float64"};
    QTest::newRow("float16") << npyFile(header("<f2", "(8, 4)"), f4x8x4.substr(0, 64))
                             << QStringList{"float16 ('<f2')", "float32", "float64"};
    QTest::newRow("complex64") << npyFile(header("<c8", "(8, 4)"), f4x8x4 + f4x8x4)
                               << QStringList{"complex64 ('<c8')"};
    QTest::newRow("bool") << npyFile(header("|b1", "(8, 4)"), f4x8x4.substr(0, 32))
                          << QStringList{"bool ('|b1')"};
    QTest::newRow("objects") << npyFile(header("|O", "(8, 4)"), f4x8x4)
                             << QStringList{"Python objects ('|O')"};
    QTest::newRow("structured")
        << npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (8, 4), }", f4x8x4)
        << QStringList{"structured dtype", "float32"};
    QTest::newRow("big-endian float64") << npyFile(header(">f8", "(4, 4)"), f4x8x4)
                                        << QStringList{"big-endian", "('>f8')", "'<f8'"};
    QTest::newRow("Fortran order") << npyFile(header("<f4", "(8, 4)", true), f4x8x4)
                                   << QStringList{"Fortran order", "numpy.ascontiguousarray"};
    QTest::newRow("1-D") << npyFile(header("<f4", "(32,)"), f4x8x4)
                         << QStringList{"(32,) has 1 dimension", "(n, d)", "(h, n, d)"};
    QTest::newRow("0-D") << npyFile(header("<f4", "()"), f4x8x4.substr(0, 4))
                         << QStringList{"has 0 dimensions", "(n, d)"};
    QTest::newRow("4-D") << npyFile(header("<f4", "(2, 2, 2, 4)"), f4x8x4)
                         << QStringList{"4 dimensions", "(h, n, d)"};
    QTest::newRow("no rows") << npyFile(header("<f4", "(0, 4)"), std::string())
                             << QStringList{"0 rows (n)", "1 to 1048576"};
    QTest::newRow("no columns") << npyFile(header("<f4", "(8, 0)"), std::string())
                                << QStringList{"0 columns (d)", "1 to 1024"};
    QTest::newRow("no heads") << npyFile(header("<f4", "(0, 8, 4)"), std::string())
                              << QStringList{"0 heads (h)"};
    // A header that names far more data than the file has must not be allocated.
    QTest::newRow("rows past the limit")
        << npyFile(header("<f4", "(2000000, 4)"), f4x8x4)
        << QStringList{"2000000 rows (n)", "past FlashViz's limit of 1048576"};
    QTest::newRow("columns past the limit") << npyFile(header("<f4", "(8, 4096)"), f4x8x4)
                                            << QStringList{"4096 columns (d)", "limit of 1024"};
    QTest::newRow("heads past the limit")
        << npyFile(header("<f4", "(9000000000000000000, 8, 4)"), f4x8x4)
        << QStringList{"heads (h)", "limit of 65536"};
    QTest::newRow("a large shape, little data")
        << npyFile(header("<f8", "(1048576, 1024)"), f4x8x4)
        << QStringList{"truncated", "float64 (1048576, 1024) is 8589934592 bytes",
                       "8589934464 bytes missing"};
    QTest::newRow("truncated data") << good.substr(0, good.size() - 28)
                                    << QStringList{"truncated", "float32 (8, 4) is 128 bytes",
                                                   "the file has 100 bytes", "28 bytes missing"};
    QTest::newRow("trailing bytes")
        << good + "junk"
        << QStringList{"4 bytes past the end of the data", "float32 (8, 4) is 128 bytes"};
    std::vector<float> bad = counting(32);
    bad[2 * 4 + 1] = std::numeric_limits<float>::quiet_NaN();
    bad[7 * 4 + 3] = -std::numeric_limits<float>::infinity();
    QTest::newRow("not finite") << npyFile(header("<f4", "(8, 4)"), dataOf(bad))
                                << QStringList{"2 values are not finite", "row 2, column 1",
                                               "(nan)", "finite inputs"};
    std::vector<double> inf(12, 1.0);
    inf[11] = std::numeric_limits<double>::infinity();
    QTest::newRow("one infinity") << npyFile(header("<f8", "(3, 4)"), dataOf(inf))
                                  << QStringList{"1 value is not finite", "row 2, column 3",
                                                 "(inf)"};
}

void TestNpy::malformedFilesAreRefused() {
    QFETCH(std::string, bytes);
    QFETCH(QStringList, words);
    const QString message = refusal(bytes);
    QVERIFY2(message.startsWith(QStringLiteral("x.npy: ")), qPrintable(message));
    for (const QString& word : words)
        QVERIFY2(message.contains(word), qPrintable(message + " lacks: " + word));
    // From a file on disk the same message, naming the path.
    const std::string onDisk = file("bad.npy", bytes);
    const QString fromDisk = messageOf([&] { (void)loadNpyMatrix(onDisk); });
    QCOMPARE(fromDisk, QString::fromStdString(onDisk) + message.mid(5));
}

void TestNpy::headsAreChosenWithTheirRange() {
    const std::string three = npyFile(header("<f4", "(3, 2, 4)"), dataOf(counting(24)));
    QVERIFY(refusal(three).contains(QStringLiteral("holds 3 heads")));
    QVERIFY(refusal(three).contains(QStringLiteral("choose one with a head index, 0 to 2")));
    for (const int head : {-1, 3, 9}) {
        const QString m = refusal(three, head);
        QVERIFY2(m.contains(QStringLiteral("head %1 is out of range").arg(head)), qPrintable(m));
        QVERIFY2(m.contains(QStringLiteral("3 heads, 0 to 2")), qPrintable(m));
    }
    QCOMPARE(readNpyMatrix(three, "h.npy", 2)(0, 0), 0.5 * 16 - 3);
    QVERIFY(refusal(floatFile(2, 4), 0).contains(QStringLiteral("leave it out")));
    // A non-finite value is placed in its head.
    std::vector<float> values = counting(24);
    values[8 + 5] = std::numeric_limits<float>::infinity();
    const QString m = refusal(npyFile(header("<f4", "(3, 2, 4)"), dataOf(values)), 1);
    QVERIFY2(m.contains(QStringLiteral("row 1, column 1 of head 1")), qPrintable(m));
    QVERIFY(refusal(npyFile(header("<f4", "(3, 2, 4)"), dataOf(values)), 0).isEmpty());
}

void TestNpy::filesOnDiskAreReadAndRefusedAlike() {
    const std::string bytes = floatFile(5, 3);
    QVERIFY(loadNpyMatrix(file("ok.npy", bytes)) == readNpyMatrix(bytes, "ok.npy"));
    QCOMPARE(loadNpyHeader(file("ok.npy", bytes)).rows(), 5);
}

void TestNpy::missingFilesAreNamed() {
    const std::string missing = path("nowhere.npy").toStdString();
    QCOMPARE(messageOf([&] { (void)loadNpyMatrix(missing); }),
             QString::fromStdString(missing + ": no such file"));
    const std::string folder = m_dir.path().toStdString();
    QVERIFY(messageOf([&] {
                (void)loadNpyHeader(folder);
            }).endsWith(QStringLiteral("is a folder, not an .npy file")));
}

void TestNpy::problemFromFilesHasTheirValues() {
    const auto q = normalArray<float>({6, 4}, 1), k = normalArray<float>({10, 4}, 2);
    const auto v = normalArray<double>({10, 4}, 3);
    xt::dump_npy(path("q.npy").toStdString(), q);
    xt::dump_npy(path("k.npy").toStdString(), k);
    xt::dump_npy(path("v.npy").toStdString(), v);
    const InputFiles files{path("q.npy").toStdString(),
                           path("k.npy").toStdString(),
                           path("v.npy").toStdString(),
                           {},
                           std::nullopt};
    const ProblemSpec spec = withInputFiles(toySetup().spec, files);
    QCOMPARE(spec.queries, 6);
    QCOMPARE(spec.keys, 10);
    QCOMPARE(spec.headDim, 4);
    const Problem p = makeProblem(spec);
    QVERIFY(p.q == headOf(q));
    QVERIFY(p.k == headOf(k));
    QVERIFY(p.v == headOf(v));
    QVERIFY(!p.upstream);
    QCOMPARE(describeInputs(spec, InputPaths::FileNames),
             std::string("inputs from q.npy, k.npy, v.npy"));
    QCOMPARE(describeInputs(spec), "inputs from " + files.q + ", " + files.k + ", " + files.v);
    QCOMPARE(describeInputs(toySetup().spec), std::string("gaussian inputs, seed 1"));
    // A spec whose sizes are not the files' (they changed since) is refused, not run.
    ProblemSpec stale = spec;
    stale.queries = 8;
    QVERIFY(messageOf([&] {
                (void)makeProblem(stale);
            }).contains(QStringLiteral("the files changed since they were chosen")));
    // The head index goes to the (h, n, d) files; a 2-D file beside them is its one head.
    const auto heads = normalArray<float>({3, 6, 4}, 4);
    xt::dump_npy(path("q3.npy").toStdString(), heads);
    InputFiles headed = files;
    headed.q = path("q3.npy").toStdString();
    headed.head = 1;
    const Problem h = makeProblem(withInputFiles(spec, headed));
    QVERIFY(h.q == headOf(heads, 1));
    QVERIFY(h.k == headOf(k));
    QCOMPARE(describeInputs(withInputFiles(spec, headed), InputPaths::FileNames),
             std::string("inputs from q3.npy, k.npy, v.npy (head 1)"));
    InputFiles noHeads = files;
    noHeads.head = 0;
    QVERIFY(messageOf([&] {
                (void)withInputFiles(spec, noHeads);
            }).contains(QStringLiteral("none of the files holds heads")));
}

void TestNpy::shapesThatDisagreeNameBothFiles() {
    const std::string q = file("q.npy", floatFile(6, 4)), k = file("k.npy", floatFile(10, 4));
    const std::string v5 = file("v5.npy", floatFile(10, 5)), v9 = file("v9.npy", floatFile(9, 4));
    for (const std::string& v : {v5, v9}) {
        const QString m = messageOf([&] { (void)loadInputFiles({q, k, v, {}, std::nullopt}); });
        QVERIFY2(m.contains(QString::fromStdString("K (" + k + ") 10 x 4")), qPrintable(m));
        QVERIFY2(m.contains(QString::fromStdString("V (" + v + ")")), qPrintable(m));
        QVERIFY2(m.contains(QStringLiteral("K and V n_k x d")), qPrintable(m));
    }
    const std::string dO = file("do.npy", floatFile(6, 3));
    const QString m = messageOf([&] { (void)loadInputFiles({q, k, k, dO, std::nullopt}); });
    QVERIFY2(m.contains(QString::fromStdString("dO (" + dO + ") is 6 x 3")), qPrintable(m));
    QVERIFY2(m.contains(QStringLiteral("n_q x d = 6 x 4")), qPrintable(m));
    // A bad file is named with the matrix it was to be.
    const std::string bad =
        file("int.npy", npyFile(header("<i4", "(10, 4)"), dataOf(counting(40))));
    QVERIFY(messageOf([&] {
                (void)loadInputFiles({q, bad, k, {}, std::nullopt});
            }).startsWith(QString::fromStdString("K: " + bad + ": int32")));
    QVERIFY(messageOf([&] {
                (void)loadInputFiles({q, {}, {}, {}, std::nullopt});
            }).contains(QStringLiteral("none is given for K, V")));
}

void TestNpy::upstreamFromAFileIsTheBackwardsDo() {
    const std::string q = file("q.npy", floatFile(6, 4)), k = file("k.npy", floatFile(10, 4));
    const auto dO = normalArray<double>({6, 4}, 9);
    xt::dump_npy(path("do.npy").toStdString(), dO);
    const InputFiles files{q, k, k, path("do.npy").toStdString(), std::nullopt};
    const Problem p = makeProblem(withInputFiles({}, files));
    QVERIFY(p.upstream && *p.upstream == headOf(dO));
    QVERIFY(upstreamGradient(p, {}) == headOf(dO));
    // The step engine and the run take it too.
    FlashOptions options = toySetup().options;
    const StepEngine engine(p, Algorithm::Backward, options);
    QVERIFY(engine.upstreamGradient() == headOf(dO));
    // Without a dO file, the seed's.
    const Problem seeded = makeProblem(withInputFiles({}, {q, k, k, {}, std::nullopt}));
    QVERIFY(upstreamGradient(seeded, {}) == upstreamGradient(seeded.spec, {}));
    BackwardOptions ones;
    ones.onesUpstream = true;
    QVERIFY(messageOf([&] {
                (void)upstreamGradient(p, ones);
            }).contains(QStringLiteral("two upstream gradients")));
    options.backward.onesUpstream = true;
    QVERIFY(messageOf([&] {
                validate(p.spec, options);
            }).contains(QStringLiteral("two upstream gradients")));
}

void TestNpy::filesAndDesignAreRefusedTogether() {
    ProblemSpec spec;
    spec.files = InputFiles{"q.npy", "k.npy", "v.npy", {}, std::nullopt};
    spec.design = InputDesign{};
    QVERIFY(messageOf([&] {
                validate(spec);
            }).contains(QStringLiteral("either from .npy files or from the input designer")));
}

// withInputFiles reads headers and lengths only: a NaN in the data passes it and is refused by
// makeProblem (the build); a file too short for its header's shape is refused without its data.
void TestNpy::choosingFilesReadsOnlyTheirHeaders() {
    std::vector<float> values = counting(40);
    values.back() = std::numeric_limits<float>::quiet_NaN();
    const std::string q = file("q.npy", floatFile(6, 4));
    const std::string nan = file("nan.npy", npyFile(header("<f4", "(10, 4)"), dataOf(values)));
    const InputFiles files{q, nan, nan, {}, std::nullopt};
    const ProblemSpec spec = withInputFiles(toySetup().spec, files);
    QCOMPARE(spec.keys, 10);
    QVERIFY(spec.files == files);
    QCOMPARE(messageOf([&] { (void)makeProblem(spec); }),
             QString::fromStdString("K: " + nan +
                                    ": 1 value is not finite (inf or NaN), the first at row 9, "
                                    "column 3 (nan); attention needs finite inputs"));
    // The head index is checked against the headers too.
    const std::string heads =
        file("heads.npy", npyFile(header("<f4", "(2, 6, 4)"), dataOf(counting(48))));
    QVERIFY(messageOf([&] {
                (void)withInputFiles({}, {heads, nan, nan, {}, 2});
            }).startsWith(QString::fromStdString("Q: " + heads + ": head 2 is out of range")));
    // 2^20 x 1024 float64 named, 8 bytes there: refused by its length.
    const std::string huge =
        file("huge.npy", npyFile(header("<f8", "(1048576, 1024)"), std::string(8, '\0')));
    const QString m = messageOf([&] { (void)withInputFiles({}, {huge, huge, huge, {}, {}}); });
    QVERIFY2(m.startsWith(QString::fromStdString("Q: " + huge + ": truncated")), qPrintable(m));
    QVERIFY2(m.contains(QStringLiteral("8589934584 bytes missing")), qPrintable(m));
}

void TestNpy::commandLineReadsTheFiles() {
    const std::string q = file("q.npy", floatFile(6, 4)), k = file("k.npy", floatFile(10, 4));
    const RunSetup setup = readProblemOptions({{"q", q}, {"k", k}, {"v", k}}, toySetup());
    QVERIFY(setup.spec.files && setup.spec.files->q == q);
    QCOMPARE(setup.spec.queries, 6);
    QCOMPARE(setup.spec.keys, 10);
    QCOMPARE(setup.spec.headDim, 4);
    QCOMPARE(setup.options.blockRows, 4); // the toy's blocks fit inside 6 x 10
    // Sizes given too are taken when they agree.
    QVERIFY(readProblemOptions({{"q", q}, {"k", k}, {"v", k}, {"nk", "10"}, {"d", "4"}},
                               toySetup()) == setup);
    const RunSetup backward =
        readProblemOptions({{"q", q}, {"k", k}, {"v", k}, {"do", q}, {"backward", ""}}, toySetup());
    QCOMPARE(backward.spec.files->upstream, q);
}

void TestNpy::commandLineRefusesWhatDoesNotFit_data() {
    QTest::addColumn<QStringList>("given"); // name=value pairs
    QTest::addColumn<QString>("words");
    QTest::newRow("q alone") << QStringList{"q=Q"} << "--k and --v are missing";
    QTest::newRow("q and v") << QStringList{"q=Q", "v=K"} << "--k is missing";
    QTest::newRow("do without files") << QStringList{"do=Q"} << "--do goes with inputs from files";
    QTest::newRow("head without files")
        << QStringList{"head=1"} << "--head goes with inputs from files";
    QTest::newRow("n disagrees") << QStringList{"q=Q", "k=K", "v=K", "n=8"}
                                 << "--n '8': n_q (queries) is 6 in --q's file";
    QTest::newRow("d disagrees") << QStringList{"q=Q", "k=K", "v=K", "d=5"}
                                 << "d (head dimension) is 4";
    QTest::newRow("pattern too") << QStringList{"q=Q", "k=K", "v=K", "pattern=large"}
                                 << "ask for two inputs";
    QTest::newRow("do on the forward")
        << QStringList{"q=Q", "k=K", "v=K", "do=Q"} << "--do is the backward's upstream gradient";
    QTest::newRow("ones and do") << QStringList{"q=Q",  "k=K",       "v=K",
                                                "do=Q", "backward=", "ones-upstream="}
                                 << "two upstream gradients";
    QTest::newRow("head not a number") << QStringList{"q=Q", "k=K", "v=K", "head=x"}
                                       << "--head 'x': the head index expects a whole number";
    QTest::newRow("a bad file") << QStringList{"q=BAD", "k=K", "v=K"} << "Q: ";
    QTest::newRow("a missing file") << QStringList{"q=MISSING", "k=K", "v=K"} << "no such file";
}

void TestNpy::commandLineRefusesWhatDoesNotFit() {
    QFETCH(QStringList, given);
    QFETCH(QString, words);
    const std::map<QString, std::string> files{
        {QStringLiteral("Q"), file("q.npy", floatFile(6, 4))},
        {QStringLiteral("K"), file("k.npy", floatFile(10, 4))},
        {QStringLiteral("BAD"), file("bad.npy", floatFile(6, 4) + "x")},
        {QStringLiteral("MISSING"), path("missing.npy").toStdString()}};
    GivenOptions options;
    for (const QString& pair : given) {
        const QString name = pair.section(QLatin1Char('='), 0, 0);
        const QString value = pair.section(QLatin1Char('='), 1);
        options[name.toStdString()] = files.count(value) ? files.at(value) : value.toStdString();
    }
    const QString m = messageOf([&] { (void)readProblemOptions(options, toySetup()); });
    QVERIFY2(m.contains(words), qPrintable(m));
}

QTEST_GUILESS_MAIN(TestNpy)
#include "tst_npy.moc"
