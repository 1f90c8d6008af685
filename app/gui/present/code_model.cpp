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

QString titleOf(const VizSettings& s) {
    if (s.algorithm == Algorithm::Standard) return QObject::tr("Standard attention");
    return s.options.loopOrder == LoopOrder::QueryOuter
               ? QObject::tr("FlashAttention · query block outer")
               : QObject::tr("FlashAttention · key/value block outer (paper)");
}

} // namespace

std::vector<CodeLine> pseudocode(const VizSettings& s) {
    if (s.algorithm == Algorithm::Standard) return standardListing();
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
