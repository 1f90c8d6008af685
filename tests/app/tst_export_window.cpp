// File → Export (shell/export_actions.cpp, view_export.h, export_dialog.h): the view as SVG (an XML
// drawing whose labels are <text>), PDF (its text recoverable from the file's own ToUnicode
// maps) and PNG; the step's data as JSON and CSV, byte for byte what `flashviz-cli steps --json`
// prints for the same settings and step, written whole or not at all; the animation dialog's
// request and its refusals (the recorder's own messages); the animation's progress and Cancel in
// the status bar while the window keeps answering.
#include "window_support.h"

#include "core/step_export.h"
#include "lecture/lecture.h"
#include "session/controller.h"
#include "session/scene.h"
#include "shell/animation_recorder.h"
#include "shell/export_dialog.h"
#include "shell/view_export.h"
#include "views/memory_stage.h"

#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStatusBar>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTimer>
#include <QXmlStreamReader>
#include <QtEndian>
#include <QtTest>

#include <map>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;

namespace {

// The text of every <text> element of an SVG, and whether it parsed with an <svg> root.
struct SvgText {
    bool valid = false;
    QString root;
    QStringList texts;
};

SvgText svgText(const QByteArray& svg) {
    SvgText result;
    QXmlStreamReader xml(svg);
    int depth = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            if (depth++ == 0) result.root = xml.name().toString();
            if (xml.name() == QLatin1String("text"))
                result.texts << xml.readElementText(QXmlStreamReader::IncludeChildElements);
            if (xml.isEndElement()) --depth; // readElementText stopped on the end tag
        } else if (xml.isEndElement()) {
            --depth;
        }
    }
    result.valid = !xml.hasError() && result.root == QLatin1String("svg");
    return result;
}

// The streams of a PDF, inflated where the file says FlateDecode.
QList<QByteArray> pdfStreams(const QByteArray& pdf) {
    QList<QByteArray> streams;
    qsizetype at = 0;
    while ((at = pdf.indexOf("stream", at)) >= 0) {
        if (at >= 3 && pdf.mid(at - 3, 3) == "end") {
            at += 6;
            continue;
        }
        qsizetype begin = at + 6;
        if (pdf.at(begin) == '\r') ++begin;
        if (pdf.at(begin) == '\n') ++begin;
        const qsizetype end = pdf.indexOf("endstream", begin);
        if (end < 0) break;
        QByteArray data = pdf.mid(begin, end - begin);
        const qsizetype object = pdf.lastIndexOf(" obj", at);
        if (pdf.mid(object, at - object).contains("/FlateDecode")) {
            // qUncompress takes zlib data after a 4-byte size hint (it grows past a short one).
            QByteArray sized(4, '\0');
            qToBigEndian(quint32(data.size() * 8 + 1024), sized.data());
            data = qUncompress(sized + data);
        }
        streams << data;
        at = end + 9;
    }
    return streams;
}

// What a ToUnicode map says each glyph code is ("<0003> <0048>" and ranges).
std::map<uint, QString> toUnicodeMap(const QByteArray& cmap) {
    std::map<uint, QString> map;
    const auto hex = [](const QString& h) { return h.toUInt(nullptr, 16); };
    const auto unicode = [](const QString& h) {
        QString s;
        for (int i = 0; i + 4 <= h.size(); i += 4)
            s += QChar(char16_t(h.mid(i, 4).toUInt(nullptr, 16)));
        return s;
    };
    const QString text = QString::fromLatin1(cmap);
    static const QRegularExpression chars(QStringLiteral("beginbfchar(.*?)endbfchar"),
                                          QRegularExpression::DotMatchesEverythingOption);
    static const QRegularExpression pair(QStringLiteral("<([0-9A-Fa-f]+)>\\s*<([0-9A-Fa-f]+)>"));
    for (auto block = chars.globalMatch(text); block.hasNext();)
        for (auto m = pair.globalMatch(block.next().captured(1)); m.hasNext();) {
            const auto p = m.next();
            map[hex(p.captured(1))] = unicode(p.captured(2));
        }
    static const QRegularExpression ranges(QStringLiteral("beginbfrange(.*?)endbfrange"),
                                           QRegularExpression::DotMatchesEverythingOption);
    static const QRegularExpression range(
        QStringLiteral("<([0-9A-Fa-f]+)>\\s*<([0-9A-Fa-f]+)>\\s*(\\[[^\\]]*\\]|<[0-9A-Fa-f]+>)"));
    static const QRegularExpression item(QStringLiteral("<([0-9A-Fa-f]+)>"));
    for (auto block = ranges.globalMatch(text); block.hasNext();)
        for (auto m = range.globalMatch(block.next().captured(1)); m.hasNext();) {
            const auto r = m.next();
            const uint first = hex(r.captured(1)), last = hex(r.captured(2));
            const QString target = r.captured(3);
            if (target.startsWith(QLatin1Char('['))) {
                uint code = first;
                for (auto i = item.globalMatch(target); i.hasNext() && code <= last; ++code)
                    map[code] = unicode(i.next().captured(1));
            } else {
                const uint base = hex(target.mid(1, target.size() - 2));
                for (uint code = first; code <= last; ++code)
                    map[code] = QString(QChar(char16_t(base + code - first)));
            }
        }
    return map;
}

