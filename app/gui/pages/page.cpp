#include "pages/page.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QEventLoop>
#include <QFontMetricsF>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTextDocument>
#include <QTimer>

#include <algorithm>
#include <limits>
#include <vector>

namespace flashviz::gui {

namespace {

// An axis's title as its chart wrote it, and the lines fitAxisTitles last showed of it.
constexpr char kWrittenTitle[] = "flashvizWrittenTitle";
constexpr char kShownTitle[] = "flashvizShownTitle";
// What Qt Charts adds around a title's text (its document margin, both sides) and a little more.
constexpr qreal kTitleMargin = 12;

// `chunks` in `lines` lines of whole chunks joined by spaces, split where the widest line is the
// narrowest it can be.
QStringList balancedLines(const QStringList& chunks, int lines, const QFontMetricsF& fm) {
    const int n = int(chunks.size());
    const auto width = [&](int from, int to) { // chunks [from, to) on one line
        return fm.horizontalAdvance(chunks.mid(from, to - from).join(QLatin1Char(' ')));
    };
    // best[k][i]: the least widest line of chunks [0, i) in k lines; cut[k][i]: where its last starts.
    const qreal none = std::numeric_limits<qreal>::max();
    std::vector<std::vector<qreal>> best(lines + 1, std::vector<qreal>(n + 1, none));
    std::vector<std::vector<int>> cut(lines + 1, std::vector<int>(n + 1, 0));
    best[0][0] = 0;
    for (int k = 1; k <= lines; ++k)
        for (int i = k; i <= n; ++i)
            for (int j = k - 1; j < i; ++j) {
                if (best[k - 1][j] == none) continue;
                const qreal widest = std::max(best[k - 1][j], width(j, i));
                if (widest < best[k][i]) best[k][i] = widest, cut[k][i] = j;
            }
    QStringList result;
    for (int k = lines, i = n; k > 0; i = cut[k][i], --k)
        result.prepend(chunks.mid(cut[k][i], i - cut[k][i]).join(QLatin1Char(' ')));
    return result;
}

// Each axis's title wrapped to the length of its side of the plot, instead of cut short with
// "...": the axes beside a narrow panel or under a short one on a laptop's screen. From the title
// as written each time, so that a larger plot joins the lines again.
void fitAxisTitles(QChart* chart) {
    const QRectF plot = chart->plotArea();
    if (plot.isEmpty()) return;
    for (QAbstractAxis* axis : chart->axes()) {
        if (axis->property(kShownTitle).toString() != axis->titleText() || axis->titleText().isEmpty())
            axis->setProperty(kWrittenTitle, axis->titleText());
        const QString written = axis->property(kWrittenTitle).toString();
        const qreal length = axis->orientation() == Qt::Horizontal ? plot.width() : plot.height();
        const QString shown = wrappedAxisTitle(written, axis->titleFont(), length);
        axis->setProperty(kShownTitle, shown);
        if (shown != axis->titleText()) axis->setTitleText(shown);
    }
}

} // namespace

// In as few lines as fit, the lines of about one width: broken first only
// between the words outside parentheses, else between any two. A trailing "(…)" takes a line of
// its own where that needs no more lines: "(log scale)" under the quantity it glosses.
// Plain text only; what cannot fit is left for Qt Charts to cut, as it would have been.
QString wrappedAxisTitle(const QString& text, const QFont& font, qreal length) {
    const QFontMetricsF fm(font);
    if (Qt::mightBeRichText(text) || fm.horizontalAdvance(text) + kTitleMargin <= length) return text;
    QStringList outside{QString()};
    int depth = 0;
    for (const QChar c : text) {
        if (c == QLatin1Char('(')) ++depth;
        if (c == QLatin1Char(')')) depth = std::max(0, depth - 1);
        if (c == QLatin1Char(' ') && depth == 0) outside << QString();
        else outside.back() += c;
    }
    const bool glossed = outside.size() > 1 && outside.back().startsWith(QLatin1Char('('));
    const QStringList head = outside.mid(0, outside.size() - 1);
    const auto shownIfFits = [&](QStringList shown) {
        for (const QString& line : shown)
            if (fm.horizontalAdvance(line) + kTitleMargin > length) return QString();
        for (QString& line : shown) line = line.toHtmlEscaped();
        return shown.join(QStringLiteral("<br>"));
    };
    const QStringList words = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    for (const QStringList* chunks : {static_cast<const QStringList*>(&outside), &words})
        for (int lines = 2; lines <= chunks->size(); ++lines) {
            QString shown;
            if (chunks == &outside && glossed)
                shown = shownIfFits(balancedLines(head, lines - 1, fm) << outside.back());
            if (shown.isEmpty()) shown = shownIfFits(balancedLines(*chunks, lines, fm));
            if (!shown.isEmpty()) return shown;
        }
    return text;
}

QString writtenAxisTitle(const QAbstractAxis* axis) {
    return axis->property(kShownTitle).toString() == axis->titleText()
               ? axis->property(kWrittenTitle).toString()
               : axis->titleText();
}

Page::Page(const ChartFontScales& chartFonts, QWidget* parent)
    : QWidget(parent), m_chartFonts(chartFonts) {
    m_message = new QLabel(this);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(true);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setEnabled(false);
    connect(m_cancel, &QPushButton::clicked, this, &Page::cancel);
}

bool Page::waitForIdle(int timeoutMs) {
    if (!m_busy) return true;
    QEventLoop loop;
    connect(this, &Page::busyChanged, &loop, [&loop](bool busy) {
        if (!busy) loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return !m_busy;
}

AsyncJobs::Progress Page::restartProgress() {
    m_progress->setValue(0);
    return [this](int value, const QString&) { m_progress->setValue(value); };
}

void Page::setBusy(bool busy) {
    const bool changed = busy != m_busy;
    m_busy = busy;
    if (changed && busy) m_progress->setValue(0);
    m_progress->setVisible(busy);
    m_cancel->setEnabled(busy);
    showBusy(busy);
    if (changed) emit busyChanged(busy);
}

// A light red box for an error, a blue-grey one otherwise.
void Page::showMessage(const QString& text, bool error) {
    m_message->setText(text);
    m_message->setStyleSheet(error
                                 ? QStringLiteral("QLabel { background: #fde4e1; color: #7a1408; "
                                                  "padding: 0.4em; border: 1px solid #d9826f; }")
                                 : QStringLiteral("QLabel { background: #eef2f7; color: #1f2d3d; "
                                                  "padding: 0.4em; border: 1px solid #b8c4d2; }"));
    m_message->show();
}

void Page::fail(const QString& error, const QString& shown) {
    m_error = error;
    showMessage(shown.isEmpty() ? error : shown, true);
    emit failed(m_error);
}

void Page::clearMessage() {
    m_error.clear();
    m_message->hide();
}

QChartView* Page::makeChartView(QWidget* parent) {
    auto* view = new QChartView(new QChart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    m_chartViews.append(view);
    return view;
}

void Page::setChart(QChartView* view, QChart* chart) const {
    QChart* old = view->chart();
    applyChartFonts(chart, font(), m_chartFonts);
    // A new plot area (the view resized, fonts changed, a title wrapped) fits the titles again.
    connect(chart, &QChart::plotAreaChanged, chart, [chart] { fitAxisTitles(chart); });
    view->setChart(chart);
    delete old;
}

void Page::applyFonts() {
    applyLabelFonts();
    for (QChartView* view : m_chartViews) {
        applyChartFonts(view->chart(), font(), m_chartFonts);
        fitAxisTitles(view->chart());
    }
}

void Page::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) applyFonts();
}

} // namespace flashviz::gui
