#include "views/check_panel.h"

#include "style/format.h"
#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QImage>
#include <QPainter>
#include <QPushButton>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

// The bars' log scale: 1e-17 … 1.
constexpr double kLogLow = -17, kLogHigh = 0;

// `src` over `dst`, both premultiplied (source-over, as QPainter::fillRect blends a translucent
// colour).
QRgb over(QRgb src, QRgb dst) {
    const int inverse = 255 - qAlpha(src);
    const auto channel = [inverse](int s, int d) { return s + (d * inverse + 127) / 255; };
    return qRgba(channel(qRed(src), qRed(dst)), channel(qGreen(src), qGreen(dst)),
                 channel(qBlue(src), qBlue(dst)), channel(qAlpha(src), qAlpha(dst)));
}

// Sets the pixels of `image` that `r` (in widget coordinates) covers to one premultiplied
// colour. The bars are one or two pixels wide: a plain fill per row, no blending per pixel.
void fillRect(QImage& image, const QRect& px, qreal dpr, const QRectF& r, QRgb colour) {
    const auto xOf = [&](qreal x) {
        return std::clamp(int(std::lround(x * dpr)) - px.left(), 0, px.width());
    };
    const auto yOf = [&](qreal y) {
        return std::clamp(int(std::lround(y * dpr)) - px.top(), 0, px.height());
    };
    const int x0 = xOf(r.left()), y0 = yOf(r.top());
    const int x1 = std::min(px.width(), std::max(x0 + 1, xOf(r.right())));
    const int y1 = std::min(px.height(), std::max(y0 + 1, yOf(r.bottom())));
    for (int y = y0; y < y1; ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        std::fill(line + x0, line + x1, colour);
    }
}

} // namespace

