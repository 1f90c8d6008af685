#include "views/matrices_view.h"

#include "style/format.h"
#include "style/heatmap.h"
#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

// Writes the values of a small matrix into its cells when they are large enough to read.
void drawValues(QPainter& p, const Theme& th, const QRectF& r, const Matrix& m, Colouring colouring,
                double scaleMax, const std::vector<Range>& rowsShown) {
    if (m.size() == 0) return;
    const qreal cw = r.width() / qreal(m.cols()), ch = r.height() / qreal(m.rows());
    if (cw < 34 * th.scale || ch < 15 * th.scale) return;
    p.setFont(
        th.mono(std::clamp(std::min(cw / (4.8 * th.scale), ch / (1.9 * th.scale)), 5.5, 8.5)));
    for (const Range& rows : rowsShown)
        for (int i = rows.begin; i < rows.end; ++i)
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

void MatricesView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    if (!m_frame) return;
    const qreal sc = m_theme.scale;
    const Scene& scene = *m_frame->scene;
    const StepState& st = m_frame->state;
    const StepInfo& info = st.info;
    const auto& spec = scene.settings.spec;
    const int nq = spec.queries, nk = spec.keys, d = spec.headDim;
    const Problem& problem = scene.engine->problem();
    const bool flash = scene.isFlash();
    const bool debugCopy = flash && scene.settings.options.keepFullScores;

    const QRectF area = QRectF(rect()).adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const QFont titleFont = m_theme.font(9.5, true);
    const qreal titleH = QFontMetricsF(titleFont).height() + 4;
    const QFont noteFont = m_theme.font(8);
    const qreal noteH = 2 * QFontMetricsF(noteFont).height() + 4;
    const QRectF mats(area.left() + 14 * sc, area.top() + titleH, area.width() - 14 * sc,
                      area.height() - titleH - noteH);

    struct Entry {
        QString title;
        QColor colour;
        int rows, cols;
    };
    std::vector<Entry> entries = {
        {QStringLiteral("Q"), m_theme.q, nq, d},
        {QStringLiteral("K"), m_theme.k, nk, d},
        {QStringLiteral("V"), m_theme.v, nk, d},
        {QStringLiteral("O"), m_theme.o, nq, d},
        {flash ? (debugCopy ? tr("S (debug copy in HBM)") : tr("S = scale·QKᵀ")) : tr("S in HBM"),
         m_theme.s, nq, nk}};
    if (!flash) entries.push_back({tr("P in HBM"), m_theme.p, nq, nk});
    std::vector<QSize> shapes;
    for (const auto& e : entries)
        shapes.emplace_back(e.cols, e.rows);
    const std::vector<QRectF> rects = layoutSideBySide(shapes, mats, 16 * sc, 30 * sc);

    const int writeScores = scene.writeScoresStep;
    const int writeWeights = scene.writeWeightsStep;
    const std::vector<Range> allRowsQ{{0, nq}}, allRowsK{{0, nk}};
    const std::vector<Range> oRows = finishedRowRuns(scene, info.index);
    const QPen active(m_theme.accent, 3 * sc);

    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        const QRectF r = rects[i];
        p.setPen(e.colour);
        {
            // Narrow matrices keep only their name on top; the shape goes underneath the panel
            // note.
            const QString full = QStringLiteral("%1  %2×%3").arg(e.title).arg(e.rows).arg(e.cols);
            const qreal room =
                (i + 1 < rects.size() ? rects[i + 1].left() : area.right()) - r.left() - 4;
            const bool fits = QFontMetricsF(titleFont).horizontalAdvance(full) <= room;
            drawFittedText(p, QRectF(r.left(), area.top(), std::max(room, 10.0), titleH),
                           Qt::AlignLeft | Qt::AlignVCenter, fits ? full : e.title, titleFont);
        }
        p.fillRect(r, m_theme.background);
        switch (i) {
        case 0:
            drawMatrixImage(p, r, scene.qImage);
            drawValues(p, m_theme, r, problem.q, Colouring::Diverging, scene.qScale,
                       allRowsQ);
            break;
        case 1:
            drawMatrixImage(p, r, scene.kImage);
            drawValues(p, m_theme, r, problem.k, Colouring::Diverging, scene.kScale,
                       allRowsK);
            break;
        case 2:
            drawMatrixImage(p, r, scene.vImage);
            drawValues(p, m_theme, r, problem.v, Colouring::Diverging, scene.vScale,
                       allRowsK);
            break;
        case 3: {
            const QImage& img = scene.outputImage;
            const qreal iy = qreal(img.height()) / nq;
            for (const Range& rows : oRows)
                drawMatrixImage(p, rowBand(r, nq, rows), img,
                                QRectF(0, iy * rows.begin, img.width(), iy * rows.size()));
            drawValues(p, m_theme, r, scene.output, Colouring::Diverging, scene.outputScale,
                       oRows);
            // Rows the check found wrong.
            p.setPen(Qt::NoPen);
            p.setBrush(m_theme.bad);
            const qreal rowH = r.height() / nq;
            if (rowH >= 6) {
                for (int row : scene.check.wrongRows) {
                    const qreal y = r.top() + rowH * (row + 0.5);
                    const qreal s = std::clamp(rowH * 0.45, 3.0, 7 * sc);
                    QPolygonF tri;
                    tri << QPointF(r.left() - 3, y) << QPointF(r.left() - 3 - 2 * s, y - s)
                        << QPointF(r.left() - 3 - 2 * s, y + s);
                    p.drawPolygon(tri);
                }
            } else {
                // Too many rows for a mark each: one red strip per run of wrong rows.
                for (int row = 0; row < nq;) {
                    if (!scene.isRowWrong(row)) {
                        ++row;
                        continue;
                    }
                    const int start = row;
                    while (row < nq && scene.isRowWrong(row))
                        ++row;
                    p.drawRect(QRectF(r.left() - 9 * sc, r.top() + rowH * start, 6 * sc,
                                      std::max(1.0, rowH * (row - start))));
                }
            }
            break;
        }
        case 4: {
            if (flash && !debugCopy) {
                p.fillRect(r, m_theme.panel);
                p.setPen(QPen(m_theme.muted, 1.2 * sc, Qt::DashLine));
                p.setBrush(Qt::NoBrush);
                p.drawRect(r);
                if (st.scores.size() > 0) {
                    const QRectF tile(r.left() + r.width() * info.cols.begin / nk,
                                      r.top() + r.height() * info.rows.begin / nq,
                                      r.width() * info.cols.size() / nk,
                                      r.height() * info.rows.size() / nq);
                    const double smax = std::max(finiteAbsMax(st.scores), 1e-300);
                    drawMatrixImage(p, tile,
                                    heatmapImage(st.scores, Colouring::Diverging, smax, 512));
                    drawValues(p, m_theme, tile, st.scores, Colouring::Diverging, smax,
                               {{0, int(st.scores.rows())}});
                    p.setPen(active);
                    p.drawRect(tile);
                }
                p.setPen(m_theme.muted);
                drawFittedText(p, r.adjusted(6, 6, -6, -6),
                               Qt::AlignHCenter | Qt::AlignBottom | Qt::TextWordWrap,
                               tr("never stored"), m_theme.font(9.5, true));
                break;
            }
            if (debugCopy) {
                const QImage& img = scene.scoresImage;
                const qreal ix = qreal(img.width()) / nk, iy = qreal(img.height()) / nq;
                for (const QRect& e2 : storedScoreRegions(scene, info))
                    drawMatrixImage(
                        p,
                        QRectF(r.left() + r.width() * e2.left() / nk,
                               r.top() + r.height() * e2.top() / nq, r.width() * e2.width() / nk,
                               r.height() * e2.height() / nq),
                        img,
                        QRectF(ix * e2.left(), iy * e2.top(), ix * e2.width(), iy * e2.height()));
            } else if (writeScores >= 0 && info.index >= writeScores) {
                drawMatrixImage(p, r, scene.scoresImage);
                drawValues(p, m_theme, r, scene.smallScores, Colouring::Diverging,
                           finiteAbsMax(scene.smallScores),
                           scene.smallScores.size() ? allRowsQ : std::vector<Range>{});
            }
            break;
        }
        case 5:
            if (writeWeights >= 0 && info.index >= writeWeights) {
                drawMatrixImage(p, r, scene.weightsImage);
                drawValues(p, m_theme, r, scene.smallWeights, Colouring::Sequential,
                           finiteAbsMax(scene.smallWeights),
                           scene.smallWeights.size() ? allRowsQ : std::vector<Range>{});
            }
            break;
        default:
            break;
        }
        if (!(flash && !debugCopy && i == 4)) {
            p.setPen(QPen(e.colour, 1.5 * sc));
            p.setBrush(Qt::NoBrush);
            p.drawRect(r);
        }
    }

    // Active tiles.
    p.setPen(active);
    p.setBrush(Qt::NoBrush);
    if (flash) {
        if (info.queryBlock >= 0) {
            p.drawRect(rowBand(rects[0], nq, info.rows));
            p.drawRect(rowBand(rects[3], nq, info.rows));
        }
        if (info.keyBlock >= 0) {
            p.drawRect(rowBand(rects[1], nk, info.cols));
            p.drawRect(rowBand(rects[2], nk, info.cols));
        }
    }

    // Notes.
    QString note;
    if (flash && !debugCopy)
        note = tr("S is never written to HBM: only the current %1 × %2 tile exists, on chip, and "
                  "is gone after the "
                  "next. O rows appear as each query block is finished.")
                   .arg(scene.settings.options.blockRows)
                   .arg(scene.settings.options.blockCols);
    else if (debugCopy)
        note = tr("Debug copy: every score tile is also written to an n × n S in HBM — %1 of extra "
                  "memory and "
                  "traffic, for nothing the output needs.")
                   .arg(formatBytes(double(nq) * nk * double(kBytesPerElement)));
    else
        note = tr("Standard attention stores S and P: 2 × %1 in HBM, each written once and read "
                  "back once.")
                   .arg(formatBytes(double(nq) * nk * double(kBytesPerElement)));
    if (!scene.check.wrongRows.empty()) note += tr("  Red marks: rows of O the check finds wrong.");
    note = tr("Q, O: %1×%2; K, V: %3×%2.  ").arg(nq).arg(d).arg(nk) + note;
    p.setPen(m_theme.muted);
    drawFittedText(p, QRectF(area.left(), area.bottom() - noteH, area.width(), noteH),
                   Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, note, noteFont);
}

} // namespace flashviz::gui
