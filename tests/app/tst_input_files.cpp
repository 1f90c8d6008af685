// The window's inputs from .npy files: the settings key "inputFiles" (read strictly, saved and
// read back, a file gone keeping the toy's inputs), the scene built from the files' values, a
// bad file refused with the previous scene kept, the controls panel showing where the inputs
// come from, and the input files dialog reading each file as it is chosen.
#include "session/controller.h"
#include "session/settings.h"
#include "shell/command_line.h"
#include "widgets/controls_panel.h"
#include "widgets/input_designer_dialog.h"
#include "widgets/input_files_dialog.h"
#include "window_support.h"

#include "core/backward.h"
#include "core/errors.h"
#include "core/npy.h"
#include "tests/npy_test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <limits>

using namespace flashviz;
using namespace flashviz::gui;
using flashviz::gui::test::control;
using flashviz::gui::test::freshWindow;
using flashviz::gui::test::whenModalOpens;
using flashviz::test::normalArray;

namespace {

QJsonObject parse(const char* text) {
    return QJsonDocument::fromJson(QByteArray(text)).object();
}

QString refusalOf(const QJsonObject& json) {
    try {
        (void)settingsFromJson(json, toySettings());
    } catch (const EngineError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

} // namespace

class TestInputFiles : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void settingsReadAndWriteTheFiles();
    void badInputFilesFieldsAreNamed_data();
    void badInputFilesFieldsAreNamed();
    void aFileGoneKeepsTheToysInputs();
    void sceneIsBuiltFromTheFiles();
    void aBadFileIsRefusedAndTheSceneKept();
    void controlsShowTheSourceAndPropose();
    void dialogReadsEachFile();
    void windowCommandLineKeepsThePathsAbsolute();
    void dialogKeepsThePathsAbsolute();
    void choosingFilesReadsOnlyTheirHeaders();
    void aNonFiniteValueIsTheBuildsRefusal();
    void theDesignerReplacesTheFiles();

  private:
    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }
    std::string file(const char* name) const { return path(name).toStdString(); }
    // Settings naming q.npy (three heads), k.npy, v.npy and do.npy, head `head`.
    QJsonObject withFiles(int head) const;

    QTemporaryDir m_dir;
    xt::xarray<float> m_q = normalArray<float>({3, 12, 4}, 1);
    xt::xarray<double> m_k = normalArray<double>({10, 4}, 2);
    xt::xarray<float> m_v = normalArray<float>({10, 4}, 3);
    xt::xarray<double> m_dO = normalArray<double>({3, 12, 4}, 4);
};

void TestInputFiles::initTestCase() {
    QVERIFY(m_dir.isValid());
    xt::dump_npy(file("q.npy"), m_q);
    xt::dump_npy(file("k.npy"), m_k);
    xt::dump_npy(file("v.npy"), m_v);
    xt::dump_npy(file("do.npy"), m_dO);
}

QJsonObject TestInputFiles::withFiles(int head) const {
    QJsonObject json = settingsToJson(toySettings());
    json.insert(QStringLiteral("inputFiles"), QJsonObject{{QStringLiteral("q"), path("q.npy")},
                                                          {QStringLiteral("k"), path("k.npy")},
                                                          {QStringLiteral("v"), path("v.npy")},
                                                          {QStringLiteral("dO"), path("do.npy")},
                                                          {QStringLiteral("head"), head}});
    json.insert(QStringLiteral("algorithm"), QStringLiteral("backward"));
    return json;
}

