// The command line: --preset, --step, --lecture, --chapter, --screenshot, and a screenshot
// written by the real executable on the offscreen platform.
#include "command_line.h"

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
    QTest::newRow("unknown preset") << QStringList{"--preset", "nope"};
    QTest::newRow("negative step") << QStringList{"--step", "-3"};
    QTest::newRow("word step") << QStringList{"--step", "later"};
    QTest::newRow("chapter 0") << QStringList{"--chapter", "0"};
    QTest::newRow("bad size") << QStringList{"--size", "big"};
    QTest::newRow("transition past 1") << QStringList{"--transition", "2"};
    QTest::newRow("unknown option") << QStringList{"--frobnicate"};
    QTest::newRow("unknown backend") << QStringList{"--backend", "tpu"};
}

void TestCommandLine::refuses() {
    QFETCH(QStringList, args);
    const CommandLine c = parseCommandLine(QStringList{QStringLiteral("flashviz")} + args);
    QVERIFY(!c.error.isEmpty());
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
