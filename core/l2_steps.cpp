#include "core/l2_steps.h"

#include "core/units.h"

#include <algorithm>

namespace flashviz {

namespace {

// The matrices the run touches in HBM, their whole sizes added up.
double footprint(const StepEngine& engine) {
    const ProblemSpec& spec = engine.problem().spec;
    const double q = spec.queries, k = spec.keys, d = spec.headDim;
    const FlashOptions& options = engine.options();
    double elements = 0;
    switch (engine.algorithm()) {
    case Algorithm::Standard: elements = 2 * q * d + 2 * k * d + 2 * q * k; break; // Q, O, K, V, S, P
    case Algorithm::Backward: // Q, O, dO, dQ; K, V, dK, dV; L, D; the forward's P when stored
        elements = 4 * q * d + 4 * k * d + 2 * q + (options.backward.storeWeights ? q * k : 0);
        break;
    default: // Q, O; K, V; the paper order's m and ℓ; the debug copy of S
        elements = 2 * q * d + 2 * k * d +
                   (options.loopOrder == LoopOrder::KeyValueOuter ? 2 * q : 0) +
                   (options.keepFullScores ? q * k : 0);
        break;
    }
    return elements * double(kBytesPerElement);
}

bool keyBlocksOuter(const StepEngine& engine) {
    return engine.algorithm() == Algorithm::Backward ||
           (engine.algorithm() == Algorithm::Flash &&
            engine.options().loopOrder == LoopOrder::KeyValueOuter);
}

} // namespace

DramTraffic& DramTraffic::operator+=(const DramTraffic& other) {
    readBytes += other.readBytes;
    writeBytes += other.writeBytes;
    return *this;
}

StepL2Model::StepL2Model(std::shared_ptr<const StepEngine> engine, double usableL2Bytes)
    : m_engine(std::move(engine)), m_usable(usableL2Bytes), m_footprint(footprint(*m_engine)) {
    const int steps = m_engine->stepCount();
    if (!fits()) {
        const Counters all = m_engine->countersThrough(steps - 1);
        m_total = {all.hbmReadBytes, all.hbmWriteBytes};
        return;
    }
    if (m_engine->algorithm() == Algorithm::Standard)
        m_outerFirst = {0};
    else
        for (int b = 0; b < m_engine->outerBlockCount(); ++b)
            m_outerFirst.push_back(m_engine->firstStepOfOuterBlock(b));
    std::size_t next = 0;
    for (int s = 0; s < steps; ++s) {
        while (next < m_outerFirst.size() && m_outerFirst[next] == s) {
            m_outerBefore.push_back(m_total);
            ++next;
        }
        m_total += ofStep(m_engine->info(s));
    }
}

// With the run in L2: the first read of a byte and its first write reach DRAM, nothing else.
DramTraffic StepL2Model::ofStep(const StepInfo& info) const {
    const Counters counted = m_engine->countersOf(info);
    const DramTraffic all{counted.hbmReadBytes, counted.hbmWriteBytes};
    if (!fits()) return all;
    const bool keysOuter = keyBlocksOuter(*m_engine);
    switch (info.kind) {
    case StepKind::LoadQuery: // the paper order reads Q_i again for every key block
        return keysOuter && info.keyBlock > 0 ? DramTraffic{} : all;
    case StepKind::LoadKeyValue: { // the query-outer order reads K_j, V_j for every query block
        const int i = info.queryBlock;
        const bool first =
            keysOuter || i <= 0 || m_engine->visibleKeyBlocks(i - 1) <= info.keyBlock;
        return first ? all : DramTraffic{};
    }
    case StepKind::LoadQueryGradient: { // Q_i and L_i new at key block 0; dO_i and D_i read before
        if (info.keyBlock > 0) return {};
        const std::uint64_t rows = std::uint64_t(info.rows.size());
        const std::uint64_t fresh =
            rows * std::uint64_t(m_engine->problem().spec.headDim) +
            (m_engine->options().backward.storeWeights ? 0 : rows);
        return {std::min(counted.hbmReadBytes, fresh * kBytesPerElement), 0};
    }
    case StepKind::StoreOutput: // the paper order wrote O when it initialised it
        return keysOuter ? DramTraffic{} : all;
    case StepKind::LoadRunningState:  // O_i, m_i, ℓ_i: written by InitialiseOutput
    case StepKind::StoreRunningState: // rewritten, still in L2
    case StepKind::ReadScores:        // S and P: written by this run
    case StepKind::ReadWeights:
    case StepKind::UpdateQueryGradient: // dQ_i: initialised by this run, read and rewritten
        return {};
    default:
        return all;
    }
}

int StepL2Model::outerOf(int step) const {
    const auto it = std::upper_bound(m_outerFirst.begin(), m_outerFirst.end(), step);
    return int(it - m_outerFirst.begin()) - 1;
}

DramTraffic StepL2Model::ofStep(int step) const {
    return ofStep(m_engine->info(step));
}

DramTraffic StepL2Model::through(int step) const {
    if (step < 0) return {};
    if (!fits()) {
        const Counters c = m_engine->countersThrough(step);
        return {c.hbmReadBytes, c.hbmWriteBytes};
    }
    const int outer = outerOf(step); // -1 in the steps before the first outer block
    DramTraffic sum = outer >= 0 ? m_outerBefore[std::size_t(outer)] : DramTraffic{};
    for (int s = outer >= 0 ? m_outerFirst[std::size_t(outer)] : 0; s <= step; ++s)
        sum += ofStep(m_engine->info(s));
    return sum;
}

DramTraffic StepL2Model::total() const {
    return m_total;
}

std::vector<std::string> StepL2Model::assumptions() const {
    const std::string sizes = "the run's matrices in HBM (" + formatByteAmount(m_footprint) +
                              ") against the usable half of L2 (" + formatByteAmount(m_usable) + ")";
    if (fits())
        return {"L2 starts empty; " + sizes + ": they fit, so L2 keeps every line",
                "a byte comes from DRAM the first time it is read, never after the run wrote it, "
                "and goes to DRAM once, when first written"};
    return {"L2 starts empty; " + sizes + ": they do not fit",
            "L2 is taken to keep nothing between steps: DRAM sees every counted byte"};
}

} // namespace flashviz
