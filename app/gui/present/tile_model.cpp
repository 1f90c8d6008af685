#include "present/tile_model.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

bool differs(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) != std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a != b;
    return std::abs(a - b) > 1e-12 * std::max({1.0, std::abs(a), std::abs(b)});
}

bool rowDiffers(const Matrix& a, const Matrix& b, int row) {
    if (a.size() == 0 || b.size() == 0 || row >= a.rows() || row >= b.rows()) return false;
    for (Eigen::Index c = 0; c < a.cols(); ++c)
        if (differs(a(row, c), b(row, c))) return true;
    return false;
}

std::optional<double> entry(const Vector& v, int i) {
    if (v.size() == 0 || i >= v.size()) return std::nullopt;
    return v(i);
}

Vector rowOf(const Matrix& m, int row) {
    if (m.size() == 0 || row >= m.rows()) return {};
    return m.row(row).transpose();
}

// The vector after this tile's update where it has one, before it otherwise.
const Vector& latest(const Vector& after, const Vector& before) {
    return after.size() ? after : before;
}
const Matrix& latest(const Matrix& after, const Matrix& before) {
    return after.size() ? after : before;
}

QString headingOf(const Scene& scene, const StepInfo& info) {
    if (!scene.isFlash())
        return QObject::tr("Standard attention: whole n × n matrices, no running statistics");
    if (info.queryBlock < 0 && info.keyBlock < 0) // the paper order's first step
        return QObject::tr("All query rows %1–%2 · O, m and ℓ set up in HBM")
            .arg(info.rows.begin)
            .arg(info.rows.end - 1);
    if (info.queryBlock < 0)
        return QObject::tr("Key block %1 · keys %2–%3 on chip")
            .arg(info.keyBlock)
            .arg(info.cols.begin)
            .arg(info.cols.end - 1);
    if (info.keyBlock >= 0)
        return QObject::tr("Tile (%1, %2) · query rows %3–%4 × keys %5–%6")
            .arg(info.queryBlock)
            .arg(info.keyBlock)
            .arg(info.rows.begin)
            .arg(info.rows.end - 1)
            .arg(info.cols.begin)
            .arg(info.cols.end - 1);
    return QObject::tr("Query block %1 · rows %2–%3")
        .arg(info.queryBlock)
        .arg(info.rows.begin)
        .arg(info.rows.end - 1);
}

std::vector<int> rowMaxColumns(const Matrix& m) {
    std::vector<int> columns(std::size_t(m.rows()), -1);
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        double best = -INFINITY;
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            if (m(r, c) > best) {
                best = m(r, c);
                columns[std::size_t(r)] = int(c);
            }
    }
    return columns;
}

TileGrid valueGrid(const Matrix& values, int firstRow, int firstCol) {
    TileGrid grid;
    grid.values = values;
    grid.computed = values.size() > 0;
    grid.firstRow = firstRow;
    grid.firstCol = firstCol;
    return grid;
}

// FlashAttention's tile: S and P of this tile, on chip.
void flashGrids(TileModel& model, const Scene& scene, const StepState& st) {
    const StepInfo& info = st.info;
    const bool runningMax = scene.settings.options.runningMax;
    model.scores = valueGrid(st.scores, info.rows.begin, info.cols.begin);
    model.scores.title = QObject::tr("S = scale · Q_i K_jᵀ  (on chip only)");
    model.scores.emptyText = QObject::tr("the tile is computed at 'compute-scores'");
    model.weights = valueGrid(st.weights, info.rows.begin, info.cols.begin);
    model.weights.title = runningMax ? QObject::tr("P = exp(S − m_new)  (unnormalised)")
                                     : QObject::tr("P = exp(S)  (no max subtracted)");
    model.weights.emptyText = QObject::tr("P appears at 'compute-weights'");
    // With the running max, P = exp(S − m) lies in (0, 1]: one scale shows every tile alike.
    if (runningMax) model.weights.scaleMax = 1.0;
    if (st.scores.size() > 0)
        model.gridRows = int(st.scores.rows());
    else if (info.queryBlock >= 0)
        model.gridRows = info.rows.size();
}

