// The input designer in the window: the "inputDesign" settings key (read strictly, saved and
// loaded), a design in the settings building a scene whose rescale fires where designed (the step
// engine's first rescale step), and the dialog: its grid, quick designs, sharpness, preview,
// Apply, Cancel and the designs the engine refuses, opened from the settings panel.
#include "session/controller.h"
#include "session/session_file.h"
#include "widgets/controls_panel.h"
#include "widgets/input_designer_dialog.h"
#include "window_support.h"

#include "core/errors.h"
#include "core/input_design.h"

#include <QDoubleSpinBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QtTest>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;

namespace {

// The toy grown to n = 16 with 4-key blocks, every row's maximum in `block`.
VizSettings designed(int block, int n = 16, int d = 8) {
    VizSettings s = toySettings();
    s.spec.queries = s.spec.keys = n;
    s.spec.headDim = d;
    s.options.blockRows = s.options.blockCols = 4;
    s.spec.design = oneBlockDesign(s.spec, 4, block, 6.0);
    return s;
}

QString refusalOf(const QJsonValue& design) {
    QJsonObject json;
    json.insert(QStringLiteral("inputDesign"), design);
    try {
        (void)settingsFromJson(json, toySettings());
    } catch (const EngineError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

QJsonValue parse(const char* text) {
    return QJsonDocument::fromJson(QByteArray("{\"v\": ") + text + "}").object().value("v");
}

// Runs `act` on the input designer once the panel's button has opened it (it runs modal).
void whenDesignerOpens(const std::function<void(InputDesignerDialog*)>& act) {
    whenModalOpens<InputDesignerDialog>([act](InputDesignerDialog* dialog) {
        dialog->waitForPreview();
        act(dialog);
    });
}

} // namespace

class TestInputDesigner : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void settingsKeyRoundTrip();
    void settingsKeyReadStrictly_data();
    void settingsKeyReadStrictly();
    void savedAndLoaded();
    void savedInASession();
    void sceneRescalesWhereDesigned();
    void dialogQuickDesignsAndPreview();
    void dialogGridClicksAndDrags();
    void dialogRefusesBadDesigns();
    void panelButtonAppliesAndCancels();
};

void TestInputDesigner::settingsKeyRoundTrip() {
    VizSettings s = designed(2);
    s.spec.design->rows[5] = {3, 12.5};
    const QJsonObject json = settingsToJson(s);
    // Runs: rows 0-4 in block 2, row 5 alone, rows 6-15 in block 2 again.
    const QJsonObject design = json.value(QStringLiteral("inputDesign")).toObject();
    QCOMPARE(design.value(QStringLiteral("blockSize")).toInt(), 4);
    QCOMPARE(design.value(QStringLiteral("rows")).toArray(),
             (QJsonArray{QJsonArray{2, 6.0, 5}, QJsonArray{3, 12.5}, QJsonArray{2, 6.0, 10}}));
    QVERIFY(settingsFromJson(json, toySettings()) == s);
    // Without a design the key is null, and reading it drops a design the base had.
    const QJsonObject plain = settingsToJson(toySettings());
    QVERIFY(plain.value(QStringLiteral("inputDesign")).isNull());
    QVERIFY(!settingsFromJson(plain, s).spec.design);
    // The toy's own settings lose nothing.
    QVERIFY(settingsFromJson(plain, toySettings()) == toySettings());
    QVERIFY(describeSettings(s).contains(
        QStringLiteral("designed inputs (each row's maximum in a chosen block of")));
}

void TestInputDesigner::settingsKeyReadStrictly_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("not an object") << "[1]"
                                   << "inputDesign must be an object";
    QTest::newRow("unknown field") << "{\"blockSize\": 4, \"rows\": [], \"x\": 1}"
                                   << "inputDesign: unknown field 'x'";
    QTest::newRow("no rows") << "{\"blockSize\": 4}"
                             << "inputDesign needs both blockSize and rows";
    QTest::newRow("block size 0") << "{\"blockSize\": 0, \"rows\": []}"
                                  << "inputDesign.blockSize must be a whole number from 1";
    QTest::newRow("rows not a list") << "{\"blockSize\": 4, \"rows\": 3}"
                                     << "inputDesign.rows must be a list";
    QTest::newRow("short run") << "{\"blockSize\": 4, \"rows\": [[1]]}"
                               << "inputDesign.rows[0] must be [keyBlock, sharpness] or "
                                  "[keyBlock, sharpness, repeat], not a list of 1";
    QTest::newRow("run not a list") << "{\"blockSize\": 4, \"rows\": [[1, 8], 5]}"
                                    << "inputDesign.rows[1] must be";
    QTest::newRow("block negative") << "{\"blockSize\": 4, \"rows\": [[-1, 8]]}"
                                    << "inputDesign.rows[0] keyBlock must be a whole number from 0";
    QTest::newRow("block fraction")
        << "{\"blockSize\": 4, \"rows\": [[1.5, 8]]}"
        << "inputDesign.rows[0] keyBlock must be a whole number, not 1.5";
    QTest::newRow("sharpness text") << "{\"blockSize\": 4, \"rows\": [[1, \"8\"]]}"
                                    << "inputDesign.rows[0] sharpness must be a number, not '8'";
    QTest::newRow("sharpness high") << "{\"blockSize\": 4, \"rows\": [[1, 8], [1, 60]]}"
                                    << "inputDesign.rows[1]: sharpness 60 is outside 0.5 to 50 "
                                       "logits";
    QTest::newRow("repeat 0") << "{\"blockSize\": 4, \"rows\": [[1, 8, 0]]}"
                              << "inputDesign.rows[0] repeat must be a whole number from 1";
    QTest::newRow("too many rows") << "{\"blockSize\": 4, \"rows\": [[1, 8, 1048576], [1, 8]]}"
                                   << "inputDesign.rows[1]: more than 1048576 rows in all";
}

