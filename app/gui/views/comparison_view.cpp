#include "views/comparison_view.h"

#include "style/format.h"
#include "style/paint_util.h"

#include "core/counters.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace flashviz::gui {

ComparisonView::ComparisonView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void ComparisonView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (!m_frame) return;
    const Scene& scene = *m_frame->scene;
    const auto& spec = scene.settings.spec;
    const qreal sc = m_theme.scale;
    // Both algorithms from the engine's closed forms, so the comparison holds whichever one runs.
    const Counters standard = standardCounts(spec.queries, spec.keys, spec.headDim);
    const Counters flash =
        flashCounts(spec.queries, spec.keys, spec.headDim, spec.causal, scene.settings.options);
    const QRectF area = QRectF(rect()).adjusted(14 * sc, 10 * sc, -14 * sc, -10 * sc);
    const QFont titleFont = m_theme.font(11, true);
    const qreal titleH = QFontMetricsF(titleFont).height() + 8 * sc;
    p.setPen(m_theme.text);
    drawFittedText(p, QRectF(area.left(), area.top(), area.width(), titleH),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   tr("n = %1, d = %2, tiles %3 × %4: standard vs FlashAttention")
                       .arg(spec.queries)
                       .arg(spec.headDim)
                       .arg(scene.settings.options.blockRows)
                       .arg(scene.settings.options.blockCols),
                   titleFont);
    struct Row {
        QString label;
        double standard, flash;
        QString (*format)(double);
        QString note;
    };
    const Row rows[] = {
        {tr("HBM traffic"), double(standard.hbmBytes()), double(flash.hbmBytes()), &formatBytes,
         tr("%1× less")
             .arg(double(standard.hbmBytes()) / std::max(1.0, double(flash.hbmBytes())), 0, 'f',
                  1)},
        {tr("largest scratch buffer"), double(standard.peakScratchBytes()),
         double(flash.peakScratchBytes()), &formatBytes,
         tr("%1× smaller")
             .arg(double(standard.peakScratchBytes()) /
                      std::max(1.0, double(flash.peakScratchBytes())),
                  0, 'f', 0)},
        {tr("FLOPs"), double(standard.flops), double(flash.flops), &formatFlops,
         standard.flops == flash.flops
             ? tr("identical")
             : tr("ratio %1").arg(double(flash.flops) / double(standard.flops), 0, 'f', 2)},
    };
    const qreal rowH = (area.height() - titleH) / 3;
    const qreal labelW = area.width() * 0.26;
    for (int i = 0; i < 3; ++i) {
        const Row& r = rows[i];
        const QRectF box(area.left(), area.top() + titleH + i * rowH, area.width(), rowH - 8 * sc);
        p.setPen(m_theme.text);
        drawFittedText(p, QRectF(box.left(), box.top(), labelW, box.height() / 2),
                       Qt::AlignLeft | Qt::AlignVCenter, r.label, m_theme.font(10, true));
        p.setPen(m_theme.accent);
        drawFittedText(p,
                       QRectF(box.left(), box.top() + box.height() / 2, labelW, box.height() / 2),
                       Qt::AlignLeft | Qt::AlignVCenter, r.note, m_theme.font(10, true));
        const double top = std::max({r.standard, r.flash, 1.0});
        const qreal barsW = box.width() - labelW - 170 * sc;
        const qreal bh = box.height() / 2 - 4 * sc;
        for (int k = 0; k < 2; ++k) {
            const double v = k == 0 ? r.standard : r.flash;
            const QColor c = k == 0 ? m_theme.s : m_theme.sram;
            const QRectF bar(box.left() + labelW, box.top() + k * (bh + 6 * sc),
                             std::max(2.0, barsW * v / top), bh);
            p.setPen(Qt::NoPen);
            p.setBrush(c);
            p.drawRoundedRect(bar, 3, 3);
            p.setPen(m_theme.text);
            drawFittedText(
                p, QRectF(bar.right() + 6 * sc, bar.top(), 200 * sc, bh),
                Qt::AlignLeft | Qt::AlignVCenter,
                QStringLiteral("%1  %2").arg(k == 0 ? tr("standard") : tr("flash"), r.format(v)),
                m_theme.font(9));
        }
    }
}

} // namespace flashviz::gui
