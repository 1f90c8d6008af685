// Every number and word the tile detail lays out fits its rectangle and keeps its distance from
// its neighbours, at the window sizes a lecturer meets (1920 x 1080, the default 1600 x 1000, a
// 1366 x 768 laptop, a 1280 x 800 projector), in the step view and in lecture mode, with the bug
// on and off: the toy's 4 x 4 tile lists all its rows and prints all its values.
#include "views/check_panel.h"
#include "views/code_panel.h"
#include "views/memory_stage.h"
#include "views/tile_detail.h"
#include "window_support.h"

#include "lecture/lecture.h"
#include "session/controller.h"
#include "style/format.h"

#include <QFontMetricsF>
#include <QLabel>
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
    void unitsStayWholeWhenWrapped();
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

QTEST_MAIN(TestTextFits)
#include "tst_text_fits.moc"
