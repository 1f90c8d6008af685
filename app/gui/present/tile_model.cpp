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

// A tile of either pass: (query block, key block) and the rows and keys it covers.
QString tileHeading(const StepInfo& info) {
    return QObject::tr("Tile (%1, %2) · query rows %3–%4 × keys %5–%6")
        .arg(info.queryBlock)
        .arg(info.keyBlock)
        .arg(info.rows.begin)
        .arg(info.rows.end - 1)
        .arg(info.cols.begin)
        .arg(info.cols.end - 1);
}

QString backwardHeadingOf(const StepInfo& info) {
    if (info.kind == StepKind::ComputeRowDots)
        return QObject::tr("Pre-pass · query rows %1–%2: D = rowsum(dO ∘ O)")
            .arg(info.rows.begin)
            .arg(info.rows.end - 1);
    if (info.keyBlock < 0)
        return QObject::tr("All query rows %1–%2 · dQ = 0 written to HBM")
            .arg(info.rows.begin)
            .arg(info.rows.end - 1);
    if (info.queryBlock < 0)
        return QObject::tr("Key block %1 · keys %2–%3 on chip with dK_j, dV_j")
            .arg(info.keyBlock)
            .arg(info.cols.begin)
            .arg(info.cols.end - 1);
    return tileHeading(info);
}

QString headingOf(const Scene& scene, const StepInfo& info) {
    if (scene.isBackward()) return backwardHeadingOf(info);
    if (scene.settings.algorithm == Algorithm::Standard)
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
        return tileHeading(info);
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
    model.scores.shortTitle = QObject::tr("S = scale · Q_i K_jᵀ"); // the memory view says where
    model.scores.emptyText = QObject::tr("the tile is computed at 'compute-scores'");
    model.weights = valueGrid(st.weights, info.rows.begin, info.cols.begin);
    model.weights.title = runningMax ? QObject::tr("P = exp(S − m_new)  (unnormalised)")
                                     : QObject::tr("P = exp(S)  (no max subtracted)");
    model.weights.shortTitle = runningMax ? QObject::tr("P = exp(S − m_new)") : QObject::tr("P = exp(S)");
    model.weights.emptyText = QObject::tr("P appears at 'compute-weights'");
    // With the running max, P = exp(S − m) lies in (0, 1]: one scale shows every tile alike.
    if (runningMax) model.weights.scaleMax = 1.0;
    if (st.scores.size() > 0)
        model.gridRows = int(st.scores.rows());
    else if (info.queryBlock >= 0)
        model.gridRows = info.rows.size();
}