void TestInputFiles::settingsReadAndWriteTheFiles() {
    const VizSettings s = settingsFromJson(withFiles(2), toySettings());
    QVERIFY(s.spec.files);
    QCOMPARE(s.spec.files->q, file("q.npy"));
    QCOMPARE(s.spec.files->upstream, file("do.npy"));
    QCOMPARE(s.spec.files->head, std::optional<int>(2));
    // The sizes are the files', whatever the JSON's "queries" said (the toy's 8).
    QCOMPARE(s.spec.queries, 12);
    QCOMPARE(s.spec.keys, 10);
    QCOMPARE(s.spec.headDim, 4);
    const QJsonObject saved = settingsToJson(s);
    QCOMPARE(
        saved.value(QStringLiteral("inputFiles")).toObject().value(QStringLiteral("head")).toInt(),
        2);
    QVERIFY(settingsFromJson(saved, toySettings()) == s);
    // null: generated inputs, also over a base that had files.
    QJsonObject generated = saved;
    generated.insert(QStringLiteral("inputFiles"), QJsonValue::Null);
    QVERIFY(!settingsFromJson(generated, s).spec.files);
    QVERIFY(settingsToJson(toySettings()).value(QStringLiteral("inputFiles")).isNull());
    QVERIFY(describeSettings(s).contains(
        QStringLiteral("inputs from q.npy, k.npy, v.npy (head 2), dO from do.npy")));
}

void TestInputFiles::badInputFilesFieldsAreNamed_data() {
    QTest::addColumn<QString>("field"); // the inputFiles value, as JSON
    QTest::addColumn<QString>("words");
    QTest::newRow("not an object") << "\"q.npy\""
                                   << "inputFiles must be an object";
    QTest::newRow("no v") << "{\"q\": \"a\", \"k\": \"b\"}"
                          << "inputFiles.v must be the path";
    QTest::newRow("empty path") << "{\"q\": \"\", \"k\": \"b\", \"v\": \"c\"}"
                                << "inputFiles.q must be the path";
    QTest::newRow("unknown field") << "{\"q\": \"a\", \"k\": \"b\", \"v\": \"c\", \"x\": 1}"
                                   << "inputFiles: unknown field 'x'";
    QTest::newRow("head -1") << "{\"q\": \"a\", \"k\": \"b\", \"v\": \"c\", \"head\": -1}"
                             << "inputFiles.head must be a whole number from 0 to 65535";
    QTest::newRow("head 1.5") << "{\"q\": \"a\", \"k\": \"b\", \"v\": \"c\", \"head\": 1.5}"
                              << "inputFiles.head must be a whole number";
    QTest::newRow("missing files") << "{\"q\": \"/nowhere/q.npy\", \"k\": \"b\", \"v\": \"c\"}"
                                   << "inputFiles: Q: /nowhere/q.npy: no such file";
}

void TestInputFiles::badInputFilesFieldsAreNamed() {
    QFETCH(QString, field);
    QFETCH(QString, words);
    const QJsonObject json = parse(("{\"inputFiles\": " + field.toStdString() + "}").c_str());
    QVERIFY(!json.isEmpty());
    const QString message = refusalOf(json);
    QVERIFY2(message.contains(words), qPrintable(message));
}

void TestInputFiles::aFileGoneKeepsTheToysInputs() {
    QJsonObject json = withFiles(1);
    QJsonObject files = json.value(QStringLiteral("inputFiles")).toObject();
    files.insert(QStringLiteral("k"), path("gone.npy"));
    json.insert(QStringLiteral("inputFiles"), files);
    QStringList problems;
    const VizSettings s = settingsFromJson(json, toySettings(), &problems);
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems.first().contains(path("gone.npy") + QStringLiteral(": no such file")),
             qPrintable(problems.first()));
    QVERIFY(!s.spec.files);
    QCOMPARE(s.spec.queries, toySettings().spec.queries);
    QCOMPARE(s.algorithm, Algorithm::Backward); // the other fields still load
}

void TestInputFiles::sceneIsBuiltFromTheFiles() {
    Controller c;
    QVERIFY(c.apply(settingsFromJson(withFiles(1), toySettings())));
    QVERIFY(c.waitUntilIdle());
    QVERIFY(c.scene());
    const Problem& p = c.scene()->engine->problem();
    QCOMPARE(p.q.rows(), 12);
    QCOMPARE(p.q(5, 3), double(m_q(1, 5, 3)));
    QCOMPARE(p.k(9, 0), m_k(9, 0));
    QCOMPARE(p.v(0, 2), double(m_v(0, 2)));
    // The backward's dO is head 1 of do.npy, not the seed's.
    const Matrix& dO = c.scene()->engine->upstreamGradient();
    QCOMPARE(dO(11, 3), m_dO(1, 11, 3));
    QVERIFY(c.scene()->backward);
}