// The PDF's text as a reader extracts it: the glyph codes shown between BT and ET (Qt shows one
// glyph per Tj), each block one line, read through each font's ToUnicode map (one decoding per
// map: the fonts' subsets number their glyphs alike).
QStringList pdfTexts(const QByteArray& pdf) {
    const QList<QByteArray> streams = pdfStreams(pdf);
    QStringList blocks; // the glyph codes of each BT ... ET, as hex
    static const QRegularExpression textBlock(QStringLiteral("\\bBT\\b(.*?)\\bET\\b"),
                                              QRegularExpression::DotMatchesEverythingOption);
    static const QRegularExpression shown(QStringLiteral("<([0-9A-Fa-f]{4,})>"));
    for (const QByteArray& s : streams) {
        if (!s.contains(" Tf")) continue;
        for (auto b = textBlock.globalMatch(QString::fromLatin1(s)); b.hasNext();) {
            QString codes;
            for (auto m = shown.globalMatch(b.next().captured(1)); m.hasNext();)
                codes += m.next().captured(1);
            blocks << codes;
        }
    }
    QStringList texts;
    for (const QByteArray& s : streams) {
        if (!s.contains("begincmap")) continue;
        const std::map<uint, QString> map = toUnicodeMap(s);
        QString text;
        for (const QString& codes : blocks) {
            for (int i = 0; i + 4 <= codes.size(); i += 4) {
                const auto found = map.find(codes.mid(i, 4).toUInt(nullptr, 16));
                text += found == map.end() ? QStringLiteral("\uFFFD") : found->second;
            }
            text += QLatin1Char('\n');
        }
        texts << text;
    }
    return texts;
}

bool anyContains(const QStringList& texts, const QString& label) {
    for (const QString& t : texts)
        if (t.contains(label)) return true;
    return false;
}

// The step data flashviz-cli prints for these arguments.
QByteArray cliStepJson(const QStringList& arguments) {
    QProcess cli;
    cli.start(QStringLiteral(FLASHVIZ_CLI_EXECUTABLE),
              QStringList{QStringLiteral("steps")} + arguments + QStringList{"--json"});
    if (!cli.waitForFinished(60000) || cli.exitCode() != 0)
        qWarning("flashviz-cli failed: %s", cli.readAllStandardError().constData());
    return cli.readAllStandardOutput();
}

QByteArray readAll(const QString& file) {
    QFile f(file);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestExportWindow : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void stepDataIsTheCliStepJson_data();
    void stepDataIsTheCliStepJson();
    void cliListsEveryStepAsJson();
    void stepDataFilesAreWrittenWholeOrNotAtAll();
    void svgKeepsTheLabelsAsText();
    void pdfKeepsTheTextAndTheAspect();
    void exportedViewFollowsTheScreen();
    void fileMenuHasTheExports();
    void dialogRequestIsWhatWasSet();
    void dialogRefusesWithTheRecordersMessages();
    void dialogEstimatesFramesAndSeconds();
    void dialogRefusesOverTheFrameCap();
    void dialogFollowsTheWindowsMode();
    void dialogCountsAChapterOffTheGuiThread();
    void filterExtensionIsAddedOnce();
    void animationShowsProgressAndStaysResponsive();
    void animationCancelLeavesNoFile();

  private:
    std::unique_ptr<MainWindow> m_window;
    QTemporaryDir m_dir;
};