// Standard attention: the whole S and P, as numbers when small, as the stored images otherwise.
// The kernels run in order, so S exists from its own kernel's compute step on, P from the
// softmax's; kinds are named, never compared by their place in the enum (the backward's come
// after standard attention's).
void standardGrids(TileModel& model, const Scene& scene, StepKind kind) {
    const std::optional<StandardKernel> kernel = standardKernelOf(kind);
    const bool haveScores = kernel && kind != StepKind::ReadInputs;
    const bool haveWeights = kernel == StandardKernel::Output ||
                             (kernel == StandardKernel::Softmax && kind != StepKind::ReadScores);
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

// The backward's tile: S and P recomputed (or P read back with store-p), then dP and dS; each
// title says what a bug switch changed in it.
void backwardGrids(TileModel& model, const Scene& scene, const StepState& st) {
    const StepInfo& info = st.info;
    const BackwardOptions& bw = scene.settings.options.backward;
    const bool causal = scene.settings.spec.causal;
    model.backward = true;
    model.backwardTile = info.queryBlock >= 0 && info.keyBlock >= 0;
    model.scores = valueGrid(st.scores, info.rows.begin, info.cols.begin);
    const bool maskForgotten = !bw.maskRecompute && causal;
    model.scores.title = bw.storeWeights ? QObject::tr("S: not recomputed (P stored)")
                         : maskForgotten
                             ? QObject::tr("S = scale · Q_i K_jᵀ  (bug: mask forgotten)")
                             : QObject::tr("S = scale · Q_i K_jᵀ  (recomputed)");
    model.scores.shortTitle = bw.storeWeights ? QObject::tr("S: not recomputed")
                              : maskForgotten ? QObject::tr("S  (no mask!)")
                                              : QObject::tr("S = scale·Q_i K_jᵀ");
    model.scores.emptyText = bw.storeWeights ? QObject::tr("store-p: P is read from HBM instead")
                                             : QObject::tr("S is recomputed at 'recompute-scores'");
    model.weights = valueGrid(st.weights, info.rows.begin, info.cols.begin);
    model.weights.title = bw.storeWeights    ? QObject::tr("P  (read back from HBM)")
                          : !bw.useLogSumExp ? QObject::tr("P = exp(S − m)  (bug: m, not L)")
                                             : QObject::tr("P = exp(S − L_i)  (recomputed)");
    model.weights.shortTitle = bw.storeWeights    ? QObject::tr("P  (read back)")
                               : !bw.useLogSumExp ? QObject::tr("P = exp(S − m)  (bug)")
                                                  : QObject::tr("P = exp(S − L_i)");
    model.weights.emptyText = bw.storeWeights ? QObject::tr("P is read at 'read-stored-weights'")
                                              : QObject::tr("P appears at 'recompute-weights'");
    model.dWeights = valueGrid(st.dP, info.rows.begin, info.cols.begin);
    model.dWeights.title = QObject::tr("dP = dO_i V_jᵀ");
    model.dWeights.emptyText = QObject::tr("dP appears at 'compute-weight-gradient'");
    model.dScores = valueGrid(st.dS, info.rows.begin, info.cols.begin);
    model.dScores.title = bw.subtractRowDot ? QObject::tr("dS = P ∘ (dP − D_i)")
                                            : QObject::tr("dS = P ∘ dP  (bug: D left out)");
    model.dScores.shortTitle =
        bw.subtractRowDot ? QObject::tr("dS = P∘(dP − D_i)") : QObject::tr("dS = P∘dP  (bug)");
    model.dScores.emptyText = QObject::tr("dS appears at 'compute-score-gradient'");
    for (TileGrid* g : {&model.dWeights, &model.dScores}) {
        g->colouring = Colouring::Diverging;
        g->scaleMax = std::max(finiteAbsMax(g->values), 1e-300);
    }
    model.dWeights.active = info.kind == StepKind::ComputeWeightGradient;
    model.dScores.active = info.kind == StepKind::ComputeScoreGradient;
    model.focusPair = backwardPhaseOf(info.kind) >= 4 ? 1 : 0;
    if (info.queryBlock >= 0) model.gridRows = info.rows.size();
}

// The cells of a grid whose value the correct run (the same step, no bug switch) has otherwise:
// where a bug first bites, a student sees which entries of S, P or dS it changed.
void markWrongCells(TileGrid& grid, const Matrix& correct) {
    if (grid.values.size() == 0 || correct.rows() != grid.values.rows() ||
        correct.cols() != grid.values.cols())
        return;
    std::vector<char> wrong(std::size_t(grid.values.size()), 0);
    bool any = false;
    for (Eigen::Index r = 0; r < correct.rows(); ++r)
        for (Eigen::Index c = 0; c < correct.cols(); ++c)
            if (differs(grid.values(r, c), correct(r, c))) {
                wrong[std::size_t(r * correct.cols() + c)] = 1;
                any = true;
            }
    if (any) grid.wrongCells = std::move(wrong);
}

void markBackwardBug(TileModel& model, const Frame& frame) {
    if (!model.backward || !frame.correct) return;
    const StepState& right = *frame.correct;
    markWrongCells(model.scores, right.scores);
    markWrongCells(model.weights, right.weights);
    markWrongCells(model.dWeights, right.dP);
    markWrongCells(model.dScores, right.dS);
}

void grids(TileModel& model, const Scene& scene, const StepState& st) {
    const StepKind kind = st.info.kind;
    if (scene.isBackward())
        backwardGrids(model, scene, st);
    else if (scene.isFlash())
        flashGrids(model, scene, st);
    else
        standardGrids(model, scene, kind);
    model.scores.colouring = Colouring::Diverging;
    model.weights.colouring = Colouring::Sequential;
    model.scores.scaleMax = std::max(finiteAbsMax(model.scores.values), 1e-300);
    // The backward's P is the softmax itself, about 1/n at long sequences: its colours are
    // scaled to the tile's largest weight, as dP's and dS's are.
    if (scene.isBackward())
        model.weights.scaleMax = std::max(finiteAbsMax(model.weights.values), 1e-300);
    else if (!(scene.isFlash() && scene.settings.options.runningMax))
        model.weights.scaleMax = std::max(finiteAbsMax(model.weights.values), 1e-300);
    model.scores.active = kind == StepKind::ComputeScores || kind == StepKind::RecomputeScores;
    model.weights.active = kind == StepKind::ComputeWeights || kind == StepKind::ComputeSoftmax ||
                           kind == StepKind::RecomputeWeights ||
                           kind == StepKind::ReadStoredWeights;
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

// ---- the backward's table ------------------------------------------------------------------

// A row of a d-wide matrix on one line: the latest, what it was where this step (`updating`)
// changed it, and the correct run's where it differs.
TileRowValues gradientRow(const Matrix& before, const Matrix& after, const Matrix* right, int i,
                          bool updating) {
    TileRowValues v;
    const Matrix& now = latest(after, before);
    v.now = rowOf(now, i);
    v.changed = updating && rowDiffers(after, before, i);
    if (v.changed) v.before = rowOf(before, i);
    if (right && rowDiffers(*right, now, i)) v.correct = rowOf(*right, i);
    return v;
}

double rowDistance(const Matrix& a, const Matrix& b, int i) {
    if (a.size() == 0 || b.size() == 0 || i >= a.rows() || i >= b.rows() || a.cols() != b.cols())
        return 0;
    return (a.row(i) - b.row(i)).cwiseAbs().maxCoeff();
}

// The backend's record of a line: its dQ_i row, and once the tile is done (dK_j updated, the
// tile's last step; or dK_j, dV_j stored) its largest difference from the CPU's dQ_i, dK_j and
// dV_j rows.
BackwardRecord backwardRecord(const StepState& st, const BackwardTileTrace& trace, int line) {
    BackwardRecord record;
    const int query = line < st.info.rows.size() ? line : -1;
    const int key = line < st.info.cols.size() ? line : -1;
    if (query >= 0 && query < trace.dQ.rows()) record.dq = trace.dQ.row(query).transpose();
    if (st.info.kind != StepKind::UpdateKeyGradient &&
        st.info.kind != StepKind::StoreKeyValueGradient)
        return record;
    double delta = 0;
    if (query >= 0) delta = rowDistance(st.dQNew, trace.dQ, query);
    if (key >= 0)
        delta = std::max(
            {delta, rowDistance(st.dKNew, trace.dK, key), rowDistance(st.dVNew, trace.dV, key)});
    record.difference = delta;
    return record;
}

bool marked(const std::vector<char>& marks, int i) {
    return i >= 0 && i < int(marks.size()) && marks[std::size_t(i)];
}

// One line of the backward's table: the query row `line` of the step's rows (on the pre-pass,
// of all rows) and the key `line` of its keys, where the step has them.
TileRow backwardLine(const Frame& frame, const TileModel& model, int line) {
    const StepState& st = frame.state;
    const StepInfo& info = st.info;
    const StepState* correct = frame.correct ? &*frame.correct : nullptr;
    const BackwardScene& bw = *frame.scene->backward;
    const bool prePass = info.kind == StepKind::ComputeRowDots;
    TileRow row;
    const bool hasQuery = info.queryBlock >= 0 || prePass;
    row.row = hasQuery && line < info.rows.size() ? info.rows.begin + line : -1;
    row.key = info.keyBlock >= 0 && line < info.cols.size() ? info.cols.begin + line : -1;
    if (row.row >= 0) {
        row.wrong = !prePass && marked(bw.wrongQueryRow, row.row);
        row.lse.now = entry(st.lse, line);
        row.delta.now = entry(st.delta, line);
        row.delta.changed = prePass;
        if (prePass) { // a forward bug reaches the backward here: O, and D read from it
            row.dO.now = rowOf(st.dO, line);
            row.output.now = rowOf(st.output, line);
            if (correct && rowDiffers(correct->output, st.output, line))
                row.output.correct = rowOf(correct->output, line);
            const auto rightDelta = correct ? entry(correct->delta, line) : std::nullopt;
            if (rightDelta && row.delta.now && differs(*rightDelta, *row.delta.now))
                row.delta.correct = rightDelta;
        }
        row.dq = gradientRow(st.dQOld, st.dQNew,
                             correct ? &latest(correct->dQNew, correct->dQOld) : nullptr, line,
                             info.kind == StepKind::UpdateQueryGradient);
    }
    if (row.key >= 0) {
        row.keyWrong = marked(bw.wrongKeyRow, row.key);
        row.dk = gradientRow(st.dKOld, st.dKNew,
                             correct ? &latest(correct->dKNew, correct->dKOld) : nullptr, line,
                             info.kind == StepKind::UpdateKeyGradient);
        row.dv = gradientRow(st.dVOld, st.dVNew,
                             correct ? &latest(correct->dVNew, correct->dVOld) : nullptr, line,
                             info.kind == StepKind::UpdateValueGradient);
    }
    if (model.backendShown && frame.backwardTrace)
        row.backwardBackend = backwardRecord(st, *frame.backwardTrace, line);
    return row;
}

std::vector<TileTableColumn> backwardColumns(const StepInfo& info, const BackwardOptions& options,
                                             bool withBackend) {
    using C = TileColumn;
    const StepKind k = info.kind;
    std::vector<TileTableColumn> columns;
    if (k == StepKind::ComputeRowDots)
        return {{C::Row, false},
                {C::UpstreamGradient, false},
                {C::ForwardOutput, false},
                {C::RowDot, true}};
    if (info.queryBlock >= 0) {
        columns.push_back({C::Row, false});
        if (!options.storeWeights) columns.push_back({C::LogSumExp, false}); // P needs no L
        columns.push_back({C::RowDot, false});
        columns.push_back({C::QueryGradient, k == StepKind::UpdateQueryGradient});
    }
    columns.push_back({C::Key, false});
    columns.push_back({C::KeyGradient, k == StepKind::UpdateKeyGradient});
    columns.push_back({C::ValueGradient, k == StepKind::UpdateValueGradient});
    if (withBackend) columns.push_back({C::Backend, false});
    return columns;
}

// The steps with a table: the pre-pass (every row's D), a key block's (its dK_j, dV_j) and a
// tile's; dQ = 0 has nothing on chip.
void backwardTable(TileModel& model, const Frame& frame, const ViewOptions& options) {
    const Scene& scene = *frame.scene;
    const StepInfo& info = frame.state.info;
    const bool prePass = info.kind == StepKind::ComputeRowDots;
    model.hasTable = prePass || info.keyBlock >= 0;
    if (!model.hasTable) return;
    const int queries = prePass || info.queryBlock >= 0 ? info.rows.size() : 0;
    const int keys = info.keyBlock >= 0 ? info.cols.size() : 0;
    model.tileRows = std::max(queries, keys);
    model.bug = frame.correct.has_value();
    model.backendShown = options.showBackendValues && scene.backward->trace;
    model.backendName = scene.backendName;
    model.backendShortName = scene.backendName.section(QStringLiteral(" ("), 0, 0);
    model.valuesListed = std::min(scene.settings.spec.headDim, 4);
    model.columns = backwardColumns(info, scene.settings.options.backward, model.backendShown);
    for (int i = 0; i < std::min(model.tileRows, kTileRowsListed); ++i)
        model.rows.push_back(backwardLine(frame, model, i));
    const std::vector<const TileGrid*> shown = model.grids();
    const bool wrongCells = std::any_of(shown.begin(), shown.end(),
                                        [](const TileGrid* g) { return !g->wrongCells.empty(); });
    if (model.bug)
        model.notes << (wrongCells ? QObject::tr("green: the correct run at this same step (no bug "
                                                 "switch on); red outline: it has another value")
                                   : QObject::tr("green: the correct run at this same step (no bug "
                                                 "switch on)"));
    if (model.backendShown)
        model.notes << QObject::tr("%1: dQ_i as %2 recorded it after the tile; |Δ|: largest "
                                   "difference from the CPU's dQ_i, dK_j, dV_j")
                           .arg(model.backendShortName, model.backendName);
    else if (options.showBackendValues && !scene.backward->trace && !scene.traceNote.isEmpty())
        model.notes << QObject::tr("no backend trace: %1").arg(scene.traceNote);
}

void table(TileModel& model, const Frame& frame, const ViewOptions& options) {
    const Scene& scene = *frame.scene;
    const StepInfo& info = frame.state.info;
    if (scene.isBackward()) {
        backwardTable(model, frame, options);
        return;
    }
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

std::vector<const TileGrid*> TileModel::grids() const {
    if (backward && !backwardTile) return {}; // the pre-pass, dQ = 0, a key block's load, store
    if (backward) return {&scores, &weights, &dWeights, &dScores};
    return {&scores, &weights};
}

TileModel tileModel(const Frame& frame, const ViewOptions& options) {
    TileModel model;
    model.heading = headingOf(*frame.scene, frame.state.info);
    model.stepName = QString::fromLatin1(toString(frame.state.info.kind));
    model.stepKind = frame.state.info.kind;
    grids(model, *frame.scene, frame.state);
    markBackwardBug(model, frame);
    table(model, frame, options);
    return model;
}

} // namespace flashviz::gui
