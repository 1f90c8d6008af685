// The command line: --preset, --step, --lecture, --chapter, --screenshot, the problem options
// shared with flashviz-cli, and a screenshot written by the real executable on the offscreen
// platform.
#include "lecture/lecture.h"
#include "flashviz_process.h"
#include "session/scene.h"
#include "shell/command_line.h"

#include "pages/analysis/analysis_charts.h"

#include "core/errors.h"
#include "core/setup.h"
#include "kernels/backend_registry.h"

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace flashviz::gui;

namespace {

using Exit = FlashvizExit;

} // namespace

class TestCommandLine : public QObject {
    Q_OBJECT
  private slots:
    void parses_data();
    void parses();
    void refuses_data();
    void refuses();
    void screenshotWritesAPng_data();
    void screenshotWritesAPng();
    void unknownPresetFailsTheProcess();
    void backendIsParsed();
    void tensorCoreCheckIsParsed();
    void gpuIsParsed();
    void helpAllAnswersWithoutAWindow();
    void problemOptionsSetTheProblem();
    void problemOptionsAreTheCliOnes();
    void missingBackendFallsBackAndSaysSo();
    void stepPastTheRunFailsTheProcess();
    void windowRefusesBlocksPastTheSequence();
};

// Br = 1000000 with n = 8 was accepted by the settings panel and shown as "1000000×4 tiles".
void TestCommandLine::windowRefusesBlocksPastTheSequence() {
    VizSettings settings = toySettings();
    (void)validateForWindow(settings);
    settings.options.blockRows = 1000000;
    try {
        (void)validateForWindow(settings);
        QFAIL("accepted");
    } catch (const flashviz::EngineError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("(allowed: 1 to 8)")),
                 e.what());
    }
}

void TestCommandLine::helpAllAnswersWithoutAWindow() {
    const CommandLine c = parseCommandLine({"flashviz", "--help-all"});
    QVERIFY(c.exitNow);
    QVERIFY(c.output.contains(QStringLiteral("--preset")));
    QVERIFY(c.output.contains(QStringLiteral("-platform")));
    const Exit help = runFlashviz({QStringLiteral("--help-all")}, 20000);
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains("--screenshot"));
}

// The window's command line sets the problem as flashviz-cli does, over the preset or the toy.
void TestCommandLine::problemOptionsSetTheProblem() {
    const CommandLine toy = parseCommandLine({"flashviz", "--n", "64", "--br", "16", "--seed", "7",
                                              "--causal", "--loop-order", "kv-outer"});
    QVERIFY2(toy.error.isEmpty(), qPrintable(toy.error));
    QVERIFY(toy.start.problem.has_value());
    flashviz::RunSetup expected = flashviz::toySetup();
    expected.spec.queries = expected.spec.keys = 64;
    expected.spec.seed = 7;
    expected.spec.causal = true;
    expected.options.blockRows = 16;
    expected.options.loopOrder = flashviz::LoopOrder::KeyValueOuter;
    QVERIFY(*toy.start.problem == expected);

    const Preset* longPreset = findPreset(QStringLiteral("long"));
    QVERIFY(longPreset);
    const CommandLine preset = parseCommandLine({"flashviz", "--preset", "long", "--d", "32"});
    QVERIFY2(preset.error.isEmpty(), qPrintable(preset.error));
    QCOMPARE(preset.start.problem->spec.queries, longPreset->settings.spec.queries);
    QCOMPARE(preset.start.problem->options.blockRows, longPreset->settings.options.blockRows);
    QCOMPARE(preset.start.problem->spec.headDim, 32);

    QVERIFY(!parseCommandLine({"flashviz"}).start.problem.has_value());
}

// Same names, same checks, same messages: both faces call core's readProblemOptions.
void TestCommandLine::problemOptionsAreTheCliOnes() {
    for (const flashviz::ProblemOption& o : flashviz::problemOptions()) {
        QStringList args{QStringLiteral("flashviz"),
                         QStringLiteral("--") + QString::fromStdString(o.name)};
        if (!o.valueName.empty()) args << QStringLiteral("not-a-value");
        const CommandLine c = parseCommandLine(args);
        QVERIFY2(!c.error.contains(QStringLiteral("Unknown option")), qPrintable(c.error));
        if (o.valueName.empty()) continue;
        flashviz::GivenOptions given{{o.name, "not-a-value"}};
        std::string message;
        try {
            (void)flashviz::readProblemOptions(given, flashviz::toySetup());
        } catch (const flashviz::EngineError& e) {
            message = e.what();
        }
        QCOMPARE(c.error, QString::fromStdString(message));
    }
}