CheckPanel::CheckPanel(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_jump = new QPushButton(this);
    m_jump->setObjectName(QStringLiteral("jumpToDivergence"));
    m_jump->setFocusPolicy(Qt::NoFocus);
    m_jump->hide();
    connect(m_jump, &QPushButton::clicked, this, [this] {
        if (m_model && m_model->divergenceStep()) emit jumpRequested(*m_model->divergenceStep());
    });
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QSize CheckPanel::sizeHint() const {
    return {900, int(92 * m_theme.scale)};
}
QSize CheckPanel::minimumSizeHint() const {
    return {400, int(92 * m_theme.scale)};
}

bool CheckPanel::failing() const {
    return m_model && !m_model->passed;
}

QString CheckPanel::verdictText() const {
    return m_model ? m_model->summary : QString();
}

void CheckPanel::themeChanged() {
    m_jump->setFont(m_theme.font(9, true));
    setMinimumHeight(int(92 * m_theme.scale));
    setMaximumHeight(int(92 * m_theme.scale));
}

void CheckPanel::frameChanged() {
    m_model.reset();
    if (m_frame) m_model = checkModel(*m_frame);
    const bool show = m_model && m_model->divergenceStep();
    if (show) {
        // On that step already: the button stays (the layout does not jump) but has nowhere to go.
        const int step = *m_model->divergenceStep();
        const bool here = m_frame->step == step;
        m_jump->setText(here ? tr("At step %1").arg(step) : tr("Go to step %1 ▸").arg(step));
        m_jump->setEnabled(!here);
    }
    m_jump->setVisible(show);
}

void CheckPanel::placeButton() {
    const qreal sc = m_theme.scale;
    const QSize hint = m_jump->sizeHint();
    m_jump->setGeometry(width() - hint.width() - int(12 * sc),
                        height() - hint.height() - int(10 * sc), hint.width(), hint.height());
}

// ---- layout --------------------------------------------------------------------------------

// The verdict on the left, three lines of text, the per-row bars, and where the bug first
// bites above the button.
void CheckPanel::layOut() {
    placeButton();
    m_layout = {};
    if (!m_model) return;
    const qreal sc = m_theme.scale;
    m_layout.frame = QRectF(rect()).adjusted(6 * sc, 4 * sc, -6 * sc, -4 * sc);
    const QRectF inner = m_layout.frame.adjusted(12 * sc, 6 * sc, -12 * sc, -6 * sc);
    const QFont bigFont = m_theme.font(m_model->passed ? 20 : 24, true);
    const qreal bigW = QFontMetricsF(bigFont).horizontalAdvance(QStringLiteral("FAIL")) + 18 * sc;
    m_layout.verdict = QRectF(inner.left(), inner.top(), bigW, inner.height());
    const QRectF text(inner.left() + bigW, inner.top(), inner.width() * 0.42, inner.height());
    const qreal lineH = text.height() / 3;
    for (int i = 0; i < 3; ++i)
        m_layout.lines[i] = QRectF(text.left(), text.top() + i * lineH, text.width(), lineH);
    const bool pass = m_model->passed;
    m_layout.lineTexts[0] = errorLine();
    m_layout.lineTexts[1] = fittingLine(1, rowsLine(), rowsLine(true), 9.5, !pass);
    m_layout.lineTexts[2] = fittingLine(2, progressLine(), progressLine(true), 8.5, false);
    const qreal rightW = showsDivergence() ? std::max(qreal(m_jump->sizeHint().width()) + 24 * sc,
                                                      inner.width() * 0.2)
                                           : 0;
    const QRectF chart(text.right() + 12 * sc, inner.top() + 16 * sc,
                       inner.right() - rightW - text.right() - 24 * sc, inner.height() - 16 * sc);
    // The backward's query rows (dQ) and key rows (dK, dV) side by side, by their counts.
    const qreal gap = 14 * sc;
    const qreal queryShare =
        m_model->backward ? qreal(m_model->rows) / std::max(1, m_model->rows + m_model->keyRows)
                          : 1.0;
    const qreal queryW = m_model->backward ? (chart.width() - gap) * queryShare : chart.width();
    m_layout.bars = QRectF(chart.left(), chart.top(), queryW, chart.height());
    m_layout.caption =
        QRectF(m_layout.bars.left(), inner.top() - 2 * sc, m_layout.bars.width(), 16 * sc);
    const qreal range = kLogHigh - kLogLow;
    m_layout.toleranceY =
        chart.bottom() - chart.height() * (std::log10(m_model->tolerance) - kLogLow) / range;
    const int columns = std::max(1, int(m_layout.bars.width() / 2));
    m_layout.rowBars = layOutBars(m_layout.bars, checkBars(*m_model, columns));
    if (m_model->backward) {
        m_layout.keyBars = QRectF(m_layout.bars.right() + gap, chart.top(),
                                  chart.width() - queryW - gap, chart.height());
        m_layout.keyCaption = QRectF(m_layout.keyBars.left(), inner.top() - 2 * sc,
                                     m_layout.keyBars.width(), 16 * sc);
        m_layout.keyRowBars =
            layOutBars(m_layout.keyBars,
                       keyCheckBars(*m_model, std::max(1, int(m_layout.keyBars.width() / 2))));
    }
    const QRectF box(inner.right() - rightW, inner.top(), rightW,
                     inner.height() - m_jump->height() - 4 * sc);
    m_layout.divergence[0] = QRectF(box.left(), box.top(), box.width(), box.height() / 2);
    m_layout.divergence[1] =
        QRectF(box.left(), box.top() + box.height() / 2, box.width(), box.height() / 2);
}

// The whole sentence where it fits at most 1.5 points under its size, else its brief form (the
// tooltip keeps the whole one).
QString CheckPanel::fittingLine(int line, const QString& whole, const QString& brief, qreal point,
                                bool bold) const {
    const QFontMetricsF fm(m_theme.font(point - 1.5, bold));
    return fm.horizontalAdvance(whole) <= m_layout.lines[line].width() ? whole : brief;
}

// One bar per column of at least 2 px, each the worst of its rows, its height on the log scale.
std::vector<CheckPanel::Bar> CheckPanel::layOutBars(const QRectF& bars,
                                                    const std::vector<CheckBar>& columns) const {
    std::vector<Bar> laid;
    const qreal range = kLogHigh - kLogLow;
    if (columns.empty() || bars.width() <= 20) return laid;
    const qreal bw = bars.width() / qreal(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
        const CheckBar& column = columns[c];
        const double v = column.maxDiff;
        const double lv = !std::isfinite(v) ? kLogHigh
                          : v <= 0          ? kLogLow
                                            : std::clamp(std::log10(v), kLogLow, kLogHigh);
        const qreal h = std::max(2.0, bars.height() * (lv - kLogLow) / range);
        QColor colour = column.wrong ? m_theme.bad : m_theme.good;
        if (!column.finished) colour = withAlpha(colour, 70);
        const QRectF bar(bars.left() + qreal(c) * bw + (bw > 4 ? 1 : 0), bars.bottom() - h,
                         std::max(1.0, bw - (bw > 4 ? 2 : 0)), h);
        laid.push_back({bar, colour, column.current});
    }
    return laid;
}

// The backward's bars: a query row's dQ or a key row's dK and dV.
QString CheckPanel::barToolTip(const QPointF& pos) const {
    const CheckModel& m = *m_model;
    const bool key = m_layout.keyBars.contains(pos);
    const QRectF& bars = key ? m_layout.keyBars : m_layout.bars;
    const int rows = key ? m.keyRows : m.rows;
    if (!bars.contains(pos) || rows == 0) return {};
    const int row = std::clamp(int((pos.x() - bars.left()) / bars.width() * rows), 0, rows - 1);
    const double diff = (key ? m.keyRowMaxDiff : m.rowMaxDiff)(row);
    const bool wrong = (key ? m.keyRowWrong : m.rowWrong)[std::size_t(row)];
    const bool finished = (key ? m.keyRowFinished : m.rowFinished)[std::size_t(row)];
    const QString which =
        key ? tr("Key row %1 of dK and dV").arg(row) : tr("Query row %1 of dQ").arg(row);
    return tr("%1: its largest |difference| from the closed-form gradient is %2 (tolerance %3, "
              "the dotted line; log scale 1e-17 … 1).\n%4 · %5")
        .arg(which, std::isfinite(diff) ? formatValue(diff, 2) : tr("inf/NaN"),
             formatValue(m.tolerance, 1),
             wrong ? tr("wrong: above the tolerance") : tr("within the tolerance"),
             finished ? tr("final at this step") : tr("not final yet at this step (pale)"));
}

QString CheckPanel::toolTipAt(const QPointF& pos) const {
    if (!m_model) return {};
    const CheckModel& m = *m_model;
    const QRectF& bars = m_layout.bars;
    if (m.backward && (bars.contains(pos) || m_layout.keyBars.contains(pos)))
        return barToolTip(pos);
    if (m.backward && m_layout.frame.contains(pos))
        return tr("%1\nThe verdict is for the whole run; at this step dQ is final in %2 of %3 "
                  "query rows, dK and dV in %4 of %5 key rows.")
                   .arg(rowsLine())
                   .arg(m.finishedRows)
                   .arg(m.rows)
                   .arg(m.finishedKeyRows)
                   .arg(m.keyRows) +
               (m.cpuSummary.isEmpty() ? QString()
                                       : tr("\nThe CPU engine's backward beside it: %1").arg(m.cpuSummary)) +
               lowPrecisionToolTip();
    if (bars.contains(pos) && m.rows > 0 && m.rowMaxDiff.size() == m.rows) {
        const int row =
            std::clamp(int((pos.x() - bars.left()) / bars.width() * m.rows), 0, m.rows - 1);
        const double diff = m.rowMaxDiff(row);
        return tr("Row %1 of O: its largest |difference| from ordinary attention is %2 "
                  "(tolerance %3, the dotted line; log scale 1e-17 … 1).\n%4 · %5")
            .arg(row)
            .arg(std::isfinite(diff) ? formatValue(diff, 2) : tr("inf/NaN"),
                 formatValue(m.tolerance, 1),
                 m.rowWrong[std::size_t(row)] ? tr("wrong: above the tolerance")
                                              : tr("within the tolerance"),
                 m.rowFinished[std::size_t(row)] ? tr("final at this step")
                                                 : tr("not final yet at this step (pale)"));
    }
    if (!m_layout.frame.contains(pos)) return {};
    const QString verdict =
        m.passed ? tr("PASS: the largest |O − softmax(scale·QKᵀ)V| over the %1 rows is %2, "
                      "within the tolerance %3, so this run's O equals ordinary attention's.")
                       .arg(m.rows)
                       .arg(formatValue(m.maxAbsDiff, 2), formatValue(m.tolerance, 1))
                 : tr("FAIL: %1 of %2 rows of O differ from ordinary attention by more than the "
                      "tolerance %3 (largest |difference| %4).")
                       .arg(m.wrongRows.size())
                       .arg(m.rows)
                       .arg(formatValue(m.tolerance, 1), formatValue(m.maxAbsDiff, 2));
    return verdict + QLatin1Char('\n') +
           tr("The verdict is for the whole run; at this step %1 of %2 rows of O are final.")
               .arg(m.finishedRows)
               .arg(m.rows);
}

QString CheckPanel::errorLine() const {
    const CheckModel& m = *m_model;
    if (m.backward) {
        if (m.nonFiniteCount > 0)
            return tr("%1 values of dQ, dK, dV are inf or NaN").arg(m.nonFiniteCount);
        QStringList parts;
        for (const CheckModel::Gradient& g : m.gradients)
            parts << QStringLiteral("%1 %2").arg(g.name, formatValue(g.maxAbsDiff, 2));
        return tr("max |diff|  %1   (tolerance %2)")
            .arg(parts.join(QStringLiteral(" · ")), formatValue(m.tolerance, 1));
    }
    if (m.nonFiniteCount > 0) return tr("%1 values of O are inf or NaN").arg(m.nonFiniteCount);
    return tr("max |O − softmax(scale·QKᵀ)V| = %1   (tolerance %2)")
        .arg(formatValue(m.maxAbsDiff, 2), formatValue(m.tolerance, 1));
}

// The backward's bug switches that are on, in words (those that can change this problem).
QString CheckPanel::backwardBugText(bool brief) const {
    const BackwardOptions& bw = m_model->backwardOptions;
    QStringList bugs;
    if (!m_model->forwardPassed)
        bugs << (brief ? tr("the forward's O wrong")
                       : tr("the forward's O is wrong, and D = rowsum(dO ∘ O) reads it"));
    if (!bw.subtractRowDot) bugs << (brief ? tr("D left out") : tr("D left out: dS = P ∘ dP"));
    if (!bw.useLogSumExp)
        bugs << (brief ? tr("P from m, not L") : tr("P = exp(S − m), not exp(S − L)"));
    if (!bw.accumulateDq)
        bugs << (brief ? tr("dQ overwritten") : tr("dQ_i overwritten, not added to"));
    if (!bw.maskRecompute && m_model->causal)
        bugs << (brief ? tr("mask forgotten") : tr("the causal mask forgotten in the recompute"));
    return bugs.join(QStringLiteral("; "));
}

QString CheckPanel::rowsLine(bool brief) const {
    const CheckModel& m = *m_model;
    if (m.backward) {
        const QString bug = backwardBugText(brief);
        if (m.passed && brief)
            return tr("dQ, dK, dV = the gradients of softmax(scale·QKᵀ)V, every row") +
                   (bug.isEmpty() ? QString() : tr(", even with %1").arg(bug));
        if (m.passed)
            return tr("dQ, dK, dV on the %1 − the gradients of softmax(scale·QKᵀ)V − equal the "
                      "closed form in all %2 query and %3 key rows")
                       .arg(m.backendName)
                       .arg(m.rows)
                       .arg(m.keyRows) +
                   (bug.isEmpty() ? QString() : tr(", even with %1").arg(bug));
        // Each gradient by itself: leaving D out spoils dQ and dK, never dV.
        QStringList wrong, right;
        for (const CheckModel::Gradient& g : m.gradients) {
            if (g.passed) {
                right << g.name;
                continue;
            }
            const QString rows = g.name == QLatin1String("dQ") ? tr("query rows") : tr("key rows");
            wrong << (brief ? tr("%1 %2/%3 rows").arg(g.name).arg(g.wrongRows).arg(g.rows)
                            : tr("%1 of %2 %3 of %4").arg(g.wrongRows).arg(g.rows).arg(rows, g.name));
        }
        const QString list = wrong.join(QStringLiteral(", "));
        return (brief ? tr("wrong: %1").arg(list)
                      : right.isEmpty() ? tr("%1 wrong").arg(list)
                                        : tr("%1 wrong; %2 right").arg(list, right.join(QStringLiteral(", ")))) +
               (bug.isEmpty() ? QString() : tr(" — %1").arg(bug));
    }
    const QString wrong = tr("%1 of %2 rows wrong").arg(m.wrongRows.size()).arg(m.rows);
    switch (m.verdict) {
    case CheckVerdict::PassWithoutRescale:
        return tr("even with the rescale off: no row's maximum rose after its first block, so "
                  "nothing needed "
                  "rescaling");
    case CheckVerdict::Pass:
        return tr("%1 on the %2 equals ordinary attention in all %3 rows")
            .arg(m.flash ? tr("FlashAttention") : tr("Standard attention"), m.backendName)
            .arg(m.rows);
    case CheckVerdict::FailRescaleOff:
        return wrong + tr(" — the rescale e^(m_old − m_new) is switched off");
    case CheckVerdict::FailNoRunningMax:
        return wrong + tr(" — no running max: exp() of large scores overflows");
    case CheckVerdict::Fail:
        break;
    }
    return wrong;
}

QString CheckPanel::progressLine(bool brief) const {
    const CheckModel& m = *m_model;
    if (!m.backendNote.isEmpty()) return m.backendNote;
    if (m.backward) {
        QString line =
            (brief ? tr("final: dK, dV of %1/%2 key blocks, dQ of %3/%4 query blocks")
                   : tr("final so far: dK_j, dV_j of %1 of %2 key blocks, dQ_i of %3 of %4 query "
                        "blocks"))
                .arg(m.keyBlocksDone)
                .arg(m.keyBlocks)
                .arg(m.queryBlocksDone)
                .arg(m.queryBlocks);
        if (m.finishedRows + m.finishedKeyRows > 0)
            line += tr(", max |diff| among them %1")
                        .arg(m.finishedNonFinite ? QStringLiteral("inf/NaN")
                                                 : formatValue(m.finishedMaxDiff, 2));
        // Brief: the fast kernels' verdict before the CPU's, whose numbers give way to its word.
        if (brief)
            return line + lowPrecisionLine(true) +
                   (m.cpuSummary.isEmpty()
                        ? QString()
                        : tr(" · CPU engine: %1").arg(m.cpuPassed ? tr("PASS") : tr("FAIL")));
        if (!m.cpuSummary.isEmpty()) line += tr(" · CPU engine: %1").arg(m.cpuSummary);
        return line + lowPrecisionLine(false);
    }
    QString line = m.finishedRows == 0
                       ? tr("at this step no row of O is final yet")
                       : tr("final rows so far: %1 of %2, max |diff| among them %3")
                             .arg(m.finishedRows)
                             .arg(m.rows)
                             .arg(m.finishedNonFinite ? QStringLiteral("inf/NaN")
                                                      : formatValue(m.finishedMaxDiff, 2));
    if (!m.cpuSummary.isEmpty()) line += tr(" · CPU engine: %1").arg(m.cpuSummary);
    return line;
}

// The fast fp16 / bf16 kernels beside the mirror's run: their verdict and, in full, their worst
// error as a multiple of plain low-precision attention's. Empty when they had no word.
QString CheckPanel::lowPrecisionLine(bool brief) const {
    const CheckModel& m = *m_model;
    if (!m.lowPrecision)
        return m.lowPrecisionNote.isEmpty() ? QString() : tr(" · tensor cores: not run");
    const LowPrecisionGradientCheck& c = *m.lowPrecision;
    const QString type = QString::fromLatin1(toString(c.type));
    if (brief) return tr(" · %1 tensor cores: %2").arg(type, c.passed() ? tr("PASS") : tr("FAIL"));
    return tr(" · %1 tensor cores: %2").arg(type, QString::fromStdString(c.verdict()));
}

// The whole judgement of the fast kernels, or why they did not run.
QString CheckPanel::lowPrecisionToolTip() const {
    const CheckModel& m = *m_model;
    if (!m.lowPrecision) {
        if (m.lowPrecisionNote.isEmpty()) return {};
        return tr("\n\nThe GPU's fast tensor-core kernels did not run: %1").arg(m.lowPrecisionNote);
    }
    const LowPrecisionGradientCheck& c = *m.lowPrecision;
    const QString type = QString::fromLatin1(toString(c.type));
    // Worded in core, as the CLI's summary is: the two cannot drift apart.
    const auto one = [&](const char* name, const LowPrecisionError& e) {
        return QString::fromStdString(describe(e, name, c.type));
    };
    return tr("\n\nThe GPU's fast %1 tensor-core kernels (%2) ran the same backward on Q, K, V "
              "and dO rounded to %1; the step-by-step shows the mirror kernel's fp32 run. Their "
              "largest |difference| from the exact gradients of those inputs, beside plain %1 "
              "attention's (every product and P rounded): %3, %4, %5. %6: a kernel passes within "
              "%7× the plain error (or 1e-6), as the flash-attention tests judge one.")
        .arg(type, QString::fromStdString(c.kernel), one("dQ", c.dq), one("dK", c.dk),
             one("dV", c.dv), QString::fromStdString(c.verdict()),
             QString::number(kLowPrecisionErrorFactor, 'g', 3));
}

// ---- painting ------------------------------------------------------------------------------

void CheckPanel::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.background);
    if (!m_model) return;
    drawFrame(p);
    drawVerdict(p);
    drawRowBars(p);
    if (showsDivergence()) drawDivergence(p);
}

