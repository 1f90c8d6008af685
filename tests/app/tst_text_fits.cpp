// Every number and word the tile detail lays out fits its rectangle and keeps its distance from
// its neighbours, at the window sizes a lecturer meets (1920 x 1080, the default 1600 x 1000, a
// 1366 x 768 laptop, a 1280 x 800 projector), in the step view and in lecture mode, with the bug
// on and off: the toy's 4 x 4 tile lists all its rows and prints all its values. The Hopper
// page's picture likewise, for every variant it has a trace of and one it has none of. Every
// chart of the analysis page and the GPU benchmark page shows its axes' titles whole.
#include "chart_support.h"
#include "hopper_trace_support.h"
#include "pages/analysis/analysis_view.h"
#include "pages/gpu_bench/gpu_benchmark_view.h"
#include "pages/hopper/hopper_page.h"
#include "pages/hopper/hopper_view.h"
#include "views/check_panel.h"
#include "views/code_panel.h"
#include "views/memory_stage.h"
#include "views/tile_detail.h"
#include "window_support.h"

#include "app/measured/shipped_measurements.h"
#include "lecture/lecture.h"
#include "session/controller.h"
#include "style/format.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QFontMetricsF>
#include <QGraphicsTextItem>
#include <QTemporaryDir>
#include <QLabel>
#include <QTextDocument>
#include <QTextLayout>
#include <QToolTip>

using namespace flashviz;
using namespace flashviz::gui;
using namespace flashviz::gui::test;

