#include "views/versions_view.h"

#include "style/format.h"
#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <array>
#include <cmath>

namespace flashviz::gui {

namespace {

constexpr qreal kBodyPt = 9;
constexpr qreal kSmallPt = 8;

// The table of panel 1: a row per kind of operation, then the total and the matmuls.
struct TableRow {
    const char* label;
    std::uint64_t NonMatmulFlops::*field; // null: the total
};
constexpr std::array<TableRow, 6> kRows{{{"exp, log", &NonMatmulFlops::exp},
                                         {"max", &NonMatmulFlops::max},
                                         {"add, subtract", &NonMatmulFlops::add},
                                         {"multiply", &NonMatmulFlops::multiply},
                                         {"divide", &NonMatmulFlops::divide},
                                         {"non-matmul total", nullptr}}};

std::uint64_t valueOf(const NonMatmulFlops& f, const TableRow& row) {
    return row.field ? f.*row.field : f.total();
}

// Rows x columns cells in `area`, as large as fit with the given aspect, centred.
QRectF fitAspect(const QRectF& area, double rows, double cols) {
    if (rows <= 0 || cols <= 0 || area.width() <= 0 || area.height() <= 0) return {};
    const qreal cell = std::min(area.width() / cols, area.height() / rows);
    const QSizeF size(cell * cols, cell * rows);
    return QRectF(area.center() - QPointF(size.width() / 2, size.height() / 2), size);
}

} // namespace

VersionsView::VersionsView(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void VersionsView::frameChanged() {
    m_model.reset();
    if (frame()) m_model = versionsModel(*frame(), viewOptions());
}

QColor VersionsView::warpColour(int warp) const {
    // Eight hues that stay apart on both themes; more warps reuse them in order.
    static const std::array<QColor, 8> hues{QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                            QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                                            QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                            QColor(0xe3, 0x77, 0xc2), QColor(0x17, 0xbe, 0xcf)};
    return hues[std::size_t(warp) % hues.size()];
}

// The title; panels 1 and 2 side by side above panel 3.
void VersionsView::layOut() {
    m_layout = {};
    if (!m_model) return;
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(10 * sc, 6 * sc, -10 * sc, -8 * sc);
    const qreal titleH = QFontMetricsF(m_theme.font(11, true)).height() + 6 * sc;
    m_layout.title = QRectF(area.left(), area.top(), area.width(), titleH);
    if (!m_model->error.isEmpty()) return;
    const qreal gap = 8 * sc;
    const QRectF body = area.adjusted(0, titleH + 2 * sc, 0, 0);
    const qreal topH = (body.height() - gap) * 0.6;
    const qreal leftW = (body.width() - gap) * 0.46;
    m_layout.arithmetic = QRectF(body.left(), body.top(), leftW, topH);
    m_layout.warps = QRectF(body.left() + leftW + gap, body.top(), body.width() - leftW - gap, topH);
    m_layout.grid = QRectF(body.left(), body.top() + topH + gap, body.width(), body.height() - topH - gap);
    layOutArithmetic(panelContentRect(m_layout.arithmetic, m_theme, true));
    layOutWarps(panelContentRect(m_layout.warps, m_theme, true));
    layOutGrid(panelContentRect(m_layout.grid, m_theme, true));
}

// The table (a header and eight rows), two time bars, the finding and the check.
void VersionsView::layOutArithmetic(const QRectF& c) {
    const qreal sc = m_theme.scale;
    const qreal lineH = QFontMetricsF(m_theme.font(kSmallPt)).height() * 1.08;
    const int tableRows = 2 + int(kRows.size()) + 1;
    // The table takes what it needs, up to half the panel; the sentences share the rest.
    m_layout.rowHeight = std::min(lineH, c.height() * 0.5 / tableRows);
    m_layout.table = QRectF(c.left(), c.top(), c.width(), m_layout.rowHeight * tableRows);
    m_layout.columns = fitColumnWidths({1.6, 1, 1, 1, 1}, {0, 0, 0, 0, 0}, c.width());
    qreal y = m_layout.table.bottom() + 5 * sc;
    const qreal barH = lineH;
    const qreal nameW = m_layout.columns[0] * 0.45;
    const qreal labelW = c.width() * 0.42;
    for (int i = 0; i < 2; ++i) {
        m_layout.timeNames[std::size_t(i)] = QRectF(c.left(), y, nameW, barH);
        m_layout.timeBars[std::size_t(i)] =
            QRectF(c.left() + nameW, y, c.width() - labelW - nameW - 6 * sc, barH);
        m_layout.timeLabels[std::size_t(i)] = QRectF(c.right() - labelW, y, labelW, barH);
        y += barH + 3 * sc;
    }
    m_layout.check = QRectF(c.left(), y + 2 * sc, c.width(), lineH * 2.1);
    y = m_layout.check.bottom() + 2 * sc;
    m_layout.arithmeticFinding = QRectF(c.left(), y, c.width(), c.bottom() - y);
}

// Split-K on the left, split-Q on the right: a heading, the tile and the accumulator, three lines
// of counts; the warps' colours and the finding under both.
void VersionsView::layOutWarps(const QRectF& c) {
    const qreal sc = m_theme.scale;
    const qreal lineH = QFontMetricsF(m_theme.font(kSmallPt)).height() * 1.1;
    const qreal findingH = lineH * 3.2;
    m_layout.warpFinding = QRectF(c.left(), c.bottom() - findingH, c.width(), findingH);
    m_layout.legend = QRectF(c.left(), m_layout.warpFinding.top() - lineH - 2 * sc, c.width(), lineH);
    const qreal colGap = 12 * sc;
    const qreal colW = (c.width() - colGap) / 2;
    const int rows = m_model->report.tile.rows.size(), keys = m_model->report.tile.cols.size();
    const int d = m_model->request.headDim;
    for (int i = 0; i < 2; ++i) {
        SplitLayout& s = m_layout.splits[std::size_t(i)];
        const QRectF col(c.left() + i * (colW + colGap), c.top(), colW, m_layout.legend.top() - c.top() - 2 * sc);
        s.heading = QRectF(col.left(), col.top(), col.width(), lineH * 1.2);
        s.lines.clear();
        qreal y = col.bottom() - 3 * lineH;
        for (int l = 0; l < 3; ++l) s.lines.push_back(QRectF(col.left(), y + l * lineH, col.width(), lineH));
        const QRectF draw(col.left(), s.heading.bottom() + lineH, col.width(), y - s.heading.bottom() - lineH - 4 * sc);
        // S (rows x keys) and the accumulator (rows x d) to one scale, side by side.
        const double totalCols = keys + std::max(d, 1) + 2.0; // a gap of two cells
        const QRectF both = fitAspect(draw, rows, totalCols);
        const qreal cell = both.width() / totalCols;
        s.tile = QRectF(both.left(), both.top(), cell * keys, both.height());
        s.accumulator = QRectF(both.right() - cell * d, both.top(), cell * d, both.height());
        s.tileLabel = QRectF(col.left(), s.heading.bottom(), col.width() * 0.5, lineH);
        s.accLabel = QRectF(col.left() + col.width() * 0.5, s.heading.bottom(), col.width() * 0.5, lineH);
    }
}

// A row per version: its label, the SMs, and on the right its numbers over its time bar; then the
// kernel and the finding.
void VersionsView::layOutGrid(const QRectF& c) {
    const qreal sc = m_theme.scale;
    const qreal lineH = QFontMetricsF(m_theme.font(kSmallPt)).height() * 1.15;
    const qreal findingH = lineH * 2.2;
    m_layout.gridFinding = QRectF(c.left(), c.bottom() - findingH, c.width(), findingH);
    m_layout.kernelLine = QRectF(c.left(), m_layout.gridFinding.top() - lineH, c.width(), lineH);
    const qreal rowsH = (m_layout.kernelLine.top() - c.top() - 4 * sc) / 2;
    const qreal rightW = c.width() * 0.36;
    for (int i = 0; i < 2; ++i) {
        GridRowLayout& r = m_layout.gridRows[std::size_t(i)];
        const qreal top = c.top() + i * rowsH, h = rowsH - 4 * sc;
        r.label = QRectF(c.left(), top, c.width() * 0.15, h);
        const qreal right = c.right() - rightW;
        r.sms = QRectF(r.label.right() + 6 * sc, top, right - r.label.right() - 18 * sc, h);
        // Two lines of numbers, then the bar: centred in the row when it is taller.
        const qreal block = std::min(h, 3.2 * lineH);
        const qreal y = top + (h - block) / 2;
        r.text = QRectF(right, y, rightW, block - lineH);
        r.timeBar = QRectF(right, y + block - lineH * 0.9, rightW * 0.5, lineH * 0.8);
        r.timeLabel = QRectF(right + rightW * 0.5 + 4 * sc, y + block - lineH, rightW * 0.5 - 4 * sc, lineH);
    }
}

void VersionsView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (!m_model) return;
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.title, Qt::AlignLeft | Qt::AlignVCenter, m_model->title,
                   m_theme.font(11, true));
    if (!m_model->error.isEmpty()) {
        p.setPen(m_theme.bad);
        drawFittedText(p, QRectF(rect()).adjusted(20, 50, -20, -20), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                       m_model->error, m_theme.font(10));
        return;
    }
    drawArithmetic(p);
    drawWarps(p);
    drawGrid(p);
}