void TestInputDesigner::settingsKeyReadStrictly() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    const QString why = refusalOf(parse(json.toUtf8().constData()));
    QVERIFY2(why.contains(message), qPrintable(why));
    // With `problems`, the bad key is noted and the base's design kept.
    QJsonObject object;
    object.insert(QStringLiteral("inputDesign"), parse(json.toUtf8().constData()));
    QStringList problems;
    const VizSettings base = designed(1);
    QVERIFY(settingsFromJson(object, base, &problems).spec.design == base.spec.design);
    QCOMPARE(problems.size(), 1);
}

void TestInputDesigner::savedAndLoaded() {
    QSettings store;
    store.clear();
    const VizSettings s = designed(3);
    saveSettings(store, s);
    QStringList problems;
    const auto loaded = loadSettings(store, &problems);
    QVERIFY(problems.isEmpty());
    QVERIFY(loaded && *loaded == s);
    store.clear();
}

void TestInputDesigner::savedInASession() {
    Session session;
    session.settings = designed(2, 32);
    session.settings.spec.design = randomDesign(session.settings.spec, 4, 7.5);
    const SessionRead read =
        parseSession(sessionToJson(session), QStringLiteral("s.flashviz"), SessionLimits{1, {}});
    QVERIFY2(read.session, qPrintable(read.error));
    QVERIFY(read.session->settings.spec.design == session.settings.spec.design);
}

void TestInputDesigner::sceneRescalesWhereDesigned() {
    auto window = freshWindow();
    Controller* controller = window->controller();
    for (int block : {1, 2, 3}) {
        QVERIFY(controller->apply(designed(block), QStringLiteral("first-rescale")));
        QVERIFY(window->waitUntilIdle());
        const auto scene = controller->scene();
        QVERIFY(scene->settings.spec.design);
        QVERIFY(scene->firstRescaleStep.has_value());
        const StepInfo info = scene->engine->info(*scene->firstRescaleStep);
        QCOMPARE(info.queryBlock, 0);
        QCOMPARE(info.keyBlock, block);
        QCOMPARE(controller->step(), *scene->firstRescaleStep);
        // The engine's correction at that step is e^−6 for every row of the block.
        const StepState state = scene->engine->state(controller->step());
        QVERIFY(std::abs(state.correction.maxCoeff() - std::exp(-6.0)) < 1e-12);
        // The output is right: the design changes the inputs, not attention.
        QVERIFY(scene->check.passed());
    }
    // The first block: the rescale never fires.
    QVERIFY(controller->apply(designed(0)));
    QVERIFY(window->waitUntilIdle());
    QVERIFY(!controller->scene()->firstRescaleStep);
    // A design that does not fit the sizes is refused and the scene kept.
    VizSettings bad = designed(2);
    bad.spec.design->rows.pop_back();
    const auto before = controller->scene();
    QVERIFY(!controller->apply(bad));
    QVERIFY(controller->lastRefusal().contains(QStringLiteral("15 rows for n_q = 16")));
    QCOMPARE(controller->scene(), before);
}

