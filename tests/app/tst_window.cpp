// The main window: what it opens on, its keys, its controls refusing bad input, the bug switch
// turning the check to a failure and back, screenshots and saved settings.
#include "core/setup.h"
#include "lecture/lecture.h"
#include "session/controller.h"
#include "session/step_why.h"
#include "settings_support.h"
#include "pages/gpu_bench/gpu_benchmark_view.h"
#include "pages/hopper/hopper_page.h"
#include "shell/main_window.h"
#include "style/paint_util.h"
#include "views/check_panel.h"
#include "views/code_panel.h"
#include "views/matrices_view.h"
#include "views/memory_stage.h"
#include "views/tile_detail.h"
#include "widgets/controls_panel.h"
#include "widgets/key_help.h"
#include "widgets/playback_bar.h"
#include "window_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include <numeric>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;

class TestWindow : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void init();
    void opensOnTheToy();
    void keys();
    void scrubSlider();
    void invalidInputIsRefusedAndStateKept();
    void bugSwitchTurnsTheCheckToFailureAndBack();
    void bugKeyAndJump();
    void screenshotWritesAPng();
    void tableColumnsMakeRoomForTheirTitles();
    void tileTableFitsItsView();
    void tableHeaderFallsBackToCompactTitles();
    void presetStaysNamedWhileOnlyASwitchChanged();
    void opensWithinTheScreen();
    void keysHintOnlyWhenItFits();
    void keyHelpFromTheActions();
    void settingsPersist();
    void hiddenViewsCatchUpWhenShown();
    void codeListingRefitsWhenItChanges();
    void seedsPastThirtyTwoBitsSurviveTheField();
    void stepCaptionNeverRunsOff();
    void shorterSequenceShrinksUnsetBlocks();
    void largeProblemStaysResponsive();
    void returnInAFieldGivesTheKeysBack();
    void presetNoteNeverMovesTheFields();
    void nonIntegerIsRefusedAndTheValueKept();
    void switchesExplainThemselves();
    void backwardHasItsOwnSwitches();
    void tensorCoreCheckIsASettingOfTheBackward();
    void kernelPagesHideTheDemosCheckAndPlayer();
    void settingsDockStepsAsideAndComesBack();
    void jumpWithoutAWrongStepSaysSo();
    void cancelledBuildLeavesNoStageBehind();
    void stepViewSaysWhyInTheLecturesWords();
    void leavingTheLectureKeepsTheWindowMaximised();
};

void TestWindow::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName(QStringLiteral("FlashVizTest"));
    QApplication::setApplicationName(QStringLiteral("tst_window"));
}

void TestWindow::init() {
    QSettings().clear();
}

void TestWindow::opensOnTheToy() {
    MainWindow w; // reads the (empty) saved settings: the first run opens on the toy
    QVERIFY(w.waitUntilIdle());
    Controller* c = w.controller();
    QVERIFY(c->settings() == toySettings());
    QCOMPARE(c->step(), 0);
    QCOMPARE(control<QSpinBox>(w, "queries")->value(), 8);
    QCOMPARE(control<QSpinBox>(w, "headDim")->value(), 4);
    QCOMPARE(control<QSpinBox>(w, "blockRows")->value(), 4);
    QCOMPARE(control<QSpinBox>(w, "blockCols")->value(), 4);
    QVERIFY(!control<QCheckBox>(w, "bug")->isChecked());
    QVERIFY(w.checkPanel()->frame());
    QVERIFY(!w.checkPanel()->failing());
    QVERIFY(w.checkPanel()->verdictText().startsWith(QStringLiteral("PASS")));
    QCOMPARE(w.codePanel()->currentLine(), lineOf(pseudocode(toySettings()), StepKind::LoadQuery));
    QVERIFY(w.playback()->caption().contains(QStringLiteral("Step 0")));
    QCOMPARE(w.playback()->slider()->maximum(), 29);
    // Every view draws the same frame.
    QCOMPARE(w.memoryStage()->frame(), c->frame().get());
    QCOMPARE(w.tileDetail()->frame(), c->frame().get());
}

void TestWindow::keys() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    Controller* c = w.controller();
    QTest::keyClick(&w, Qt::Key_Right);
    QCOMPARE(c->step(), 1);
    QTest::keyClick(&w, Qt::Key_Right);
    QCOMPARE(c->step(), 2);
    QTest::keyClick(&w, Qt::Key_Left);
    QCOMPARE(c->step(), 1);
    QTest::keyClick(&w, Qt::Key_End);
    QCOMPARE(c->step(), 29);
    QTest::keyClick(&w, Qt::Key_Home);
    QCOMPARE(c->step(), 0);
    QTest::keyClick(&w, Qt::Key_PageDown);
    QCOMPARE(c->step(), 15);
    QTest::keyClick(&w, Qt::Key_PageUp);
    QCOMPARE(c->step(), 0);
    QTest::keyClick(&w, Qt::Key_Space);
    QVERIFY(c->isPlaying());
    QTest::keyClick(&w, Qt::Key_Space);
    QVERIFY(!c->isPlaying());
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!c->settings().options.rescale);
    QVERIFY(control<QCheckBox>(w, "bug")->isChecked());
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(c->settings().options.rescale);
    QVERIFY(!control<QCheckBox>(w, "bug")->isChecked());
}

void TestWindow::scrubSlider() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    w.playback()->slider()->setValue(20);
    QCOMPARE(w.controller()->step(), 20);
    QVERIFY(w.playback()->caption().contains(QStringLiteral("Step 20")));
    w.controller()->setStep(5);
    QCOMPARE(w.playback()->slider()->value(), 5);
}