void TestExportWindow::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName(QStringLiteral("FlashVizTest"));
    QVERIFY(m_dir.isValid());
    m_window = freshWindow({1600, 1000});
}

void TestExportWindow::stepDataIsTheCliStepJson_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("step");
    QTest::addColumn<QStringList>("cli");
    // Each preset's settings written as flashviz-cli's options (the presets' own values).
    QTest::newRow("toy, a forward tile") << "toy"
                                         << "10" << QStringList{"--step", "10"};
    QTest::newRow("rescale bug, first rescale")
        << ""
        << "first-rescale" << QStringList{"--n",          "16",     "--pattern",    "late-max",
                                          "--no-rescale", "--step", "first-rescale"};
    QTest::newRow("causal") << ""
                            << "7" << QStringList{"--causal", "--step", "7"};
    QTest::newRow("backward without D")
        << ""
        << "12" << QStringList{"--algorithm", "backward", "--no-row-dot", "--step", "12"};
}

void TestExportWindow::stepDataIsTheCliStepJson() {
    QFETCH(QString, step);
    QFETCH(QStringList, cli);
    VizSettings settings = toySettings();
    const QString name = QString::fromLatin1(QTest::currentDataTag());
    if (name.startsWith(QLatin1String("rescale"))) {
        settings.spec.queries = settings.spec.keys = 16;
        settings.spec.pattern = InputPattern::LateMaximum;
        settings.options.rescale = false;
    }
    if (name == QLatin1String("causal")) settings.spec.causal = true;
    if (name.startsWith(QLatin1String("backward"))) {
        settings.algorithm = Algorithm::Backward;
        settings.options.backward.subtractRowDot = false;
    }
    QVERIFY(m_window->controller()->apply(settings, step));
    QVERIFY(m_window->waitUntilIdle());
    const auto frame = m_window->controller()->frame();
    QVERIFY(frame);
    const QByteArray window = stepDataBytes(*frame, StepDataFormat::Json);
    const QByteArray printed = cliStepJson(cli);
    QVERIFY(!printed.isEmpty());
    QCOMPARE(window, printed);
    // And the step is the one asked for.
    const auto data = nlohmann::json::parse(window.toStdString());
    QCOMPARE(data.at("steps")[0].at("step").get<int>(), frame->step);
}

void TestExportWindow::cliListsEveryStepAsJson() {
    // Without --step: the state at every step it lists, in order, in one object.
    const auto data = nlohmann::json::parse(cliStepJson({}).toStdString());
    const int count = data.at("step_count").get<int>();
    QCOMPARE(int(data.at("steps").size()), count);
    for (int k = 0; k < count; ++k)
        QCOMPARE(data.at("steps")[std::size_t(k)].at("step").get<int>(), k);
    // The help says so.
    QProcess help;
    help.start(QStringLiteral(FLASHVIZ_CLI_EXECUTABLE), {QStringLiteral("--help")});
    QVERIFY(help.waitForFinished(30000));
    const QString text = QString::fromUtf8(help.readAllStandardOutput());
    QVERIFY2(text.contains(QLatin1String("run, bench, steps: print one JSON object")),
             qPrintable(text));
}