namespace {

// Two values side by side are never closer than this (pixels): they read as two numbers.
constexpr qreal kLeastGap = 3;

// Where the text itself lies inside its rectangle, as its alignment puts it.
QRectF inkRect(const PlacedText& t) {
    const QFontMetricsF fm(t.font);
    const qreal w = textWidth(t);
    qreal left = t.rect.left();
    if (t.flags & Qt::AlignHCenter) left = t.rect.center().x() - w / 2;
    if (t.flags & Qt::AlignRight) left = t.rect.right() - w;
    return {left, t.rect.center().y() - fm.height() / 2, w, fm.height()};
}

// What is wrong with the view's placed texts, or an empty string: a text wider or taller than
// its rectangle, or two texts on one line that touch.
QString textProblems(const TileDetailView& view) {
    QStringList problems;
    const std::vector<PlacedText> texts = view.placedTexts();
    for (const PlacedText& t : texts) {
        const QFontMetricsF fm(t.font);
        if (textWidth(t) > t.rect.width() + 0.5 || fm.height() > t.rect.height() + 1.0)
            problems << QStringLiteral("'%1' (%2 x %3) in %4 x %5")
                            .arg(t.text)
                            .arg(textWidth(t))
                            .arg(fm.height())
                            .arg(t.rect.width())
                            .arg(t.rect.height());
        if (t.rect.right() > view.width() + 0.5 || t.rect.bottom() > view.height() + 0.5)
            problems << QStringLiteral("'%1' outside the view").arg(t.text);
    }
    for (std::size_t a = 0; a < texts.size(); ++a)
        for (std::size_t b = a + 1; b < texts.size(); ++b) {
            const QRectF ra = inkRect(texts[a]), rb = inkRect(texts[b]);
            const bool sameLine = ra.top() < rb.bottom() - 2 && rb.top() < ra.bottom() - 2;
            const qreal gap = std::max(rb.left() - ra.right(), ra.left() - rb.right());
            if (sameLine && gap < kLeastGap)
                problems << QStringLiteral("'%1' and '%2' %3 px apart")
                                .arg(texts[a].text, texts[b].text)
                                .arg(gap);
        }
    return problems.join(QStringLiteral("; "));
}

// Where a placed text's ink lies: a wrapped paragraph's lines, or one line as inkRect.
QRectF placedInk(const PlacedText& t) {
    if (t.flags & Qt::TextWordWrap) return QFontMetricsF(t.font).boundingRect(t.rect, t.flags, t.text);
    return inkRect(t);
}

// The Hopper picture's texts: each inside its rectangle (a paragraph's lines too) and the view,
// none running into another.
QString hopperTextProblems(const HopperView& view) {
    QStringList problems;
    const std::vector<PlacedText> texts = view.placedTexts();
    for (const PlacedText& t : texts) {
        const QFontMetricsF fm(t.font);
        const QRectF ink = placedInk(t);
        const bool tooBig = t.flags & Qt::TextWordWrap
                                ? ink.width() > t.rect.width() + 0.5 || ink.height() > t.rect.height() + 0.5
                                : textWidth(t) > t.rect.width() + 0.5 || fm.height() > t.rect.height() + 1.0;
        if (tooBig)
            problems << QStringLiteral("'%1' (%2 x %3) in %4 x %5")
                            .arg(t.text)
                            .arg(ink.width())
                            .arg(ink.height())
                            .arg(t.rect.width())
                            .arg(t.rect.height());
        if (ink.left() < -0.5 || ink.right() > view.width() + 0.5 || ink.bottom() > view.height() + 0.5)
            problems << QStringLiteral("'%1' outside the view").arg(t.text);
        if (t.font.pointSizeF() < 5.9) problems << QStringLiteral("'%1' at %2 pt").arg(t.text).arg(t.font.pointSizeF());
        bool inPanel = false;
        for (const QRectF& panel : view.panelRects()) inPanel = inPanel || panel.adjusted(-0.5, -0.5, 0.5, 0.5).contains(ink);
        if (!inPanel) problems << QStringLiteral("'%1' outside its panel").arg(t.text);
    }
    for (std::size_t a = 0; a < texts.size(); ++a)
        for (std::size_t b = a + 1; b < texts.size(); ++b) {
            const QRectF ra = placedInk(texts[a]).adjusted(1, 1, -1, -1);
            const QRectF rb = placedInk(texts[b]).adjusted(1, 1, -1, -1);
            if (ra.intersects(rb))
                problems << QStringLiteral("'%1' and '%2' overlap").arg(texts[a].text, texts[b].text);
        }
    return problems.join(QStringLiteral("; "));
}

// A chart text (HTML allowed, as Qt Charts takes it) as the reader sees it: plain, one space
// where it breaks a line.
QString shownText(const QTextDocument& document) {
    return document.toPlainText().simplified();
}
QString shownText(const QString& html) {
    QTextDocument document;
    document.setHtml(html);
    return shownText(document);
}

// What is cut of the visible charts' axis titles, or an empty string. Qt Charts elides a title
// longer than its axis ("..."): then no text item of the chart reads the whole title.
QString axisTitleProblems(const QWidget& page) {
    QStringList problems;
    for (const QChartView* view : page.findChildren<QChartView*>()) {
        if (!view->isVisible()) continue;
        QChart* chart = view->chart();
        const std::vector<const QGraphicsTextItem*> texts = visibleTextItems(chart->childItems());
        for (const QAbstractAxis* axis : chart->axes()) {
            if (!axis->isVisible() || !axis->isTitleVisible() || axis->titleText().isEmpty()) continue;
            const QString title = shownText(axis->titleText());
            const auto shown = std::find_if(texts.begin(), texts.end(), [&](const QGraphicsTextItem* t) {
                return shownText(*t->document()) == title;
            });
            const QString where = QStringLiteral("'%1' (%2 x %3 chart '%4')")
                                      .arg(title)
                                      .arg(view->width())
                                      .arg(view->height())
                                      .arg(chart->title());
            if (shown == texts.end()) problems << where + QStringLiteral(" is cut short");
        }
    }
    return problems.join(QStringLiteral("; "));
}

// axisTitleProblems once the page's layout settles: a title that wraps (Page::setChart) lays the
// chart out once more, later under a slow (sanitizer) build. Events run before each look, and
// two clean looks in a row are needed (a first one may precede the last layout); up to 5 s.
QString settledAxisTitleProblems(const QWidget& page) {
    QString found;
    for (int clean = 0, looks = 0; clean < 2 && looks < 250; ++looks) {
        QTest::qWait(20);
        found = axisTitleProblems(page);
        clean = found.isEmpty() ? clean + 1 : 0;
    }
    return found;
}

const TileDetailView* shownTile(const MainWindow& w) {
    if (w.lecture() && w.lecture()->isVisible()) {
        const auto* tile = w.lecture()->findChild<TileDetailView*>();
        return tile && tile->isVisible() ? tile : nullptr;
    }
    return w.tileDetail();
}

// The toy's steps inside its first tiles, where the table and the grids are full: compute-scores
// to update-output of tile (0, 0) and (0, 1), the normalise and store of query block 0.
const int kToySteps[] = {2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14};

} // namespace