void TestWindow::invalidInputIsRefusedAndStateKept() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    Controller* c = w.controller();
    c->setStep(9);
    const auto scene = c->scene();
    QVERIFY(w.controls()->refusalText().isEmpty());
    control<QSpinBox>(w, "queries")->setValue(0);
    QVERIFY2(w.controls()->refusalText().contains(QStringLiteral("at least 1")),
             qPrintable(w.controls()->refusalText()));
    // The control shows the settings in force.
    QCOMPARE(control<QSpinBox>(w, "queries")->value(), 8);
    QCOMPARE(c->scene(), scene);
    QCOMPARE(c->step(), 9);
    control<QSpinBox>(w, "blockRows")->setValue(0);
    QVERIFY(w.controls()->refusalText().contains(QStringLiteral("Br")));
    QCOMPARE(control<QSpinBox>(w, "blockRows")->value(), 4);
    control<QSpinBox>(w, "queries")->setValue(100000);
    QVERIFY(w.controls()->refusalText().contains(QStringLiteral("16384")));
    QCOMPARE(c->scene(), scene);
    // A valid change clears the message.
    control<QSpinBox>(w, "queries")->setValue(12);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(c->settings().spec.queries, 12);
    QVERIFY(w.controls()->refusalText().isEmpty());

    // A refusal takes the status line's place instead of being drawn over it, also when it
    // comes before the window is shown (a refused start-up setting), and the line comes back
    // when the message goes.
    MainWindow early(freshOptions()); // never shown
    QVERIFY(early.waitUntilIdle());
    VizSettings badSettings = toySettings();
    badSettings.options.blockRows = 0;
    QVERIFY(!early.controller()->apply(badSettings));
    auto* line = early.findChild<QLabel*>(QStringLiteral("status"));
    QVERIFY(line);
    QVERIFY2(early.statusBar()->currentMessage().startsWith(QStringLiteral("Refused:")),
             qPrintable(early.statusBar()->currentMessage()));
    QVERIFY(line->isHidden());
    early.statusBar()->clearMessage();
    QVERIFY(!line->isHidden());
}

void TestWindow::bugSwitchTurnsTheCheckToFailureAndBack() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    // The maximum arriving late makes the bug bite.
    w.controller()->applyPreset(QStringLiteral("toy"));
    VizSettings late = toySettings();
    late.spec.pattern = InputPattern::LateMaximum;
    QVERIFY(w.controller()->apply(late));
    QVERIFY(!w.checkPanel()->failing());
    control<QCheckBox>(w, "bug")->setChecked(true);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.checkPanel()->failing());
    QVERIFY(w.checkPanel()->verdictText().startsWith(QStringLiteral("FAIL")));
    auto* jump = w.checkPanel()->findChild<QPushButton*>(QStringLiteral("jumpToDivergence"));
    QVERIFY(jump);
    QVERIFY(jump->isVisibleTo(w.checkPanel()));
    QVERIFY(w.controller()->frame()->correct.has_value());
    // The caption under the animation says the rescale is skipped (it used to show the
    // correct formula while the code panel said "no rescale!").
    const auto updateSum = [&] {
        for (int s = 0; s < w.controller()->scene()->stepCount(); ++s)
            if (w.controller()->scene()->engine->info(s).kind == StepKind::UpdateSum) return s;
        return -1;
    };
    w.controller()->setStep(updateSum());
    QVERIFY2(w.playback()->caption().contains(QStringLiteral("skipped (the bug)")),
             qPrintable(w.playback()->caption()));
    control<QCheckBox>(w, "bug")->setChecked(false);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!w.checkPanel()->failing());
    QVERIFY(!jump->isVisibleTo(w.checkPanel()));
    w.controller()->setStep(updateSum());
    QVERIFY2(!w.playback()->caption().contains(QStringLiteral("skipped")),
             qPrintable(w.playback()->caption()));
}

void TestWindow::bugKeyAndJump() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    QVERIFY(w.controller()->applyPreset(QStringLiteral("bug-bites")));
    const int first = *w.controller()->scene()->firstRescaleStep;
    w.controller()->goToEnd();
    auto* jump = w.checkPanel()->findChild<QPushButton*>(QStringLiteral("jumpToDivergence"));
    QVERIFY(jump->text().contains(QString::number(first)));
    QVERIFY(jump->isEnabled());
    jump->click();
    QCOMPARE(w.controller()->step(), first);
    // There already: the button says so and goes nowhere.
    QVERIFY(!jump->isEnabled());
    QVERIFY2(jump->text().startsWith(QStringLiteral("At step %1").arg(first)), qPrintable(jump->text()));
    w.controller()->goToStart();
    QVERIFY(jump->isEnabled());
    QTest::keyClick(&w, Qt::Key_G);
    QCOMPARE(w.controller()->step(), first);
}

// The tile table's columns: shares by weight, except that a column too narrow for its title is
// widened at the expense of those with room to spare; the total never changes.
void TestWindow::tableColumnsMakeRoomForTheirTitles() {
    const auto sum = [](const std::vector<qreal>& v) {
        return std::accumulate(v.begin(), v.end(), 0.0);
    };
    // Every title fits its share: the shares.
    std::vector<qreal> w = fitColumnWidths({1, 1, 2}, {10, 10, 10}, 400);
    QCOMPARE(w, (std::vector<qreal>{100, 100, 200}));
    // The first needs 160 of its 100: the others give 60 in proportion to their room (90, 190).
    w = fitColumnWidths({1, 1, 2}, {160, 10, 10}, 400);
    QCOMPARE(w[0], 160.0);
    QVERIFY(std::abs(w[1] - (100 - 90 * 60.0 / 280)) < 1e-9);
    QVERIFY(std::abs(w[2] - (200 - 190 * 60.0 / 280)) < 1e-9);
    QVERIFY(std::abs(sum(w) - 400) < 1e-9);
    QVERIFY(w[1] >= 10 && w[2] >= 10);
    // The titles cannot all fit: the plain shares, nothing wider than the table.
    w = fitColumnWidths({1, 1}, {300, 300}, 400);
    QCOMPARE(w, (std::vector<qreal>{200, 200}));
    // Missing minimums count as none; no columns, no widths.
    w = fitColumnWidths({1, 3}, {150}, 400);
    QCOMPARE(w[0], 150.0);
    QVERIFY(std::abs(w[1] - 250) < 1e-9);
    QVERIFY(fitColumnWidths({}, {}, 400).empty());
}