void TestExportWindow::stepDataFilesAreWrittenWholeOrNotAtAll() {
    QVERIFY(m_window->controller()->apply(toySettings(), QStringLiteral("12")));
    QVERIFY(m_window->waitUntilIdle());
    const auto frame = m_window->controller()->frame();
    const QString json = m_dir.filePath(QStringLiteral("step.json"));
    const QString csv = m_dir.filePath(QStringLiteral("step.CSV")); // the extension in any case
    QString error;
    QVERIFY2(exportStepData(*frame, json, &error), qPrintable(error));
    QVERIFY2(exportStepData(*frame, csv, &error), qPrintable(error));
    QCOMPARE(readAll(json), stepDataBytes(*frame, StepDataFormat::Json));
    QCOMPARE(readAll(csv), stepDataBytes(*frame, StepDataFormat::Csv));
    QVERIFY(readAll(csv).startsWith("step,kind,quantity,row,col,value\n"));
    // Another extension is refused by name, and nothing is written.
    const QString text = m_dir.filePath(QStringLiteral("step.txt"));
    QVERIFY(!exportStepData(*frame, text, &error));
    QVERIFY2(error.contains(QLatin1String("step.txt")) && error.contains(QLatin1String(".csv")),
             qPrintable(error));
    QVERIFY(!QFile::exists(text));
    // A folder that is not there: a message naming the file, and the old file elsewhere kept.
    const QString missing = m_dir.filePath(QStringLiteral("no/such/folder/step.json"));
    QVERIFY(!exportStepData(*frame, missing, &error));
    QVERIFY2(error.contains(missing), qPrintable(error));
    QVERIFY(!writeFileSafely(missing, "x", &error));
    QCOMPARE(readAll(json), stepDataBytes(*frame, StepDataFormat::Json));
}

void TestExportWindow::svgKeepsTheLabelsAsText() {
    QVERIFY(m_window->controller()->apply(toySettings(), QStringLiteral("10")));
    QVERIFY(m_window->waitUntilIdle());
    const QString file = m_dir.filePath(QStringLiteral("view.svg"));
    QString error;
    QVERIFY2(exportView(*m_window->exportedView(), file, QStringLiteral("the toy"), &error),
             qPrintable(error));
    const QByteArray svg = readAll(file);
    const SvgText parsed = svgText(svg);
    QVERIFY2(parsed.valid, qPrintable(parsed.root));
    for (const char* label : {"HBM", "SRAM", "PASS"})
        QVERIFY2(anyContains(parsed.texts, QLatin1String(label)), label);
    // The step's sentence under the playback bar, whole.
    QVERIFY(anyContains(parsed.texts, QStringLiteral("Unnormalised weights P_ij")));
    // The tab bar is the window's navigation, left out of the drawing.
    QVERIFY(!anyContains(parsed.texts, QStringLiteral("Step by step")));
    // Qt Svg reads it back, at the view's size.
    // Qt Svg reads it back; its coordinates are the view's pixels.
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QCOMPARE(renderer.viewBoxF(), QRectF(QPointF(), QSizeF(m_window->exportedView()->size())));
}

void TestExportWindow::pdfKeepsTheTextAndTheAspect() {
    QWidget* view = m_window->exportedView();
    const QByteArray pdf = renderView(*view, ViewFileFormat::Pdf, QStringLiteral("the toy"));
    QVERIFY(pdf.startsWith("%PDF-"));
    QVERIFY(pdf.contains("/FontFile2") || pdf.contains("/FontFile"));
    const QStringList texts = pdfTexts(pdf);
    QVERIFY(!texts.isEmpty());
    // The labels the SVG holds as text, the PDF holds too, but for the spaces: Qt's ToUnicode
    // map gives the space glyph (shared with the tab in DejaVu) as U+0009.
    static const QRegularExpression blank(QStringLiteral("[ \\t]"));
    const SvgText svg = svgText(renderView(*view, ViewFileFormat::Svg, QStringLiteral("the toy")));
    QStringList unspaced;
    // Compatibility forms too: HarfBuzz shapes "fi" as the ligature glyph, mapped to U+FB01.
    const auto plain = [](const QString& t) {
        return t.normalized(QString::NormalizationForm_KC).remove(blank);
    };
    for (const QString& t : texts)
        unspaced << plain(t);
    int sentences = 0;
    for (const QString& label : svg.texts) {
        if (label.size() < 24) continue;
        ++sentences;
        QVERIFY2(anyContains(unspaced, plain(label)), qPrintable(label));
    }
    QVERIFY(sentences >= 3);
    for (const char* label : {"HBM", "SRAM"})
        QVERIFY2(anyContains(texts, QLatin1String(label)), label);
    // One page, of the view's aspect.
    static const QRegularExpression box(
        QStringLiteral("/MediaBox \\[\\s*0\\s+0\\s+([0-9.]+)\\s+([0-9.]+)\\s*\\]"));
    const auto m = box.match(QString::fromLatin1(pdf));
    QVERIFY(m.hasMatch());
    const double aspect = m.captured(1).toDouble() / m.captured(2).toDouble();
    QVERIFY2(std::abs(aspect - double(view->width()) / view->height()) < 0.01,
             qPrintable(m.captured(0)));
}

