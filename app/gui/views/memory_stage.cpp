#include "views/memory_stage.h"

#include "style/format.h"
#include "style/paint_util.h"

#include <QEasingCurve>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

MemoryStageView::MemoryStageView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus);
}

void MemoryStageView::frameChanged() {
    m_model.reset();
    if (m_frame) m_model = makeStageModel(*m_frame);
}

void MemoryStageView::layOut() {
    m_layout = m_model ? layOutStage(*m_model, QRectF(rect()), m_theme) : StageLayout{};
}

QColor MemoryStageView::colourOf(ChipSlot slot) const {
    switch (slot) {
    case ChipSlot::Query:
        return m_theme.q;
    case ChipSlot::Key:
        return m_theme.k;
    case ChipSlot::Value:
        return m_theme.v;
    case ChipSlot::Scores:
        return m_theme.s;
    case ChipSlot::Weights:
        return m_theme.p;
    case ChipSlot::Max:
    case ChipSlot::Sum:
        return m_theme.accent;
    case ChipSlot::Accumulator:
        return m_theme.o;
    case ChipSlot::KeyGradient:
        return m_theme.dK;
    case ChipSlot::ValueGradient:
        return m_theme.dV;
    case ChipSlot::OutputGradient:
        return m_theme.dO;
    case ChipSlot::LogSumExp:
        return m_theme.lse;
    case ChipSlot::RowDot:
        return m_theme.delta;
    case ChipSlot::QueryGradient:
        return m_theme.dQ;
    case ChipSlot::WeightGradient:
        return m_theme.dP;
    case ChipSlot::ScoreGradient:
        return m_theme.dS;
    }
    return m_theme.text;
}

// What a matrix of the backward holds and why, for its tooltip ("dQ (8×4, 128 B in HBM): ...").
QString MemoryStageView::backwardMatrixTip(const StageMatrix& matrix) const {
    const QString head = tr("%1 (%2, %3 in HBM): ").arg(matrix.name, matrix.shape, matrix.bytes);
    switch (matrix.hbm.id) {
    case MatrixId::S:
    case MatrixId::P:
        if (matrix.hbm.neverStored)
            return tr("%1 (%2): never stored in HBM. Each tile is recomputed on chip from Q_i, K_j "
                      "and L_i; storing P from the forward would take %3 here, and its traffic.")
                .arg(matrix.name, matrix.shape, formatBytes(matrix.hbm.bytes()));
        return head + tr("P as the forward stored it, read back tile by tile instead of "
                         "recomputed.");
    case MatrixId::LogSumExp:
        return head + tr("the forward's log-sum-exp L = m + log ℓ, one value a row: P = exp(S − L) "
                         "is the softmax again in one pass.");
    case MatrixId::RowDot:
        return head + tr("D = rowsum(dO ∘ O), one value a row, written by the pre-pass: dS = P ∘ "
                         "(dP − D).");
    case MatrixId::dQ:
        return head + tr("every tile reads dQ_i, adds scale·dS_ij K_j and writes it back "
                         "(hatched: rows still waiting for key blocks); solid rows are final.");
    case MatrixId::dK:
    case MatrixId::dV:
        return head + tr("accumulated on chip over the query blocks and stored once per key "
                         "block, after its last one.");
    default:
        return head + tr("read, never written by the backward.");
    }
}

