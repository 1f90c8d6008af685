// flashviz-cli with Q, K, V (and dO) from .npy files: `run` checks exactly what the same matrices
// checked in-process give, says where its inputs came from, and each bad file fails with exit
// code 2 and a message naming it.
#include "app/cli/cli.h"
#include "cli_support.h"
#include "core/backend.h"
#include "core/backward.h"
#include "core/run.h"
#include "core/setup.h"
#include "tests/npy_test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace flashviz;

using flashviz::test::headOf;
using flashviz::test::normalArray;
using flashviz::test::runCli;

class TestCliNpy : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void runChecksTheFilesAsInProcess();
    void runBackwardTakesTheFilesDo();
    void stepsTakeTheFiles();
    void badFilesFail_data();
    void badFilesFail();

  private:
    std::string path(const char* name) const {
        return m_dir.filePath(QLatin1String(name)).toStdString();
    }
    QTemporaryDir m_dir;
    xt::xarray<float> m_q = normalArray<float>({3, 10, 8}, 1); // three heads
    xt::xarray<double> m_k = normalArray<double>({14, 8}, 2);
    xt::xarray<float> m_v = normalArray<float>({14, 8}, 3);
    xt::xarray<double> m_dO = normalArray<double>({10, 8}, 4);
};

void TestCliNpy::initTestCase() {
    QVERIFY(m_dir.isValid());
    xt::dump_npy(path("q.npy"), m_q);
    xt::dump_npy(path("k.npy"), m_k);
    xt::dump_npy(path("v.npy"), m_v);
    xt::dump_npy(path("do.npy"), m_dO);
}

void TestCliNpy::runChecksTheFilesAsInProcess() {
    const auto r = runCli({"run", "--q", path("q.npy"), "--k", path("k.npy"), "--v", path("v.npy"),
                           "--head", "2", "--bc", "5", "--json"});
    QCOMPARE(r.code, 0);
    const auto j = nlohmann::json::parse(r.out);
    ProblemSpec spec;
    spec.queries = 10;
    spec.keys = 14;
    spec.headDim = 8;
    const Problem problem = makeProblem(headOf(m_q, 2), headOf(m_k), headOf(m_v), spec);
    CpuBackend cpu;
    RunRequest request;
    request.options = toySetup().options;
    request.options.blockCols = 5;
    const RunResult inProcess = runAndCheck(problem, cpu, request);
    QVERIFY(j.at("passed").get<bool>());
    QCOMPARE(j.at("max_abs_diff").get<double>(), inProcess.check.maxAbsDiff);
    QCOMPARE(j.at("flash").at("hbm_bytes").get<std::uint64_t>(), inProcess.counters.hbmBytes());
    // Where the inputs came from, in the problem's one line.
    const std::string line = j.at("problem").get<std::string>();
    const std::string from = "n_q = 10, n_k = 14, d = 8, Br = 4, Bc = 5, inputs from " +
                             path("q.npy") + ", " + path("k.npy") + ", " + path("v.npy") +
                             " (head 2), double";
    QVERIFY2(line.find(from) == 0, line.c_str());
    const auto text = runCli({"run", "-q", path("q.npy"), "-k", path("k.npy"), "-v", path("v.npy"),
                              "--head", "2", "--bc", "5"});
    QCOMPARE(text.code, 0);
    QVERIFY2(text.out.find(from) != std::string::npos, text.out.c_str());
}

void TestCliNpy::runBackwardTakesTheFilesDo() {
    const auto r = runCli({"run", "--backward", "--q", path("q.npy"), "--k", path("k.npy"), "--v",
                           path("v.npy"), "--head", "0", "--do", path("do.npy"), "--json"});
    QCOMPARE(r.code, 0);
    const auto j = nlohmann::json::parse(r.out);
    ProblemSpec spec;
    Problem problem = makeProblem(headOf(m_q, 0), headOf(m_k), headOf(m_v), spec);
    CpuBackend cpu;
    RunRequest request;
    request.algorithm = Algorithm::Backward;
    request.options = toySetup().options;
    const Matrix dO = headOf(m_dO);
    problem.upstream = dO;
    const BackwardRunResult inProcess = runBackwardAndCheck(problem, cpu, request);
    QVERIFY(inProcess.dO == dO);
    QVERIFY(j.at("passed").get<bool>());
    QCOMPARE(j.at("max_abs_diff_dq").get<double>(), inProcess.check.dq.maxAbsDiff);
    QCOMPARE(j.at("max_abs_diff_dk").get<double>(), inProcess.check.dk.maxAbsDiff);
    QCOMPARE(j.at("max_abs_diff_dv").get<double>(), inProcess.check.dv.maxAbsDiff);
    // The seed's dO gives other gradients: the file's was used.
    problem.upstream.reset();
    const BackwardRunResult seeded = runBackwardAndCheck(problem, cpu, request);
    QVERIFY(seeded.dO != dO);
    QVERIFY2(j.at("problem").get<std::string>().find("dO from " + path("do.npy")) !=
                 std::string::npos,
             r.out.c_str());
}