void TestInputFiles::aBadFileIsRefusedAndTheSceneKept() {
    Controller c;
    QVERIFY(c.apply(settingsFromJson(withFiles(0), toySettings())));
    QVERIFY(c.waitUntilIdle());
    const auto before = c.scene();
    QSignalSpy refused(&c, &Controller::refused);
    // Settings read while v.npy was good, applied after it was cut short.
    xt::dump_npy(file("v2.npy"), m_v);
    QJsonObject json = withFiles(2);
    QJsonObject files = json.value(QStringLiteral("inputFiles")).toObject();
    files.insert(QStringLiteral("v"), path("v2.npy"));
    json.insert(QStringLiteral("inputFiles"), files);
    const VizSettings next = settingsFromJson(json, toySettings());
    std::filesystem::resize_file(file("v2.npy"), std::filesystem::file_size(file("v2.npy")) - 8);
    c.apply(next);
    QVERIFY(c.waitUntilIdle());
    QCOMPARE(refused.size(), 1);
    const QString message = refused.first().first().toString();
    QVERIFY2(message.contains(QStringLiteral("8 bytes missing")), qPrintable(message));
    QVERIFY(c.scene() == before);
    QVERIFY(c.settings() == before->settings);
}

void TestInputFiles::controlsShowTheSourceAndPropose() {
    ControlsPanel panel;
    const VizSettings s = settingsFromJson(withFiles(2), toySettings());
    panel.setSettings(s);
    QCOMPARE(panel.inputSourceText(),
             QStringLiteral("inputs from q.npy, k.npy, v.npy (head 2), dO from do.npy"));
    QVERIFY(!panel.findChild<QSpinBox*>(QStringLiteral("queries"))->isEnabled());
    auto* back = panel.findChild<QPushButton*>(QStringLiteral("generatedInputs"));
    QVERIFY(back && !back->isHidden());
    QSignalSpy requested(&panel, &ControlsPanel::settingsRequested);
    back->click();
    QCOMPARE(requested.size(), 1);
    const VizSettings generated = requested.takeFirst().first().value<VizSettings>();
    QVERIFY(!generated.spec.files);
    QCOMPARE(generated.spec.queries, 12); // the files' sizes, now generated
    // Proposing files: the sizes theirs, the toy's blocks shrunk to fit a shorter file.
    panel.setSettings(toySettings());
    QVERIFY(panel.inputSourceText().isEmpty());
    const std::string small = file("small.npy");
    xt::dump_npy(small, normalArray<float>({3, 4}, 5));
    panel.proposeInputFiles({small, file("k.npy"), file("k.npy"), {}, std::nullopt});
    QCOMPARE(requested.size(), 1);
    const VizSettings fromFiles = requested.takeFirst().first().value<VizSettings>();
    QCOMPARE(fromFiles.spec.queries, 3);
    QCOMPARE(fromFiles.options.blockRows, 3);
    QVERIFY(fromFiles.spec.files && fromFiles.spec.files->q == small);
    // A bad file proposes nothing and says why.
    panel.proposeInputFiles({file("q.npy"), file("k.npy"), file("k.npy"), {}, std::nullopt});
    QCOMPARE(requested.size(), 0);
    QVERIFY2(panel.refusalText().contains(QStringLiteral("holds 3 heads")),
             qPrintable(panel.refusalText()));
}