class TestTextFits : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("FlashVizTest"));
        QApplication::setApplicationName(QStringLiteral("tst_text_fits"));
    }
    void stepView_data();
    void stepView();
    void lecture_data();
    void lecture();
    void toolTipsSayWhatTheNumbersAre();
    void checkPanelNamesTheFastKernels();
    void unitsStayWholeWhenWrapped();
    void hopperPage_data();
    void hopperPage();
    void analysisAxisTitles_data();
    void analysisAxisTitles();
    void gpuBenchAxisTitles_data();
    void gpuBenchAxisTitles();
};

void TestTextFits::stepView_data() {
    QTest::addColumn<QSize>("size");
    QTest::addColumn<bool>("bug");
    for (const QSize size :
         {QSize(1920, 1080), QSize(1600, 1000), QSize(1366, 768), QSize(1280, 800)})
        for (const bool bug : {false, true})
            QTest::addRow("%dx%d%s", size.width(), size.height(), bug ? " bug" : "") << size << bug;
}

// The toy in the step view: the window keeps the size asked for, the tile lists its 4 rows and
// prints its values, and nothing is cut or runs into its neighbour.
void TestTextFits::stepView() {
    QFETCH(QSize, size);
    QFETCH(bool, bug);
    const auto window = freshWindow(size);
    MainWindow& w = *window;
    QCOMPARE(w.size(), size);
    VizSettings settings = toySettings();
    settings.options.rescale = !bug;
    QVERIFY(w.controller()->apply(settings, QStringLiteral("0")));
    QVERIFY(w.waitUntilIdle());
    for (const int step : kToySteps) {
        w.controller()->setStep(step);
        QVERIFY(w.waitUntilIdle());
        QCoreApplication::processEvents();
        QCOMPARE(w.size(), size);
        const TileDetailView* tile = w.tileDetail();
        const QString where = QStringLiteral("step %1: ").arg(step);
        // The bug's note line may cost a row at the smallest sizes, never the values.
        if (!bug || size.height() > 800)
            QVERIFY2(tile->listedRows() == 4,
                     qPrintable(where + QString::number(tile->listedRows())));
        if (w.controller()->frame()->state.scores.size() > 0)
            QVERIFY2(tile->gridsShowValues(), qPrintable(where + "the grids show no values"));
        const QString problems = textProblems(*tile);
        QVERIFY2(problems.isEmpty(), qPrintable(where + problems));
    }
}

void TestTextFits::lecture_data() {
    QTest::addColumn<QSize>("size");
    for (const QSize size : {QSize(1920, 1080), QSize(1366, 768), QSize(1280, 800)})
        QTest::addRow("%dx%d", size.width(), size.height()) << size;
}

// Lecture chapter 3 (the online softmax) on a projector: the toy's tile beside its table, every
// row and value there.
void TestTextFits::lecture() {
    QFETCH(QSize, size);
    const auto window = freshWindow(size);
    MainWindow& w = *window;
    w.enterLecture(2);
    QVERIFY(w.waitUntilIdle());
    for (const int step : kToySteps) {
        w.controller()->setStep(step);
        QVERIFY(w.waitUntilIdle());
        QCoreApplication::processEvents();
        const TileDetailView* tile = shownTile(w);
        QVERIFY(tile);
        const QString where = QStringLiteral("step %1: ").arg(step);
        QVERIFY2(tile->listedRows() == 4, qPrintable(where + QString::number(tile->listedRows())));
        if (w.controller()->frame()->state.scores.size() > 0)
            QVERIFY2(tile->gridsShowValues(), qPrintable(where + "the grids show no values"));
        const QString problems = textProblems(*tile);
        QVERIFY2(problems.isEmpty(), qPrintable(where + problems));
    }
}