void TestInputDesigner::dialogQuickDesignsAndPreview() {
    VizSettings s = designed(2, 32);
    s.spec.design.reset();
    InputDesignerDialog dialog(s, Qt::red);
    // Without a design to start from: the diagonal, at the default sharpness.
    QVERIFY(dialog.design() == diagonalDesign(s.spec, 4, RowMaximum{}.sharpness));
    QVERIFY(dialog.waitForPreview());
    QCOMPARE(dialog.preview().unrealisedRow, -1);
    QVERIFY(dialog.summaryText().startsWith(
        QStringLiteral("Every row's maximum lies in the block designed")));
    QVERIFY(!dialog.preview().scores.isNull());
    // The quick designs, at the sharpness shown.
    dialog.setSharpness(3.5);
    const auto click = [&](const char* name) {
        auto* b = dialog.findChild<QPushButton*>(QLatin1String(name));
        QVERIFY2(b, name);
        b->click();
        QVERIFY(dialog.waitForPreview());
        QCOMPARE(dialog.preview().unrealisedRow, -1);
    };
    click("lastBlockDesign");
    QVERIFY(dialog.design() == lastBlockDesign(s.spec, 4, 3.5));
    click("randomDesign");
    QVERIFY(dialog.design() == randomDesign(s.spec, 4, 3.5));
    dialog.findChild<QSpinBox*>(QStringLiteral("oneBlock"))->setValue(5);
    click("oneBlockDesign");
    QVERIFY(dialog.design() == oneBlockDesign(s.spec, 4, 5, 3.5));
    // The preview is the engine's: every row rescales once, at block 5, by e^−3.5; the step view's
    // first rescale is query block 0's at key block 5.
    for (const RealisedRow& r : dialog.preview().realised) {
        QCOMPARE(r.maxBlock, 5);
        QCOMPARE(int(r.rescales.size()), 1);
        QVERIFY(std::abs(r.rescales[0].factor - std::exp(-3.5)) < 1e-12);
    }
    QVERIFY(dialog.preview().firstRescaleInfo);
    QCOMPARE(dialog.preview().firstRescaleInfo->keyBlock, 5);
    QVERIFY(dialog.summaryText().contains(QStringLiteral("step %1 (query block 0, key block 5)")
                                              .arg(*dialog.preview().firstRescaleStep)));
    dialog.setSharpness(9);
    click("sharpnessEveryRow");
    for (const RowMaximum& r : dialog.design().rows)
        QCOMPARE(r.sharpness, 9.0);
    click("diagonalDesign");
    QVERIFY(dialog.design() == diagonalDesign(s.spec, 4, 9));
    // Apply hands back the settings with the design.
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QVERIFY(dialog.settings().spec.design == dialog.design());
    VizSettings expected = s;
    expected.spec.design = dialog.design();
    QVERIFY(dialog.settings() == expected);
}

void TestInputDesigner::dialogGridClicksAndDrags() {
    const VizSettings s = designed(0);
    InputDesignerDialog dialog(s, Qt::red);
    dialog.resize(1100, 720);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    DesignGrid* grid = dialog.grid();
    QCOMPARE(grid->rowsPerGroup(), 1);
    QCOMPARE(grid->blockCount(), 4);
    dialog.setSharpness(4);
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->pointFor(3, 1));
    QCOMPARE(dialog.design().rows[3], (RowMaximum{1, 4.0}));
    QCOMPARE(dialog.design().rows[2], (RowMaximum{0, 6.0}));
    // Press on block 3 at row 5, drag to row 9, release: rows 5..9.
    QTest::mousePress(grid, Qt::LeftButton, {}, grid->pointFor(5, 3));
    QMouseEvent move(QEvent::MouseMove, grid->pointFor(9, 0),
                     grid->mapToGlobal(grid->pointFor(9, 0)), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QApplication::sendEvent(grid, &move);
    QTest::mouseRelease(grid, Qt::LeftButton, {}, grid->pointFor(9, 0));
    for (int row = 0; row < 16; ++row)
        QCOMPARE(dialog.design().rows[std::size_t(row)].keyBlock, row >= 5 && row <= 9 ? 3
                                                                  : row == 3           ? 1
                                                                                       : 0);
    QVERIFY(dialog.waitForPreview());
    QCOMPARE(dialog.preview().unrealisedRow, -1);
    QVERIFY(grid->cellText(7, 3).contains(QStringLiteral("Realised: key 12 (block 3)")));
    QVERIFY(grid->cellText(7, 3).contains(
        QStringLiteral("The rescale fires at the run's key block 3")));
    // Causal: a row that does not see the block clicked takes its last visible block.
    VizSettings causal = s;
    causal.spec.causal = true;
    causal.spec.design = lastBlockDesign(causal.spec, 4, 6.0);
    InputDesignerDialog causalDialog(causal, Qt::red);
    causalDialog.pickRows(0, 15, 3);
    QVERIFY(causalDialog.design() ==
            lastBlockDesign(causal.spec, 4, causalDialog.design().rows[0].sharpness));
    // Many rows: the grid groups them, and a click on a group sets all of its rows.
    VizSettings large = designed(0, 2048, 64);
    large.options.blockRows = large.options.blockCols = 64;
    large.spec.design = oneBlockDesign(large.spec, 64, 0, 6.0);
    InputDesignerDialog largeDialog(large, Qt::red);
    largeDialog.resize(1100, 720);
    largeDialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&largeDialog));
    const int group = largeDialog.grid()->rowsPerGroup();
    QVERIFY(group > 1);
    QTest::mouseClick(largeDialog.grid(), Qt::LeftButton, {},
                      largeDialog.grid()->pointFor(group * 3, 7));
    for (int row = 0; row < 2048; ++row)
        QCOMPARE(largeDialog.design().rows[std::size_t(row)].keyBlock,
                 row >= group * 3 && row < group * 4 ? 7 : 0);
    QVERIFY(largeDialog.waitForPreview());
    QCOMPARE(largeDialog.preview().unrealisedRow, -1);
}