// Standard attention: the whole S and P, as numbers when small, as the stored images otherwise.
void standardGrids(TileModel& model, const Scene& scene, StepKind kind) {
    const bool haveScores =
        int(kind) >= int(StepKind::WriteScores) || kind == StepKind::ComputeScores;
    const bool haveWeights = int(kind) >= int(StepKind::ComputeSoftmax);
    const bool small = scene.smallScores.size() > 0;
    if (small) {
        model.scores = valueGrid(haveScores ? scene.smallScores : Matrix(), 0, 0);
        model.scores.title = QObject::tr("S = scale · Q Kᵀ  (written to HBM)");
        model.weights = valueGrid(haveWeights ? scene.smallWeights : Matrix(), 0, 0);
        model.gridRows = int(scene.smallScores.rows());
    } else {
        model.scores.title = QObject::tr("S = scale · Q Kᵀ  (%1 × %2, written to HBM)")
                                 .arg(scene.settings.spec.queries)
                                 .arg(scene.settings.spec.keys);
        model.scores.computed = haveScores;
        model.scores.image = haveScores ? scene.scoresImage : QImage();
        model.weights.computed = haveWeights;
        model.weights.image = haveWeights ? scene.weightsImage : QImage();
    }
    model.scores.wholeMatrix = model.weights.wholeMatrix = !small;
    model.weights.title = QObject::tr("P = softmax(S)  (written to HBM)");
    model.scores.emptyText = model.weights.emptyText = QObject::tr("not computed yet");
}

void grids(TileModel& model, const Scene& scene, const StepState& st) {
    const StepKind kind = st.info.kind;
    if (scene.isFlash())
        flashGrids(model, scene, st);
    else
        standardGrids(model, scene, kind);
    model.scores.colouring = Colouring::Diverging;
    model.weights.colouring = Colouring::Sequential;
    model.scores.scaleMax = std::max(finiteAbsMax(model.scores.values), 1e-300);
    if (!(scene.isFlash() && scene.settings.options.runningMax))
        model.weights.scaleMax = std::max(finiteAbsMax(model.weights.values), 1e-300);
    model.scores.active = kind == StepKind::ComputeScores;
    model.weights.active = kind == StepKind::ComputeWeights || kind == StepKind::ComputeSoftmax;
    if (kind == StepKind::UpdateMax) model.scores.rowMaxColumn = rowMaxColumns(model.scores.values);
}

// A scalar of the running state: the latest, what it was before this tile's update, and the
// correct run's (`right`, its latest) where they differ.
TileValue runningValue(const Vector& before, const Vector& after, const Vector* right, int i) {
    TileValue v;
    const auto old = entry(before, i), now = entry(after, i);
    v.now = now ? now : old;
    if (old && now && differs(*old, *now)) v.before = old;
    const auto rightValue = right ? entry(*right, i) : std::nullopt;
    if (rightValue && v.now && differs(*rightValue, *v.now)) v.correct = rightValue;
    return v;
}

TileValue correctionValue(const StepState& st, const StepState* correct, int i,
                          CorrectionNote& note) {
    TileValue v;
    v.now = entry(st.correction, i);
    const auto right = correct ? entry(correct->correction, i) : std::nullopt;
    const auto mOld = entry(st.mOld, i);
    const bool firstBlock = mOld && std::isinf(*mOld) && *mOld < 0; // nothing summed yet
    const bool rescaled = v.now && *v.now < 1.0;
    const StepKind k = st.info.kind;
    v.changed =
        rescaled && !firstBlock && (k == StepKind::UpdateSum || k == StepKind::UpdateOutput);
    note = !v.now       ? CorrectionNote::None
           : firstBlock ? CorrectionNote::FirstBlock
           : rescaled   ? CorrectionNote::Rescaled
                        : CorrectionNote::Unchanged;
    if (v.now && right && differs(*v.now, *right)) {
        v.correct = right;
        note = CorrectionNote::Skipped;
    }
    return v;
}

TileRowValues accumulatorRow(const StepState& st, const StepState* correct, int i) {
    TileRowValues v;
    const Matrix& acc = latest(st.accNew, st.accOld);
    v.now = rowOf(acc, i);
    v.changed = st.info.kind == StepKind::UpdateOutput && rowDiffers(st.accNew, st.accOld, i);
    if (v.changed) v.before = rowOf(st.accOld, i);
    const Matrix* right = correct ? &latest(correct->accNew, correct->accOld) : nullptr;
    if (right && rowDiffers(*right, acc, i)) v.correct = rowOf(*right, i);
    return v;
}

TileRowValues outputRow(const StepState& st, const StepState* correct, int i) {
    TileRowValues v;
    if (st.output.size() == 0) return v; // O is final only after the last key block
    v.now = rowOf(st.output, i);
    v.changed = st.info.kind == StepKind::Normalise;
    if (correct && correct->output.size() && rowDiffers(correct->output, st.output, i))
        v.correct = rowOf(correct->output, i);
    return v;
}

