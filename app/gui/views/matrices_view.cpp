#include "views/matrices_view.h"

#include "style/format.h"
#include "style/paint_util.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

// Writes the values of a small matrix into its cells when they are large enough to read, in
// the (whole-width) parts given.
void drawValues(QPainter& p, const Theme& th, const QRectF& r, const Matrix& m, Colouring colouring,
                double scaleMax, const std::vector<QRect>& parts) {
    if (m.size() == 0) return;
    const qreal cw = r.width() / qreal(m.cols()), ch = r.height() / qreal(m.rows());
    if (cw < 34 * th.scale || ch < 15 * th.scale) return;
    p.setFont(
        th.mono(std::clamp(std::min(cw / (4.8 * th.scale), ch / (1.9 * th.scale)), 5.5, 8.5)));
    for (const QRect& part : parts)
        for (int i = part.top(); i <= part.bottom(); ++i)
            for (Eigen::Index j = 0; j < m.cols(); ++j) {
                const double v = m(i, j);
                const QColor bg = colouring == Colouring::Diverging ? divergingColour(v, scaleMax)
                                                                    : sequentialColour(v, scaleMax);
                p.setPen(textOn(bg));
                p.drawText(QRectF(r.left() + cw * qreal(j), r.top() + ch * i, cw, ch),
                           Qt::AlignCenter,
                           std::isinf(v) && v < 0 ? QStringLiteral("−∞") : formatValue(v, 2));
            }
}

} // namespace

MatricesView::MatricesView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void MatricesView::frameChanged() {
    m_model.reset();
    if (m_frame) m_model = makeMatricesModel(*m_frame);
}

void MatricesView::layOut() {
    m_layout = m_model ? layOutMatrices(*m_model, QRectF(rect()), m_theme) : MatricesLayout{};
}

void MatricesView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (!m_model) return;
    for (std::size_t i = 0; i < m_model->panels.size(); ++i)
        drawPanel(p, m_model->panels[i], m_layout.panels[i]);
    drawWrongRows(p);
    drawHighlights(p);
    drawNote(p);
}

void MatricesView::drawPanel(QPainter& p, const MatrixPanel& panel, const PanelPlace& place) const {
    const QRectF& r = place.rect;
    p.setPen(matrixColour(m_theme, panel.hbm.id));
    drawFittedText(p, place.titleRect, Qt::AlignLeft | Qt::AlignVCenter,
                   place.titleFits ? panel.titleWithShape : panel.title, m_theme.font(9.5, true));
    p.fillRect(r, m_theme.background);
    if (panel.hbm.neverStored) {
        drawNeverStored(p, r);
        return;
    }
    for (const ImagePart& part : place.held)
        drawMatrixImage(p, part.target, panel.image, part.source);
    // The backward's gradients where they are not final yet: the final values, faint (less
    // faint on the dark theme, where faded colours sink into the background).
    p.save();
    p.setOpacity(m_theme.lecture ? 0.45 : 0.25);
    for (const QRect& part : panel.faded)
        drawMatrixImage(p, elementRect(r, panel.hbm.rows, panel.hbm.cols, part), panel.image,
                        imageRegion(panel.image, panel.hbm.rows, panel.hbm.cols, part));
    p.restore();
    // Written but not final (the paper order's O_i between key blocks): hatched, as on the stage.
    const QColor colour = matrixColour(m_theme, panel.hbm.id);
    for (const QRect& part : panel.hbm.running) {
        const QRectF target = elementRect(r, panel.hbm.rows, panel.hbm.cols, part);
        p.fillRect(target, withAlpha(colour, 45));
        p.fillRect(target, QBrush(withAlpha(colour, 150), Qt::BDiagPattern));
    }
    if (panel.values)
        drawValues(p, m_theme, r, *panel.values, panel.colouring, panel.valueScale, panel.hbm.held);
    p.setPen(QPen(matrixColour(m_theme, panel.hbm.id), 1.5 * m_theme.scale));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r);
}

// FlashAttention's S: a dashed outline, and the current tile where it would sit.
void MatricesView::drawNeverStored(QPainter& p, const QRectF& r) const {
    p.fillRect(r, m_theme.panel);
    p.setPen(QPen(m_theme.muted, 1.2 * m_theme.scale, Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r);
    if (const auto& tile = m_model->scoreTile) {
        drawMatrixImage(p, m_layout.scoreTile, tile->image);
        drawValues(p, m_theme, m_layout.scoreTile, tile->values, Colouring::Diverging, tile->scale,
                   {QRect(0, 0, int(tile->values.cols()), int(tile->values.rows()))});
        p.setPen(QPen(m_theme.accent, 3 * m_theme.scale));
        p.drawRect(m_layout.scoreTile);
    }
    // The words go in the half the current tile leaves free (it covered them in the lower half).
    const bool tileBelow = m_model->scoreTile && m_layout.scoreTile.center().y() > r.center().y();
    p.setPen(m_theme.muted);
    drawFittedText(p, r.adjusted(6, 6, -6, -6),
                   Qt::AlignHCenter | (tileBelow ? Qt::AlignTop : Qt::AlignBottom) |
                       Qt::TextWordWrap,
                   tr("never stored"), m_theme.font(9.5, true));
}

void MatricesView::drawWrongRows(QPainter& p) const {
    p.setPen(Qt::NoPen);
    p.setBrush(m_theme.bad);
    for (const QPolygonF& mark : m_layout.wrongRowMarks)
        p.drawPolygon(mark);
    for (const QRectF& strip : m_layout.wrongRowStrips)
        p.drawRect(strip);
}

void MatricesView::drawHighlights(QPainter& p) const {
    p.setPen(QPen(m_theme.accent, 3 * m_theme.scale));
    p.setBrush(Qt::NoBrush);
    for (const QRectF& r : m_layout.highlights)
        p.drawRect(r);
}

void MatricesView::drawNote(QPainter& p) const {
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.note, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
                   m_model->note, m_theme.font(8));
}

} // namespace flashviz::gui