void TestInputDesigner::dialogRefusesBadDesigns() {
    // d = 1 cannot tell the diagonal's nine maxima apart: the preview says why, Apply is refused.
    VizSettings s = designed(0, 33, 1);
    InputDesignerDialog dialog(s, Qt::red);
    dialog.show();
    dialog.findChild<QPushButton*>(QStringLiteral("diagonalDesign"))->click();
    QVERIFY(dialog.waitForPreview());
    QVERIFY2(dialog.preview().error.contains(QStringLiteral("d = 1 cannot tell apart")),
             qPrintable(dialog.preview().error));
    QVERIFY(dialog.messageText().startsWith(QStringLiteral("Refused: input design:")));
    dialog.accept();
    QVERIFY(dialog.isVisible());
    QVERIFY(dialog.messageText().contains(QStringLiteral("The inputs in force stay")));
    // A design of the wrong length (a session edited by hand) is refused the same way.
    InputDesign wrong = dialog.design();
    wrong.rows.pop_back();
    dialog.setDesign(wrong);
    QVERIFY(dialog.waitForPreview());
    QVERIFY(dialog.preview().error.contains(QStringLiteral("32 rows for n_q = 33")));
    // "Use the pattern instead" can be applied: the settings then have no design.
    dialog.findChild<QPushButton*>(QStringLiteral("usePattern"))->click();
    QVERIFY(!dialog.settings().spec.design);
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    // The sharpness control keeps to the range the engine takes.
    auto* sharpness = dialog.findChild<QDoubleSpinBox*>(QStringLiteral("sharpness"));
    sharpness->setValue(500);
    QCOMPARE(sharpness->value(), kMaxSharpness);
    sharpness->setValue(0);
    QCOMPARE(sharpness->value(), kMinSharpness);
}

void TestInputDesigner::panelButtonAppliesAndCancels() {
    auto window = freshWindow();
    Controller* controller = window->controller();
    VizSettings start = designed(0);
    start.spec.design.reset();
    QVERIFY(controller->apply(start));
    QVERIFY(window->waitUntilIdle());
    auto* button = control<QPushButton>(*window, "designInputs");
    // Cancel: nothing changes.
    const auto before = controller->scene();
    whenDesignerOpens([](InputDesignerDialog* dialog) { dialog->reject(); });
    button->click();
    QVERIFY(window->waitUntilIdle());
    QCOMPARE(controller->scene(), before);
    // Apply the last-block design: the scene is rebuilt with it and the rescale fires at block 3.
    whenDesignerOpens([](InputDesignerDialog* dialog) {
        dialog->findChild<QPushButton*>(QStringLiteral("lastBlockDesign"))->click();
        dialog->accept();
    });
    button->click();
    QVERIFY(window->waitUntilIdle());
    const auto scene = controller->scene();
    QVERIFY(scene->settings.spec.design);
    QVERIFY(*scene->settings.spec.design == lastBlockDesign(start.spec, 4, RowMaximum{}.sharpness));
    QVERIFY(scene->firstRescaleStep);
    QCOMPARE(scene->engine->info(*scene->firstRescaleStep).keyBlock, 3);
    // The controls say where the inputs come from and keep the sizes the design was made for.
    ControlsPanel* panel = window->controls();
    QVERIFY(panel->inputSourceText().startsWith(QStringLiteral("designed inputs")));
    QVERIFY(!control<QSpinBox>(*window, "queries")->isEnabled());
    QVERIFY(!control<QPushButton>(*window, "generatedInputs")->isHidden());
    // Reopened, the dialog starts from the design in force; "Use the pattern" drops it.
    whenDesignerOpens([&](InputDesignerDialog* dialog) {
        QVERIFY(dialog->design() == *scene->settings.spec.design);
        dialog->findChild<QPushButton*>(QStringLiteral("usePattern"))->click();
        dialog->accept();
    });
    button->click();
    QVERIFY(window->waitUntilIdle());
    QVERIFY(!controller->settings().spec.design);
    QVERIFY(panel->inputSourceText().isEmpty());
    QVERIFY(control<QSpinBox>(*window, "queries")->isEnabled());
}

QTEST_MAIN(TestInputDesigner)
#include "tst_input_designer.moc"