void TestInputFiles::dialogReadsEachFile() {
    InputFilesDialog dialog(std::nullopt, Qt::red);
    QVERIFY(!dialog.filesFit());
    dialog.setPath(InputFilesDialog::Q, path("q.npy"));
    QCOMPARE(dialog.fileText(InputFilesDialog::Q), QStringLiteral("float32 (3, 12, 4)"));
    dialog.setPath(InputFilesDialog::K, path("k.npy"));
    dialog.setPath(InputFilesDialog::V, path("nowhere.npy"));
    QCOMPARE(dialog.fileText(InputFilesDialog::V), QStringLiteral("no such file"));
    QVERIFY(!dialog.filesFit());
    dialog.setPath(InputFilesDialog::V, path("v.npy"));
    QVERIFY(!dialog.filesFit()); // Q has three heads and no head is chosen
    QVERIFY2(dialog.problemText().contains(QStringLiteral("choose one with a head index, 0 to 2")),
             qPrintable(dialog.problemText()));
    dialog.findChild<QSpinBox*>(QStringLiteral("head"))->setValue(1);
    QVERIFY(dialog.filesFit());
    QCOMPARE(dialog.problemText(), QStringLiteral("The problem: n_q = 12, n_k = 10, d = 4."));
    QCOMPARE(dialog.files().head, std::optional<int>(1));
    QVERIFY(dialog.files().upstream.empty());
    // A dO of another shape keeps OK disabled, with the shapes named.
    dialog.setPath(InputFilesDialog::Upstream, path("k.npy"));
    QVERIFY(!dialog.filesFit());
    QVERIFY2(
        dialog.problemText().contains(QStringLiteral("is 10 x 4; dO must be n_q x d = 12 x 4")),
        qPrintable(dialog.problemText()));
}

// Saved settings and sessions name the files absolutely, whatever folder the window starts in.
void TestInputFiles::windowCommandLineKeepsThePathsAbsolute() {
    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(m_dir.path()));
    const CommandLine c = parseCommandLine(
        {"flashviz", "--q", "q.npy", "--k", "k.npy", "--v", "v.npy", "--head", "1"});
    QVERIFY(QDir::setCurrent(before));
    QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
    QVERIFY(c.start.problem && c.start.problem->spec.files);
    const InputFiles& files = *c.start.problem->spec.files;
    QCOMPARE(QString::fromStdString(files.q), QFileInfo(path("q.npy")).absoluteFilePath());
    QCOMPARE(QString::fromStdString(files.v), QFileInfo(path("v.npy")).absoluteFilePath());
    QVERIFY(files.upstream.empty());
}

// Typed relative to the folder the window runs in, the files are saved absolute.
void TestInputFiles::dialogKeepsThePathsAbsolute() {
    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(m_dir.path()));
    InputFilesDialog dialog(std::nullopt, Qt::red);
    dialog.setPath(InputFilesDialog::Q, QStringLiteral("q.npy"));
    dialog.setPath(InputFilesDialog::K, QStringLiteral("k.npy"));
    dialog.setPath(InputFilesDialog::V, QStringLiteral("./v.npy"));
    dialog.findChild<QSpinBox*>(QStringLiteral("head"))->setValue(1);
    const bool fit = dialog.filesFit();
    const InputFiles files = dialog.files();
    QVERIFY(QDir::setCurrent(before));
    QVERIFY(fit);
    QCOMPARE(QString::fromStdString(files.q), QFileInfo(path("q.npy")).absoluteFilePath());
    QCOMPARE(QString::fromStdString(files.k), QFileInfo(path("k.npy")).absoluteFilePath());
    QCOMPARE(QString::fromStdString(files.v), QFileInfo(path("v.npy")).absoluteFilePath());
    QVERIFY(files.upstream.empty()); // left empty: dO from the seed
}

// Settings (at start-up, in a session) that name files read their headers only: values that are
// not finite pass, and a file too short for its header is refused by its length.
void TestInputFiles::choosingFilesReadsOnlyTheirHeaders() {
    xt::xarray<float> v = m_v;
    v(9, 3) = std::numeric_limits<float>::quiet_NaN();
    xt::dump_npy(file("nan.npy"), v);
    QJsonObject json = withFiles(1);
    QJsonObject files = json.value(QStringLiteral("inputFiles")).toObject();
    files.insert(QStringLiteral("v"), path("nan.npy"));
    json.insert(QStringLiteral("inputFiles"), files);
    const VizSettings s = settingsFromJson(json, toySettings());
    QVERIFY(s.spec.files && s.spec.files->v == file("nan.npy"));
    QCOMPARE(s.spec.keys, 10);
    // 2^20 x 1024 float64 named, 16 bytes there.
    const std::string header =
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1024), }";
    std::string huge =
        std::string("\x93NUMPY\x01\x00", 8) + char(header.size() + 1) + '\0' + header + '\n';
    huge += std::string(16, '\0');
    std::ofstream(file("huge.npy"), std::ios::binary) << huge;
    files.insert(QStringLiteral("q"), path("huge.npy"));
    json.insert(QStringLiteral("inputFiles"), files);
    const QString why = refusalOf(json);
    QVERIFY2(why.contains(path("huge.npy") + QStringLiteral(": truncated")), qPrintable(why));
    QVERIFY2(why.contains(QStringLiteral("8589934576 bytes missing")), qPrintable(why));
}