QString MemoryStageView::toolTipAt(const QPointF& pos) const {
    if (!m_model) return {};
    const StageModel& m = *m_model;
    const QString compared = m.backward
                                 ? (m.tradeStoresP ? tr("with P stored, its write included: %1 in all")
                                                   : tr("with P recomputed: %1 in all"))
                                       .arg(formatBytes(double(m.tradeTotals.hbmBytes())))
                                 : tr("standard attention: %1 in all")
                                       .arg(formatBytes(double(m.standardTotals.hbmBytes())));
    const QString traffic =
        tr("Through this step: %1 read, %2 written (the whole run: %3 read, %4 written; %5).")
            .arg(formatBytes(double(m.now.hbmReadBytes)), formatBytes(double(m.now.hbmWriteBytes)),
                 formatBytes(double(m.totals.hbmReadBytes)),
                 formatBytes(double(m.totals.hbmWriteBytes)), compared);
    for (std::size_t i = 0; i < m.matrices.size() && i < m_layout.matrices.size(); ++i) {
        if (!m_layout.matrices[i].rect.contains(pos)) continue;
        const StageMatrix& matrix = m.matrices[i];
        if (m.backward) return backwardMatrixTip(matrix);
        if (matrix.hbm.neverStored)
            return tr("%1 (%2): never stored in HBM. Only the current tile exists, on chip; "
                      "standard attention would write and read back %3 here.")
                .arg(matrix.name, matrix.shape, formatBytes(2 * matrix.hbm.bytes()));
        if (!matrix.hbm.running.empty())
            return tr("%1 (%2, %3 in HBM): the paper order writes every row's running value back "
                      "after each key block (hatched) and reads it again for the next; solid "
                      "rows are final.")
                .arg(matrix.name, matrix.shape, matrix.bytes);
        return tr("%1 (%2, %3 in HBM): drawn where it is written so far.")
            .arg(matrix.name, matrix.shape, matrix.bytes);
    }
    if (m.l2 && !m_layout.l2Box.isNull() && m_layout.l2Box.contains(pos)) {
        QStringList lines{m.l2->summary};
        for (const QString& a : m.l2->assumptions) lines << QStringLiteral("• ") + a;
        lines << tr("Through this step HBM sent %1 and received %2; the whole run %3 and %4.")
                     .arg(formatBytes(double(m.l2->now.readBytes)),
                          formatBytes(double(m.l2->now.writeBytes)),
                          formatBytes(double(m.l2->total.readBytes)),
                          formatBytes(double(m.l2->total.writeBytes)));
        return lines.join(QLatin1Char('\n'));
    }
    if (!m.measuredLine.isEmpty() && m_layout.measuredLine.contains(pos))
        return m.measuredLine + tr(".\nKernel: %1. Nsight Compute's counters (dram__bytes, "
                                   "lts__t_bytes) for FlashViz's own kernel, each launch from an "
                                   "empty L2 (%2); the analysis page's chart 12 has every measured "
                                   "size.")
                                    .arg(m.measuredKernel, m.measuredOn);
    if (m_layout.hbmBox.contains(pos))
        return tr("%1: %2.").arg(m.hbmTitle, m.hbmSubtitle) + QLatin1Char('\n') + traffic;
    if (m_layout.chipBox.contains(pos))
        return tr("%1: %2.").arg(m.chipTitle, m.chipSubtitle) + QLatin1Char('\n') + m.sram.text +
               (m.sram.over ? tr(": the working set does not fit, the tile spills to HBM")
                            : QString());
    if (m_layout.counterStrip.contains(pos))
        return traffic + QLatin1Char('\n') +
               tr("Time: the bytes moved at %1 against the FLOPs at %2; the larger one bounds "
                  "the step.")
                   .arg(formatRate(m.hbmBandwidth), formatFlopRate(m.flopRate)) +
               QLatin1Char('\n') +
               tr("Arithmetic intensity: FLOPs per byte moved to or from HBM. Below the ridge "
                  "point (%1 FLOP/B: the fp32 CUDA cores' rate over HBM's bandwidth) the run "
                  "waits on memory; above it, on arithmetic. Tensor cores move the ridge far "
                  "higher: the analysis' roofline shows both.")
                   .arg(m.ridge, 0, 'g', 3);
    return {};
}

void MemoryStageView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (!m_model) {
        p.setPen(m_theme.muted);
        p.setFont(m_theme.font(11));
        p.drawText(rect(), Qt::AlignCenter, tr("Computing…"));
        return;
    }
    const qreal t = QEasingCurve(QEasingCurve::InOutCubic).valueForProgress(m_transition);
    const bool moving = m_transition < 1.0;
    drawHbm(p, t, moving);
    drawHighlights(p);
    drawChip(p, t, moving);
    drawSramFill(p);
    drawBus(p, t);
    if (moving) drawTilesInFlight(p, t);
    drawCounters(p, moving ? t : 1.0);
    if (!m_model->measuredLine.isEmpty()) {
        p.setPen(m_theme.text);
        drawFittedText(p, m_layout.measuredLine, Qt::AlignLeft | Qt::AlignVCenter,
                       m_model->measuredLine, m_theme.font(8));
    }
}