BackendRecord backendRecord(const StepState& st, const TileTrace& trace, int i) {
    BackendRecord record{trace.mNew(i), trace.lNew(i), std::nullopt};
    const StepKind k = st.info.kind;
    const bool tileDone = k == StepKind::UpdateOutput || k == StepKind::Normalise ||
                          k == StepKind::StoreOutput || k == StepKind::StoreRunningState;
    if (!tileDone) return record;
    double delta = 0;
    const Matrix& acc = latest(st.accNew, st.accOld);
    if (acc.rows() == trace.accNew.rows() && acc.cols() == trace.accNew.cols()) {
        delta = (acc.row(i) - trace.accNew.row(i)).cwiseAbs().maxCoeff();
        if (st.mNew.size() > i) delta = std::max(delta, std::abs(st.mNew(i) - trace.mNew(i)));
        if (st.lNew.size() > i) delta = std::max(delta, std::abs(st.lNew(i) - trace.lNew(i)));
    }
    record.difference = delta;
    return record;
}

TileRow tableRow(const Frame& frame, const TileModel& model, int i) {
    const StepState& st = frame.state;
    const StepState* correct = frame.correct ? &*frame.correct : nullptr;
    TileRow row;
    row.row = st.info.rows.begin + i;
    row.wrong = frame.scene->isRowWrong(row.row);
    row.m = runningValue(st.mOld, st.mNew,
                         correct ? &latest(correct->mNew, correct->mOld) : nullptr, i);
    const auto mOld = entry(st.mOld, i), mNew = entry(st.mNew, i);
    row.m.changed = st.info.kind == StepKind::UpdateMax && mOld && mNew && *mNew > *mOld;
    row.l = runningValue(st.lOld, st.lNew,
                         correct ? &latest(correct->lNew, correct->lOld) : nullptr, i);
    row.l.changed = st.info.kind == StepKind::UpdateSum && row.l.before.has_value();
    row.correction = correctionValue(st, correct, i, row.correctionNote);
    row.accumulator = accumulatorRow(st, correct, i);
    row.output = outputRow(st, correct, i);
    // The frame has the backend's record of this tile once the tile is updated.
    const TileTrace* trace = model.backendShown ? frame.trace : nullptr;
    if (trace && i < trace->mNew.size()) row.backend = backendRecord(st, *trace, i);
    return row;
}

std::vector<TileTableColumn> tableColumns(StepKind k, bool withBackend) {
    std::vector<TileTableColumn> columns = {
        {TileColumn::Row, false},
        {TileColumn::Max, k == StepKind::UpdateMax},
        {TileColumn::Sum, k == StepKind::UpdateSum},
        {TileColumn::Correction, k == StepKind::UpdateSum || k == StepKind::UpdateOutput},
        {TileColumn::Accumulator, k == StepKind::UpdateOutput},
        {TileColumn::Output, k == StepKind::Normalise || k == StepKind::StoreOutput},
    };
    if (withBackend) columns.push_back({TileColumn::Backend, false});
    return columns;
}

QStringList tableNotes(const TileModel& model, const Scene& scene, const ViewOptions& options) {
    QStringList notes;
    if (model.bug)
        notes << (scene.settings.options.rescale
                      ? QObject::tr("green: the correct run at this same step (running max kept)")
                      : QObject::tr("green: the correct run at this same step (rescale applied)"));
    if (model.backendShown)
        notes << QObject::tr("%1: recorded by %2 after the tile's update; |Δ|: largest "
                             "difference from the CPU's m, ℓ, acc")
                     .arg(model.backendShortName, model.backendName);
    else if (options.showBackendValues && !scene.traceNote.isEmpty())
        notes << QObject::tr("no backend trace: %1").arg(scene.traceNote);
    return notes;
}

void table(TileModel& model, const Frame& frame, const ViewOptions& options) {
    const Scene& scene = *frame.scene;
    const StepInfo& info = frame.state.info;
    model.hasTable = scene.isFlash() && info.queryBlock >= 0;
    if (!model.hasTable) return;
    model.tileRows = info.rows.size();
    model.bug = frame.correct.has_value();
    model.backendShown = options.showBackendValues && scene.trace;
    model.backendName = scene.backendName;
    model.backendShortName = scene.backendName.section(QStringLiteral(" ("), 0, 0);
    model.valuesListed = std::min(scene.settings.spec.headDim, 4);
    model.columns = tableColumns(info.kind, model.backendShown);
    for (int i = 0; i < std::min(model.tileRows, kTileRowsListed); ++i)
        model.rows.push_back(tableRow(frame, model, i));
    model.notes = tableNotes(model, scene, options);
}

} // namespace

TileModel tileModel(const Frame& frame, const ViewOptions& options) {
    TileModel model;
    model.heading = headingOf(*frame.scene, frame.state.info);
    model.stepName = QString::fromLatin1(toString(frame.state.info.kind));
    model.stepKind = frame.state.info.kind;
    grids(model, *frame.scene, frame.state);
    table(model, frame, options);
    return model;
}

} // namespace flashviz::gui