// B on a preset keeps the preset's name, marked as changed, and its description with what the
// switch changed; B again is the preset itself. Another setting leaves the preset behind.
void TestWindow::presetStaysNamedWhileOnlyASwitchChanged() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    QVERIFY(w.controller()->applyPreset(QStringLiteral("toy")));
    QVERIFY(w.waitUntilIdle());
    auto* box = control<QComboBox>(w, "preset");
    const QString title = box->currentText();
    QCOMPARE(box->currentData().toString(), QStringLiteral("toy"));
    const QString description = w.controls()->presetNoteText();

    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(box->currentData().toString(), QStringLiteral("toy"));
    QCOMPARE(box->currentText(), QStringLiteral("%1 (changed)").arg(title));
    QVERIFY2(w.controls()->presetNoteText().startsWith(description) &&
                 w.controls()->presetNoteText().contains(QStringLiteral("rescale switched off")),
             qPrintable(w.controls()->presetNoteText()));

    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(box->currentText(), title);
    QCOMPARE(w.controls()->presetNoteText(), description);

    // "rescale" has the toy's settings (another step): the box names the preset applied.
    QVERIFY(w.controller()->applyPreset(QStringLiteral("rescale")));
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(box->currentData().toString(), QStringLiteral("rescale"));
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(box->currentData().toString(), QStringLiteral("rescale"));
    QVERIFY(box->currentText().endsWith(QStringLiteral("(changed)")));

    VizSettings other = w.controller()->settings();
    other.spec.seed = 99;
    QVERIFY(w.controller()->apply(other, QString()));
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(box->currentIndex(), 0);
    for (int i = 1; i < box->count(); ++i)
        QVERIFY(!box->itemText(i).endsWith(QStringLiteral("(changed)")));
    // The command line's preset and switch arrive as one set of settings: still that preset.
    StartOptions start = freshOptions();
    start.preset = QStringLiteral("rescale");
    start.bug = true;
    const auto fromCommandLine = freshWindow({1366, 768}, start);
    auto* startBox = control<QComboBox>(*fromCommandLine, "preset");
    QCOMPARE(startBox->currentData().toString(), QStringLiteral("rescale"));
    QVERIFY(startBox->currentText().endsWith(QStringLiteral("(changed)")));
}

// The tile table's header: whole titles at the largest size that fits; in a narrow table the
// compact ones rather than cut ones; every column as wide as its title and its values.
void TestWindow::tableHeaderFallsBackToCompactTitles() {
    const QStringList titles{QStringLiteral("m\nmax so far"),
                             QStringLiteral("e^(m_old−m_new)\ncorrection"), QStringLiteral("acc")};
    const QStringList compact{QStringLiteral("m"), QStringLiteral("e^(m_old\n −m_new)"),
                              QStringLiteral("acc")};
    const std::vector<qreal> weights{1, 1, 2}, contents{60, 60, 0};
    QFont font;
    font.setPointSizeF(8.5);
    const auto fits = [&](const TableHeader& h) {
        const QFontMetricsF fm(h.font);
        for (int c = 0; c < h.titles.size(); ++c) {
            if (h.widths[std::size_t(c)] < contents[std::size_t(c)] - 1e-9) return false;
            for (const QString& line : h.titles[c].split(QLatin1Char('\n')))
                if (fm.horizontalAdvance(line) + 12 > h.widths[std::size_t(c)] + 1e-9) return false;
        }
        return true;
    };
    const TableHeader wide = fitTableHeader(titles, compact, weights, contents, font, 6.5, 800, 12);
    QCOMPARE(wide.titles, titles);
    QCOMPARE(wide.font.pointSizeF(), 8.5);
    QVERIFY(fits(wide));
    // Narrower than the whole titles need at the smallest size, wide enough for the compact ones.
    QFont smallest = font;
    smallest.setPointSizeF(6.5);
    const QFontMetricsF fm(smallest);
    const qreal whole = std::max(fm.horizontalAdvance(QStringLiteral("max so far")) + 12, 60.0) +
                        fm.horizontalAdvance(QStringLiteral("e^(m_old−m_new)")) + 12 +
                        fm.horizontalAdvance(QStringLiteral("acc")) + 12;
    const TableHeader narrow =
        fitTableHeader(titles, compact, weights, contents, font, 6.5, whole - 2, 12);
    QCOMPARE(narrow.titles, compact);
    QVERIFY(fits(narrow));
    const auto sum = [](const std::vector<qreal>& v) {
        return std::accumulate(v.begin(), v.end(), 0.0);
    };
    QVERIFY(std::abs(sum(narrow.widths) - (whole - 2)) < 1e-9);
}

// On a 1280 x 800 projector, with the bug's extra line per row and the backend's column, the toy's
// whole 4-row tile is listed (the grids' cells flatten to leave the rows their room). In a view
// shorter still the table lists only the rows that fit, instead of running off the bottom; a
// tall view lists the whole tile again.
void TestWindow::tileTableFitsItsView() {
    const auto window = freshWindow({1280, 800});
    MainWindow& w = *window;
    VizSettings bug = toySettings();
    bug.options.rescale = false;
    QVERIFY(w.controller()->apply(bug, QStringLiteral("12")));
    QVERIFY(w.waitUntilIdle());
    control<QCheckBox>(w, "backendValues")->setChecked(true);
    QCoreApplication::processEvents();
    TileDetailView* tile = w.tileDetail();
    QCOMPARE(tile->listedRows(), 4);
    QVERIFY(tile->tableRect().bottom() <= tile->height());
    tile->resize(tile->width(), tile->width() / 2); // not wide enough to set the table beside
    QVERIFY2(tile->listedRows() >= 1 && tile->listedRows() < 4,
             qPrintable(QString::number(tile->listedRows())));
    QVERIFY(tile->tableRect().bottom() <= tile->height());
    // Seven columns do not fit their whole titles here: the symbols alone, not cut titles.
    QCOMPARE(tile->tableTitles().size(), 7);
    QVERIFY2(!tile->tableTitles().join(QLatin1Char('|')).contains(QStringLiteral("max so far")),
             qPrintable(tile->tableTitles().join(QLatin1Char('|'))));

    w.resize(1920, 1200);
    QTRY_COMPARE(tile->listedRows(), 4);
    QVERIFY(tile->tableRect().bottom() <= tile->height());
    QVERIFY(tile->tableTitles().join(QLatin1Char('|')).contains(QStringLiteral("max so far")));
}

// A window larger than the screen's free area opens maximised instead of hanging off it; one
// that fits keeps its size. (The offscreen platform's screen is 800 x 600.)
void TestWindow::opensWithinTheScreen() {
    const QSize room = QGuiApplication::primaryScreen()->availableGeometry().size();
    MainWindow big(freshOptions());
    big.resize(room + QSize(200, 200));
    showWithinScreen(big);
    QVERIFY(big.isMaximized());
    // Whatever the screen, the window can shrink to a 1366 x 768 laptop's free area (a 40 px
    // panel) and a 1280 x 720 projector.
    QVERIFY2(big.minimumSizeHint().width() <= 1280 && big.minimumSizeHint().height() <= 700,
             qPrintable(QStringLiteral("%1 x %2")
                            .arg(big.minimumSizeHint().width())
                            .arg(big.minimumSizeHint().height())));
    QWidget small; // the main window's minimum size is larger than this test screen
    small.resize(room / 2);
    showWithinScreen(small);
    QVERIFY(!small.isMaximized());
    QCOMPARE(small.size(), room / 2);
}