void MemoryStageView::drawHbm(QPainter& p, qreal t, bool moving) const {
    drawPanel(p, m_layout.hbmBox, m_theme, m_theme.hbm, m_model->hbmTitle, m_model->hbmSubtitle);
    for (std::size_t i = 0; i < m_model->matrices.size(); ++i) {
        drawMatrix(p, m_model->matrices[i], m_layout.matrices[i], t, moving);
        drawMatrixLabel(p, m_model->matrices[i], m_layout.matrices[i]);
    }
}

// What HBM holds of the matrix: while the step animates, what it held before, and S and P of
// standard attention filling in as they are written.
void MemoryStageView::drawMatrix(QPainter& p, const StageMatrix& m, const MatrixPlace& place,
                                 qreal t, bool moving) const {
    const qreal sc = m_theme.scale;
    const QRectF r = place.rect;
    p.setPen(Qt::NoPen);
    p.setBrush(m_theme.panel);
    p.drawRect(r);
    const QColor colour = matrixColour(m_theme, m.hbm.id);
    for (const ImagePart& part : moving ? place.heldWhileMoving : place.held) {
        // The scene keeps no image of the backward's columns L and D: tinted where held.
        if (m.image.isNull())
            p.fillRect(part.target, withAlpha(colour, 110));
        else
            drawMatrixImage(p, part.target, m.image, part.source);
    }
    // Written but not final (the paper order's O_i, m_i, ℓ_i between key blocks, the backward's
    // dQ_i before its last key block): hatched.
    for (const QRectF& part : moving ? place.runningWhileMoving : place.running) {
        p.fillRect(part, withAlpha(colour, 45));
        p.fillRect(part, QBrush(withAlpha(colour, 150), Qt::BDiagPattern));
    }
    if (moving && m.hbm.fillsWhileMoving)
        drawMatrixImage(p, QRectF(r.left(), r.top(), r.width(), r.height() * t), m.image,
                        QRectF(0, 0, m.image.width(), m.image.height() * t));
    p.setBrush(Qt::NoBrush);
    if (m.hbm.neverStored) {
        p.setPen(QPen(m_theme.muted, 1.2 * sc, Qt::DashLine));
        p.drawRect(r);
        p.setPen(m_theme.muted);
        drawFittedText(p, r.adjusted(4, 4, -4, -4), Qt::AlignCenter | Qt::TextWordWrap,
                       tr("never stored"), m_theme.font(9, true));
    } else {
        p.setPen(QPen(matrixColour(m_theme, m.hbm.id), 1.5 * sc));
        p.drawRect(r);
    }
}

void MemoryStageView::drawMatrixLabel(QPainter& p, const StageMatrix& m,
                                      const MatrixPlace& place) const {
    p.setPen(m.hbm.neverStored ? m_theme.muted : matrixColour(m_theme, m.hbm.id));
    drawFittedText(p, place.nameRect, Qt::AlignHCenter | Qt::AlignTop, m.name,
                   m_theme.font(8.5, true));
    p.setPen(m_theme.muted);
    const QFont small = m_theme.font(8);
    if (!place.shapeRect.isNull())
        drawFittedText(p, place.shapeRect, Qt::AlignHCenter | Qt::AlignTop, m.shape, small);
    drawFittedText(p, place.bytesRect, Qt::AlignHCenter | Qt::AlignTop,
                   place.bytesShort ? m.bytesShort : m.bytes, small);
}

void MemoryStageView::drawHighlights(QPainter& p) const {
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(m_theme.accent, 3 * m_theme.scale));
    for (const QRectF& r : m_layout.highlights)
        p.drawRect(r);
}