void TestExportWindow::exportedViewFollowsTheScreen() {
    QCOMPARE(m_window->exportedView()->isAncestorOf(m_window->memoryStage()), true);
    m_window->tabs()->setCurrentIndex(1);
    QCOMPARE(m_window->exportedView(), m_window->tabs()->currentWidget());
    // The analysis page's chart, its axes' labels as text.
    QVERIFY(m_window->waitUntilIdle());
    const SvgText chart = svgText(
        renderView(*m_window->exportedView(), ViewFileFormat::Svg, QStringLiteral("chart")));
    QVERIFY(chart.valid);
    QVERIFY2(chart.texts.size() > 10, qPrintable(chart.texts.join(QLatin1Char('|'))));
    m_window->tabs()->setCurrentIndex(0);
    m_window->enterLecture(0);
    QVERIFY(m_window->waitUntilIdle());
    QCOMPARE(m_window->exportedView(), static_cast<QWidget*>(m_window->lecture()));
    const SvgText slide = svgText(
        renderView(*m_window->exportedView(), ViewFileFormat::Svg, QStringLiteral("slide")));
    QVERIFY(slide.valid);
    // The slide's title is drawn as text.
    const QString title = m_window->lecture()->titleText();
    QVERIFY(!title.isEmpty());
    const QString lastWord = title.split(QLatin1Char(' '), Qt::SkipEmptyParts).last();
    QVERIFY2(anyContains(slide.texts, lastWord), qPrintable(lastWord));
    m_window->leaveLecture();
    QVERIFY(m_window->waitUntilIdle());
}

void TestExportWindow::fileMenuHasTheExports() {
    QMenu* file = nullptr;
    for (QAction* a : m_window->menuBar()->actions())
        if (a->text().remove(QLatin1Char('&')) == QLatin1String("File")) file = a->menu();
    QVERIFY(file);
    QStringList texts;
    for (QAction* a : file->actions())
        texts << a->text();
    for (const char* entry : {"Export view as SVG / PDF / PNG…", "Export animation…",
                              "Export step data as CSV / JSON…"})
        QVERIFY2(texts.contains(QString::fromUtf8(entry)), entry);
}

void TestExportWindow::dialogRequestIsWhatWasSet() {
    ExportAnimationDialog* dialog = m_window->exportAnimationDialog();
    AnimationRequest r;
    r.file = m_dir.filePath(QStringLiteral("a.gif"));
    r.view = AnimationView::Step;
    r.range = AnimationRange::Steps;
    r.from = QStringLiteral("3");
    r.to = QStringLiteral("9");
    r.size = QSize(1920, 1080);
    r.framesPerStep = 4;
    r.fps = 24;
    dialog->setRequest(r);
    AnimationRequest got = dialog->request();
    QCOMPARE(got.file, r.file);
    QCOMPARE(int(got.view), int(r.view));
    QCOMPARE(int(got.range), int(r.range));
    QCOMPARE(got.from, r.from);
    QCOMPARE(got.to, r.to);
    QCOMPARE(got.size, r.size);
    QCOMPARE(got.framesPerStep, r.framesPerStep);
    QCOMPARE(got.fps, r.fps);
    QCOMPARE(dialog->problem(), QString());
    // A custom size and the lecture view of chapter 3 with its clicks.
    r.size = QSize(800, 600);
    r.view = AnimationView::Lecture;
    r.range = AnimationRange::Chapter;
    r.chapter = 2;
    r.from = QStringLiteral("0");
    r.to = QStringLiteral("end");
    dialog->setRequest(r);
    got = dialog->request();
    QCOMPARE(got.size, r.size);
    QCOMPARE(int(got.view), int(AnimationView::Lecture));
    QCOMPARE(int(got.range), int(AnimationRange::Chapter));
    QCOMPARE(got.chapter, 2);
    QCOMPARE(dialog->problem(), QString());
}

