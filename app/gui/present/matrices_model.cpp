#include "present/matrices_model.h"

#include "style/format.h"
#include "style/paint_util.h"

#include <QCoreApplication>
#include <QFontMetricsF>

#include <algorithm>
#include <cmath>

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
                      valueScale,
                      {}};
    panel.titleWithShape =
        QStringLiteral("%1  %2×%3").arg(panel.title).arg(panel.hbm.rows).arg(panel.hbm.cols);
    return panel;
}

// The full-width row parts of a rows × cols matrix that `held` leaves out.
std::vector<QRect> rowsNotHeld(const std::vector<QRect>& held, int rows, int cols) {
    std::vector<QRect> sorted = held;
    std::sort(sorted.begin(), sorted.end(),
              [](const QRect& a, const QRect& b) { return a.top() < b.top(); });
    std::vector<QRect> out;
    int at = 0;
    for (const QRect& part : sorted) {
        if (part.top() > at) out.emplace_back(0, at, cols, part.top() - at);
        at = std::max(at, part.top() + part.height());
    }
    if (at < rows) out.emplace_back(0, at, cols, rows - at);
    return out;
}

// Q, K, V and O, the panels both passes show first.
std::vector<MatrixPanel> inputAndOutputPanels(const Scene& scene, const StepInfo& info) {
    const Problem& problem = scene.engine->problem();
    const Colouring div = Colouring::Diverging;
    return {
        matrixPanel(scene, info, MatrixId::Q, QStringLiteral("Q"), &problem.q, div, scene.qScale),
        matrixPanel(scene, info, MatrixId::K, QStringLiteral("K"), &problem.k, div, scene.kScale),
        matrixPanel(scene, info, MatrixId::V, QStringLiteral("V"), &problem.v, div, scene.vScale),
        matrixPanel(scene, info, MatrixId::O, QStringLiteral("O"), &scene.output, div,
                    scene.outputScale),
    };
}

// The backward: its inputs, dO, and the gradients as the check compares them, faded where HBM
// does not hold them final yet (dQ's rows before their last key block, dK's and dV's before
// their key block is stored), so that the picture follows the animation.
std::vector<MatrixPanel> backwardPanels(const Scene& scene, const StepInfo& info) {
    const BackwardScene& bw = *scene.backward;
    const Colouring div = Colouring::Diverging;
    std::vector<MatrixPanel> out = inputAndOutputPanels(scene, info);
    out.push_back(
        matrixPanel(scene, info, MatrixId::dO, QStringLiteral("dO"), &bw.dO, div, bw.dOScale));
    out.push_back(matrixPanel(scene, info, MatrixId::dQ, QStringLiteral("dQ"), &bw.grads.dq, div,
                              bw.dqScale));
    out.push_back(matrixPanel(scene, info, MatrixId::dK, QStringLiteral("dK"), &bw.grads.dk, div,
                              bw.dkScale));
    out.push_back(matrixPanel(scene, info, MatrixId::dV, QStringLiteral("dV"), &bw.grads.dv, div,
                              bw.dvScale));
    for (MatrixPanel& panel : out) {
        const MatrixId id = panel.hbm.id;
        if (id != MatrixId::dQ && id != MatrixId::dK && id != MatrixId::dV) continue;
        panel.faded = rowsNotHeld(panel.hbm.held, panel.hbm.rows, panel.hbm.cols);
        panel.hbm.running.clear(); // faded, not hatched as on the stage
    }
    return out;
}