void MemoryStageView::drawChip(QPainter& p, qreal t, bool moving) const {
    drawPanel(p, m_layout.chipBox, m_theme, m_theme.sram, m_model->chipTitle,
              m_model->chipSubtitle);
    if (m_model->tiled)
        drawTiles(p, t, moving);
    else
        drawKernels(p);
}

void MemoryStageView::drawTiles(QPainter& p, qreal t, bool moving) const {
    const qreal sc = m_theme.scale;
    const QFont slotFont = m_theme.font(7.5, true);
    for (std::size_t i = 0; i < m_model->tiles.size(); ++i) {
        const ChipTile& tile = m_model->tiles[i];
        const TilePlace& place = m_layout.tiles[i];
        const QColor colour = colourOf(tile.slot);
        const bool arriving = moving && m_model->arriving(tile.slot);
        // An arriving tile carries its name in flight: one name, not two run together ("K_jK j").
        p.setPen(tile.resident ? colour : m_theme.muted);
        if (!arriving)
            drawFittedText(p, place.labelRect, Qt::AlignLeft | Qt::AlignBottom, tile.name,
                           slotFont);
        if (tile.resident && !arriving && !tile.image.isNull()) {
            drawMatrixImage(p, place.rect, tile.image);
            p.setPen(QPen(colour, 1.5 * sc));
        } else {
            p.setPen(QPen(withAlpha(m_theme.muted, 140), 1.0 * sc, Qt::DashLine));
        }
        p.setBrush(Qt::NoBrush);
        p.drawRect(place.rect);
        if (tile.produced) {
            // Pulses while the step animates.
            const int alpha = int(255 * (0.35 + 0.65 * (1 - std::abs(2 * t - 1))));
            p.setPen(QPen(withAlpha(m_theme.accent, alpha), 4 * sc));
            p.drawRect(place.rect.adjusted(-3 * sc, -3 * sc, 3 * sc, 3 * sc));
        }
    }
}

void MemoryStageView::drawKernels(QPainter& p) const {
    const qreal sc = m_theme.scale;
    for (std::size_t i = 0; i < m_model->kernels.size(); ++i) {
        const StageKernel& kernel = m_model->kernels[i];
        const QRectF& r = m_layout.kernels[i];
        p.setPen(QPen(kernel.active ? m_theme.accent : withAlpha(m_theme.muted, 150),
                      kernel.active ? 3 * sc : 1 * sc));
        p.setBrush(kernel.active ? QBrush(withAlpha(m_theme.accent, 40)) : QBrush(Qt::NoBrush));
        p.drawRoundedRect(r, 5 * sc, 5 * sc);
        p.setPen(kernel.active ? m_theme.text : m_theme.muted);
        drawFittedText(p, r.adjusted(8 * sc, 0, -8 * sc, 0), Qt::AlignVCenter | Qt::AlignLeft,
                       kernel.name, m_theme.font(9.5, kernel.active));
    }
    if (m_layout.kernelNote.isNull()) return;
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.kernelNote, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   m_model->kernelNote, m_theme.font(8.5));
}

void MemoryStageView::drawSramFill(QPainter& p) const {
    const SramFill& sram = m_model->sram;
    const QRectF& track = m_layout.sramTrack;
    p.setPen(Qt::NoPen);
    p.setBrush(withAlpha(m_theme.muted, 50));
    p.drawRoundedRect(track, 3, 3);
    p.setBrush(sram.over ? m_theme.bad : m_theme.sram);
    QRectF fill = track;
    fill.setWidth(track.width() * std::min(1.0, sram.fraction));
    if (sram.usedBytes > 0) fill.setWidth(std::max(fill.width(), 2.0));
    p.drawRoundedRect(fill, 3, 3);
    p.setPen(sram.over ? m_theme.bad : m_theme.text);
    QFont font = m_theme.font(8);
    font.setBold(sram.over);
    drawFittedText(p, m_layout.sramText, Qt::AlignLeft | Qt::AlignVCenter, sram.text, font);
}

