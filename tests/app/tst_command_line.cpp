// The command line: --preset, --step, --lecture, --chapter, --screenshot, and a screenshot
// written by the real executable on the offscreen platform.
#include "shell/command_line.h"
#include "lecture/lecture.h"

#include "pages/analysis/analysis_charts.h"

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace flashviz::gui;

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
};

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
    QTest::newRow("last chapter") << QStringList{"--chapter", QString::number(lectureChapters().size())}
                                  << "" << "" << true << int(lectureChapters().size()) - 1 << true;
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

void TestCommandLine::backendIsParsed() {
    const CommandLine c = parseCommandLine({"flashviz", "--backend", "cuda", "--preset", "toy"});
    QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
    QCOMPARE(c.start.backend, std::optional<flashviz::BackendKind>(flashviz::BackendKind::Cuda));
    QCOMPARE(parseCommandLine({"flashviz", "--backend", "cpu"}).start.backend,
             std::optional<flashviz::BackendKind>(flashviz::BackendKind::Cpu));
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
    QTest::newRow("step garbage offset") << QStringList{"--step", "first-rescale+x"}
                                         << "not a whole number";
    QTest::newRow("step garbage after name") << QStringList{"--step", "first-rescalefoo"}
                                             << "only +K or -K";
    QTest::newRow("empty step") << QStringList{"--step", ""} << "empty";
    QTest::newRow("chapter 0") << QStringList{"--chapter", "0"} << "from 1 to " + chapters;
    QTest::newRow("chapter past the last")
        << QStringList{"--chapter", QString::number(lectureChapters().size() + 1)}
        << "from 1 to " + chapters;
    QTest::newRow("chapter past int") << QStringList{"--chapter", "99999999999"} << "from 1 to";
    QTest::newRow("chapter garbage") << QStringList{"--chapter", "2x"} << "'2x'";
    QTest::newRow("analysis past the last") << QStringList{"--analysis", "10"} << "from 1 to " + charts;
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
    QTest::newRow("lecture") << QStringList{"--lecture", "--chapter", "4", "--step", "11"}
                             << QSize(1920, 1080);
}

void TestCommandLine::screenshotWritesAPng() {
    QFETCH(QStringList, args);
    QFETCH(QSize, size);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("shot.png"));
    QProcess process;
    process.start(QStringLiteral(FLASHVIZ_EXECUTABLE),
                  QStringList{QStringLiteral("--screenshot"), file, QStringLiteral("-platform"),
                              QStringLiteral("offscreen")} +
                      args);
    QVERIFY(process.waitForFinished(120000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
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
    QProcess process;
    process.start(QStringLiteral(FLASHVIZ_EXECUTABLE),
                  {QStringLiteral("--preset"), QStringLiteral("nope"), QStringLiteral("-platform"),
                   QStringLiteral("offscreen")});
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitCode(), 2);
    QVERIFY(process.readAllStandardError().contains("bug-bites"));
}

QTEST_MAIN(TestCommandLine)
#include "tst_command_line.moc"