void TestCliNpy::stepsTakeTheFiles() {
    const auto r = runCli({"steps", "--q", path("q.npy"), "--k", path("k.npy"), "--v",
                           path("v.npy"), "--head", "1", "--step", "3"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.find("step 3 of") == 0, r.out.c_str());
}

void TestCliNpy::badFilesFail_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("words");
    const auto file = [this](const char* name, const std::string& bytes) {
        std::ofstream(path(name), std::ios::binary) << bytes;
        return QString::fromStdString(path(name));
    };
    const QString q = QString::fromStdString(path("q.npy")),
                  k = QString::fromStdString(path("k.npy")),
                  v = QString::fromStdString(path("v.npy")),
                  dO = QString::fromStdString(path("do.npy"));
    const std::string good = xt::dump_npy(normalArray<float>({14, 8}, 5));
    const QString truncated = file("truncated.npy", good.substr(0, good.size() - 3));
    const QString ints = file("ints.npy", xt::dump_npy(xt::xarray<int>::from_shape({14, 8})));
    xt::xarray<double, xt::layout_type::column_major> fortran = normalArray<double>({14, 8}, 6);
    const QString columnMajor = file("fortran.npy", xt::dump_npy(fortran));
    xt::xarray<float> nan = normalArray<float>({14, 8}, 7);
    nan(4, 6) = std::numeric_limits<float>::quiet_NaN();
    const QString notFinite = file("nan.npy", xt::dump_npy(nan));
    const QString text = file("text.npy", "not numpy at all");
    QTest::newRow("truncated") << QStringList{"--k", truncated, "--v", v, "--head", "0"}
                               << "K: " + truncated + ": truncated";
    QTest::newRow("int32") << QStringList{"--k", k, "--v", ints, "--head", "0"}
                           << "V: " + ints + ": int32 ('<i4')";
    QTest::newRow("Fortran order")
        << QStringList{"--k", columnMajor, "--v", v, "--head", "0"} << "numpy.ascontiguousarray";
    QTest::newRow("not finite") << QStringList{"--k", k, "--v", notFinite, "--head", "0"}
                                << "row 4, column 6 (nan)";
    QTest::newRow("not .npy") << QStringList{"--k", text, "--v", v, "--head", "0"}
                              << "K: " + text + ": not an .npy file";
    QTest::newRow("no head") << QStringList{"--k", k, "--v", v}
                             << "Q: " + q + ": shape (3, 10, 8) holds 3 heads";
    QTest::newRow("head out of range")
        << QStringList{"--k", k, "--v", v, "--head", "3"} << "head 3 is out of range";
    QTest::newRow("shapes") << QStringList{"--k", k, "--v", q, "--head", "0"}
                            << "Shapes do not agree";
    QTest::newRow("dO shape") << QStringList{"--k",        k,      "--v", v, "--head", "0",
                                             "--backward", "--do", k}
                              << "dO (" + k + ") is 14 x 8";
    QTest::newRow("missing") << QStringList{"--k", k + "x", "--v", v, "--head", "0"}
                             << k + "x: no such file";
    QTest::newRow("no --v") << QStringList{"--k", k} << "--v is missing";
    QTest::newRow("--n too") << QStringList{"--k", k, "--v", v, "--head", "0", "--n", "12"}
                             << "n_q (queries) is 10";
    QTest::newRow("ones and dO") << QStringList{"--k",        k,
                                                "--v",        v,
                                                "--head",     "0",
                                                "--backward", "--do",
                                                dO,           "--ones-upstream"}
                                 << "two upstream gradients";
}

void TestCliNpy::badFilesFail() {
    QFETCH(QStringList, args);
    QFETCH(QString, words);
    std::vector<std::string> argv{"run", "--q", path("q.npy")};
    for (const QString& a : args)
        argv.push_back(a.toStdString());
    const auto r = runCli(argv);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.empty());
    QVERIFY2(r.err.find(words.toStdString()) != std::string::npos, r.err.c_str());
}

QTEST_GUILESS_MAIN(TestCliNpy)
#include "tst_cli_npy.moc"