void MemoryStageView::drawBus(QPainter& p, qreal t) const {
    const BusTraffic& bus = m_model->bus;
    drawArrow(p, m_layout.readLane, true, bus.reading, bus.readLabel, bus.readAmount, t);
    drawArrow(p, m_layout.writeLane, false, bus.writing, bus.writeLabel, bus.writeAmount, t);
    if (!m_model->l2 || m_layout.l2Box.isNull()) return; // too narrow a view: the counters say it
    const BusTraffic& hbm = m_model->l2->bus;
    drawArrow(p, m_layout.l2ReadLane, true, hbm.reading, hbm.readLabel, hbm.readAmount, t);
    drawArrow(p, m_layout.l2WriteLane, false, hbm.writing, hbm.writeLabel, hbm.writeAmount, t);
    drawL2(p);
}

// L2: its name and size, the run's matrices against its usable half, and whether they stay.
void MemoryStageView::drawL2(QPainter& p) const {
    const L2Panel& l2 = *m_model->l2;
    const qreal sc = m_theme.scale;
    // Between HBM's colour and SRAM's, as L2 sits between them.
    const QColor colour((m_theme.hbm.red() + m_theme.sram.red()) / 2,
                        (m_theme.hbm.green() + m_theme.sram.green()) / 2,
                        (m_theme.hbm.blue() + m_theme.sram.blue()) / 2);
    p.setPen(QPen(colour, 1.5 * sc));
    p.setBrush(withAlpha(colour, m_theme.lecture ? 40 : 22));
    p.drawRoundedRect(m_layout.l2Box, 6 * sc, 6 * sc);
    const QFont title = m_theme.font(10, true), size = m_theme.font(8);
    const qreal titleH = QFontMetricsF(title).height();
    const QRectF box = m_layout.l2Box.adjusted(2, 4 * sc, -2, 0);
    p.setPen(m_theme.text);
    drawFittedText(p, QRectF(box.left(), box.top(), box.width(), titleH), Qt::AlignCenter,
                   l2.title, title);
    p.setPen(m_theme.muted);
    const qreal sizeH = QFontMetricsF(size).height();
    drawFittedText(p, QRectF(box.left(), box.top() + titleH, box.width(), sizeH), Qt::AlignCenter,
                   l2.size, size);
    if (!m_layout.l2Rate.isNull())
        drawFittedText(p, m_layout.l2Rate, Qt::AlignCenter, l2.rate, size);
    const QRectF& track = m_layout.l2Track;
    p.setPen(Qt::NoPen);
    p.setBrush(withAlpha(m_theme.muted, 50));
    p.drawRoundedRect(track, 3, 3);
    QRectF fill = track;
    fill.setTop(track.bottom() - std::max(2.0, track.height() * std::min(1.0, l2.fraction)));
    p.setBrush(l2.fits ? colour : m_theme.bad);
    p.drawRoundedRect(fill, 3, 3);
    p.setPen(l2.fits ? m_theme.text : m_theme.bad);
    drawFittedText(p, m_layout.l2Text, Qt::AlignCenter, l2.fillText, m_theme.font(7.5, !l2.fits));
}

// An arrow across the bus, dashes running in its direction while the step moves data its way.
void MemoryStageView::drawArrow(QPainter& p, const BusLane& lane, bool rightwards, bool active,
                                const QString& label, const QString& amount, qreal t) const {
    const qreal sc = m_theme.scale;
    const qreal x0 = lane.x0, x1 = lane.x1, y = lane.y;
    const QColor c = active ? m_theme.accent : withAlpha(m_theme.muted, 140);
    QPen pen(c, active ? 5 * sc : 2 * sc);
    if (active) {
        pen.setStyle(Qt::DashLine);
        pen.setDashOffset(rightwards ? -t * 12 : t * 12);
    }
    p.setPen(pen);
    const qreal a = rightwards ? x0 : x1, b = rightwards ? x1 - 10 * sc : x0 + 10 * sc;
    p.drawLine(QPointF(a, y), QPointF(b, y));
    QPainterPath head;
    const qreal tip = rightwards ? x1 : x0, back = rightwards ? x1 - 14 * sc : x0 + 14 * sc;
    head.moveTo(tip, y);
    head.lineTo(back, y - 8 * sc);
    head.lineTo(back, y + 8 * sc);
    head.closeSubpath();
    p.setPen(Qt::NoPen);
    p.setBrush(c);
    p.drawPath(head);
    p.setPen(active ? m_theme.text : m_theme.muted);
    drawFittedText(p, lane.labelRect, Qt::AlignCenter, label, m_theme.font(8.5, active));
    if (active)
        drawFittedText(p, lane.amountRect, Qt::AlignCenter, amount, m_theme.font(8.5, true));
}