void CheckPanel::drawFrame(QPainter& p) const {
    const qreal sc = m_theme.scale;
    const bool pass = m_model->passed;
    const QColor tone = pass ? m_theme.good : m_theme.bad;
    p.setPen(QPen(tone, pass ? 1.5 * sc : 3 * sc));
    p.setBrush(withAlpha(tone, pass ? 22 : (m_theme.lecture ? 70 : 45)));
    p.drawRoundedRect(m_layout.frame, 8 * sc, 8 * sc);
}

void CheckPanel::drawVerdict(QPainter& p) const {
    const bool pass = m_model->passed;
    p.setPen(pass ? m_theme.good : m_theme.bad);
    drawFittedText(p, m_layout.verdict, Qt::AlignLeft | Qt::AlignVCenter,
                   pass ? tr("PASS") : tr("FAIL"), m_theme.font(pass ? 20 : 24, true));
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.lines[0], Qt::AlignLeft | Qt::AlignVCenter, m_layout.lineTexts[0],
                   m_theme.font(pass ? 10 : 11, true));
    p.setPen(pass ? m_theme.text : m_theme.bad);
    drawFittedText(p, m_layout.lines[1], Qt::AlignLeft | Qt::AlignVCenter, m_layout.lineTexts[1],
                   m_theme.font(9.5, !pass));
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.lines[2], Qt::AlignLeft | Qt::AlignVCenter, m_layout.lineTexts[2],
                   m_theme.font(8.5));
}