void VersionsView::drawArithmetic(QPainter& p) const {
    const VersionsModel& m = *m_model;
    drawPanel(p, m_layout.arithmetic, m_theme, m_theme.accent, tr("1 · Less arithmetic outside the matmuls"),
              m.stepTile ? tr("this step's tile: rows %1–%2 × keys %3–%4, and the whole pass")
                               .arg(m.report.tile.rows.begin).arg(m.report.tile.rows.end - 1)
                               .arg(m.report.tile.cols.begin).arg(m.report.tile.cols.end - 1)
                         : tr("the first tile (this step has none), and the whole pass"));
    const QFont body = m_theme.font(kSmallPt);
    const QFont bold = m_theme.font(kSmallPt, true);
    const qreal h = m_layout.rowHeight;
    const QRectF t = m_layout.table;
    auto cell = [&](int col, int row) {
        qreal x = t.left();
        for (int i = 0; i < col; ++i) x += m_layout.columns[std::size_t(i)];
        return QRectF(x, t.top() + row * h, m_layout.columns[std::size_t(col)] - 4, h);
    };
    const int right = Qt::AlignRight | Qt::AlignVCenter;
    p.setPen(m_theme.muted);
    drawFittedText(p, cell(1, 0).united(cell(2, 0)), Qt::AlignCenter, tr("one tile"), body);
    drawFittedText(p, cell(3, 0).united(cell(4, 0)), Qt::AlignCenter, tr("whole pass"), body);
    for (int c : {1, 3}) drawFittedText(p, cell(c, 1), right, tr("FA-1"), bold);
    for (int c : {2, 4}) drawFittedText(p, cell(c, 1), right, tr("FA-2"), bold);
    const NonMatmulFlops* values[4] = {&m.report.tileOne, &m.report.tileTwo, &m.report.one, &m.report.two};
    for (std::size_t r = 0; r < kRows.size(); ++r) {
        const bool total = kRows[r].field == nullptr;
        p.setPen(total ? m_theme.text : m_theme.muted);
        drawFittedText(p, cell(0, int(r) + 2), Qt::AlignLeft | Qt::AlignVCenter, tr(kRows[r].label), total ? bold : body);
        p.setPen(m_theme.text);
        for (int c = 0; c < 4; ++c)
            drawFittedText(p, cell(c + 1, int(r) + 2), right, formatOperations(valueOf(*values[c], kRows[r])),
                           total ? bold : body);
    }
    const int matmulRow = int(kRows.size()) + 2;
    p.setPen(m_theme.muted);
    drawFittedText(p, cell(0, matmulRow), Qt::AlignLeft | Qt::AlignVCenter, tr("matmul FLOPs (both)"), body);
    p.setPen(m_theme.text);
    drawFittedText(p, cell(1, matmulRow).united(cell(2, matmulRow)), right, formatOperations(m.report.tileMatmul), body);
    drawFittedText(p, cell(3, matmulRow).united(cell(4, matmulRow)), right, formatOperations(m.report.matmulFlops), body);

    // The whole pass's time at the GPU's peak rates: matmuls on tensor cores, the rest on the
    // CUDA cores, both versions to one scale.
    const ArithmeticTime times[2] = {m.report.timeOne, m.report.timeTwo};
    const double longest = std::max(times[0].matmulSeconds + times[0].nonMatmulSeconds,
                                    times[1].matmulSeconds + times[1].nonMatmulSeconds);
    for (int i = 0; i < 2; ++i) {
        const QRectF bar = m_layout.timeBars[std::size_t(i)];
        const ArithmeticTime& at = times[i];
        const qreal w = longest > 0 ? bar.width() / longest : 0;
        const QRectF mm(bar.left(), bar.top(), at.matmulSeconds * w, bar.height());
        const QRectF other(mm.right(), bar.top(), at.nonMatmulSeconds * w, bar.height());
        p.fillRect(mm, withAlpha(m_theme.accent, 150));
        p.fillRect(other, m_theme.bad);
        p.setPen(m_theme.text);
        drawFittedText(p, m_layout.timeNames[std::size_t(i)], Qt::AlignLeft | Qt::AlignVCenter,
                       i == 0 ? tr("FA-1 time") : tr("FA-2 time"), m_theme.font(kSmallPt, true));
        drawFittedText(p, m_layout.timeLabels[std::size_t(i)], Qt::AlignLeft | Qt::AlignVCenter,
                       tr("matmuls %1 + rest %2").arg(formatSeconds(at.matmulSeconds),
                                                     formatSeconds(at.nonMatmulSeconds)),
                       m_theme.font(kSmallPt));
    }
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.arithmeticFinding, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   m.arithmeticFinding, m_theme.font(kSmallPt));
    p.setPen(!m.checkRan ? m_theme.muted : m.checkPassed ? m_theme.good : m_theme.bad);
    drawFittedText(p, m_layout.check, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, m.checkLine,
                   m_theme.font(kSmallPt, true));
}

