// The application before it has a window: --help, --version and a command line it cannot use are
// answered on a terminal without a display (no DISPLAY, no WAYLAND_DISPLAY, no QT_QPA_PLATFORM),
// where a QApplication would abort.
#include <QProcess>
#include <QProcessEnvironment>
#include <QtTest>

class TestStartup : public QObject {
    Q_OBJECT
  private slots:
    void answersWithoutADisplay_data();
    void answersWithoutADisplay();
};

void TestStartup::answersWithoutADisplay_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("stdoutHas");
    QTest::addColumn<QString>("stderrHas");
    QTest::newRow("--help") << QStringList{"--help"} << 0 << "--screenshot <file>" << "";
    QTest::newRow("-h") << QStringList{"-h"} << 0 << "--lecture" << "";
    QTest::newRow("--version") << QStringList{"--version"} << 0
                               << QStringLiteral("flashviz " FLASHVIZ_VERSION) << "";
    QTest::newRow("unknown preset") << QStringList{"--preset", "nope"} << 2 << ""
                                    << "Unknown preset 'nope'";
    QTest::newRow("unknown option") << QStringList{"--frobnicate"} << 2 << ""
                                    << "Unknown option 'frobnicate'";
}

void TestStartup::answersWithoutADisplay() {
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, stdoutHas);
    QFETCH(QString, stderrHas);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        environment.remove(QString::fromLatin1(name));
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(QStringLiteral(FLASHVIZ_EXECUTABLE), arguments);
    QVERIFY2(process.waitForFinished(60000), "flashviz did not answer within 60 s");
    const QString out = QString::fromUtf8(process.readAllStandardOutput());
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QCOMPARE(process.exitStatus(), QProcess::NormalExit); // an abort (134) is a crash
    QVERIFY2(process.exitCode() == exitCode, qPrintable(out + err));
    QVERIFY2(out.contains(stdoutHas), qPrintable(out));
    QVERIFY2(err.contains(stderrHas), qPrintable(err));
}

QTEST_GUILESS_MAIN(TestStartup)
#include "tst_startup.moc"