// The captions over the bars: whole where they fit, else shorter.
QString CheckPanel::captionText() const {
    if (!m_model->backward) return tr("|diff| per row (log scale, 1e-17 … 1)");
    const QFontMetricsF fm(m_theme.font(7.5));
    for (const QString& caption : {tr("dQ |diff| per query row (log, 1e-17 … 1)"),
                                   tr("dQ |diff| per query row"), tr("dQ per query row")})
        if (fm.horizontalAdvance(caption) <= m_layout.caption.width()) return caption;
    return tr("dQ");
}

QString CheckPanel::keyCaptionText() const {
    const QFontMetricsF fm(m_theme.font(7.5));
    for (const QString& caption : {tr("dK, dV |diff| per key row"), tr("dK, dV per key row")})
        if (fm.horizontalAdvance(caption) <= m_layout.keyCaption.width()) return caption;
    return tr("dK, dV");
}

QString CheckPanel::divergenceText() const {
    return tr("first wrong value: step %1").arg(*m_model->divergenceStep());
}

// What the first wrong value is, at its tile.
QString CheckPanel::divergenceTileText() const {
    const CheckModel& m = *m_model;
    if (!m.backward)
        return tr("ℓ of tile (%1, %2): m rose, no rescale")
            .arg(m.firstRescaleQueryBlock)
            .arg(m.firstRescaleKeyBlock);
    QString what;
    switch (m.firstBugKind) {
    case StepKind::RecomputeScores:
        what = tr("S of tile (%1, %2): the mask forgotten");
        break;
    case StepKind::RecomputeWeights:
        what = tr("P of tile (%1, %2): exp(S − m), not L");
        break;
    case StepKind::ComputeScoreGradient:
        what = tr("dS of tile (%1, %2): D left out");
        break;
    case StepKind::UpdateQueryGradient:
        what = tr("dQ_i of tile (%1, %2): overwritten");
        break;
    case StepKind::ComputeRowDots:
        return tr("D of the pre-pass: the forward's O is wrong");
    default:
        what = tr("tile (%1, %2)");
        break;
    }
    return what.arg(m.firstBugQueryBlock).arg(m.firstBugKeyBlock);
}