// At step 0 the caption adds the keys hint when the bar is wide enough for all of it; in a
// narrow window it is left out rather than cut ("B breaks the re").
void TestWindow::keysHintOnlyWhenItFits() {
    const auto window = freshWindow({1920, 1080});
    MainWindow& w = *window;
    QTRY_VERIFY(w.playback()->caption().contains(QStringLiteral("B breaks the rescale)")));
    w.resize(w.minimumSizeHint());
    QTRY_VERIFY(!w.playback()->caption().contains(QStringLiteral("Space plays")));
    QVERIFY(w.playback()->caption().startsWith(QStringLiteral("Step 0:")));
}

// The key help is generated from the window's actions: every action with a shortcut is in the F1
// help (lecture-only ones under their own heading), the one-line hints read as they always did,
// and a changed shortcut changes all of them.
void TestWindow::keyHelpFromTheActions() {
    const auto window = freshWindow({1920, 1080});
    MainWindow& w = *window;
    const QString help = w.keyHelpText();
    const QStringList lines = help.split(QLatin1Char('\n'));
    const qsizetype lectureHeading = lines.indexOf(QStringLiteral("In lecture mode only:"));
    QVERIFY(lectureHeading > 0);
    int withShortcut = 0;
    for (const QAction* a : w.actions()) {
        if (a->shortcut().isEmpty()) continue;
        ++withShortcut;
        const qsizetype at =
            lines.indexOf(keyName(a->shortcut()) + QStringLiteral("  ") + a->text());
        QVERIFY2(at >= 0, qPrintable(a->text() + QStringLiteral(" is missing from:\n") + help));
        QCOMPARE(at > lectureHeading, isLectureOnly(a));
    }
    QCOMPARE(withShortcut, int(lines.size()) - 2); // one line each, a blank line and the heading
    QVERIFY(lines.contains(QStringLiteral("Space  Play / pause")));
    QVERIFY(lines.contains(QStringLiteral("Ctrl+Q  Quit")));
    QTRY_VERIFY(w.playback()->caption().endsWith(
        QStringLiteral("     (Space plays, → steps, B breaks the rescale)")));
    QCOMPARE(
        w.lecture()->keysLine(),
        QStringLiteral("PgDn / PgUp  next / back     ← →  one step     ↓ ↑  chapter     B  bug "
                       "on/off     Esc  leave"));

    QAction* bug = nullptr;
    for (QAction* a : w.actions())
        if (a->text() == QStringLiteral("Bug on / off (the rescale; backward: D)")) bug = a;
    QVERIFY(bug);
    bug->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    const QStringList changed = w.keyHelpText().split(QLatin1Char('\n'));
    QVERIFY(changed.contains(QStringLiteral("Ctrl+B  Bug on / off (the rescale; backward: D)")));
    QVERIFY(!changed.contains(QStringLiteral("B  Bug on / off (the rescale; backward: D)")));
    QTRY_VERIFY(w.playback()->caption().endsWith(
        QStringLiteral("(Space plays, → steps, Ctrl+B breaks the rescale)")));
    QVERIFY(w.lecture()->keysLine().contains(QStringLiteral("Ctrl+B  bug on/off")));
    // On the backward, B leaves D out, and the hint says so.
    QVERIFY(w.controller()->applyPreset(QStringLiteral("backward")));
    QVERIFY(w.waitUntilIdle());
    QTRY_VERIFY(w.playback()->caption().endsWith(
        QStringLiteral("(Space plays, → steps, Ctrl+B leaves D out)")));
}

void TestWindow::screenshotWritesAPng() {
    const auto window = freshWindow({1280, 800});
    MainWindow& w = *window;
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("shot.png"));
    QString error;
    QVERIFY2(saveScreenshot(w, file, &error), qPrintable(error));
    QImage image(file);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1280, 800));
    QVERIFY(!saveScreenshot(w, dir.filePath(QStringLiteral("missing/dir/shot.png")), &error));
    QVERIFY(!error.isEmpty());
}

void TestWindow::settingsPersist() {
    VizSettings chosen = toySettings();
    chosen.spec.queries = chosen.spec.keys = 12;
    chosen.spec.seed = 42;
    chosen.options.loopOrder = LoopOrder::KeyValueOuter;
    chosen.hardwareId = "h100-sxm";
    chosen.tensorCoreCheck = std::nullopt; // "off", not the default
    {
        MainWindow w;
        QVERIFY(w.controller()->apply(chosen));
        w.controller()->setSpeed(8);
        control<QCheckBox>(w, "backendValues")->setChecked(true);
        w.saveState();
    }
    MainWindow again;
    QVERIFY(again.waitUntilIdle());
    QVERIFY(again.controller()->settings() == chosen);
    QCOMPARE(again.controller()->speed(), 8.0);
    QCOMPARE(control<QSpinBox>(again, "queries")->value(), 12);
    QCOMPARE(control<QComboBox>(again, "tensorCoreCheck")->currentText(), QStringLiteral("off"));
    // The view options are saved with the layout, and given back to the views and the panel.
    QVERIFY(again.tileDetail()->viewOptions().showBackendValues);
    QVERIFY(control<QCheckBox>(again, "backendValues")->isChecked());
    StartOptions preset;
    preset.preset = QStringLiteral("toy");
    MainWindow withPreset(preset); // the command line wins over what was saved
    QVERIFY(withPreset.controller()->settings() == toySettings());
}

void TestWindow::largeProblemStaysResponsive() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    const VizSettings big = largeSettings(2048);
    QElapsedTimer t;
    t.start();
    QVERIFY(w.controller()->apply(big));
    QVERIFY2(t.elapsed() < 50, "apply() must hand a large build to a worker");
    auto* cancel = w.findChild<QPushButton*>(QStringLiteral("cancel"));
    QVERIFY(cancel && cancel->isVisibleTo(&w));
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!cancel->isVisibleTo(&w));
    QVERIFY(w.controller()->settings() == big);
    for (int step : {0, 1000, w.controller()->stepCount() - 1}) {
        t.restart();
        w.controller()->setStep(step);
        QVERIFY(w.controller()->waitUntilIdle());
        w.repaint();
        QVERIFY2(t.elapsed() < 250,
                 qPrintable(QStringLiteral("step %1 took %2 ms").arg(step).arg(t.elapsed())));
    }
}

