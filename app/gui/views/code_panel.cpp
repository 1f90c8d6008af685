#include "views/code_panel.h"

#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace flashviz::gui {

CodePanel::CodePanel(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void CodePanel::frameChanged() {
    m_model = m_frame ? codeModel(*m_frame) : CodeModel();
}

// A row height that fits every line, up to a comfortable maximum, and the largest font at which
// the longest line (with its indent) fits the width.
void CodePanel::layOut() {
    m_layout = {};
    if (m_model.lines.empty()) return;
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const qreal titleH = QFontMetricsF(m_theme.font(9.5, true)).height() + 6 * sc;
    m_layout.title = QRectF(area.left(), area.top(), area.width(), titleH);
    const qreal rowH = std::min((area.height() - titleH) / qreal(m_model.lines.size()), 30 * sc);
    const qreal point = fittingPointSize(rowH, area.width());
    m_layout.codeFont = m_theme.mono(point);
    m_layout.commentFont = m_theme.font(std::max(6.0, point - 1.5));
    m_layout.commentFont.setItalic(true);
    const qreal indentW =
        QFontMetricsF(m_layout.codeFont).horizontalAdvance(QStringLiteral("    "));
    for (std::size_t i = 0; i < m_model.lines.size(); ++i) {
        const CodeLine& line = m_model.lines[i];
        LineLayout where;
        where.row = QRectF(area.left(), area.top() + titleH + qreal(i) * rowH, area.width(), rowH);
        where.textX = where.row.left() + 6 * sc + indentW * line.indent;
        QFont font = m_layout.codeFont;
        font.setBold(int(i) == m_model.current);
        const qreal commentX =
            where.textX + QFontMetricsF(font).horizontalAdvance(line.text) + 14 * sc;
        if (!line.comment.isEmpty() && commentX < where.row.right() - 30 * sc)
            where.commentX = commentX;
        m_layout.lines.push_back(where);
    }
}

qreal CodePanel::fittingPointSize(qreal rowH, qreal width) const {
    const qreal sc = m_theme.scale;
    qreal point = std::clamp(rowH / (2.0 * sc), 6.0, 10.5);
    for (; point > 6.0; point -= 0.25) {
        const QFontMetricsF fm(m_theme.mono(point, true));
        qreal widest = 0;
        for (const CodeLine& line : m_model.lines)
            widest = std::max(widest, fm.horizontalAdvance(QStringLiteral("    ")) * line.indent +
                                          fm.horizontalAdvance(line.text));
        if (widest + 12 * sc <= width) break;
    }
    return point;
}

void CodePanel::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (m_model.lines.empty()) return;
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.title, Qt::AlignLeft | Qt::AlignVCenter, m_model.title,
                   m_theme.font(9.5, true));
    for (std::size_t i = 0; i < m_model.lines.size(); ++i)
        drawLine(p, m_model.lines[i], m_layout.lines[i], int(i) == m_model.current);
}

void CodePanel::drawLine(QPainter& p, const CodeLine& line, const LineLayout& where,
                         bool current) const {
    const qreal sc = m_theme.scale;
    const QRectF& r = where.row;
    if (current) {
        p.setPen(Qt::NoPen);
        p.setBrush(withAlpha(m_theme.accent, m_theme.lecture ? 90 : 80));
        p.drawRoundedRect(r.adjusted(-4 * sc, 1, 4 * sc, -1), 4 * sc, 4 * sc);
        p.setBrush(m_theme.accent);
        p.drawRect(QRectF(r.left() - 4 * sc, r.top() + 1, 4 * sc, r.height() - 2));
    }
    QFont font = m_layout.codeFont;
    font.setBold(current);
    const bool isComment = line.text.startsWith(QLatin1Char('#'));
    p.setPen(line.removed ? m_theme.bad : isComment ? m_theme.muted : m_theme.text);
    p.setFont(font);
    p.drawText(QRectF(where.textX, r.top(), r.right() - where.textX, r.height()),
               Qt::AlignLeft | Qt::AlignVCenter, line.text);
    if (where.commentX < 0) return;
    p.setPen(line.removed ? m_theme.bad : m_theme.muted);
    QFont commentFont = m_layout.commentFont;
    commentFont.setBold(line.removed);
    drawFittedText(p, QRectF(where.commentX, r.top(), r.right() - where.commentX, r.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("# ") + line.comment,
                   commentFont, 5.5);
}

} // namespace flashviz::gui
