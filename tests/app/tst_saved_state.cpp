// Saved state that is corrupted or edited by hand (issue #12): the window starts with the
// default layout and the default values instead of crashing or silently using 0, says once
// which key it dropped, and the checks hold for any bytes.
#include "shell/main_window.h"
#include "session/settings.h"

#include "core/errors.h"

#include <QDataStream>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QtTest>

using namespace flashviz;
using namespace flashviz::gui;

namespace {

StartOptions restoring() {
    StartOptions o;
    o.restore = true;
    o.save = false;
    o.fullScreen = false;
    return o;
}

QByteArray splitterState(int panes, Qt::Orientation orientation, int handle = 6) {
    QSplitter splitter(orientation);
    for (int i = 0; i < panes; ++i)
        splitter.addWidget(new QLabel(QStringLiteral("pane")));
    splitter.setHandleWidth(handle);
    splitter.resize(900, 600);
    splitter.setSizes(QList<int>(panes, 300));
    return splitter.saveState();
}

// The state with its handle width (after marker, version, the sizes and a bool) replaced.
QByteArray withHandleWidth(QByteArray state, int panes, qint32 width) {
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    out << width;
    return state.replace(4 + 4 + 4 + 4 * panes + 1, 4, bytes);
}

bool anyContains(const QStringList& lines, const QString& a, const QString& b = {}) {
    for (const QString& line : lines)
        if (line.contains(a) && line.contains(b)) return true;
    return false;
}

} // namespace

class TestSavedState : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void init();
    void splitterStatesAreDecoded();
    void everyTruncationIsRefused();
    void flippedHandleWidthStartsWithTheDefaultLayout();
    void corruptedGeometryAndWindowStateAreDropped();
    void stateQtRefusesIsReported();
    void goodLayoutIsRestored();
    void savedIntegersAreReadStrictly_data();
    void savedIntegersAreReadStrictly();
    void unreadableSavedSettingsKeepTheDefaults();
};

void TestSavedState::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
}

void TestSavedState::init() {
    QSettings().clear();
}

void TestSavedState::splitterStatesAreDecoded() {
    for (const int panes : {2, 3})
        for (const Qt::Orientation o : {Qt::Horizontal, Qt::Vertical}) {
            const QByteArray state = splitterState(panes, o);
            QCOMPARE(checkSplitterState(state, panes, o), QString());
            QVERIFY(!checkSplitterState(state, panes + 1, o).isEmpty());
            QVERIFY(!checkSplitterState(state, panes,
                                        o == Qt::Horizontal ? Qt::Vertical : Qt::Horizontal)
                         .isEmpty());
            QCOMPARE(checkSplitterState(withHandleWidth(state, panes, 64), panes, o), QString());
            const QString why =
                checkSplitterState(withHandleWidth(state, panes, 16777222), panes, o);
            QVERIFY2(why.contains(QStringLiteral("handle width 16777222")), qPrintable(why));
            QVERIFY(!checkSplitterState(withHandleWidth(state, panes, -1), panes, o).isEmpty());
            QVERIFY(!checkSplitterState(state + QByteArray("x"), panes, o).isEmpty());
        }
    // A size count of 2^32 - 1 is refused before anything is allocated.
    QByteArray huge = splitterState(2, Qt::Horizontal);
    huge.replace(8, 4, QByteArray("\xff\xff\xff\xff", 4));
    QVERIFY(checkSplitterState(huge, 2, Qt::Horizontal).contains(QStringLiteral("4294967295")));
    QVERIFY(!checkSplitterState(QByteArray("garbage"), 2, Qt::Horizontal).isEmpty());
    QVERIFY(!checkWindowState(QByteArray("garbage")).isEmpty());
    QVERIFY(!checkWindowGeometry(QByteArray("garbage"), QRect()).isEmpty());
}

void TestSavedState::everyTruncationIsRefused() {
    const QByteArray state = splitterState(3, Qt::Vertical);
    for (qsizetype n = 0; n < state.size(); ++n)
        QVERIFY2(!checkSplitterState(state.left(n), 3, Qt::Vertical).isEmpty(),
                 qPrintable(QString::number(n)));
    QWidget widget;
    widget.setGeometry(100, 100, 640, 480);
    const QByteArray geometry = widget.saveGeometry();
    const QRect desktop(0, 0, 4000, 3000);
    QCOMPARE(checkWindowGeometry(geometry, desktop), QString());
    for (qsizetype n = 0; n < geometry.size(); ++n)
        QVERIFY2(!checkWindowGeometry(geometry.left(n), desktop).isEmpty(),
                 qPrintable(QString::number(n)));
}