// The check's banner and its per-row chart, the HBM and SRAM panels and the code lines explain
// themselves in a tooltip, with this run's numbers.
void TestTextFits::toolTipsSayWhatTheNumbersAre() {
    const auto window = freshWindow({1600, 1000});
    MainWindow& w = *window;
    w.controller()->setStep(10);
    QVERIFY(w.waitUntilIdle());
    QCoreApplication::processEvents();
    const Frame& frame = *w.controller()->frame();
    const CheckReport& report = frame.scene->check;
    const CheckPanel* check = w.checkPanel();
    const QString banner = check->toolTipAt(QPointF(20, check->height() / 2.0));
    QVERIFY2(banner.startsWith(QStringLiteral("PASS")), qPrintable(banner));
    QVERIFY2(banner.contains(formatValue(report.maxAbsDiff, 2)), qPrintable(banner));
    const QRectF bars = check->barsRect();
    const QString row0 = check->toolTipAt(QPointF(bars.left() + 1, bars.center().y()));
    QVERIFY2(row0.startsWith(QStringLiteral("Row 0 of O")), qPrintable(row0));
    QVERIFY2(row0.contains(QStringLiteral("not final yet")), qPrintable(row0));
    // The tooltip the user gets is that text: FrameView's event handling shows toolTipAt().
    const QPoint at(int(bars.left()) + 1, int(bars.center().y()));
    QHelpEvent help(QEvent::ToolTip, at, check->mapToGlobal(at));
    QApplication::sendEvent(const_cast<CheckPanel*>(check), &help);
    QTRY_COMPARE(QToolTip::text(), row0);

    const MemoryStageView* stage = w.memoryStage();
    const QString hbm = stage->toolTipAt(stage->stageLayout().hbmBox.topLeft() + QPointF(4, 4));
    QVERIFY2(hbm.contains(formatBytes(double(frame.state.counters.hbmReadBytes))), qPrintable(hbm));
    QVERIFY2(hbm.contains(formatRate(frame.scene->hardware.hbmBandwidthBytesPerSecond.value)),
             qPrintable(hbm));
    const QString sram = stage->toolTipAt(stage->stageLayout().chipBox.topLeft() + QPointF(4, 4));
    QVERIFY2(sram.contains(QStringLiteral("SRAM used")), qPrintable(sram));

    const CodePanel* code = w.codePanel();
    QString current;
    for (int y = 0; y < code->height() && current.isEmpty(); y += 2) {
        const QString text = code->toolTipAt(QPointF(30, y));
        if (text.contains(QStringLiteral("runs it now"))) current = text;
    }
    QVERIFY2(current.contains(QStringLiteral("step 10 (compute-weights)")), qPrintable(current));
    QVERIFY2(current.contains(QStringLiteral("P = exp(S − m_new)")), qPrintable(current));
}