void VersionsView::drawWarps(QPainter& p) const {
    const VersionsModel& m = *m_model;
    drawPanel(p, m_layout.warps, m_theme, m_theme.sram,
              (m.report.warps == 1 ? tr("2 · One tile in one warp")
                                   : tr("2 · One tile across %1 warps of a thread block").arg(m.report.warps)),
              tr("%1 × %2 scores, d = %3; %4 operands, fp32 partial results")
                  .arg(m.report.tile.rows.size())
                  .arg(m.report.tile.cols.size())
                  .arg(m.request.headDim)
                  .arg(operandsName(m.request.kernel)));
    drawSplit(p, m.report.splitOne, m_layout.splits[0]);
    drawSplit(p, m.report.splitTwo, m_layout.splits[1]);
    // The warps' colours.
    const QFont small = m_theme.font(kSmallPt);
    const QFontMetricsF fm(small);
    qreal x = m_layout.legend.left();
    const int shown = std::min(m.report.warps, 8);
    for (int w = 0; w < shown; ++w) {
        const QString label = tr("warp %1").arg(w);
        const qreal sw = m_layout.legend.height() * 0.7;
        p.fillRect(QRectF(x, m_layout.legend.center().y() - sw / 2, sw, sw), warpColour(w));
        p.setPen(m_theme.text);
        p.setFont(small);
        p.drawText(QRectF(x + sw + 3, m_layout.legend.top(), fm.horizontalAdvance(label) + 2,
                          m_layout.legend.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, label);
        x += sw + fm.horizontalAdvance(label) + 12;
        if (x > m_layout.legend.right() - 60) break;
    }
    if (m.report.warps > shown) {
        p.setPen(m_theme.muted);
        p.drawText(QRectF(x, m_layout.legend.top(), m_layout.legend.right() - x, m_layout.legend.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, tr("(colours repeat)"));
    }
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.warpFinding, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   m.warpFinding, m_theme.font(kSmallPt));
}

// One version's split: S coloured by the warp that computes each score; split-Q's accumulator
// banded by owner, split-K's as one partial accumulator per warp, summed through shared memory.
void VersionsView::drawSplit(QPainter& p, const WarpSplit& split, const SplitLayout& s) const {
    const bool byKeys = split.version == FlashVersion::One;
    const QFont small = m_theme.font(kSmallPt);
    p.setPen(m_theme.text);
    drawFittedText(p, s.heading, Qt::AlignLeft | Qt::AlignVCenter,
                   byKeys ? tr("FlashAttention-1: split by keys (split-K)")
                          : tr("FlashAttention-2: split by query rows"),
                   m_theme.font(kBodyPt, true));
    p.setPen(m_theme.muted);
    drawFittedText(p, s.tileLabel, Qt::AlignLeft | Qt::AlignVCenter, tr("S, P: who computes"), small);
    drawFittedText(p, s.accLabel, Qt::AlignRight | Qt::AlignVCenter,
                   byKeys ? tr("O: %1 partials").arg(split.warps) : tr("O: rows owned"), small);
    const int rows = m_model->report.tile.rows.size(), keys = m_model->report.tile.cols.size();
    const QRectF& t = s.tile;
    for (int w = 0; w < split.warps; ++w) {
        const WarpShare& share = split.shares[std::size_t(w)];
        const QRectF band = byKeys ? colBand(t, keys, share.keys) : rowBand(t, rows, share.rows);
        if (band.width() > 0 && band.height() > 0) p.fillRect(band, withAlpha(warpColour(w), 200));
        if (!byKeys) {
            const QRectF acc = rowBand(s.accumulator, rows, share.rows);
            if (acc.height() > 0) p.fillRect(acc, withAlpha(warpColour(w), 200));
        }
    }
    if (byKeys) {
        // One partial accumulator per warp, fanned like cards: each holds every row.
        const int shown = std::min(split.warps, 8);
        const qreal step = std::min<qreal>(6 * m_theme.scale, s.accumulator.width() / 4 / std::max(1, shown));
        for (int w = shown - 1; w >= 0; --w) {
            const QRectF card = s.accumulator.adjusted(0, 0, -(shown - 1) * step, -(shown - 1) * step)
                                    .translated(w * step, w * step);
            p.fillRect(card, withAlpha(warpColour(w), 200));
            p.setPen(QPen(m_theme.panel, 1));
            p.drawRect(card);
        }
    }
    // Grid lines where cells are large enough to see.
    const qreal cell = rows > 0 ? t.height() / rows : 0;
    p.setPen(QPen(withAlpha(m_theme.text, 60), 0.5));
    if (cell >= 6) {
        for (int r = 1; r < rows; ++r) p.drawLine(QPointF(t.left(), t.top() + r * cell), QPointF(t.right(), t.top() + r * cell));
        for (int k = 1; k < keys; ++k) p.drawLine(QPointF(t.left() + k * cell, t.top()), QPointF(t.left() + k * cell, t.bottom()));
    }
    p.setPen(QPen(m_theme.border, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(t);
    if (!byKeys) p.drawRect(s.accumulator);

    const QStringList lines =
        split.exchangeBarriers == 0
            ? QStringList{tr("no exchange: max, sum stay in the warp"), tr("0 barriers for the softmax"),
                          tr("Q, K, V from shared memory: %1").arg(formatBytes(double(split.operandReadBytes)))}
            : QStringList{tr("exchange: %1 written, %2 read")
                              .arg(formatBytes(double(split.exchangeWriteBytes)),
                                   formatBytes(double(split.exchangeReadBytes))),
                          tr("%1 barriers per tile").arg(split.exchangeBarriers),
                          tr("Q, K, V from shared memory: %1").arg(formatBytes(double(split.operandReadBytes)))};
    for (int l = 0; l < lines.size() && l < int(s.lines.size()); ++l) {
        p.setPen(l == 0 ? (split.exchangeBarriers ? m_theme.bad : m_theme.good) : m_theme.text);
        drawFittedText(p, s.lines[std::size_t(l)], Qt::AlignLeft | Qt::AlignVCenter, lines[l], small);
    }
}

// The SMs as squares in rows, each filled by its share of the blocks it can hold.
void VersionsView::drawSms(QPainter& p, const std::vector<int>& perSm, int blocksPerSm,
                           const QRectF& area, const QColor& colour) const {
    const int n = int(perSm.size());
    if (n == 0 || area.width() <= 0 || area.height() <= 0) return;
    // The most columns whose squares still fit all rows.
    int columns = n;
    qreal side = 0;
    for (int rows = 1; rows <= n; ++rows) {
        const int cols = (n + rows - 1) / rows;
        const qreal s = std::min(area.width() / cols, area.height() / rows);
        if (s > side) {
            side = s;
            columns = cols;
        }
    }
    const qreal pad = std::max<qreal>(0.5, side * 0.12);
    // An SM's block slots stacked in its square, filled from the bottom by the blocks it runs.
    const int slotCount = std::max(1, blocksPerSm);
    const qreal slotGap = side >= 12 && slotCount > 1 ? 1 : 0;
    for (int i = 0; i < n; ++i) {
        const QRectF box(area.left() + (i % columns) * side, area.top() + (i / columns) * side,
                         side - pad, side - pad);
        const qreal slotH = (box.height() - slotGap * (slotCount - 1)) / slotCount;
        for (int k = 0; k < slotCount; ++k) {
            const QRectF slot(box.left(), box.bottom() - (k + 1) * slotH - k * slotGap, box.width(), slotH);
            p.fillRect(slot, k < perSm[std::size_t(i)] ? colour : withAlpha(m_theme.muted, 40));
        }
    }
}

void VersionsView::drawGrid(QPainter& p) const {
    const VersionsModel& m = *m_model;
    const GridPicture* grids[2] = {&m.report.gridOne, &m.report.gridTwo};
    const HardwareProfile& hw = frame()->scene->hardware;
    const QRectF content = drawPanel(
        p, m_layout.grid, m_theme, m_theme.hbm,
        tr("3 · The grid on the %1's %2 SMs").arg(QString::fromStdString(hw.name)).arg(int(hw.smCount.value)),
        tr("batch %1 × %2 heads of n = %3; each square an SM, its slots filled by the blocks it "
           "runs in the first wave")
            .arg(m.request.batch)
            .arg(m.request.heads)
            .arg(m.request.queries));
    const QFont small = m_theme.font(kSmallPt);
    if (!m.report.gridError.empty()) {
        p.setPen(m_theme.bad);
        drawFittedText(p, content, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                       m.kernelLine + QStringLiteral(". ") + m.gridFinding, m_theme.font(kBodyPt));
        return;
    }
    const std::vector<int>* waves[2] = {&m.firstWaveOne, &m.firstWaveTwo};
    const QColor colours[2] = {m_theme.bad, m_theme.good};
    for (int i = 0; i < 2; ++i) {
        const GridRowLayout& r = m_layout.gridRows[std::size_t(i)];
        const GridPicture& g = *grids[i];
        p.setPen(m_theme.text);
        drawFittedText(p, r.label, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
                       i == 0 ? tr("FlashAttention-1\none block per head") : tr("FlashAttention-2\none per query block"),
                       m_theme.font(kBodyPt, true));
        drawSms(p, *waves[i], g.occupancy.blocksPerSm, r.sms, colours[i]);
        const auto n = [](std::uint64_t v, const QString& one, const QString& many) {
            return formatCount(v) + QLatin1Char(' ') + (v == 1 ? one : many);
        };
        const QString text =
            tr("%1 × %2 each\n%3 of %4 SMs busy · %5, the last with %6 of %7")
                .arg(n(g.blocks, tr("block"), tr("blocks")))
                .arg(n(std::uint64_t(g.queryBlocksPerThreadBlock), tr("query block"), tr("query blocks")))
                .arg(g.busySms)
                .arg(g.sms)
                .arg(n(g.waves, tr("wave"), tr("waves")))
                .arg(formatCount(g.tailBlocks))
                .arg(formatCount(g.residentBlocks));
        drawFittedText(p, r.text, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, text, small);
    }
    // Time, in units of one query block's work on one slot (waves x query blocks per block), both
    // bars to one scale.
    const double longest = double(std::max(grids[0]->timeUnits(), grids[1]->timeUnits()));
    for (int i = 0; i < 2; ++i) {
        const GridRowLayout& r = m_layout.gridRows[std::size_t(i)];
        const std::uint64_t units = grids[i]->timeUnits();
        p.fillRect(QRectF(r.timeBar.left(), r.timeBar.top(),
                          longest > 0 ? std::max(2.0, r.timeBar.width() * double(units) / longest) : 0,
                          r.timeBar.height()),
                   colours[i]);
        p.setPen(m_theme.text);
        drawFittedText(p, r.timeLabel, Qt::AlignLeft | Qt::AlignVCenter,
                       units == 1 ? tr("time: 1 unit") : tr("time: %1 units").arg(formatCount(units)),
                       m_theme.font(kSmallPt, true));
    }
    p.setPen(m_theme.muted);
    drawFittedText(p, m_layout.kernelLine, Qt::AlignLeft | Qt::AlignVCenter, m.kernelLine, small);
    p.setPen(m_theme.text);
    drawFittedText(p, m_layout.gridFinding, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m.gridFinding, small);
}

QString VersionsView::toolTipAt(const QPointF& pos) const {
    if (!m_model || !m_model->error.isEmpty()) return {};
    if (m_layout.table.contains(pos) || m_layout.timeBars[0].united(m_layout.timeBars[1]).contains(pos))
        return tr("Each element operation outside S = QKᵀ and PV counts one. FlashAttention-1 "
                  "rescales O by diag(ℓ_new)⁻¹ diag(ℓ_old) e^(m_old − m_new) at every key block; "
                  "-2 rescales the unnormalised accumulator by e^(m_old − m_new) and divides by ℓ "
                  "once. Times at the GPU's peak rates: matmuls on the tensor cores, the rest on "
                  "the CUDA cores (an exp is slower still).");
    for (const SplitLayout& s : m_layout.splits)
        if (s.tile.united(s.accumulator).contains(pos))
            return tr("Colour: the warp that computes that part. Split by keys, each warp's "
                      "partial row maxima, sums and output must be combined through shared memory; "
                      "split by rows, a warp owns whole rows.");
    for (const GridRowLayout& r : m_layout.gridRows)
        if (r.sms.contains(pos))
            return tr("%1 blocks of this kernel fit on one SM (limited by %2); a square is full when "
                      "the first wave gives its SM that many.")
                .arg(m_model->report.gridTwo.occupancy.blocksPerSm)
                .arg(QString::fromStdString(m_model->report.gridTwo.occupancy.limitedBy));
    return {};
}

} // namespace flashviz::gui