void TestCommandLine::missingBackendFallsBackAndSaysSo() {
    bool cudaHere = false;
    for (const auto& b : flashviz::listBackends())
        cudaHere = cudaHere || (b.kind == flashviz::BackendKind::Cuda && b.available);
    if (cudaHere) QSKIP("a CUDA device is present: nothing falls back");
    const CommandLine c = parseCommandLine({"flashviz", "--backend", "cuda"});
    QVERIFY(c.error.isEmpty());
    QVERIFY(c.backendFellBack);
    QCOMPARE(c.start.backend, std::optional<flashviz::BackendKind>(flashviz::BackendKind::Cpu));
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("shot.png"));
    const Exit shot = runFlashviz({QStringLiteral("--backend"), QStringLiteral("cuda"),
                                   QStringLiteral("--screenshot"), file});
    QCOMPARE(shot.code, kExitBackendFellBack);
    QVERIFY(shot.err.contains("the CPU computes instead"));
    QVERIFY(!QImage(file).isNull());
}

void TestCommandLine::stepPastTheRunFailsTheProcess() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("shot.png"));
    const Exit shot = runFlashviz(
        {QStringLiteral("--step"), QStringLiteral("999999"), QStringLiteral("--screenshot"), file});
    QCOMPARE(shot.code, kExitRefused);
    QVERIFY(shot.err.contains("this run has steps 0 to"));
    QVERIFY(!QFile::exists(file)); // nothing written for a step the run does not have
    // Without --screenshot the window opens at once (a large start shows its build's progress
    // and Cancel) and the step is checked once the run is built: refused the same way.
    const Exit window = runFlashviz({QStringLiteral("--no-restore"), QStringLiteral("--step"),
                                     QStringLiteral("first-rescale"), QStringLiteral("--preset"),
                                     QStringLiteral("bug-hides")});
    QCOMPARE(window.code, kExitRefused);
    QVERIFY(window.err.contains("no step of this run rescales"));
}

void TestCommandLine::parses_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("step");
    QTest::addColumn<bool>("lecture");
    QTest::addColumn<int>("chapter");
    QTest::addColumn<bool>("restore");
    QTest::newRow("nothing") << QStringList{} << ""
                             << "" << false << 0 << true;
    QTest::newRow("preset and step")
        << QStringList{"--preset", "bug-bites", "--step", "12"} << "bug-bites"
        << "12" << false << 0 << true;
    QTest::newRow("first-rescale") << QStringList{"--step", "first-rescale"} << ""
                                   << "first-rescale" << false << 0 << true;
    QTest::newRow("lecture") << QStringList{"--lecture"} << ""
                             << "" << true << 0 << true;
    QTest::newRow("chapter implies lecture") << QStringList{"--chapter", "6"} << ""
                                             << "" << true << 5 << true;
    QTest::newRow("screenshot leaves no trace") << QStringList{"--screenshot", "x.png"} << ""
                                                << "" << false << 0 << false;
    QTest::newRow("first-rescale+2") << QStringList{"--step", "first-rescale+2"} << ""
                                     << "first-rescale+2" << false << 0 << true;
    QTest::newRow("end-3") << QStringList{"--step", "end-3"} << ""
                           << "end-3" << false << 0 << true;
    QTest::newRow("last chapter") << QStringList{"--chapter",
                                                 QString::number(lectureChapters().size())}
                                  << ""
                                  << "" << true << int(lectureChapters().size()) - 1 << true;
}

void TestCommandLine::parses() {
    QFETCH(QStringList, args);
    QFETCH(QString, preset);
    QFETCH(QString, step);
    QFETCH(bool, lecture);
    QFETCH(int, chapter);
    QFETCH(bool, restore);
    const CommandLine c = parseCommandLine(QStringList{QStringLiteral("flashviz")} + args);
    QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
    QCOMPARE(c.start.preset, preset);
    QCOMPARE(c.start.step, step);
    QCOMPARE(c.start.lecture, lecture);
    QCOMPARE(c.start.chapter, chapter);
    QCOMPARE(c.start.restore, restore);
    QVERIFY(!c.start.backend.has_value());
}