// The bars on a log scale under their caption, with the tolerance dotted across (the backward:
// dQ's query rows, then dK's and dV's key rows).
void CheckPanel::drawRowBars(QPainter& p) const {
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.caption, Qt::AlignLeft | Qt::AlignVCenter, captionText(),
                   m_theme.font(7.5));
    drawBars(p, m_layout.bars, m_layout.rowBars);
    if (!m_model->backward) return;
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.keyCaption, Qt::AlignLeft | Qt::AlignVCenter, keyCaptionText(),
                   m_theme.font(7.5));
    drawBars(p, m_layout.keyBars, m_layout.keyRowBars);
}

// The bars are put into one image and drawn with a single call: painted one by one they cost
// milliseconds with a bug on (hundreds of tall translucent rectangles, each of which Qt's raster
// engine splits across its paint threads).
void CheckPanel::drawBars(QPainter& p, const QRectF& bars, const std::vector<Bar>& rowBars) const {
    if (rowBars.empty()) return;
    p.setPen(QPen(withAlpha(m_theme.muted, 120), 1, Qt::DotLine));
    p.drawLine(QPointF(bars.left(), m_layout.toleranceY),
               QPointF(bars.right(), m_layout.toleranceY));
    const qreal dpr = devicePixelRatioF();
    const QRect px = QRectF(bars.topLeft() * dpr, bars.size() * dpr).toAlignedRect();
    QImage image(px.size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    // Columns do not overlap, so each pixel is transparent, the highlight of the current
    // rows, a bar, or a bar over that highlight: four colours, blended once.
    const QRgb highlight = qPremultiply(withAlpha(m_theme.accent, 45).rgba());
    for (const Bar& bar : rowBars) {
        const QRgb colour = qPremultiply(bar.colour.rgba());
        if (bar.current)
            fillRect(image, px, dpr,
                     QRectF(bar.rect.left(), bars.top(), bar.rect.width(), bars.height()),
                     highlight);
        fillRect(image, px, dpr, bar.rect, over(colour, bar.current ? highlight : 0));
    }
    image.setDevicePixelRatio(dpr);
    p.drawImage(QPointF(px.topLeft()) / dpr, image);
}

void CheckPanel::drawDivergence(QPainter& p) const {
    p.setPen(m_theme.bad);
    drawFittedText(p, m_layout.divergence[0], Qt::AlignLeft | Qt::AlignVCenter, divergenceText(),
                   m_theme.font(9.5, true));
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.divergence[1], Qt::AlignLeft | Qt::AlignVCenter,
                   divergenceTileText(), m_theme.font(8.5));
}

} // namespace flashviz::gui