// A view that is not shown (here the step view's, behind the analysis tab) skips the frames, so
// that its work does not slow the step switch; shown again, it draws the current frame.
void TestWindow::hiddenViewsCatchUpWhenShown() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    Controller* c = w.controller();
    w.showAnalysis(0);
    QVERIFY(w.waitUntilIdle());
    c->setStep(5);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.checkPanel()->frame(), c->frame().get()); // above the tabs: always shown
    QVERIFY(w.memoryStage()->frame() != c->frame().get());
    w.tabs()->setCurrentIndex(0);
    for (const FrameView* view : std::initializer_list<const FrameView*>{
             w.memoryStage(), w.tileDetail(), w.matrices(), w.codePanel()})
        QCOMPARE(view->frame(), c->frame().get());
    QCOMPARE(w.codePanel()->currentLine(),
             lineOf(pseudocode(toySettings()), c->frame()->state.info.kind));
}

// The code panel keeps its fitted font while only the step changes; a new listing (another
// algorithm) or a new width fits again: every line, indented and in bold, within the panel.
void TestWindow::codeListingRefitsWhenItChanges() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    const auto everyLineFits = [&](int width) {
        const CodePanel* panel = w.codePanel();
        QFont bold = panel->codeFont();
        bold.setBold(true);
        const QFontMetricsF fm(bold);
        for (const CodeLine& line : pseudocode(w.controller()->settings()))
            if (fm.horizontalAdvance(QStringLiteral("    ")) * line.indent +
                    fm.horizontalAdvance(line.text) >
                width)
                return false;
        return true;
    };
    auto* algorithm = control<QComboBox>(w, "algorithm");
    for (int i = 0; i < algorithm->count(); ++i) {
        algorithm->setCurrentIndex(i);
        QVERIFY(w.waitUntilIdle());
        for (const int width : {w.codePanel()->width(), 300}) {
            w.codePanel()->resize(width, w.codePanel()->height());
            QVERIFY2(everyLineFits(width), qPrintable(algorithm->currentText()));
        }
        w.controller()->setStep(w.controller()->stepCount() - 1);
        QVERIFY(w.waitUntilIdle());
        QVERIFY(everyLineFits(300));
    }
}

// After Return in a settings field the playback keys work again: they moved the text cursor
// (Right, End), did nothing (Space) or changed the field (Up rebuilt n_k). A click on any pane
// of the step view takes the keys back too.
void TestWindow::returnInAFieldGivesTheKeysBack() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    Controller* c = w.controller();
    auto* keys = control<QSpinBox>(w, "keys");
    typeInto(keys, QStringLiteral("12"));
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(c->settings().spec.keys, 12);
    QVERIFY(!keys->hasFocus());
    QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(w.memoryStage()));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Right);
    QCOMPARE(c->step(), 1);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Up); // n_k stays
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(c->settings().spec.keys, 12);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_End);
    QCOMPARE(c->step(), c->stepCount() - 1);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Space);
    QVERIFY(c->isPlaying());
    c->pause();

    keys->setFocus();
    QTest::mouseClick(w.tileDetail(), Qt::LeftButton);
    QVERIFY(!keys->hasFocus());
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Home);
    QCOMPARE(c->step(), 0);
}

// The summary under the preset box keeps its height whatever its text (it wrapped to one to
// three lines and moved every field under the mouse); what does not fit is in its tooltip.
void TestWindow::presetNoteNeverMovesTheFields() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    auto* note = w.controls()->findChild<QLabel*>(QStringLiteral("presetNote"));
    QVERIFY(note);
    auto* queries = control<QSpinBox>(w, "queries");
    const int top = queries->mapTo(w.controls(), QPoint()).y();
    const int height = note->height();
    QString longest;
    for (const Preset& p : presets()) {
        QVERIFY(w.controller()->applyPreset(p.id));
        QVERIFY(w.waitUntilIdle());
        QApplication::processEvents();
        QCOMPARE(note->height(), height);
        QCOMPARE(queries->mapTo(w.controls(), QPoint()).y(), top);
        QCOMPARE(w.controls()->presetNoteText(), p.description);
        if (p.description.size() > longest.size()) longest = p.description;
    }
    // The longest note does not fit two lines of the dock: it is elided, and whole in the tooltip.
    QVERIFY(w.controller()->applyPreset(
        std::find_if(presets().begin(), presets().end(), [&](const Preset& p) {
            return p.description == longest;
        })->id));
    QVERIFY(w.waitUntilIdle());
    QVERIFY2(note->text().contains(QChar(0x2026)) && note->toolTip() == longest,
             qPrintable(note->text() + QStringLiteral(" | ") + note->toolTip()));
}

// "3.5" typed into n gave n = 35 (QSpinBox dropped the '.'): it is refused, saying why, and n
// keeps its value.
void TestWindow::nonIntegerIsRefusedAndTheValueKept() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    const VizSettings before = w.controller()->settings();
    auto* queries = control<QSpinBox>(w, "queries");
    typeInto(queries, QStringLiteral("3.5"));
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.controller()->settings() == before);
    QCOMPARE(queries->value(), before.spec.queries);
    QVERIFY2(w.controls()->refusalText().contains(QStringLiteral("whole number")) &&
                 w.controls()->refusalText().contains(QStringLiteral("3.5")),
             qPrintable(w.controls()->refusalText()));
    QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("3.5")));
    // A number past the field's own range is refused the same way, naming the range.
    typeInto(queries, QStringLiteral("99999999"));
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(queries->value(), before.spec.queries);
    QVERIFY2(
        w.controls()->refusalText().contains(QStringLiteral("0 to %1").arg(queries->maximum())),
        qPrintable(w.controls()->refusalText()));
}

void TestWindow::switchesExplainThemselves() {
    const auto window = freshWindow();
    for (const char* name :
         {"bug", "keepFullScores", "noRunningMax", "causal", "backendValues", "noRowDot", "noLse",
          "overwriteDq", "noMaskRecompute", "storeWeights", "onesUpstream"})
        QVERIFY2(!control<QCheckBox>(*window, name)->toolTip().isEmpty(), name);
    // Every switch of the backward's in core has its box.
    QCOMPARE(window->findChild<QGroupBox*>(QStringLiteral("backwardSwitches"))
                 ->findChildren<QCheckBox*>()
                 .size(),
             qsizetype(backwardSwitches().size()));
    for (const char* name : {"algorithm", "loopOrder", "hardware", "backend", "precision"})
        QVERIFY2(!control<QComboBox>(*window, name)->toolTip().isEmpty(), name);
}

