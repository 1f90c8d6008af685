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
// the longest line (with its indent) fits the width. Measuring text is the costly part and the
// listing only changes with the settings, so the fit is kept until the listing or the room changes.
void CodePanel::layOut() {
    m_layout = {};
    if (m_model.lines.empty()) return;
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const qreal titleH = QFontMetricsF(m_theme.font(9.5, true)).height() + 6 * sc;
    m_layout.title = QRectF(area.left(), area.top(), area.width(), titleH);
    const qreal rowH = std::min((area.height() - titleH) / qreal(m_model.lines.size()), 30 * sc);
    const Fit& fit = fitted(rowH, area.width());
    m_layout.codeFont = m_theme.mono(fit.point);
    m_layout.commentFont = commentFont(fit.point);
    for (std::size_t i = 0; i < m_model.lines.size(); ++i) {
        const CodeLine& line = m_model.lines[i];
        LineLayout where;
        where.row = QRectF(area.left(), area.top() + titleH + qreal(i) * rowH, area.width(), rowH);
        where.textX = where.row.left() + 6 * sc + fit.indentWidth * line.indent;
        const bool bold = int(i) == m_model.current;
        const qreal commentX = where.textX + (bold ? fit.boldWidths : fit.plainWidths)[i] + 14 * sc;
        // A comment is shown whole or not at all ("# never leaves t…" says nothing); the line's
        // tooltip has it either way.
        if (!line.comment.isEmpty() && commentX + fit.commentWidths[i] <= where.row.right())
            where.commentX = commentX;
        m_layout.lines.push_back(where);
    }
}

// What the fit depends on: the lines' text and indents, the room and the theme's scale.
QString CodePanel::fitKey(qreal rowH, qreal width) const {
    QString key = QStringLiteral("%1|%2|%3|%4")
                      .arg(rowH)
                      .arg(width)
                      .arg(m_theme.scale)
                      .arg(m_theme.mono(10).family());
    for (const CodeLine& line : m_model.lines)
        key += QStringLiteral("|%1%2:").arg(line.indent).arg(line.removed) + line.text +
               QStringLiteral("#") + line.comment;
    return key;
}

const CodePanel::Fit& CodePanel::fitted(qreal rowH, qreal width) {
    const QString key = fitKey(rowH, width);
    if (key == m_fit.key) return m_fit;
    m_fit = {};
    m_fit.key = key;
    m_fit.point = fittingPointSize(rowH, width);
    const QFont plain = m_theme.mono(m_fit.point);
    QFont bold = plain;
    bold.setBold(true);
    const QFontMetricsF plainMetrics(plain), boldMetrics(bold);
    m_fit.indentWidth = plainMetrics.horizontalAdvance(QStringLiteral("    "));
    const QFont comment = commentFont(m_fit.point);
    QFont removedComment = comment;
    removedComment.setBold(true);
    const QFontMetricsF commentMetrics(comment), removedMetrics(removedComment);
    for (const CodeLine& line : m_model.lines) {
        m_fit.plainWidths.push_back(plainMetrics.horizontalAdvance(line.text));
        m_fit.boldWidths.push_back(boldMetrics.horizontalAdvance(line.text));
        const QString text = QStringLiteral("# ") + line.comment;
        m_fit.commentWidths.push_back(
            line.comment.isEmpty()
                ? 0
                : (line.removed ? removedMetrics : commentMetrics).horizontalAdvance(text));
    }
    return m_fit;
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
    QFont comment = m_layout.commentFont;
    comment.setBold(line.removed);
    p.setFont(comment);
    p.drawText(QRectF(where.commentX, r.top(), r.right() - where.commentX, r.height()),
               Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("# ") + line.comment);
}

QString CodePanel::toolTipAt(const QPointF& pos) const {
    for (std::size_t i = 0; i < m_layout.lines.size(); ++i) {
        if (!m_layout.lines[i].row.contains(pos)) continue;
        const CodeLine& line = m_model.lines[i];
        QStringList parts{line.text.trimmed()};
        if (!line.comment.isEmpty()) parts << QStringLiteral("# ") + line.comment;
        if (line.removed) parts << tr("in red: a switch in 'Break it' removes or changes it");
        QStringList kinds;
        for (const StepKind kind : line.kinds)
            kinds << QString::fromLatin1(toString(kind));
        if (!kinds.isEmpty())
            parts << tr("runs at the step%1 %2")
                         .arg(kinds.size() > 1 ? "s" : "", kinds.join(QStringLiteral(", ")));
        if (int(i) == m_model.current && m_frame)
            parts << tr("step %1 (%2) runs it now")
                         .arg(m_frame->state.info.index)
                         .arg(QString::fromLatin1(toString(m_frame->state.info.kind)));
        return parts.join(QLatin1Char('\n'));
    }
    return {};
}

QFont CodePanel::commentFont(qreal codePoint) const {
    QFont font = m_theme.font(std::max(6.0, codePoint - 1.5));
    font.setItalic(true);
    return font;
}

} // namespace flashviz::gui