// A NaN at the very end of V: the dialog shows its shape and takes it, the build refuses it with
// the engine's message, and the window keeps the scene it had.
void TestInputFiles::aNonFiniteValueIsTheBuildsRefusal() {
    xt::xarray<float> v = m_v;
    v(9, 3) = std::numeric_limits<float>::quiet_NaN();
    xt::dump_npy(file("nan.npy"), v);
    auto window = freshWindow();
    Controller* controller = window->controller();
    const auto before = controller->scene();
    QString shown;
    bool fit = false;
    whenModalOpens<InputFilesDialog>([&](InputFilesDialog* dialog) {
        dialog->setPath(InputFilesDialog::Q, path("q.npy"));
        dialog->setPath(InputFilesDialog::K, path("k.npy"));
        dialog->setPath(InputFilesDialog::V, path("nan.npy"));
        dialog->findChild<QSpinBox*>(QStringLiteral("head"))->setValue(0);
        shown = dialog->fileText(InputFilesDialog::V);
        fit = dialog->filesFit();
        dialog->accept();
    });
    control<QPushButton>(*window, "inputFiles")->click();
    QVERIFY(window->waitUntilIdle());
    QCOMPARE(shown, QStringLiteral("float32 (10, 4)"));
    QVERIFY(fit);
    const QString message = window->controls()->refusalText();
    QVERIFY2(message.contains(QStringLiteral("V: %1: 1 value is not finite (inf or NaN), the first "
                                             "at row 9, column 3 (nan)")
                                  .arg(path("nan.npy"))),
             qPrintable(message));
    QCOMPARE(controller->scene(), before);
    QVERIFY(!controller->settings().spec.files);
}

// The designer over inputs from files: its preview and Apply work, the design replacing the files
// at their sizes; "Use the pattern" leaves generated inputs.
void TestInputFiles::theDesignerReplacesTheFiles() {
    const VizSettings fromFiles = settingsFromJson(withFiles(1), toySettings());
    InputDesignerDialog dialog(fromFiles, Qt::red);
    QVERIFY(dialog.waitForPreview());
    QVERIFY2(dialog.preview().error.isEmpty(), qPrintable(dialog.preview().error));
    QVERIFY(dialog.settings().spec.design && !dialog.settings().spec.files);
    QCOMPARE(dialog.settings().spec.queries, 12);
    dialog.findChild<QPushButton*>(QStringLiteral("usePattern"))->click();
    QVERIFY(!dialog.settings().spec.design && !dialog.settings().spec.files);

    auto window = freshWindow();
    Controller* controller = window->controller();
    QVERIFY(controller->apply(fromFiles));
    QVERIFY(window->waitUntilIdle());
    QVERIFY(controller->scene()->settings.spec.files);
    whenModalOpens<InputDesignerDialog>([](InputDesignerDialog* opened) {
        opened->waitForPreview();
        opened->findChild<QPushButton*>(QStringLiteral("lastBlockDesign"))->click();
        opened->accept();
    });
    control<QPushButton>(*window, "designInputs")->click();
    QVERIFY(window->waitUntilIdle());
    const auto scene = controller->scene();
    QVERIFY2(controller->lastRefusal().isEmpty(), qPrintable(controller->lastRefusal()));
    QVERIFY(scene->settings.spec.design);
    QVERIFY(!scene->settings.spec.files);
    QCOMPARE(scene->settings.spec.queries, 12);
    QCOMPARE(scene->settings.spec.keys, 10);
    QVERIFY(window->controls()->inputSourceText().startsWith(QStringLiteral("designed inputs")));
}

QTEST_MAIN(TestInputFiles)
#include "tst_input_files.moc"