void TestExportWindow::dialogRefusesWithTheRecordersMessages() {
    ExportAnimationDialog* dialog = m_window->exportAnimationDialog();
    AnimationRequest good;
    good.file = m_dir.filePath(QStringLiteral("a.mp4"));
    good.size = QSize(1280, 720);
    dialog->setRequest(good);
    QCOMPARE(dialog->problem(), QString());
    auto* ok = dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(ok->isEnabled());

    AnimationRequest odd = good; // MP4's 4:2:0 needs even sides
    odd.size = QSize(1281, 721);
    AnimationRequest avi = good;
    avi.file = m_dir.filePath(QStringLiteral("a.avi"));
    AnimationRequest chapterOfStepView = good;
    chapterOfStepView.range = AnimationRange::Chapter;
    AnimationRequest missingFolder = good;
    missingFolder.file = m_dir.filePath(QStringLiteral("nowhere/a.mp4"));
    AnimationRequest backwards = good; // from after to: the run's steps refuse it
    backwards.range = AnimationRange::Steps;
    backwards.from = QStringLiteral("9");
    backwards.to = QStringLiteral("3");
    for (const AnimationRequest& bad : {odd, avi, chapterOfStepView, missingFolder, backwards}) {
        dialog->setRequest(bad);
        const QString why = dialog->problem();
        QVERIFY2(!why.isEmpty(), qPrintable(bad.file));
        // The recorder's own message, shown in the dialog, and Export refused.
        const QString recorders = validateAnimationRequest(dialog->request());
        if (!recorders.isEmpty()) QCOMPARE(why, recorders);
        QCOMPARE(dialog->findChild<QLabel*>(QStringLiteral("problem"))->text(), why);
        QVERIFY(!ok->isEnabled());
        dialog->accept();
        QVERIFY(dialog->result() != QDialog::Accepted);
    }
    QString stepsError;
    QVERIFY(
        animationSteps(dialog->request(), *m_window->controller()->scene(), &stepsError).empty());
    QCOMPARE(dialog->problem(), stepsError);
}

void TestExportWindow::dialogEstimatesFramesAndSeconds() {
    QVERIFY(m_window->controller()->apply(toySettings()));
    QVERIFY(m_window->waitUntilIdle());
    ExportAnimationDialog* dialog = m_window->exportAnimationDialog();
    AnimationRequest r;
    r.file = m_dir.filePath(QStringLiteral("a.gif"));
    r.framesPerStep = 5;
    r.fps = 10;
    dialog->setRequest(r);
    const int steps = m_window->controller()->scene()->stepCount();
    QCOMPARE(dialog->estimatedFrames(), std::optional<int>(steps * 5));
    const QString text = dialog->findChild<QLabel*>(QStringLiteral("estimate"))->text();
    QVERIFY2(text.contains(QString::number(steps * 5)) &&
                 text.contains(QString::number(steps * 5 / 10.0, 'f', 1)),
             qPrintable(text));
    r.range = AnimationRange::Steps;
    r.from = QStringLiteral("2");
    r.to = QStringLiteral("7");
    dialog->setRequest(r);
    QCOMPARE(dialog->estimatedFrames(), std::optional<int>(6 * 5));
}