// The backward on a GPU: the check panel's last line gives the fast kernels' verdict and their
// worst error as a multiple of plain bf16's, brief where the panel is narrow; its tooltip every
// number, the kernels' names, and the note when they did not run.
void TestTextFits::checkPanelNamesTheFastKernels() {
    VizSettings settings = toySettings();
    settings.algorithm = Algorithm::Backward;
    auto scene = std::make_shared<Scene>(*buildScene(settings, nullptr));
    BackwardScene& b = *scene->backward;
    const Problem rounded = makeProblem(scene->settings.spec);
    b.lowPrecisionCheck = checkLowPrecisionGradients(
        rounded, b.dO,
        standardAttentionGradients(rounded.q, rounded.k, rounded.v, b.dO, rounded.scale(), false,
                                   HalfType::Bf16)
            .grads,
        HalfType::Bf16, "tc_fwd + tc_bwd");
    const LowPrecisionGradientCheck& c = *b.lowPrecisionCheck;
    QVERIFY(c.passed());
    CheckPanel panel;
    panel.setTheme(Theme::desktop());
    const auto show = [&](int width) {
        panel.resize(width, panel.sizeHint().height());
        panel.setInputs(makeFrame(scene, scene->stepCount() - 1), nullptr, ViewOptions{});
    };
    show(1900);
    QVERIFY2(panel.lineText(2).endsWith(QStringLiteral(" · bf16 tensor cores: PASS, error ≤ 1.00× plain bf16's")),
             qPrintable(panel.lineText(2)));
    show(700);
    QVERIFY2(panel.lineText(2).endsWith(QStringLiteral(" · bf16 tensor cores: PASS")), qPrintable(panel.lineText(2)));
    const QString tip = panel.toolTipAt(QPointF(20, panel.height() / 2.0));
    const auto described = [&](const LowPrecisionError& e, const char* name) {
        return QString::fromStdString(describe(e, name, c.type));
    };
    for (const QString& part : {QStringLiteral("tc_fwd + tc_bwd"), described(c.dq, "dQ"),
                                described(c.dk, "dK"), described(c.dv, "dV"),
                                QStringLiteral("PASS, error ≤ 1.00× plain bf16's: a kernel passes within 2× the plain error")})
        QVERIFY2(tip.contains(part), qPrintable(part + QStringLiteral(" not in: ") + tip));

    // Beside the CPU's check (a GPU run's): the brief line gives the fast kernels' verdict first
    // and the CPU's word, not its numbers, so that the verdict is not what an elided line loses.
    b.cpuCheck = b.check;
    show(700);
    const QString brief = panel.lineText(2);
    QVERIFY2(brief.endsWith(QStringLiteral(" · bf16 tensor cores: PASS · CPU engine: PASS")), qPrintable(brief));
    show(1900);
    QVERIFY2(panel.lineText(2).contains(QStringLiteral("bf16 tensor cores: PASS")), qPrintable(panel.lineText(2)));
    // The CPU's numbers, which the line may leave out, are in the tooltip.
    const QString withCpu = panel.toolTipAt(QPointF(20, panel.height() / 2.0));
    QVERIFY2(withCpu.contains(QString::fromStdString(b.cpuCheck->summary())), qPrintable(withCpu));
    // A failing CPU check's word is FAIL (CheckModel::cpuPassed), the fast kernels' still PASS.
    b.cpuCheck->dk.wrongRows = {0};
    QVERIFY(!b.cpuCheck->passed());
    show(700);
    QVERIFY2(panel.lineText(2).endsWith(QStringLiteral(" · bf16 tensor cores: PASS · CPU engine: FAIL")),
             qPrintable(panel.lineText(2)));
    b.cpuCheck.reset();
    // A kernel's NaN is named, never hidden behind a ratio.
    b.lowPrecisionCheck->dk.nonFinite = 3;
    show(1900);
    QVERIFY2(panel.lineText(2).endsWith(QStringLiteral(" · bf16 tensor cores: FAIL, inf/NaN in dK")),
             qPrintable(panel.lineText(2)));

    b.lowPrecisionCheck.reset();
    b.lowPrecisionNote = QStringLiteral("The tensor-core flash kernel takes head dimensions 64 and 128, not 4.");
    show(1900);
    QVERIFY2(panel.lineText(2).endsWith(QStringLiteral(" · tensor cores: not run")), qPrintable(panel.lineText(2)));
    QVERIFY(panel.toolTipAt(QPointF(20, panel.height() / 2.0)).contains(b.lowPrecisionNote));
}

// The lecture's narrative is a word-wrapped label: it broke "1.55 TB/s" after the slash and
// "max |diff|" after its first bar. No line of any chapter's narrative, laid out as the label
// lays it out on a 1280 x 800 projector, may end in '/' or '|'.
void TestTextFits::unitsStayWholeWhenWrapped() {
    const auto window = freshWindow({1280, 800});
    MainWindow& w = *window;
    for (int chapter = 0; chapter < 7; ++chapter) {
        w.enterLecture(chapter);
        QVERIFY(w.waitUntilIdle());
        const auto* label = w.lecture()->findChild<QLabel*>(QStringLiteral("lectureNarrative"));
        QVERIFY(label);
        const QString text = label->text();
        // At the label's width and at every narrower one down to a phone's: some width puts a
        // line's end at each '/' and '|' that may break.
        for (int width = label->contentsRect().width(); width >= 150; width -= 3)
            for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
                QTextLayout layout(paragraph, label->font());
                QTextOption option;
                option.setWrapMode(QTextOption::WordWrap);
                layout.setTextOption(option);
                layout.beginLayout();
                for (QTextLine line = layout.createLine(); line.isValid();
                     line = layout.createLine()) {
                    line.setLineWidth(width);
                    const QString shown =
                        paragraph.mid(line.textStart(), line.textLength()).trimmed();
                    QVERIFY2(!shown.endsWith(QLatin1Char('/')) && !shown.endsWith(QLatin1Char('|')),
                             qPrintable(QStringLiteral("chapter %1 at %2 px: '%3'")
                                            .arg(chapter + 1)
                                            .arg(width)
                                            .arg(shown)));
                }
                layout.endLayout();
            }
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(w.waitUntilIdle());
    }
}

void TestTextFits::hopperPage_data() {
    stepView_data();
}