// The backward's tensor-core check (fp16, bf16 or off): a list beside the backend, core's default
// chosen at first, offered for the backward on a GPU backend only (greyed elsewhere, its choice
// kept), proposed when chosen; set from the command line (--tc-check) and reaching the scene's
// run and its stage's name.
void TestWindow::tensorCoreCheckIsASettingOfTheBackward() {
    {
        const auto window = freshWindow();
        auto* check = control<QComboBox>(*window, "tensorCoreCheck");
        QVERIFY(!check->toolTip().isEmpty());
        QStringList items;
        for (int i = 0; i < check->count(); ++i)
            items << check->itemText(i);
        QCOMPARE(items, (QStringList{"fp16", "bf16", "off"}));
        QCOMPARE(check->currentText(), QLatin1String(toString(kDefaultLowPrecision)));
        QVERIFY(!check->isEnabled()); // the toy: the forward, on the CPU
        VizSettings backward = toySettings();
        backward.algorithm = Algorithm::Backward;
        backward.tensorCoreCheck = HalfType::Fp16;
        QVERIFY(window->controller()->apply(backward));
        QVERIFY(window->waitUntilIdle());
        QCOMPARE(check->currentText(), QStringLiteral("fp16"));
        QVERIFY(!check->isEnabled()); // the CPU has no tensor-core kernels
        const auto scene = window->controller()->scene();
        QVERIFY(scene && scene->settings.tensorCoreCheck == LowPrecisionCheck(HalfType::Fp16));
        QVERIFY(sceneRunRequest(scene->settings, Algorithm::Backward).lowPrecision ==
                LowPrecisionCheck(HalfType::Fp16));
        QVERIFY(tensorCoreStageLabel(scene->settings).startsWith(QStringLiteral("The fp16 ")));
    }
    // The panel on its own, as on a machine with a GPU: offered for the backward there.
    ControlsPanel panel;
    VizSettings gpu = toySettings();
    gpu.algorithm = Algorithm::Backward;
    gpu.backend = BackendKind::Cuda;
    panel.setSettings(gpu);
    auto* check = panel.findChild<QComboBox*>(QStringLiteral("tensorCoreCheck"));
    QVERIFY(check && check->isEnabled());
    QSignalSpy proposed(&panel, &ControlsPanel::settingsRequested);
    for (const LowPrecisionCheck chosen : {LowPrecisionCheck(), LowPrecisionCheck(HalfType::Fp16),
                                           LowPrecisionCheck(HalfType::Bf16)}) {
        const int item = check->findText(QLatin1String(toString(chosen)));
        QVERIFY(item >= 0);
        check->setCurrentIndex(item);
        emit check->activated(item); // chosen as a user does
        QVERIFY(proposed.count() == 1);
        proposed.clear();
        VizSettings expected = gpu;
        expected.tensorCoreCheck = chosen;
        QVERIFY2(panel.proposed() == expected, toString(chosen));
    }
    gpu.algorithm = Algorithm::Flash;
    gpu.tensorCoreCheck = std::nullopt;
    panel.setSettings(gpu);
    QVERIFY(!check->isEnabled()); // the forward runs no such check
    QCOMPARE(check->currentText(), QStringLiteral("off"));
    QVERIFY(panel.proposed().tensorCoreCheck == LowPrecisionCheck());
    // From the command line (--tc-check): over the preset.
    StartOptions options = freshOptions();
    options.preset = QStringLiteral("backward");
    options.tensorCoreCheck = LowPrecisionCheck();
    const auto started = freshWindow({1366, 768}, options);
    QVERIFY(started->controller()->settings().tensorCoreCheck == LowPrecisionCheck());
    QCOMPARE(control<QComboBox>(*started, "tensorCoreCheck")->currentText(), QStringLiteral("off"));
    QVERIFY(tensorCoreStageLabel(started->controller()->scene()->settings).isEmpty());
}

// The third algorithm: its blocks and its switches, the loop order (its own) and the debug copy of
// S (which its forward does not keep) not offered; a switch changes the run and keeps the preset
// named.
void TestWindow::backwardHasItsOwnSwitches() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    auto* group = w.findChild<QGroupBox*>(QStringLiteral("backwardSwitches"));
    QVERIFY(!group->isVisibleTo(w.controls()));
    auto* algorithm = control<QComboBox>(w, "algorithm");
    const int item = algorithm->findData(int(Algorithm::Backward));
    QVERIFY(item >= 0);
    QCOMPARE(algorithm->itemText(item), QStringLiteral("FlashAttention backward"));
    // Chosen as a user does (the panel proposes on activated).
    algorithm->setCurrentIndex(item);
    emit algorithm->activated(item);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.controller()->settings().algorithm, Algorithm::Backward);
    QVERIFY(w.controller()->applyPreset(QStringLiteral("backward")));
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(algorithm->currentIndex(), item);
    QVERIFY(group->isVisibleTo(w.controls()));
    for (const char* name : {"blockRows", "blockCols"})
        QVERIFY2(control<QSpinBox>(w, name)->isEnabled(), name);
    QVERIFY(!control<QComboBox>(w, "loopOrder")->isEnabled());
    QVERIFY(control<QComboBox>(w, "loopOrder")->toolTip().contains(QStringLiteral("backward")));
    QVERIFY(!control<QCheckBox>(w, "keepFullScores")->isEnabled());
    QVERIFY(control<QCheckBox>(w, "bug")->isEnabled());
    QVERIFY(!control<QCheckBox>(w, "bug")->text().contains(QStringLiteral("[B]")));
    QVERIFY(control<QCheckBox>(w, "noRowDot")->text().contains(QStringLiteral("[B]")));
    // Each label whole in the panel's width.
    for (const QCheckBox* check : group->findChildren<QCheckBox*>())
        QVERIFY2(check->width() >= check->sizeHint().width(), qPrintable(check->text()));

    auto* box = control<QComboBox>(w, "preset");
    const QString title = box->currentText();
    control<QCheckBox>(w, "overwriteDq")->setChecked(true);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!w.controller()->settings().options.backward.accumulateDq);
    QVERIFY(!w.controller()->scene()->backward->check.passed());
    QCOMPARE(box->currentText(), QStringLiteral("%1 (changed)").arg(title));
    QVERIFY2(w.controls()->presetNoteText().contains(QStringLiteral("dQ overwritten")),
             qPrintable(w.controls()->presetNoteText()));
    control<QCheckBox>(w, "overwriteDq")->setChecked(false);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(box->currentText(), title);
    // B checks the box of D.
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(control<QCheckBox>(w, "noRowDot")->isChecked());
    QVERIFY(!w.controller()->settings().options.backward.subtractRowDot);
    QVERIFY(w.controller()->settings().options.rescale);
    // Leaving D out spoils dQ and dK but not dV: the check names each gradient by itself.
    const GradientCheck& check = w.controller()->scene()->backward->check;
    QVERIFY(!check.dq.passed() && !check.dk.passed() && check.dv.passed());
    QTRY_VERIFY(w.checkPanel()->failing());
    const QString rows = w.checkPanel()->lineText(1);
    QVERIFY2(rows.contains(QStringLiteral("dQ")) && rows.contains(QStringLiteral("dK")), qPrintable(rows));
    QVERIFY2(!rows.contains(QStringLiteral("dK/dV")), qPrintable(rows));
    QVERIFY2(rows.contains(QStringLiteral("dV right")) || !rows.contains(QStringLiteral("dV")), qPrintable(rows));
    QVERIFY2(rows.contains(QStringLiteral("D left out")), qPrintable(rows));
    // The forward again: the backward's group goes, the loop order comes back.
    const int flash = algorithm->findData(int(Algorithm::Flash));
    algorithm->setCurrentIndex(flash);
    emit algorithm->activated(flash);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(!group->isVisibleTo(w.controls()));
    QVERIFY(control<QComboBox>(w, "loopOrder")->isEnabled());
    // --bug on the window's command line is the same switch as B.
    StartOptions start = freshOptions();
    start.preset = QStringLiteral("backward");
    start.bug = true;
    const auto fromCommandLine = freshWindow({1366, 768}, start);
    const VizSettings& started = fromCommandLine->controller()->settings();
    QCOMPARE(started.algorithm, Algorithm::Backward);
    QVERIFY(!started.options.backward.subtractRowDot);
    QVERIFY(started.options.rescale);
    QVERIFY(control<QCheckBox>(*fromCommandLine, "noRowDot")->isChecked());
    QVERIFY(control<QComboBox>(*fromCommandLine, "preset")
                ->currentText()
                .endsWith(QStringLiteral("(changed)")) ||
            control<QComboBox>(*fromCommandLine, "preset")->currentData().toString() ==
                QStringLiteral("backward-bug"));
}

