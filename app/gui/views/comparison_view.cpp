#include "views/comparison_view.h"

#include "style/format.h"
#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace flashviz::gui {

namespace {

QString valueText(ComparisonUnit unit, double v) {
    switch (unit) {
    case ComparisonUnit::Flops:
        return formatFlops(v);
    case ComparisonUnit::Floats:
        return ComparisonView::tr("%1 floats").arg(formatCount(std::uint64_t(v)));
    case ComparisonUnit::Bytes:
        break;
    }
    return formatBytes(v);
}

} // namespace

ComparisonView::ComparisonView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void ComparisonView::frameChanged() {
    m_model.reset();
    if (scene()) m_model = comparisonModel(*scene());
}

// The title, then a row per figure: its label and ratio on the left, a bar for each algorithm
// (to one scale per row) with its value after it.
void ComparisonView::layOut() {
    m_layout = {};
    if (!m_model) return;
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(14 * sc, 10 * sc, -14 * sc, -10 * sc);
    const qreal titleH = QFontMetricsF(m_theme.font(11, true)).height() + 8 * sc;
    m_layout.title = QRectF(area.left(), area.top(), area.width(), titleH);
    const qreal footH =
        m_model->footnote.isEmpty() ? 0 : QFontMetricsF(m_theme.font(8.5)).height() + 4 * sc;
    m_layout.footnote = QRectF(area.left(), area.bottom() - footH, area.width(), footH);
    const qreal rowH = (area.height() - titleH - footH) / 3;
    const qreal labelW = area.width() * 0.26;
    for (std::size_t i = 0; i < m_model->rows.size(); ++i) {
        const ComparisonRow& row = m_model->rows[i];
        RowLayout& where = m_layout.rows[i];
        const QRectF box(area.left(), area.top() + titleH + qreal(i) * rowH, area.width(),
                         rowH - 8 * sc);
        where.label = QRectF(box.left(), box.top(), labelW, box.height() / 2);
        where.note = QRectF(box.left(), box.top() + box.height() / 2, labelW, box.height() / 2);
        const double top = std::max({row.standard, row.flash, 1.0});
        const qreal barsW = box.width() - labelW - 170 * sc;
        const qreal bh = box.height() / 2 - 4 * sc;
        for (int k = 0; k < 2; ++k) {
            const double v = k == 0 ? row.standard : row.flash;
            where.bars[k] = QRectF(box.left() + labelW, box.top() + k * (bh + 6 * sc),
                                   std::max(2.0, barsW * v / top), bh);
            where.values[k] =
                QRectF(where.bars[k].right() + 6 * sc, where.bars[k].top(), 200 * sc, bh);
        }
    }
}

void ComparisonView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (!m_model) return;
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.title, Qt::AlignLeft | Qt::AlignVCenter, m_model->title,
                   m_theme.font(11, true));
    for (std::size_t i = 0; i < m_model->rows.size(); ++i)
        drawRow(p, m_model->rows[i], m_layout.rows[i]);
    if (m_model->footnote.isEmpty()) return;
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.footnote, Qt::AlignLeft | Qt::AlignVCenter, m_model->footnote,
                   m_theme.font(8.5));
}

void ComparisonView::drawRow(QPainter& p, const ComparisonRow& row, const RowLayout& where) const {
    p.setPen(m_theme.text);
    drawFittedText(p, where.label, Qt::AlignLeft | Qt::AlignVCenter, row.label,
                   m_theme.font(10, true));
    p.setPen(m_theme.accent);
    drawFittedText(p, where.note, Qt::AlignLeft | Qt::AlignVCenter, row.note,
                   m_theme.font(10, true));
    for (int k = 0; k < 2; ++k) {
        const double v = k == 0 ? row.standard : row.flash;
        p.setPen(Qt::NoPen);
        p.setBrush(k == 0 ? m_theme.s : m_theme.sram);
        p.drawRoundedRect(where.bars[k], 3, 3);
        p.setPen(m_theme.text);
        drawFittedText(
            p, where.values[k], Qt::AlignLeft | Qt::AlignVCenter,
            QStringLiteral("%1  %2").arg(k == 0 ? m_model->firstName : m_model->secondName,
                                         valueText(row.unit, v)),
            m_theme.font(9));
    }
}

} // namespace flashviz::gui