// Issue #12: one flipped bit in window/splitTop (handle width 6 -> 16,777,222) made every start
// crash after 4.3 s and 4.4 GB until the file was deleted.
void TestSavedState::flippedHandleWidthStartsWithTheDefaultLayout() {
    const QByteArray good = splitterState(2, Qt::Horizontal);
    {
        QSettings store;
        store.setValue(QStringLiteral("window/splitTop"), withHandleWidth(good, 2, 16777222));
        store.setValue(QStringLiteral("window/splitBottom"), good);
    }
    {
        MainWindow w(restoring());
        // Laying the window out with the corrupted state is what crashed.
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTest::qWait(50);
        for (QSplitter* splitter : w.findChildren<QSplitter*>())
            QVERIFY(splitter->handleWidth() <= 64);
        const QStringList problems = w.restoreProblems();
        QVERIFY2(
            anyContains(problems, QStringLiteral("window/splitTop"), QStringLiteral("16777222")),
            qPrintable(problems.join(QLatin1Char('\n'))));
        QCOMPARE(problems.size(), 1);
        QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("window/splitTop")));
        QVERIFY(!QSettings().contains(QStringLiteral("window/splitTop")));
    }
    // Told once: the bad key is gone, the next start is quiet.
    MainWindow again(restoring());
    QVERIFY2(again.restoreProblems().isEmpty(),
             qPrintable(again.restoreProblems().join(QLatin1Char('\n'))));
}

void TestSavedState::corruptedGeometryAndWindowStateAreDropped() {
    QWidget widget;
    widget.setGeometry(10, 10, 640, 480);
    QByteArray geometry = widget.saveGeometry();
    // The frame's right edge (after magic, version and the left and top) at 2^31 - 1.
    geometry.replace(4 + 2 + 2 + 4 + 4, 4, QByteArray("\x7f\xff\xff\xff", 4));
    {
        QSettings store;
        store.setValue(QStringLiteral("window/geometry"), geometry);
        store.setValue(QStringLiteral("window/state"), QByteArray(5000, '\xff'));
        store.setValue(QStringLiteral("window/splitVertical"), QByteArray("not a splitter"));
    }
    MainWindow w(restoring());
    const QStringList problems = w.restoreProblems();
    QVERIFY2(anyContains(problems, QStringLiteral("window/geometry")),
             qPrintable(problems.join(QLatin1Char('\n'))));
    QVERIFY(anyContains(problems, QStringLiteral("window/state")));
    QVERIFY(anyContains(problems, QStringLiteral("window/splitVertical")));
    QVERIFY(w.width() < 100000 && w.height() < 100000);

    // Left at -2^31 and right at 2^31 - 1: QRect::width() itself overflows there (the fuzzer's
    // find, tests/fuzz/corpus/fuzz_settings/crash-qrect-width-overflow; UBSan reports it).
    geometry = widget.saveGeometry();
    geometry.replace(4 + 2 + 2, 4, QByteArray("\x80\x00\x00\x00", 4));
    geometry.replace(4 + 2 + 2 + 4 + 4, 4, QByteArray("\x7f\xff\xff\xff", 4));
    const QString why = checkWindowGeometry(geometry, QRect(0, 0, 1920, 1080));
    QVERIFY2(why.contains(QStringLiteral("4294967296 x")), qPrintable(why));
}

void TestSavedState::stateQtRefusesIsReported() {
    // Marker 0xff and version 0 pass the header check; what follows is no dock layout.
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out.setVersion(QDataStream::Qt_5_0);
    out << qint32(0xff) << qint32(0) << quint8(0xfe) << qint32(123456);
    QSettings().setValue(QStringLiteral("window/state"), state);
    MainWindow w(restoring());
    const QStringList problems = w.restoreProblems();
    QVERIFY2(anyContains(problems, QStringLiteral("window/state"), QStringLiteral("Qt could not")),
             qPrintable(problems.join(QLatin1Char('\n'))));
    QVERIFY(!QSettings().contains(QStringLiteral("window/state")));
}

void TestSavedState::goodLayoutIsRestored() {
    QByteArray top, geometry;
    {
        MainWindow w(restoring());
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.close(); // saves nothing (save = false); take the states by hand
        for (QSplitter* s : w.findChildren<QSplitter*>())
            if (s->count() == 2 && s->orientation() == Qt::Horizontal) top = s->saveState();
        geometry = w.saveGeometry();
    }
    QSettings store;
    store.setValue(QStringLiteral("window/splitTop"), top);
    store.setValue(QStringLiteral("window/geometry"), geometry);
    store.sync();
    MainWindow w(restoring());
    QVERIFY2(w.restoreProblems().isEmpty(),
             qPrintable(w.restoreProblems().join(QLatin1Char('\n'))));
    QVERIFY(QSettings().contains(QStringLiteral("window/splitTop")));
}