// G with the rescale in place: no step is wrong, so the step stays and the status bar says so
// (it jumped to the step where the rescale first bites, silently).
void TestWindow::jumpWithoutAWrongStepSaysSo() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    QVERIFY(w.controller()->settings().options.rescale);
    QVERIFY(w.controller()->scene()->firstRescaleStep);
    w.controller()->setStep(3);
    QTest::keyClick(&w, Qt::Key_G);
    QCOMPARE(w.controller()->step(), 3);
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("No step is wrong")),
             qPrintable(w.statusBar()->currentMessage()));
    QTest::keyClick(&w, Qt::Key_B);
    QVERIFY(w.waitUntilIdle());
    QTest::keyClick(&w, Qt::Key_G);
    QCOMPARE(w.controller()->step(), *w.controller()->scene()->firstRescaleStep);
}

// Cancel ends the build and the status line names the scene still shown, not the stage the
// build had reached ("Making Q, K and V" stayed).
void TestWindow::cancelledBuildLeavesNoStageBehind() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    const VizSettings large = largeSettings(4096);
    QVERIFY(w.controller()->apply(large));
    QVERIFY(w.controller()->isBusy());
    auto* status = w.findChild<QLabel*>(QStringLiteral("status"));
    QTRY_VERIFY(!status->text().isEmpty() && status->text() != QStringLiteral("Starting"));
    w.findChild<QPushButton*>(QStringLiteral("cancel"))->click();
    QVERIFY(!w.controller()->isBusy());
    QApplication::processEvents();
    QVERIFY2(status->text().startsWith(QStringLiteral("Build cancelled")) &&
                 status->text().contains(describeSettings(toySettings())),
             qPrintable(status->text()));
}

// The step view says why the current step is taken, in the sentence the lecture quotes
// (resources/lecture.json's "why" list): exp(m_old − m_new) was explained only in chapter 3.
void TestWindow::stepViewSaysWhyInTheLecturesWords() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    Controller* c = w.controller();
    const auto& whys = stepWhys();
    const auto rescale = std::find_if(whys.begin(), whys.end(),
                                      [](const StepWhy& why) { return why.id == "rescale"; });
    QVERIFY(rescale != whys.end());
    QVERIFY(rescale->text.contains(QStringLiteral("e^(m_old − m_new)")));
    const LectureChapter& online = lectureChapters()[2];
    QVERIFY(online.narrative.contains(rescale->text));
    int update = -1;
    for (int s = 0; s < c->stepCount() && update < 0; ++s)
        if (c->scene()->engine->info(s).kind == StepKind::UpdateOutput) update = s;
    QVERIFY(update > 0);
    c->setStep(update);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.playback()->why(), rescale->text);
    c->setBug(true);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.playback()->why(), rescale->withoutRescale);
}

// Esc from lecture mode put a maximised window back to its normal size.
void TestWindow::leavingTheLectureKeepsTheWindowMaximised() {
    StartOptions options = freshOptions();
    options.fullScreen = true;
    MainWindow w(options);
    w.showMaximized();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.isMaximized());
    w.enterLecture(0);
    QVERIFY(w.isFullScreen());
    w.leaveLecture();
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.isMaximized());
    QVERIFY(!w.isFullScreen());
}

// The seed field was a QSpinBox: it showed 2^31 - 1 for a larger seed (from the command line, a
// preset or saved settings) and wrote that back on the next edit of any field. It takes the
// engine's whole range now, and refuses what is past it.
void TestWindow::seedsPastThirtyTwoBitsSurviveTheField() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    VizSettings large = toySettings();
    large.spec.seed = kMaxSeed;
    QVERIFY(w.controller()->apply(large));
    QVERIFY(w.waitUntilIdle());
    auto* queries = control<QSpinBox>(w, "queries");
    queries->setValue(12);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.controller()->settings().spec.queries, 12);
    QCOMPARE(w.controller()->settings().spec.seed, kMaxSeed);
    auto* seed = control<QLineEdit>(w, "seed");
    for (const char* typed : {"-1", "9223372036854775808", "1e3"}) {
        typeInto(seed, QLatin1String(typed));
        QVERIFY(w.waitUntilIdle());
        QCOMPARE(w.controller()->settings().spec.seed, kMaxSeed);
        QCOMPARE(seed->text(), QString::number(kMaxSeed));
        QVERIFY2(w.controls()->refusalText().contains(QLatin1String(typed)),
                 qPrintable(w.controls()->refusalText()));
    }
    typeInto(seed, QStringLiteral("5000000000"));
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.controller()->settings().spec.seed, std::uint64_t(5000000000));
}