// --gpu picks the profile the window draws against, by the ids flashviz-cli profiles lists.
void TestCommandLine::gpuIsParsed() {
    QVERIFY(!parseCommandLine({"flashviz"}).start.hardwareId.has_value());
    for (const auto& profile : flashviz::hardwareProfiles()) {
        const CommandLine c = parseCommandLine({"flashviz", "--gpu", QString::fromStdString(profile.id)});
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(c.start.hardwareId, std::optional<std::string>(profile.id));
    }
}

void TestCommandLine::backendIsParsed() {
    const CommandLine c = parseCommandLine({"flashviz", "--backend", "cuda", "--preset", "toy"});
    QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
    // CUDA where a device is usable, else the CPU standing in (missingBackendFallsBackAndSaysSo).
    QCOMPARE(c.start.backend,
             std::optional<flashviz::BackendKind>(c.backendFellBack ? flashviz::BackendKind::Cpu
                                                                    : flashviz::BackendKind::Cuda));
    QCOMPARE(parseCommandLine({"flashviz", "--backend", "cpu"}).start.backend,
             std::optional<flashviz::BackendKind>(flashviz::BackendKind::Cpu));
}

// --tc-check, named as flashviz-cli names it: each of core's names, nothing when not given (the
// saved or the preset's check stays), the default core's in the help.
void TestCommandLine::tensorCoreCheckIsParsed() {
    using flashviz::HalfType;
    using flashviz::LowPrecisionCheck;
    QVERIFY(!parseCommandLine({"flashviz"}).start.tensorCoreCheck.has_value());
    for (const LowPrecisionCheck check : {LowPrecisionCheck(HalfType::Fp16),
                                          LowPrecisionCheck(HalfType::Bf16), LowPrecisionCheck()}) {
        const CommandLine c = parseCommandLine(
            {"flashviz", "--tc-check", flashviz::toString(check), "--preset", "backward"});
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QVERIFY2(c.start.tensorCoreCheck == std::optional<LowPrecisionCheck>(check),
                 flashviz::toString(check));
    }
    const CommandLine help = parseCommandLine({"flashviz", "--help"});
    const qsizetype at = help.output.indexOf(QStringLiteral("--tc-check <type>"));
    QVERIFY2(at >= 0, qPrintable(help.output));
    const QString listed =
        help.output.mid(at, help.output.indexOf(QStringLiteral("\n  -"), at) - at);
    QVERIFY2(listed.simplified().contains(
                 QStringLiteral("(else the saved choice; %1 at first)")
                     .arg(QLatin1String(flashviz::toString(flashviz::kDefaultLowPrecision)))),
             qPrintable(listed));
}

