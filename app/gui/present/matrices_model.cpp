#include "present/matrices_model.h"

#include "style/format.h"
#include "style/paint_util.h"

#include <QCoreApplication>
#include <QFontMetricsF>

#include <algorithm>

namespace flashviz::gui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("flashviz::gui::MatricesView", text);
}

MatrixPanel matrixPanel(const Scene& scene, const StepInfo& info, MatrixId id, QString title,
                        const Matrix* values, Colouring colouring, double valueScale) {
    MatrixPanel panel{hbmMatrix(scene, info, id),
                      std::move(title),
                      {},
                      hbmImage(scene, id),
                      values,
                      colouring,
                      valueScale};
    panel.titleWithShape =
        QStringLiteral("%1  %2×%3").arg(panel.title).arg(panel.hbm.rows).arg(panel.hbm.cols);
    return panel;
}

std::vector<MatrixPanel> matrixPanels(const Scene& scene, const StepInfo& info) {
    const Problem& problem = scene.engine->problem();
    const Colouring div = Colouring::Diverging;
    std::vector<MatrixPanel> out = {
        matrixPanel(scene, info, MatrixId::Q, QStringLiteral("Q"), &problem.q, div, scene.qScale),
        matrixPanel(scene, info, MatrixId::K, QStringLiteral("K"), &problem.k, div, scene.kScale),
        matrixPanel(scene, info, MatrixId::V, QStringLiteral("V"), &problem.v, div, scene.vScale),
        matrixPanel(scene, info, MatrixId::O, QStringLiteral("O"), &scene.output, div,
                    scene.outputScale),
    };
    if (scene.isFlash()) {
        const bool debugCopy = scene.settings.options.keepFullScores;
        out.push_back(matrixPanel(scene, info, MatrixId::S,
                                  debugCopy ? tr("S (debug copy in HBM)") : tr("S = scale·QKᵀ"),
                                  nullptr, div, 0));
        return out;
    }
    out.push_back(matrixPanel(scene, info, MatrixId::S, tr("S in HBM"), &scene.smallScores, div,
                              finiteAbsMax(scene.smallScores)));
    out.push_back(matrixPanel(scene, info, MatrixId::P, tr("P in HBM"), &scene.smallWeights,
                              Colouring::Sequential, finiteAbsMax(scene.smallWeights)));
    return out;
}

std::optional<ScoreTile> scoreTile(const Scene& scene, const StepState& st) {
    if (!scene.isFlash() || scene.settings.options.keepFullScores || st.scores.size() == 0)
        return std::nullopt;
    const StepInfo& info = st.info;
    ScoreTile tile;
    tile.part = QRect(info.cols.begin, info.rows.begin, info.cols.size(), info.rows.size());
    tile.values = st.scores;
    tile.scale = std::max(finiteAbsMax(st.scores), 1e-300);
    tile.image = heatmapImage(st.scores, Colouring::Diverging, tile.scale, 512);
    return tile;
}

std::vector<Highlight> highlights(const Scene& scene, const StepInfo& info) {
    std::vector<Highlight> out;
    if (!scene.isFlash()) return out;
    const int d = scene.settings.spec.headDim;
    if (info.queryBlock >= 0) {
        out.push_back({MatrixId::Q, QRect(0, info.rows.begin, d, info.rows.size())});
        out.push_back({MatrixId::O, QRect(0, info.rows.begin, d, info.rows.size())});
    }
    if (info.keyBlock >= 0) {
        out.push_back({MatrixId::K, QRect(0, info.cols.begin, d, info.cols.size())});
        out.push_back({MatrixId::V, QRect(0, info.cols.begin, d, info.cols.size())});
    }
    return out;
}

std::vector<Range> wrongRowRuns(const Scene& scene) {
    std::vector<Range> runs;
    const int rows = scene.settings.spec.queries;
    for (int row = 0; row < rows;) {
        if (!scene.isRowWrong(row)) {
            ++row;
            continue;
        }
        const int start = row;
        while (row < rows && scene.isRowWrong(row))
            ++row;
        runs.push_back({start, row});
    }
    return runs;
}