// A run of hundreds of thousands of steps (n = 2048 in 8 × 8 tiles), whole: over
// kAnimationMaxFrames at one frame a step. The dialog says the recorder's sentence and Export is
// off.
void TestExportWindow::dialogRefusesOverTheFrameCap() {
    VizSettings s = toySettings();
    s.spec.queries = s.spec.keys = 2048;
    s.options.blockRows = s.options.blockCols = 8;
    QVERIFY(m_window->controller()->apply(s));
    QVERIFY(m_window->waitUntilIdle());
    ExportAnimationDialog* dialog = m_window->exportAnimationDialog();
    dialog->show();
    AnimationRequest r;
    r.file = m_dir.filePath(QStringLiteral("long.mp4"));
    r.framesPerStep = kAnimationMinFramesPerStep;
    dialog->setRequest(r);
    QString expected;
    QVERIFY(animationSteps(dialog->request(), *m_window->controller()->scene(), &expected).empty());
    QVERIFY2(expected.contains(QStringLiteral("at most %1").arg(kAnimationMaxFrames)),
             qPrintable(expected));
    QCOMPARE(dialog->problem(), expected);
    QCOMPARE(dialog->findChild<QLabel*>(QStringLiteral("problem"))->text(), expected);
    QVERIFY(!dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
    QCOMPARE(dialog->estimatedFrames(), std::nullopt);
    // Its last 100 steps are within the cap.
    r.range = AnimationRange::Steps;
    r.from = QString::number(m_window->controller()->stepCount() - 100);
    r.to = QStringLiteral("end");
    dialog->setRequest(r);
    QCOMPARE(dialog->problem(), QString());
    QCOMPARE(dialog->estimatedFrames(), std::optional<int>(100));
    dialog->hide();
    QVERIFY(m_window->controller()->apply(toySettings()));
    QVERIFY(m_window->waitUntilIdle());
}

// Each time the dialog opens it offers the view of the window's mode: lecture mode's chapter on
// screen with its clicks, the step view out of it; the rest of the last request stays.
void TestExportWindow::dialogFollowsTheWindowsMode() {
    ExportAnimationDialog* dialog = m_window->exportAnimationDialog();
    AnimationRequest r = dialog->request();
    r.fps = 24;
    r.file = m_dir.filePath(QStringLiteral("kept.gif"));
    dialog->setRequest(r);
    QCOMPARE(int(m_window->exportAnimationDialog()->request().view), int(AnimationView::Step));

    m_window->enterLecture(2);
    QVERIFY(m_window->waitUntilIdle());
    AnimationRequest got = m_window->exportAnimationDialog()->request();
    QCOMPARE(int(got.view), int(AnimationView::Lecture));
    QCOMPARE(int(got.range), int(AnimationRange::Chapter));
    QCOMPARE(got.chapter, 2);
    QCOMPARE(got.fps, 24);
    QCOMPARE(got.file, r.file);
    m_window->lecture()->nextChapter();
    QVERIFY(m_window->waitUntilIdle());
    QCOMPARE(m_window->exportAnimationDialog()->request().chapter, 3);

    m_window->leaveLecture();
    QVERIFY(m_window->waitUntilIdle());
    got = m_window->exportAnimationDialog()->request();
    QCOMPARE(int(got.view), int(AnimationView::Step));
    QCOMPARE(int(got.range), int(AnimationRange::WholeRun));
    QCOMPARE(got.fps, 24);
}

// A chapter not on screen is built on a worker to count its clicks: "counting" meanwhile, then
// the chapter's beats × frames per step.
void TestExportWindow::dialogCountsAChapterOffTheGuiThread() {
    QVERIFY(!m_window->isLectureMode());
    QStringList titles;
    for (const LectureChapter& c : lectureChapters())
        titles << c.title;
    auto dialog = std::make_unique<ExportAnimationDialog>(
        titles, [this](AnimationView, int chapter) -> AnimationSceneOrigin {
            return {nullptr, m_window->lecture()->chapterSettings(
                                 lectureChapters().at(std::size_t(chapter)))};
        });
    const int chapter = 1;
    AnimationRequest r;
    r.file = m_dir.filePath(QStringLiteral("chapter.mp4"));
    r.view = AnimationView::Lecture;
    r.range = AnimationRange::Chapter;
    r.chapter = chapter;
    r.framesPerStep = 3;
    dialog->setRequest(r);
    QVERIFY(dialog->isCounting());
    QCOMPARE(dialog->estimatedFrames(), std::nullopt);
    QVERIFY2(dialog->findChild<QLabel*>(QStringLiteral("estimate"))->text().contains("Counting"),
             qPrintable(dialog->estimateText()));
    QTRY_VERIFY_WITH_TIMEOUT(!dialog->isCounting(), 60000);
    const LectureChapter& c = lectureChapters().at(std::size_t(chapter));
    const auto scene = buildScene(m_window->lecture()->chapterSettings(c), nullptr);
    const int beats = int(resolveBeats(c, *scene).size());
    QCOMPARE(dialog->estimatedFrames(), std::optional<int>(beats * 3));
    QVERIFY2(dialog->findChild<QLabel*>(QStringLiteral("estimate"))
                 ->text()
                 .contains(QString::number(beats * 3)),
             qPrintable(dialog->estimateText()));
}

void TestExportWindow::filterExtensionIsAddedOnce() {
    const QString gif = QStringLiteral("GIF animation (*.gif)");
    QCOMPARE(withFilterExtension(QStringLiteral("/tmp/a"), gif), QStringLiteral("/tmp/a.gif"));
    QCOMPARE(withFilterExtension(QStringLiteral("/tmp/a.mp4"), gif), QStringLiteral("/tmp/a.mp4"));
    QCOMPARE(withFilterExtension(QString(), gif), QString());
    QCOMPARE(withFilterExtension(QStringLiteral("a"), QStringLiteral("SVG drawing (*.svg)")),
             QStringLiteral("a.svg"));
}

void TestExportWindow::animationShowsProgressAndStaysResponsive() {
    QVERIFY(m_window->controller()->apply(toySettings()));
    QVERIFY(m_window->waitUntilIdle());
    AnimationRequest r;
    r.file = m_dir.filePath(QStringLiteral("toy.gif"));
    r.range = AnimationRange::Steps;
    r.from = QStringLiteral("0");
    r.to = QStringLiteral("5");
    r.size = QSize(640, 360);
    r.framesPerStep = 2;
    r.fps = 8;
    QSignalSpy finished(m_window->animationRecorder() ? m_window->animationRecorder() : nullptr,
                        &AnimationRecorder::finished);
    Q_UNUSED(finished);
    const QString error = m_window->startAnimationExport(r);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QSignalSpy done(m_window->animationRecorder(), &AnimationRecorder::finished);
    auto* bar = m_window->findChild<QProgressBar*>(QStringLiteral("exportProgress"));
    auto* cancel = m_window->findChild<QPushButton*>(QStringLiteral("exportCancel"));
    QVERIFY(bar && cancel);
    QVERIFY(bar->isVisible());
    QVERIFY(cancel->isVisible());
    // A second export while one runs is refused, saying why.
    QVERIFY(!m_window->startAnimationExport(r).isEmpty());
    // The window answers while the frames are drawn: a timer of the GUI thread keeps firing.
    int ticks = 0;
    QTimer timer;
    connect(&timer, &QTimer::timeout, this, [&ticks] { ++ticks; });
    timer.start(5);
    int maxSeen = 0;
    QElapsedTimer clock;
    clock.start();
    while (done.isEmpty() && clock.elapsed() < 120000) {
        QTest::qWait(10);
        maxSeen = std::max(maxSeen, bar->value());
    }
    QCOMPARE(done.size(), 1);
    QVERIFY2(done.first().at(0).toBool(), qPrintable(done.first().at(1).toString()));
    QVERIFY(ticks > 0);
    QVERIFY(maxSeen > 0);
    QVERIFY(!bar->isVisible());
    QVERIFY(!cancel->isVisible());
    QVERIFY(QFile::exists(r.file));
    QVERIFY(m_window->statusBar()->currentMessage().contains(QLatin1String("toy.gif")) ||
            !m_window->statusBar()->currentMessage().isEmpty());
}

void TestExportWindow::animationCancelLeavesNoFile() {
    AnimationRequest r;
    r.file = m_dir.filePath(QStringLiteral("cancelled.gif"));
    r.size = QSize(640, 360);
    r.framesPerStep = 10;
    const QString error = m_window->startAnimationExport(r);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QSignalSpy done(m_window->animationRecorder(), &AnimationRecorder::finished);
    auto* cancel = m_window->findChild<QPushButton*>(QStringLiteral("exportCancel"));
    QTest::qWait(50);
    cancel->click();
    if (done.isEmpty()) QVERIFY(done.wait(30000)); // cancel() reports at once
    QCOMPARE(done.first().at(0).toBool(), false);
    QVERIFY(!QFile::exists(r.file));
    // Cancelled: said in the status line, no message box.
    QVERIFY(!m_window->statusBar()->currentMessage().isEmpty());
    QVERIFY(!m_window->findChild<QMessageBox*>(QStringLiteral("exportError")));
}

QTEST_MAIN(TestExportWindow)
#include "tst_export_window.moc"