void TestCommandLine::refuses_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message"); // a fragment of the error
    const QString chapters = QString::number(lectureChapters().size());
    const QString charts = QString::number(analysisChartTitles().size());
    QTest::newRow("unknown preset") << QStringList{"--preset", "nope"} << "nope";
    QTest::newRow("negative step") << QStringList{"--step", "-3"} << "negative";
    QTest::newRow("word step") << QStringList{"--step", "later"} << "'later'";
    QTest::newRow("step offset past int")
        << QStringList{"--step", "first-rescale+2147483647"} << "past 2147483646";
    QTest::newRow("step number past int") << QStringList{"--step", "99999999999"} << "past";
    QTest::newRow("step garbage offset")
        << QStringList{"--step", "first-rescale+x"} << "not a whole number";
    QTest::newRow("step garbage after name")
        << QStringList{"--step", "first-rescalefoo"} << "only +K or -K";
    QTest::newRow("empty step") << QStringList{"--step", ""} << "empty";
    QTest::newRow("chapter 0") << QStringList{"--chapter", "0"} << "from 1 to " + chapters;
    QTest::newRow("chapter past the last")
        << QStringList{"--chapter", QString::number(lectureChapters().size() + 1)}
        << "from 1 to " + chapters;
    QTest::newRow("chapter past int") << QStringList{"--chapter", "99999999999"} << "from 1 to";
    QTest::newRow("chapter garbage") << QStringList{"--chapter", "2x"} << "'2x'";
    QTest::newRow("analysis past the last")
        << QStringList{"--analysis", QString::number(analysisChartTitles().size() + 1)}
        << "from 1 to " + charts;
    QTest::newRow("analysis negative") << QStringList{"--analysis", "-1"} << "from 1 to";
    QTest::newRow("bad size") << QStringList{"--size", "big"} << "WIDTHxHEIGHT";
    QTest::newRow("size trailing garbage") << QStringList{"--size", "1600x1000x"} << "WIDTHxHEIGHT";
    QTest::newRow("size past int") << QStringList{"--size", "99999999999x1000"} << "8192";
    QTest::newRow("size with spaces") << QStringList{"--size", "1600 x 1000"} << "WIDTHxHEIGHT";
    QTest::newRow("transition past 1") << QStringList{"--transition", "2"} << "from 0 to 1";
    QTest::newRow("transition nan") << QStringList{"--transition", "nan"} << "'nan'";
    QTest::newRow("transition inf") << QStringList{"--transition", "inf"} << "'inf'";
    QTest::newRow("transition -inf") << QStringList{"--transition", "-inf"} << "'-inf'";
    QTest::newRow("transition garbage") << QStringList{"--transition", "0.5x"} << "'0.5x'";
    QTest::newRow("transition negative") << QStringList{"--transition", "-0.1"} << "from 0 to 1";
    QTest::newRow("empty screenshot") << QStringList{"--screenshot", ""} << "--screenshot";
    QTest::newRow("screenshot in a missing folder")
        << QStringList{"--screenshot", "/no/such/folder/shot.png"} << "does not exist";
    QTest::newRow("screenshot is a folder") << QStringList{"--screenshot", "/tmp"} << "folder";
    QTest::newRow("unknown option") << QStringList{"--frobnicate"} << "frobnicate";
    QTest::newRow("unknown backend") << QStringList{"--backend", "tpu"} << "'tpu'";
    QTest::newRow("unknown tensor-core check")
        << QStringList{"--tc-check", "fp32"} << "--tc-check 'fp32': use fp16, bf16 or off";
    QTest::newRow("empty tensor-core check")
        << QStringList{"--tc-check", ""} << "--tc-check '': use fp16, bf16 or off";
    QTest::newRow("unknown gpu") << QStringList{"--gpu", "tpu"} << "--gpu: Unknown hardware profile 'tpu'";
}

void TestCommandLine::refuses() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const CommandLine c = parseCommandLine(QStringList{QStringLiteral("flashviz")} + args);
    QVERIFY2(c.error.contains(message), qPrintable(c.error.isEmpty() ? "accepted" : c.error));
    QVERIFY(!c.exitNow);
}

void TestCommandLine::screenshotWritesAPng_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QSize>("size");
    QTest::newRow("toy") << QStringList{} << QSize(1920, 1080);
    QTest::newRow("bug, small window")
        << QStringList{"--preset", "bug-bites", "--size", "1280x800"} << QSize(1280, 800);
    QTest::newRow("backward, bug, laptop")
        << QStringList{"--preset", "backward", "--bug", "--step", "8", "--size", "1366x768"}
        << QSize(1366, 768);
    QTest::newRow("lecture") << QStringList{"--lecture", "--chapter", "4", "--step", "11"}
                             << QSize(1920, 1080);
}

void TestCommandLine::screenshotWritesAPng() {
    QFETCH(QStringList, args);
    QFETCH(QSize, size);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("shot.png"));
    const Exit shot = runFlashviz(QStringList{QStringLiteral("--screenshot"), file} + args, 120000);
    QVERIFY2(shot.code == 0, shot.err.constData());
    const QImage image(file);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), size);
    // Not a blank image: a real window has many colours.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7)
            colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 50);
}

void TestCommandLine::unknownPresetFailsTheProcess() {
    const Exit refused = runFlashviz({QStringLiteral("--preset"), QStringLiteral("nope")});
    QCOMPARE(refused.code, 2);
    QVERIFY(refused.err.contains("bug-bites"));
}

QTEST_MAIN(TestCommandLine)
#include "tst_command_line.moc"