QString note(const Scene& scene) {
    const ProblemSpec& spec = scene.settings.spec;
    const double scoreBytes = double(spec.queries) * spec.keys * double(kBytesPerElement);
    QString note;
    if (!scene.isFlash())
        note = tr("Standard attention stores S and P: 2 × %1 in HBM, each written once and read "
                  "back once.")
                   .arg(formatBytes(scoreBytes));
    else if (scene.settings.options.keepFullScores)
        note = tr("Debug copy: every score tile is also written to an n × n S in HBM — %1 of extra "
                  "memory and "
                  "traffic, for nothing the output needs.")
                   .arg(formatBytes(scoreBytes));
    else
        note = tr("S is never written to HBM: only the current %1 × %2 tile exists, on chip, and "
                  "is gone after the "
                  "next. O rows appear as each query block is finished.")
                   .arg(scene.settings.options.blockRows)
                   .arg(scene.settings.options.blockCols);
    if (!scene.check.wrongRows.empty()) note += tr("  Red marks: rows of O the check finds wrong.");
    return tr("Q, O: %1×%2; K, V: %3×%2.  ").arg(spec.queries).arg(spec.headDim).arg(spec.keys) +
           note;
}

void layOutWrongRows(MatricesLayout& l, const MatricesModel& model, const QRectF& r, int rows,
                     qreal sc) {
    const qreal rowH = r.height() / rows;
    if (rowH >= 6) {
        for (int row : model.wrongRows) {
            const qreal y = r.top() + rowH * (row + 0.5);
            const qreal s = std::clamp(rowH * 0.45, 3.0, 7 * sc);
            QPolygonF mark;
            mark << QPointF(r.left() - 3, y) << QPointF(r.left() - 3 - 2 * s, y - s)
                 << QPointF(r.left() - 3 - 2 * s, y + s);
            l.wrongRowMarks.push_back(mark);
        }
        return;
    }
    for (const Range& run : model.wrongRowRuns)
        l.wrongRowStrips.emplace_back(r.left() - 9 * sc, r.top() + rowH * run.begin, 6 * sc,
                                      std::max(1.0, rowH * run.size()));
}

} // namespace

const MatrixPanel* MatricesModel::panel(MatrixId id) const {
    for (const MatrixPanel& p : panels)
        if (p.hbm.id == id) return &p;
    return nullptr;
}

MatricesModel makeMatricesModel(const Frame& frame) {
    const Scene& scene = *frame.scene;
    MatricesModel m;
    m.panels = matrixPanels(scene, frame.state.info);
    m.scoreTile = scoreTile(scene, frame.state);
    m.highlights = highlights(scene, frame.state.info);
    m.wrongRows = scene.check.wrongRows;
    m.wrongRowRuns = wrongRowRuns(scene);
    m.note = note(scene);
    return m;
}

MatricesLayout layOutMatrices(const MatricesModel& model, const QRectF& bounds,
                              const Theme& theme) {
    const qreal sc = theme.scale;
    const QRectF area = bounds.adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const QFontMetricsF titleMetrics(theme.font(9.5, true));
    const qreal titleH = titleMetrics.height() + 4;
    const qreal noteH = 2 * QFontMetricsF(theme.font(8)).height() + 4;
    const QRectF mats(area.left() + 14 * sc, area.top() + titleH, area.width() - 14 * sc,
                      area.height() - titleH - noteH);
    std::vector<QSize> shapes;
    for (const MatrixPanel& p : model.panels)
        shapes.emplace_back(p.hbm.cols, p.hbm.rows);
    const std::vector<QRectF> rects = layoutSideBySide(shapes, mats, 16 * sc, 30 * sc);
    MatricesLayout l;
    for (std::size_t i = 0; i < rects.size(); ++i) {
        const MatrixPanel& panel = model.panels[i];
        const QRectF& r = rects[i];
        // Narrow matrices keep only their name on top; the shape goes underneath the panel note.
        const qreal room =
            (i + 1 < rects.size() ? rects[i + 1].left() : area.right()) - r.left() - 4;
        l.panels.push_back(
            {r, QRectF(r.left(), area.top(), std::max(room, 10.0), titleH),
             titleMetrics.horizontalAdvance(panel.titleWithShape) <= room,
             placeParts(r, panel.image, panel.hbm.rows, panel.hbm.cols, panel.hbm.held)});
        if (panel.hbm.id == MatrixId::O) layOutWrongRows(l, model, r, panel.hbm.rows, sc);
        if (panel.hbm.id == MatrixId::S && model.scoreTile)
            l.scoreTile = elementRect(r, panel.hbm.rows, panel.hbm.cols, model.scoreTile->part);
    }
    for (const Highlight& h : model.highlights) {
        for (std::size_t i = 0; i < model.panels.size(); ++i)
            if (model.panels[i].hbm.id == h.matrix)
                l.highlights.push_back(elementRect(rects[i], model.panels[i].hbm.rows,
                                                   model.panels[i].hbm.cols, h.part));
    }
    l.note = QRectF(area.left(), area.bottom() - noteH, area.width(), noteH);
    return l;
}

} // namespace flashviz::gui