std::vector<MatrixPanel> matrixPanels(const Scene& scene, const StepInfo& info) {
    if (scene.isBackward()) return backwardPanels(scene, info);
    const Colouring div = Colouring::Diverging;
    std::vector<MatrixPanel> out = inputAndOutputPanels(scene, info);
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

// The backward's active tiles: the key block's rows of K, V, dK, dV; the query block's of Q,
// dO, dQ; the whole of what the pre-pass and dQ = 0 touch.
std::vector<Highlight> backwardHighlights(const Scene& scene, const StepInfo& info) {
    const ProblemSpec& spec = scene.settings.spec;
    const int d = spec.headDim;
    std::vector<Highlight> out;
    const auto rows = [&](MatrixId id, Range r) {
        out.push_back({id, QRect(0, r.begin, d, r.size())});
    };
    if (info.kind == StepKind::ComputeRowDots) {
        rows(MatrixId::O, {0, spec.queries});
        rows(MatrixId::dO, {0, spec.queries});
    }
    if (info.kind == StepKind::InitialiseQueryGradient) rows(MatrixId::dQ, {0, spec.queries});
    if (info.keyBlock >= 0)
        for (const MatrixId id : {MatrixId::K, MatrixId::V, MatrixId::dK, MatrixId::dV})
            rows(id, info.cols);
    if (info.queryBlock >= 0)
        for (const MatrixId id : {MatrixId::Q, MatrixId::dO, MatrixId::dQ})
            rows(id, info.rows);
    return out;
}

std::vector<Highlight> highlights(const Scene& scene, const StepInfo& info) {
    if (scene.isBackward()) return backwardHighlights(scene, info);
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

WrongRows wrongRowsOf(MatrixId beside, std::vector<int> rows) {
    std::sort(rows.begin(), rows.end());
    WrongRows out{beside, rows, {}};
    for (const int row : rows) {
        if (!out.runs.empty() && out.runs.back().end == row)
            ++out.runs.back().end;
        else
            out.runs.push_back({row, row + 1});
    }
    return out;
}

std::vector<WrongRows> wrongRows(const Scene& scene) {
    std::vector<WrongRows> out;
    const auto add = [&](MatrixId beside, const CheckReport& check) {
        if (!check.wrongRows.empty()) out.push_back(wrongRowsOf(beside, check.wrongRows));
    };
    add(MatrixId::O, scene.check);
    if (const auto& bw = scene.backward) {
        add(MatrixId::dQ, bw->check.dq);
        add(MatrixId::dK, bw->check.dk);
        add(MatrixId::dV, bw->check.dv);
    }
    return out;
}

QString backwardNote(const Scene& scene) {
    const ProblemSpec& spec = scene.settings.spec;
    const FlashOptions& options = scene.settings.options;
    const double weightBytes = double(spec.queries) * spec.keys * double(kBytesPerElement);
    QString note = tr("Q, O, dO, dQ: %1×%2; K, V, dK, dV: %3×%2.  ")
                       .arg(spec.queries)
                       .arg(spec.headDim)
                       .arg(spec.keys);
    // Short enough for two lines at 1280 × 800 (the tooltip-free view has no room for more).
    if (options.backward.storeWeights)
        note += tr("P read back as the forward stored it (%1); S never stored.")
                    .arg(formatBytes(weightBytes));
    else
        note += tr("S, P recomputed per %1 × %2 tile from L, never stored (stored P: %3).")
                    .arg(options.blockRows)
                    .arg(options.blockCols)
                    .arg(formatBytes(weightBytes));
    note += tr("  Faded: not final yet.");
    if (!wrongRows(scene).empty()) note += tr("  Red marks: rows the check finds wrong.");
    return note;
}

QString note(const Scene& scene) {
    if (scene.isBackward()) return backwardNote(scene);
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

void layOutWrongRows(MatricesLayout& l, const WrongRows& wrong, const QRectF& r, int rows,
                     qreal sc) {
    const qreal rowH = r.height() / rows;
    if (rowH >= 6) {
        for (int row : wrong.rows) {
            const qreal y = r.top() + rowH * (row + 0.5);
            const qreal s = std::clamp(rowH * 0.45, 3.0, 7 * sc);
            QPolygonF mark;
            mark << QPointF(r.left() - 3, y) << QPointF(r.left() - 3 - 2 * s, y - s)
                 << QPointF(r.left() - 3 - 2 * s, y + s);
            l.wrongRowMarks.push_back(mark);
        }
        return;
    }
    for (const Range& run : wrong.runs)
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
    m.wrongRows = wrongRows(scene);
    m.note = note(scene);
    return m;
}

MatricesLayout layOutMatrices(const MatricesModel& model, const QRectF& bounds,
                              const Theme& theme) {
    const qreal sc = theme.scale;
    const QRectF area = bounds.adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    const QFontMetricsF titleMetrics(theme.font(9.5, true));
    const qreal titleH = titleMetrics.height() + 4;
    // The note takes the lines it needs, two to three.
    const QFontMetricsF noteMetrics(theme.font(8));
    const qreal noteLines = std::clamp(
        std::ceil(
            noteMetrics.boundingRect(QRectF(0, 0, area.width(), 1e6), Qt::TextWordWrap, model.note)
                .height() /
            noteMetrics.height()),
        2.0, 3.0);
    const qreal noteH = noteLines * noteMetrics.height() + 4;
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
        for (const WrongRows& wrong : model.wrongRows)
            if (wrong.beside == panel.hbm.id) layOutWrongRows(l, wrong, r, panel.hbm.rows, sc);
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