// The caption under the playback bar ran off its right edge at 1280 x 800 with the bug on
// ("… skipped (the bug)  [query block 0 (rows 0–3), key bl"): it drops the blocks first, then
// elides, and the tooltip has the whole line.
void TestWindow::stepCaptionNeverRunsOff() {
    for (const QSize size : {QSize(1920, 1080), QSize(1366, 768), QSize(1280, 800)}) {
        const auto window = freshWindow(size);
        MainWindow& w = *window;
        VizSettings bug = toySettings();
        bug.spec.pattern = InputPattern::LateMaximum;
        bug.options.rescale = false;
        QVERIFY(w.controller()->apply(bug, QStringLiteral("12")));
        QVERIFY(w.waitUntilIdle());
        const auto* caption = w.findChild<QLabel*>(QStringLiteral("caption"));
        QVERIFY(caption);
        const QString shown = caption->text();
        QVERIFY2(QFontMetricsF(caption->font()).horizontalAdvance(shown) <= caption->width(),
                 qPrintable(shown));
        QVERIFY(shown.startsWith(QStringLiteral("Step 12:")));
        const QString whole =
            shown.contains(QStringLiteral("key block 1")) ? shown : caption->toolTip();
        QVERIFY2(whole.contains(QStringLiteral("key block 1")) &&
                     whole.contains(QStringLiteral("skipped (the bug)")),
                 qPrintable(whole));
    }
}

// n = 2 typed on the toy was refused ("Br = 4 is larger than n_q = 2") while `flashviz --n 2`
// and `flashviz-cli run --n 2` took it: a block size left as it was follows a shorter sequence
// on every face (core's withBlocksWithin); one the user set is checked as it is.
void TestWindow::shorterSequenceShrinksUnsetBlocks() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    control<QSpinBox>(w, "queries")->setValue(2);
    QVERIFY(w.waitUntilIdle());
    QCOMPARE(w.controller()->settings().spec.queries, 2);
    QCOMPARE(w.controller()->settings().options.blockRows, 2);
    QCOMPARE(w.controller()->settings().options.blockCols, 4);
    QVERIFY(w.controls()->refusalText().isEmpty());
    const VizSettings before = w.controller()->settings();
    control<QSpinBox>(w, "blockRows")->setValue(3);
    QVERIFY(w.waitUntilIdle());
    QVERIFY(w.controller()->settings() == before);
    QVERIFY2(w.controls()->refusalText().contains(QStringLiteral("1 to 2")),
             qPrintable(w.controls()->refusalText()));
}

// The CPU demo's check (its PASS) and step player sit around the tabs only on the pages that
// follow the demo's steps: on the GPU benchmark and Hopper pages the PASS would read as the
// kernels' verdict.
void TestWindow::kernelPagesHideTheDemosCheckAndPlayer() {
    const auto window = freshWindow();
    MainWindow& w = *window;
    QTabWidget* tabs = w.tabs();
    const auto demoChromeShown = [&] {
        return w.checkPanel()->isVisibleTo(&w) && w.playback()->isVisibleTo(&w);
    };
    const auto demoChromeHidden = [&] {
        return !w.checkPanel()->isVisibleTo(&w) && !w.playback()->isVisibleTo(&w);
    };
    QVERIFY(demoChromeShown());
    tabs->setCurrentWidget(w.gpuBenchmark()->parentWidget());
    QVERIFY(demoChromeHidden());
    tabs->setCurrentWidget(w.hopper()->parentWidget());
    QVERIFY(demoChromeHidden());
    for (int i = 0; i < tabs->count(); ++i) {
        tabs->setCurrentIndex(i);
        const bool kernelPage = tabs->currentWidget() == w.gpuBenchmark()->parentWidget() ||
                                tabs->currentWidget() == w.hopper()->parentWidget();
        QVERIFY2(kernelPage ? demoChromeHidden() : demoChromeShown(), qPrintable(tabs->tabText(i)));
    }
    // The keys still step the demo, and the player shows it on return.
    tabs->setCurrentWidget(w.gpuBenchmark()->parentWidget());
    w.controller()->setStep(3);
    tabs->setCurrentIndex(0);
    QVERIFY(demoChromeShown());
    QCOMPARE(w.playback()->slider()->value(), 3);
}

// The settings dock gives its width to the kernel pages and the lecture, and comes back after,
// unless the user closed it; the layout saved is the user's.
void TestWindow::settingsDockStepsAsideAndComesBack() {
    StartOptions options = freshOptions();
    options.save = true;
    auto window = freshWindow({1366, 768}, options);
    MainWindow& w = *window;
    auto* dock = w.findChild<QDockWidget*>(QStringLiteral("settingsDock"));
    QVERIFY(dock);
    QTabWidget* tabs = w.tabs();
    const auto shown = [&] { return dock->isVisibleTo(&w); };
    QVERIFY(shown());
    tabs->setCurrentWidget(w.hopper()->parentWidget());
    QVERIFY(!shown());
    tabs->setCurrentWidget(w.gpuBenchmark()->parentWidget());
    QVERIFY(!shown());
    tabs->setCurrentIndex(1); // the analysis: the dock's settings shape it
    QVERIFY(shown());
    w.enterLecture(0);
    QVERIFY(!shown());
    w.leaveLecture();
    QVERIFY(shown());

    // Closed by the user: it stays closed through both.
    dock->toggleViewAction()->trigger();
    QVERIFY(!shown());
    tabs->setCurrentWidget(w.hopper()->parentWidget());
    tabs->setCurrentIndex(0);
    QVERIFY(!shown());
    w.enterLecture(0);
    w.leaveLecture();
    QVERIFY(!shown());
    // Opened by the user on a kernel page: it stays there.
    tabs->setCurrentWidget(w.hopper()->parentWidget());
    dock->toggleViewAction()->trigger();
    QVERIFY(shown());
    tabs->setCurrentIndex(0);
    tabs->setCurrentWidget(w.gpuBenchmark()->parentWidget());
    QVERIFY(!shown()); // a new visit sets it aside again

    // Closed on a kernel page, the window saves the dock as the user left it: shown.
    w.close();
    window.reset();
    StartOptions again = freshOptions();
    again.restore = true;
    const auto restored = freshWindow({1366, 768}, again);
    QVERIFY(restored->findChild<QDockWidget*>(QStringLiteral("settingsDock"))->isVisibleTo(restored.get()));
}

QTEST_MAIN(TestWindow)
#include "tst_window.moc"