// The Hopper page in the window, for each variant and mask it has a trace of (those FlashViz
// ships, else simulated ones), the whole block and zoomed in, and for one it has none of: the
// three panels' texts, the legend, the lanes' names and the axis.
void TestTextFits::hopperPage() {
    QFETCH(QSize, size);
    QFETCH(bool, bug);
    if (bug) QSKIP("the Hopper page has no bug to switch");
    StartOptions options = freshOptions();
    options.hopperPage = true;
    const auto window = freshWindow(size, options);
    QCOMPARE(window->size(), size);
    HopperPage* page = window->hopper();
    std::vector<kernels::HopperTrace> traces = measured::shippedHopperTraces();
    if (traces.empty()) {
        for (int row = 0; row < kernels::kHopperConfigCount; ++row)
            traces.push_back(syntheticHopperTrace(row, kernels::kHopperConfigs[row].masks == kernels::MaskPreference::Causal));
        page->setShippedTraces(traces);
    }
    QTRY_VERIFY(page->isVisible());
    const HopperView* view = page->view();
    for (const kernels::HopperTrace& t : traces) {
        page->choose(t.configRow, t.causal);
        QCoreApplication::processEvents();
        QVERIFY(view->hasTrace());
        const QString where = QString::fromStdString(t.kernel) + (t.causal ? QStringLiteral(" causal: ") : QStringLiteral(": "));
        QString problems = hopperTextProblems(*view);
        QVERIFY2(problems.isEmpty(), qPrintable(where + problems));
        page->view()->zoomIn();
        page->view()->zoomIn();
        problems = hopperTextProblems(*view);
        QVERIFY2(problems.isEmpty(), qPrintable(where + QStringLiteral("zoomed in: ") + problems));
    }
    page->choose(0, true); // built for the full mask: no trace of it anywhere
    QCoreApplication::processEvents();
    QVERIFY(!view->hasTrace());
    QString problems = hopperTextProblems(*view);
    QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("no trace: ") + problems));
    // A file refused: its message above the picture takes room from it, and the trace stays.
    page->choose(traces.front().configRow, traces.front().causal);
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{ not a trace");
    file.close();
    QVERIFY(page->openTrace(bad));
    QVERIFY(page->waitForIdle(20000));
    QVERIFY(!page->errorText().isEmpty());
    QCoreApplication::processEvents();
    problems = hopperTextProblems(*view);
    QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("with a message: ") + problems));
    QCOMPARE(window->size(), size);
}

void TestTextFits::analysisAxisTitles_data() {
    lecture_data();
    QTest::addRow("1600x1000") << QSize(1600, 1000);
}

// Every analysis chart, both its panels where it has two: each axis's title is shown whole.
void TestTextFits::analysisAxisTitles() {
    QFETCH(QSize, size);
    const auto window = freshWindow(size);
    MainWindow& w = *window;
    QStringList problems;
    for (int chart = 0; chart < w.analysis()->chartTitles().size(); ++chart) {
        w.showAnalysis(chart);
        QVERIFY(w.waitUntilIdle());
        const QString found = settledAxisTitleProblems(*w.analysis());
        if (!found.isEmpty()) problems << w.analysis()->chartTitles()[chart] + QStringLiteral(": ") + found;
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("\n"))));
    QCOMPARE(w.size(), size);
}

void TestTextFits::gpuBenchAxisTitles_data() {
    analysisAxisTitles_data();
}

// The GPU benchmark page's three charts, for each pass (the backward's memory names the most
// buffers, its throughput the longest count), causal or not: each axis's title is shown whole.
void TestTextFits::gpuBenchAxisTitles() {
    QFETCH(QSize, size);
    const auto window = freshWindow(size);
    MainWindow& w = *window;
    GpuBenchmarkView* page = w.gpuBenchmark();
    w.tabs()->setCurrentWidget(page->parentWidget());
    QTRY_VERIFY(page->isVisible());
    QVERIFY(page->shownRecord());
    GpuBenchRecord record = *page->shownRecord();
    QStringList problems;
    for (const GpuBenchPass pass : kGpuBenchPasses)
        for (const bool causal : {false, true}) {
            record.request.pass = pass;
            record.request.causal = causal;
            page->showRecord(record);
            const QString found = settledAxisTitleProblems(*page);
            if (!found.isEmpty())
                problems << QString::fromStdString(gpuBenchPassName(pass)) +
                                (causal ? QStringLiteral(" causal: ") : QStringLiteral(": ")) + found;
        }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("\n"))));
    QCOMPARE(w.size(), size);
}

QTEST_MAIN(TestTextFits)
#include "tst_text_fits.moc"
