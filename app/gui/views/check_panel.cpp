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

CheckPanel::CheckPanel(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_jump = new QPushButton(this);
    m_jump->setObjectName(QStringLiteral("jumpToDivergence"));
    m_jump->setFocusPolicy(Qt::NoFocus);
    m_jump->hide();
    connect(m_jump, &QPushButton::clicked, this, [this] {
        if (scene() && scene()->firstRescaleStep) emit jumpRequested(*scene()->firstRescaleStep);
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
    return scene() && !scene()->check.passed();
}

QString CheckPanel::verdictText() const {
    if (!scene()) return {};
    return QString::fromStdString(scene()->check.summary());
}

void CheckPanel::themeChanged() {
    m_jump->setFont(m_theme.font(9, true));
    setMinimumHeight(int(92 * m_theme.scale));
    setMaximumHeight(int(92 * m_theme.scale));
    placeButton();
}

void CheckPanel::frameChanged() {
    const Scene* s = scene();
    const bool show =
        s && s->settings.hasBug() && s->firstRescaleStep && !s->settings.options.rescale;
    if (show) m_jump->setText(tr("Go to step %1 ▸").arg(*s->firstRescaleStep));
    m_jump->setVisible(show);
    placeButton();
}

void CheckPanel::resizeEvent(QResizeEvent*) {
    placeButton();
}

void CheckPanel::placeButton() {
    const qreal sc = m_theme.scale;
    const QSize hint = m_jump->sizeHint();
    m_jump->setGeometry(width() - hint.width() - int(12 * sc),
                        height() - hint.height() - int(10 * sc), hint.width(), hint.height());
}

void CheckPanel::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const qreal sc = m_theme.scale;
    p.fillRect(rect(), m_theme.background);
    if (!m_frame) return;
    const Scene& scene = *m_frame->scene;
    const CheckReport& check = scene.check;
    const bool pass = check.passed();
    const StepInfo& info = m_frame->state.info;
    const QRectF area = QRectF(rect()).adjusted(6 * sc, 4 * sc, -6 * sc, -4 * sc);
    const QColor tone = pass ? m_theme.good : m_theme.bad;
    p.setPen(QPen(tone, pass ? 1.5 * sc : 3 * sc));
    p.setBrush(withAlpha(tone, pass ? 22 : (m_theme.lecture ? 70 : 45)));
    p.drawRoundedRect(area, 8 * sc, 8 * sc);

    // Verdict.
    const QRectF inner = area.adjusted(12 * sc, 6 * sc, -12 * sc, -6 * sc);
    const QFont bigFont = m_theme.font(pass ? 20 : 24, true);
    const qreal bigW = QFontMetricsF(bigFont).horizontalAdvance(QStringLiteral("FAIL")) + 18 * sc;
    p.setPen(tone);
    drawFittedText(p, QRectF(inner.left(), inner.top(), bigW, inner.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, pass ? tr("PASS") : tr("FAIL"), bigFont);

    const qreal textW = inner.width() * 0.42;
    const QRectF textBox(inner.left() + bigW, inner.top(), textW, inner.height());
    const qreal lineH = textBox.height() / 3;
    const int rows = int(check.rowMaxDiff.size());
    QString line1, line2, line3;
    const QString who = scene.isFlash() ? tr("FlashAttention") : tr("Standard attention");
    if (check.nonFiniteCount > 0)
        line1 = tr("%1 values of O are inf or NaN").arg(check.nonFiniteCount);
    else
        line1 = tr("max |O − softmax(scale·QKᵀ)V| = %1   (tolerance %2)")
                    .arg(formatValue(check.maxAbsDiff, 2), formatValue(check.tolerance, 1));
    if (pass && !scene.settings.options.rescale && scene.isFlash())
        line2 = tr("even with the rescale off: no row's maximum rose after its first block, so "
                   "nothing needed "
                   "rescaling");
    else if (pass)
        line2 = tr("%1 on the %2 equals ordinary attention in all %3 rows")
                    .arg(who, scene.backendName)
                    .arg(rows);
    else
        line2 = tr("%1 of %2 rows wrong").arg(check.wrongRows.size()).arg(rows) +
                (!scene.settings.options.rescale
                     ? tr(" — the rescale e^(m_old − m_new) is switched off")
                 : !scene.settings.options.runningMax
                     ? tr(" — no running max: exp() of large scores overflows")
                     : QString());
    // Progress at this step: the rows already final.
    int finished = 0;
    double worst = 0;
    bool worstNonFinite = false;
    for (const Range& r : finishedRowRuns(scene, info.index))
        for (int i = r.begin; i < r.end; ++i) {
            ++finished;
            const double v = check.rowMaxDiff(i);
            if (!std::isfinite(v))
                worstNonFinite = true;
            else
                worst = std::max(worst, v);
        }
    if (finished == 0)
        line3 = tr("at this step no row of O is final yet");
    else
        line3 = tr("final rows so far: %1 of %2, max |diff| among them %3")
                    .arg(finished)
                    .arg(rows)
                    .arg(worstNonFinite ? QStringLiteral("inf/NaN") : formatValue(worst, 2));
    if (scene.cpuCheck)
        line3 += tr(" · CPU engine: %1").arg(QString::fromStdString(scene.cpuCheck->summary()));
    if (!scene.backendNote.isEmpty()) line3 = scene.backendNote;
    p.setPen(m_theme.text);
    drawFittedText(p, QRectF(textBox.left(), textBox.top(), textBox.width(), lineH),
                   Qt::AlignLeft | Qt::AlignVCenter, line1, m_theme.font(pass ? 10 : 11, true));
    p.setPen(pass ? m_theme.text : m_theme.bad);
    drawFittedText(p, QRectF(textBox.left(), textBox.top() + lineH, textBox.width(), lineH),
                   Qt::AlignLeft | Qt::AlignVCenter, line2, m_theme.font(9.5, !pass));
    p.setPen(m_theme.muted);
    drawFittedText(p, QRectF(textBox.left(), textBox.top() + 2 * lineH, textBox.width(), lineH),
                   Qt::AlignLeft | Qt::AlignVCenter, line3, m_theme.font(8.5));

    // Per-row bars on a log scale.
    const bool divergence = !pass && scene.firstRescaleStep && !scene.settings.options.rescale;
    const qreal rightW =
        divergence ? std::max(qreal(m_jump->sizeHint().width()) + 24 * sc, inner.width() * 0.2) : 0;
    const QRectF bars(textBox.right() + 12 * sc, inner.top() + 16 * sc,
                      inner.right() - rightW - textBox.right() - 24 * sc, inner.height() - 16 * sc);
    p.setPen(m_theme.muted);
    drawFittedText(p, QRectF(bars.left(), inner.top() - 2 * sc, bars.width(), 16 * sc),
                   Qt::AlignLeft | Qt::AlignVCenter, tr("|diff| per row (log scale, 1e-17 … 1)"),
                   m_theme.font(7.5));
    if (rows > 0 && bars.width() > 20) {
        const int columns = std::min(rows, std::max(1, int(bars.width() / 2)));
        const qreal bw = bars.width() / columns;
        const double lo = -17, hi = 0;
        p.setPen(QPen(withAlpha(m_theme.muted, 120), 1, Qt::DotLine));
        const qreal tolY =
            bars.bottom() - bars.height() * (std::log10(check.tolerance) - lo) / (hi - lo);
        p.drawLine(QPointF(bars.left(), tolY), QPointF(bars.right(), tolY));
        // The bars are put into one image, pixel by pixel, and drawn with a single call. Painted
        // one by one they cost milliseconds with a bug on: hundreds of tall translucent
        // rectangles, each of which Qt's raster engine splits across its paint threads.
        const qreal dpr = devicePixelRatioF();
        const QRect px = QRectF(bars.topLeft() * dpr, bars.size() * dpr).toAlignedRect();
        QImage image(px.size(), QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        auto xOf = [&](qreal x) {
            return std::clamp(int(std::lround(x * dpr)) - px.left(), 0, px.width());
        };
        auto yOf = [&](qreal y) {
            return std::clamp(int(std::lround(y * dpr)) - px.top(), 0, px.height());
        };
        // Source-over, as QPainter::fillRect would blend a translucent colour.
        auto fill = [&](const QRectF& r, const QColor& colour) {
            const QRgb src = qPremultiply(colour.rgba());
            const int inverse = 255 - qAlpha(src);
            const int x0 = xOf(r.left()), y0 = yOf(r.top());
            const int x1 = std::min(px.width(), std::max(x0 + 1, xOf(r.right())));
            const int y1 = std::min(px.height(), std::max(y0 + 1, yOf(r.bottom())));
            for (int y = y0; y < y1; ++y) {
                auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
                for (int x = x0; x < x1; ++x) {
                    const QRgb dst = line[x];
                    auto over = [&](int s, int d) { return s + (d * inverse + 127) / 255; };
                    line[x] = qRgba(over(qRed(src), qRed(dst)), over(qGreen(src), qGreen(dst)),
                                    over(qBlue(src), qBlue(dst)), over(qAlpha(src), qAlpha(dst)));
                }
            }
        };
        for (int c = 0; c < columns; ++c) {
            const int r0 = int(qint64(c) * rows / columns),
                      r1 = int(qint64(c + 1) * rows / columns);
            double v = 0;
            bool bad = false, done = true, current = false;
            for (int r = r0; r < std::max(r1, r0 + 1); ++r) {
                const double x = check.rowMaxDiff(r);
                if (!std::isfinite(x))
                    v = INFINITY;
                else
                    v = std::max(v, x);
                bad = bad || scene.isRowWrong(r);
                done = done && scene.rowFinished(r, info.index);
                current =
                    current || (info.queryBlock >= 0 && r >= info.rows.begin && r < info.rows.end);
            }
            const double lv = !std::isfinite(v) ? hi
                              : v <= 0          ? lo
                                                : std::clamp(std::log10(v), lo, hi);
            const qreal h = std::max(2.0, bars.height() * (lv - lo) / (hi - lo));
            QColor colour = bad ? m_theme.bad : m_theme.good;
            if (!done) colour = withAlpha(colour, 70);
            const QRectF bar(bars.left() + c * bw + (bw > 4 ? 1 : 0), bars.bottom() - h,
                             std::max(1.0, bw - (bw > 4 ? 2 : 0)), h);
            if (current)
                fill(QRectF(bar.left(), bars.top(), bar.width(), bars.height()),
                     withAlpha(m_theme.accent, 45));
            fill(bar, colour);
        }
        image.setDevicePixelRatio(dpr);
        p.drawImage(QPointF(px.topLeft()) / dpr, image);
    }

    if (divergence) {
        const QRectF box(inner.right() - rightW, inner.top(), rightW,
                         inner.height() - m_jump->height() - 4 * sc);
        const StepInfo first = scene.engine->info(*scene.firstRescaleStep);
        p.setPen(m_theme.bad);
        drawFittedText(p, QRectF(box.left(), box.top(), box.width(), box.height() / 2),
                       Qt::AlignLeft | Qt::AlignVCenter,
                       tr("first wrong value: step %1").arg(*scene.firstRescaleStep),
                       m_theme.font(9.5, true));
        p.setPen(m_theme.text);
        drawFittedText(
            p, QRectF(box.left(), box.top() + box.height() / 2, box.width(), box.height() / 2),
            Qt::AlignLeft | Qt::AlignVCenter,
            tr("ℓ of tile (%1, %2): m rose, no rescale").arg(first.queryBlock).arg(first.keyBlock),
            m_theme.font(8.5));
    }
}

} // namespace flashviz::gui