void MemoryStageView::drawTilesInFlight(QPainter& p, qreal t) const {
    const qreal sc = m_theme.scale;
    const QFont font = m_theme.font(9, true);
    const qreal labelH = QFontMetricsF(font).height();
    for (std::size_t i = 0; i < m_model->flights.size(); ++i) {
        const Flight& flight = m_model->flights[i];
        const FlightPath& path = m_layout.flights[i];
        const std::optional<qreal> along = flight.position(t);
        if (path.hbm.isNull() || path.chip.isNull() || !along) continue;
        const QColor colour = matrixColour(m_theme, flight.matrix);
        const QRectF r(path.hbm.topLeft() + (path.chip.topLeft() - path.hbm.topLeft()) * *along,
                       path.hbm.size() + (path.chip.size() - path.hbm.size()) * *along);
        const bool returning = flight.returning(t);
        // The trail starts where the tile set out from (a round trip's at HBM).
        const QRectF& origin = flight.direction == HbmTraffic::Write ? path.chip : path.hbm;
        p.setPen(QPen(withAlpha(colour, 110), 2 * sc, Qt::DotLine));
        p.drawLine(origin.center(), r.center());
        p.setPen(Qt::NoPen);
        p.setBrush(withAlpha(QColor(0, 0, 0), 60));
        p.drawRect(r.translated(3 * sc, 3 * sc));
        p.setBrush(m_theme.panel);
        p.drawRect(r);
        const QImage& image = returning ? flight.returnImage : flight.image;
        if (!image.isNull())
            drawMatrixImage(p, r, image, returning ? QRectF() : flight.imageSource);
        p.setPen(QPen(colour, 2.5 * sc));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r);
        p.setPen(m_theme.text);
        const QString& label = returning ? flight.returnLabel : flight.label;
        // As wide as its text: a fixed 120 px ran into the neighbouring tile's label.
        const QRectF labelRect(
            r.left(), r.top() - labelH - 2,
            std::max(r.width(), QFontMetricsF(font).horizontalAdvance(label) + 2), labelH);
        drawFittedText(p, labelRect, Qt::AlignLeft | Qt::AlignBottom, label, font);
    }
}

void MemoryStageView::drawCounters(QPainter& p, qreal progress) const {
    const qreal sc = m_theme.scale;
    p.setPen(Qt::NoPen);
    p.setBrush(withAlpha(m_theme.hbm, m_theme.lecture ? 40 : 18));
    p.drawRoundedRect(m_layout.counterStrip, 6 * sc, 6 * sc);
    const CounterReadout readout = m_model->counters(progress);
    drawCounter(p, readout.read, m_layout.counters.read);
    drawCounter(p, readout.written, m_layout.counters.written);
    drawCounter(p, readout.flops, m_layout.counters.flops);
    drawCounter(p, readout.time, m_layout.counters.time);
}

void MemoryStageView::drawCounter(QPainter& p, const CounterCell& cell,
                                  const CounterPlace& place) const {
    p.setPen(m_theme.muted);
    drawFittedText(p, place.label, Qt::AlignLeft | Qt::AlignVCenter, cell.label, m_theme.font(8));
    p.setPen(cell.active ? m_theme.accent.darker(m_theme.lecture ? 100 : 130) : m_theme.text);
    drawFittedText(p, place.value, Qt::AlignLeft | Qt::AlignVCenter, cell.value,
                   m_theme.mono(12, true));
    p.setPen(m_theme.muted);
    drawFittedText(p, place.note, Qt::AlignLeft | Qt::AlignVCenter, cell.note, m_theme.font(7.5));
}

} // namespace flashviz::gui