// Issue #12: saved n = 8.5, 10^12 or 2^31 were read as 0.
void TestSavedState::savedIntegersAreReadStrictly_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("json");  // the value as written in the file
    QTest::addColumn<QString>("shown"); // as the message names it
    QTest::newRow("n 8.5") << "queries"
                           << "8.5"
                           << "8.5";
    QTest::newRow("n 10^12") << "queries"
                             << "1e12"
                             << "1000000000000";
    QTest::newRow("n 2^31") << "queries"
                            << "2147483648"
                            << "2147483648";
    QTest::newRow("n -3") << "queries"
                          << "-3"
                          << "-3";
    QTest::newRow("n as text") << "queries"
                               << "\"8\""
                               << "'8'";
    QTest::newRow("d 1e300") << "headDim"
                             << "1e300"
                             << "1.0000000000000001e+300";
    QTest::newRow("Br 4.000001") << "blockRows"
                                 << "4.000001"
                                 << "4.000001";
    QTest::newRow("seed -1") << "seed"
                             << "-1"
                             << "-1";
    QTest::newRow("seed 1e30") << "seed"
                               << "1e30"
                               << "1e+30";
    QTest::newRow("causal 1") << "causal"
                              << "1"
                              << "1";
    QTest::newRow("pattern 5") << "pattern"
                               << "5"
                               << "5";
    QTest::newRow("pattern typo") << "pattern"
                                  << "\"early-maxx\""
                                  << "early-maxx";
}

void TestSavedState::savedIntegersAreReadStrictly() {
    QFETCH(QString, key);
    QFETCH(QString, json);
    QFETCH(QString, shown);
    const QString text =
        QStringLiteral("{\"%1\": %2, \"keys\": 16, \"blockCols\": 2}").arg(key, json);
    const QJsonObject object = QJsonDocument::fromJson(text.toUtf8()).object();
    QVERIFY(!object.isEmpty());
    // Strict: throws, naming the key and the value.
    try {
        (void)settingsFromJson(object, toySettings());
        QFAIL("read");
    } catch (const EngineError& error) {
        const QString message = QString::fromUtf8(error.what());
        QVERIFY2(message.contains(key) && message.contains(shown), qPrintable(message));
    }
    // Saved settings: that field keeps the default, the others load, the message names the key.
    QSettings store;
    store.setValue(QStringLiteral("run/settings"), text);
    QStringList problems;
    const auto loaded = loadSettings(store, &problems);
    QVERIFY(loaded);
    const VizSettings toy = toySettings();
    QCOMPARE(loaded->spec.queries, toy.spec.queries);
    QCOMPARE(loaded->spec.headDim, toy.spec.headDim);
    QCOMPARE(loaded->spec.seed, toy.spec.seed);
    QCOMPARE(loaded->options.blockRows, toy.options.blockRows);
    QCOMPARE(loaded->spec.pattern, toy.spec.pattern);
    QCOMPARE(loaded->spec.keys, 16);
    QCOMPARE(loaded->options.blockCols, 2);
    QVERIFY2(anyContains(problems, QStringLiteral("run/settings"), key),
             qPrintable(problems.join(';')));
    QVERIFY2(anyContains(problems, shown), qPrintable(problems.join(';')));
}

void TestSavedState::unreadableSavedSettingsKeepTheDefaults() {
    QSettings store;
    store.setValue(QStringLiteral("run/settings"), QStringLiteral("{\"queries\": "));
    QStringList problems;
    QVERIFY(!loadSettings(store, &problems));
    QVERIFY(
        anyContains(problems, QStringLiteral("run/settings"), QStringLiteral("not valid JSON")));
    // Good values still read exactly, seeds past 2^53 too.
    store.setValue(
        QStringLiteral("run/settings"),
        QStringLiteral("{\"queries\": 64, \"seed\": 9007199254740993, \"rescale\": false}"));
    problems.clear();
    const auto loaded = loadSettings(store, &problems);
    QVERIFY(loaded && problems.isEmpty());
    QCOMPARE(loaded->spec.queries, 64);
    QCOMPARE(loaded->spec.keys, 64);
    QCOMPARE(loaded->spec.seed, std::uint64_t(9007199254740993ULL));
    QVERIFY(!loaded->options.rescale);
    // The window starts from the rest and names the field it could not use.
    store.setValue(QStringLiteral("run/settings"), QStringLiteral("{\"queries\": 8.5}"));
    store.sync();
    MainWindow w(restoring());
    QVERIFY(anyContains(w.restoreProblems(), QStringLiteral("queries"), QStringLiteral("8.5")));
    QVERIFY(w.waitUntilIdle());
}

QTEST_MAIN(TestSavedState)
#include "tst_saved_state.moc"
