#include "present/code_model.h"

#include <QObject>

#include <algorithm>

namespace flashviz::gui {

namespace {

// The body of the inner loop, the same in both loop orders but for the names of the running
// state: m, ℓ, acc kept on chip (query blocks outer), or m_i, ℓ_i, O_i read back from HBM.
void appendTileUpdate(std::vector<CodeLine>& code, const FlashOptions& options, const QString& m,
                      const QString& l, const QString& acc) {
    using K = StepKind;
    const bool rescale = options.rescale && options.runningMax;
    const bool runningMax = options.runningMax;
    const QString noRescale = rescale ? QString() : QStringLiteral("no rescale!");
    code.insert(
        code.end(),
        {
            {QStringLiteral("S = scale · Q_i K_jᵀ"),
             2,
             {K::ComputeScores},
             options.keepFullScores ? QStringLiteral("+ copy to HBM (debug)")
                                    : QStringLiteral("never leaves the chip"),
             false},
            {runningMax ? QStringLiteral("m_new = max(m, rowmax S)") : QStringLiteral("m_new = m"),
             2,
             {K::UpdateMax},
             runningMax ? QString() : QStringLiteral("no running max"),
             !runningMax},
            {runningMax ? QStringLiteral("P = exp(S − m_new)") : QStringLiteral("P = exp(S)"),
             2,
             {K::ComputeWeights},
             {},
             false},
            {rescale ? QStringLiteral("%1 = e^(%2 − m_new)·%1 + rowsum P").arg(l, m)
                     : QStringLiteral("%1 = %1 + rowsum P").arg(l),
             2,
             {K::UpdateSum},
             noRescale,
             !rescale},
            {rescale ? QStringLiteral("%1 = e^(%2 − m_new)·%1 + P V_j").arg(acc, m)
                     : QStringLiteral("%1 = %1 + P V_j").arg(acc),
             2,
             {K::UpdateOutput},
             noRescale,
             !rescale},
        });
}

// Standard attention: three kernels, each through HBM.
std::vector<CodeLine> standardListing() {
    using K = StepKind;
    return {
        {QStringLiteral("# three passes, each through HBM"), 0, {}, {}, false},
        {QStringLiteral("read Q, K, V"), 0, {K::ReadInputs}, {}, false},
        {QStringLiteral("S = scale · Q Kᵀ"), 0, {K::ComputeScores}, QStringLiteral("n × n"), false},
        {QStringLiteral("write S to HBM"),
         0,
         {K::WriteScores},
         QStringLiteral("n² values out"),
         false},
        {QStringLiteral("read S"), 0, {K::ReadScores}, QStringLiteral("…and back in"), false},
        {QStringLiteral("P = softmax(S)"),
         0,
         {K::ComputeSoftmax},
         QStringLiteral("row by row"),
         false},
        {QStringLiteral("write P to HBM"),
         0,
         {K::WriteWeights},
         QStringLiteral("n² values out"),
         false},
        {QStringLiteral("read P, V"), 0, {K::ReadWeights}, QStringLiteral("…and back in"), false},
        {QStringLiteral("O = P V"), 0, {K::ComputeOutput}, {}, false},
        {QStringLiteral("write O"), 0, {K::WriteOutput}, {}, false},
    };
}

// FlashAttention with the query blocks outer: m, ℓ and acc stay on chip.
std::vector<CodeLine> queryOuterListing(const FlashOptions& options) {
    using K = StepKind;
    const bool runningMax = options.runningMax;
    std::vector<CodeLine> code = {
        {QStringLiteral("for each query block i:"), 0, {}, {}, false},
        {QStringLiteral("load Q_i into SRAM"), 1, {K::LoadQuery}, {}, false},
        {runningMax ? QStringLiteral("m = −∞,  ℓ = 0,  acc = 0")
                    : QStringLiteral("m = 0,  ℓ = 0,  acc = 0"),
         1,
         {K::LoadQuery},
         QStringLiteral("kept on chip"),
         false},
        {QStringLiteral("for each key block j:"), 1, {}, {}, false},
        {QStringLiteral("load K_j, V_j into SRAM"), 2, {K::LoadKeyValue}, {}, false},
    };
    appendTileUpdate(code, options, QStringLiteral("m"), QStringLiteral("ℓ"),
                     QStringLiteral("acc"));
    code.insert(code.end(),
                {
                    {QStringLiteral("m = m_new"), 2, {K::UpdateOutput}, {}, false},
                    {QStringLiteral("O_i = acc / ℓ"),
                     1,
                     {K::Normalise},
                     QStringLiteral("once, at the end"),
                     false},
                    {QStringLiteral("write O_i to HBM"), 1, {K::StoreOutput}, {}, false},
                });
    return code;
}

// The paper's order, key/value blocks outer: O_i, m_i, ℓ_i go back and forth through HBM.
std::vector<CodeLine> paperListing(const FlashOptions& options) {
    using K = StepKind;
    std::vector<CodeLine> code = {
        {QStringLiteral("write O = 0, m = −∞, ℓ = 0 to HBM"), 0, {K::InitialiseOutput}, {}, false},
        {QStringLiteral("for each key block j:"),
         0,
         {},
         QStringLiteral("the paper's order"),
         false},
        {QStringLiteral("load K_j, V_j into SRAM"), 1, {K::LoadKeyValue}, {}, false},
        {QStringLiteral("for each query block i:"), 1, {}, {}, false},
        {QStringLiteral("load Q_i"), 2, {K::LoadQuery}, {}, false},
        {QStringLiteral("load O_i, m_i, ℓ_i from HBM"), 2, {K::LoadRunningState}, {}, false},
    };
    appendTileUpdate(code, options, QStringLiteral("m_i"), QStringLiteral("ℓ_i"),
                     QStringLiteral("O_i"));
    code.insert(
        code.end(),
        {
            {QStringLiteral("last key block: O_i = O_i / ℓ_i"), 2, {K::Normalise}, {}, false},
            {QStringLiteral("write O_i, m_i, ℓ_i to HBM"),
             2,
             {K::StoreRunningState},
             QStringLiteral("every step"),
             false},
        });
    return code;
}

// FlashAttention-2's backward (Algorithm 2) as FlashViz runs it: key blocks outer, dK_j and dV_j
// on chip, dQ_i read, added to and written back in HBM. A bug switch changes its line (drawn
// red); with store-p the recompute of S is struck out and P is read instead.
std::vector<CodeLine> backwardListing(const VizSettings& s) {
    using K = StepKind;
    const BackwardOptions& bw = s.options.backward;
    const bool causal = s.spec.causal;
    const bool maskForgotten = causal && !bw.maskRecompute;
    std::vector<CodeLine> code = {
        {QStringLiteral("D = rowsum(dO ∘ O)"),
         0,
         {K::ComputeRowDots},
         QStringLiteral("pre-pass, every row"),
         false},
        {QStringLiteral("write dQ = 0 to HBM"), 0, {K::InitialiseQueryGradient}, {}, false},
        {QStringLiteral("for each key block j:"), 0, {}, QStringLiteral("outer"), false},
        {QStringLiteral("load K_j, V_j into SRAM"), 1, {K::LoadKeyValue}, {}, false},
        {QStringLiteral("dK_j = 0,  dV_j = 0"),
         1,
         {K::LoadKeyValue},
         QStringLiteral("kept on chip"),
         false},
        {QStringLiteral("for each query block i that sees j:"), 1, {}, {}, false},
        {bw.storeWeights ? QStringLiteral("load Q_i, dO_i, D_i")
                         : QStringLiteral("load Q_i, dO_i, L_i, D_i"),
         2,
         {K::LoadQueryGradient},
         {},
         false},
        {QStringLiteral("S = scale · Q_i K_jᵀ"), 2,
         bw.storeWeights ? std::vector<K>{} : std::vector<K>{K::RecomputeScores},
         bw.storeWeights ? QStringLiteral("not recomputed: P stored")
         : maskForgotten ? QStringLiteral("mask forgotten!")
         : causal        ? QStringLiteral("recomputed, masked")
                         : QStringLiteral("recomputed, not stored"),
         bw.storeWeights || maskForgotten},
        bw.storeWeights ? CodeLine{QStringLiteral("read P_ij from HBM"),
                                   2,
                                   {K::ReadStoredWeights},
                                   QStringLiteral("the forward stored all n × n"),
                                   false}
                        : CodeLine{bw.useLogSumExp ? QStringLiteral("P = exp(S − L_i)")
                                                   : QStringLiteral("P = exp(S − m_i)"),
                                   2,
                                   {K::RecomputeWeights},
                                   bw.useLogSumExp ? QStringLiteral("the softmax, from L alone")
                                                   : QStringLiteral("m, not L: P not normalised!"),
                                   !bw.useLogSumExp},
        {QStringLiteral("dV_j += P_ijᵀ dO_i"), 2, {K::UpdateValueGradient}, {}, false},
        {QStringLiteral("dP = dO_i V_jᵀ"), 2, {K::ComputeWeightGradient}, {}, false},
        {bw.subtractRowDot ? QStringLiteral("dS = P ∘ (dP − D_i)") : QStringLiteral("dS = P ∘ dP"),
         2,
         {K::ComputeScoreGradient},
         bw.subtractRowDot ? QString() : QStringLiteral("D left out!"),
         !bw.subtractRowDot},
        {bw.accumulateDq ? QStringLiteral("dQ_i += scale · dS K_j")
                         : QStringLiteral("dQ_i = scale · dS K_j"),
         2,
         {K::UpdateQueryGradient},
         bw.accumulateDq ? QStringLiteral("read, add, write HBM")
                         : QStringLiteral("overwritten, not added!"),
         !bw.accumulateDq},
        {QStringLiteral("dK_j += scale · dSᵀ Q_i"), 2, {K::UpdateKeyGradient}, {}, false},
        {QStringLiteral("write dK_j, dV_j to HBM"),
         1,
         {K::StoreKeyValueGradient},
         QStringLiteral("once per key block"),
         false},
    };
    return code;
}

QString titleOf(const VizSettings& s) {
    if (s.algorithm == Algorithm::Standard) return QObject::tr("Standard attention");
    if (s.algorithm == Algorithm::Backward)
        return s.options.backward.storeWeights
                   ? QObject::tr("FlashAttention-2 backward · P stored")
                   : QObject::tr("FlashAttention-2 backward · key blocks outer");
    return s.options.loopOrder == LoopOrder::QueryOuter
               ? QObject::tr("FlashAttention · query block outer")
               : QObject::tr("FlashAttention · key/value block outer (paper)");
}

} // namespace

std::vector<CodeLine> pseudocode(const VizSettings& s) {
    if (s.algorithm == Algorithm::Standard) return standardListing();
    if (s.algorithm == Algorithm::Backward) return backwardListing(s);
    if (s.options.loopOrder == LoopOrder::QueryOuter) return queryOuterListing(s.options);
    return paperListing(s.options);
}

int lineOf(const std::vector<CodeLine>& code, StepKind kind) {
    for (std::size_t i = 0; i < code.size(); ++i)
        if (std::find(code[i].kinds.begin(), code[i].kinds.end(), kind) != code[i].kinds.end())
            return int(i);
    return -1;
}

CodeModel codeModel(const Frame& frame) {
    const VizSettings& settings = frame.scene->settings;
    CodeModel model;
    model.title = titleOf(settings);
    model.lines = pseudocode(settings);
    model.current = lineOf(model.lines, frame.state.info.kind);
    return model;
}

} // namespace flashviz::gui
