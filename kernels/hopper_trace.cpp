#include "kernels/hopper_trace.h"

#include "core/errors.h"
#include "core/hardware.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace flashviz::kernels {

namespace {

using Json = nlohmann::ordered_json;

struct ActivityName {
    HopperActivity activity;
    const char* name;
    const char* description;
    HopperUnit unit;
};
constexpr std::array<ActivityName, std::size_t(HopperActivity::Count)> kActivities{{
    {HopperActivity::LoadQ, "load-q", "Q copied in by the copy engine (TMA)", HopperUnit::CopyEngine},
    {HopperActivity::LoadK, "load-k", "K_j copied in by the copy engine (TMA)", HopperUnit::CopyEngine},
    {HopperActivity::LoadV, "load-v", "V_j copied in by the copy engine (TMA)", HopperUnit::CopyEngine},
    {HopperActivity::WaitForBuffer, "wait-buffer", "waiting for a consumer to free a K or V buffer",
     HopperUnit::Waiting},
    {HopperActivity::WaitForData, "wait-data", "waiting for Q, K_j or V_j to arrive", HopperUnit::Waiting},
    {HopperActivity::WaitForTurn, "wait-turn", "waiting for its turn at the tensor cores (ping-pong)",
     HopperUnit::Waiting},
    {HopperActivity::Scores, "scores", "S_j = Q K_j^T on the tensor cores (wgmma), from its issue to the wait that retires it", HopperUnit::TensorCores},
    {HopperActivity::Values, "values", "O += P_j V_j on the tensor cores (wgmma), from its issue to the wait that retires it", HopperUnit::TensorCores},
    {HopperActivity::WaitForValues, "wait-values", "waiting for O += P_j V_j to finish", HopperUnit::Waiting},
    {HopperActivity::Softmax, "softmax", "the online softmax of S_j on the CUDA cores (m, l, P)",
     HopperUnit::CudaCores},
    {HopperActivity::StoreO, "store-o", "O = acc / l written to HBM", HopperUnit::CudaCores},
}};

const ActivityName& entry(HopperActivity activity) { return kActivities.at(std::size_t(activity)); }

// ---- pairing marks into spans ----
// A mark that opens a span, the mark that closes it and what the span was.
struct Pairing {
    HopperMark begin, end;
    HopperActivity activity;
};
constexpr Pairing kPairings[] = {
    {HopperMark::KBufferWait, HopperMark::KIssued, HopperActivity::WaitForBuffer},
    {HopperMark::VBufferWait, HopperMark::VIssued, HopperActivity::WaitForBuffer},
    {HopperMark::QWait, HopperMark::QReady, HopperActivity::WaitForData},
    {HopperMark::KWait, HopperMark::KReady, HopperActivity::WaitForData},
    {HopperMark::VWait, HopperMark::VReady, HopperActivity::WaitForData},
    {HopperMark::TurnWait, HopperMark::TurnGranted, HopperActivity::WaitForTurn},
    {HopperMark::ScoresIssued, HopperMark::ScoresRetired, HopperActivity::Scores},
    {HopperMark::SoftmaxBegin, HopperMark::SoftmaxEnd, HopperActivity::Softmax},
    {HopperMark::ValuesIssued, HopperMark::ValuesRetired, HopperActivity::Values},
    {HopperMark::ValuesWait, HopperMark::ValuesRetired, HopperActivity::WaitForValues},
    {HopperMark::StoreBegin, HopperMark::StoreEnd, HopperActivity::StoreO},
};

// A copy runs from the producer's issue until the first consumer finds it arrived.
struct CopyPairing {
    HopperMark issued, ready;
    HopperActivity activity;
};
constexpr CopyPairing kCopies[] = {
    {HopperMark::QIssued, HopperMark::QReady, HopperActivity::LoadQ},
    {HopperMark::KIssued, HopperMark::KReady, HopperActivity::LoadK},
    {HopperMark::VIssued, HopperMark::VReady, HopperActivity::LoadV},
};

[[noreturn]] void badMarks(const HopperRawBlock& block, int warpgroup, const std::string& what) {
    throw EngineError(ErrorKind::BackendFailure,
                      "The Hopper kernel's trace of query block " + std::to_string(block.queryBlock) +
                          " (head " + std::to_string(block.head) + ", batch " + std::to_string(block.batch) +
                          "), warpgroup " + std::to_string(warpgroup) + ", " + what + ".");
}

// Cycles of a mark after the block's reference mark (the 32-bit clock wraps; a block is short).
double cyclesAfter(std::uint32_t clock, std::uint32_t reference) {
    return double(std::int32_t(clock - reference));
}

// A block's clock against the timer: its first and last marks that read %globaltimer.
struct BlockClock {
    std::uint32_t reference = 0; // the clock of the block's first mark
    double firstCycles = 0, lastCycles = 0;
    std::uint64_t firstGlobal = 0, lastGlobal = 0;
};

BlockClock clockOf(const HopperRawBlock& block) {
    BlockClock c;
    bool anyMark = false, anyReading = false;
    for (const auto& marks : block.warpgroups)
        for (const HopperRawMark& m : marks) {
            if (!anyMark) c.reference = m.clock;
            anyMark = true;
            if (m.globalNs == 0) continue; // the timer was not read here
            const double cycles = cyclesAfter(m.clock, c.reference);
            if (!anyReading || cycles < c.firstCycles) c.firstCycles = cycles, c.firstGlobal = m.globalNs;
            if (!anyReading || cycles > c.lastCycles) c.lastCycles = cycles, c.lastGlobal = m.globalNs;
            anyReading = true;
        }
    return c;
}

std::vector<HopperSpan> pairMarks(const HopperRawBlock& block, int warpgroup,
                                  const std::vector<double>& times) {
    const std::vector<HopperRawMark>& marks = block.warpgroups[std::size_t(warpgroup)];
    std::vector<HopperSpan> spans;
    std::map<std::pair<HopperMark, int>, std::vector<std::pair<const Pairing*, double>>> open;
    for (std::size_t i = 0; i < marks.size(); ++i) {
        const HopperRawMark& m = marks[i];
        if (i > 0 && times[i] < times[i - 1]) badMarks(block, warpgroup, "marks out of order");
        for (const Pairing& p : kPairings)
            if (p.begin == m.mark) open[{p.end, m.tile}].push_back({&p, times[i]});
        bool closes = false, closed = false;
        for (const Pairing& p : kPairings) closes = closes || p.end == m.mark;
        if (auto it = open.find({m.mark, m.tile}); it != open.end()) {
            for (const auto& [pairing, start] : it->second)
                spans.push_back({warpgroup, pairing->activity, m.tile, start, times[i]});
            open.erase(it);
            closed = true;
        }
        // KIssued ends a buffer wait only from tile Stages on; the rest must close something.
        const bool alsoOpensCopy = m.mark == HopperMark::KIssued || m.mark == HopperMark::VIssued;
        if (closes && !closed && !alsoOpensCopy)
            badMarks(block, warpgroup, "a mark that ends nothing (mark " + std::to_string(int(m.mark)) +
                                           ", tile " + std::to_string(m.tile) + ")");
    }
    if (!open.empty()) badMarks(block, warpgroup, "a span that never ends");
    return spans;
}

// The copies, from the producer's issue to the first consumer that saw them arrive.
void addCopies(const HopperRawBlock& block, const std::vector<std::vector<double>>& times,
               std::vector<HopperSpan>& spans) {
    if (block.warpgroups.empty()) return;
    std::map<std::pair<HopperMark, int>, double> arrived; // (ready mark, tile): the first consumer's
    for (std::size_t wg = 1; wg < block.warpgroups.size(); ++wg)
        for (std::size_t k = 0; k < block.warpgroups[wg].size(); ++k) {
            const HopperRawMark& m = block.warpgroups[wg][k];
            const auto [it, fresh] = arrived.try_emplace({m.mark, m.tile}, times[wg][k]);
            if (!fresh) it->second = std::min(it->second, times[wg][k]);
        }
    for (std::size_t i = 0; i < block.warpgroups[0].size(); ++i) {
        const HopperRawMark& issued = block.warpgroups[0][i];
        for (const CopyPairing& copy : kCopies) {
            if (copy.issued != issued.mark) continue;
            const auto seen = arrived.find({copy.ready, issued.tile});
            if (seen == arrived.end()) badMarks(block, 0, "a copy no consumer saw arrive");
            spans.push_back({0, copy.activity, issued.tile, times[0][i], std::max(seen->second, times[0][i])});
        }
    }
}

// ---- intervals ----
using Interval = std::pair<double, double>;

std::vector<Interval> merged(std::vector<Interval> intervals) {
    std::sort(intervals.begin(), intervals.end());
    std::vector<Interval> out;
    for (const Interval& i : intervals) {
        if (!out.empty() && i.first <= out.back().second) out.back().second = std::max(out.back().second, i.second);
        else out.push_back(i);
    }
    return out;
}

double length(const std::vector<Interval>& disjoint) {
    double total = 0;
    for (const auto& [a, b] : disjoint) total += b - a;
    return total;
}

double overlap(const Interval& span, const std::vector<Interval>& disjoint) {
    double total = 0;
    for (const auto& [a, b] : disjoint) total += std::max(0.0, std::min(b, span.second) - std::max(a, span.first));
    return total;
}

// ---- JSON ----
[[noreturn]] void badFile(const std::string& where, const std::string& what) {
    throw EngineError(ErrorKind::InvalidArgument, "The Hopper trace file " + where + what + ".");
}

const Json& member(const Json& object, const char* key, const std::string& where) {
    if (!object.is_object() || !object.contains(key)) badFile(where, std::string("has no '") + key + "'");
    return object.at(key);
}

int intMember(const Json& object, const char* key, const std::string& where, int least) {
    const Json& value = member(object, key, where);
    if (!value.is_number_integer() || value.get<long long>() < least || value.get<long long>() > (1 << 24))
        badFile(where, std::string("has '") + key + "' not a whole number from " + std::to_string(least) +
                           " to 2^24");
    return value.get<int>();
}

double nonNegative(const Json& value, const std::string& where, const char* what) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
        badFile(where, std::string("has ") + what + " that is not a finite number of nanoseconds >= 0");
    return value.get<double>();
}

std::string stringMember(const Json& object, const char* key, const std::string& where) {
    const Json& value = member(object, key, where);
    if (!value.is_string()) badFile(where, std::string("has '") + key + "' not a string");
    return value.get<std::string>();
}

double rounded(double ns) { return std::round(ns * 10) / 10; }

Json blockJson(const HopperBlockTrace& block) {
    Json spans = Json::array();
    for (const HopperSpan& s : block.spans)
        spans.push_back(Json::array({s.warpgroup, toString(s.activity), s.tile, rounded(s.startNs), rounded(s.endNs)}));
    return Json{{"queryBlock", block.queryBlock}, {"head", block.head}, {"batch", block.batch},
                {"sm", block.sm}, {"spans", spans}};
}

HopperBlockTrace parseBlock(const Json& j, const HopperTrace& trace, const std::string& where) {
    HopperBlockTrace block;
    block.queryBlock = intMember(j, "queryBlock", where, 0);
    block.head = intMember(j, "head", where, 0);
    block.batch = intMember(j, "batch", where, 0);
    block.sm = intMember(j, "sm", where, -1);
    if (block.head >= trace.heads || block.batch >= trace.batch ||
        std::int64_t(block.queryBlock) * trace.config().blockRows() >= trace.queries)
        badFile(where, "is a block the launch does not have");
    const Json& spans = member(j, "spans", where);
    if (!spans.is_array()) badFile(where, "has 'spans' not a list");
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const std::string at = where + "span " + std::to_string(i + 1) + " ";
        const Json& s = spans[i];
        if (!s.is_array() || s.size() != 5) badFile(at, "is not [warpgroup, activity, tile, start, end]");
        HopperSpan span;
        if (!s[0].is_number_integer() || s[0].get<long long>() < 0 ||
            s[0].get<long long>() > trace.config().consumers)
            badFile(at, "names a warpgroup the kernel does not have");
        span.warpgroup = s[0].get<int>();
        const std::string name = s[1].is_string() ? s[1].get<std::string>() : "";
        const auto known = std::find_if(kActivities.begin(), kActivities.end(),
                                        [&](const ActivityName& a) { return name == a.name; });
        if (known == kActivities.end()) badFile(at, "names an unknown activity '" + name + "'");
        span.activity = known->activity;
        const long long keyTiles = (trace.keys + trace.config().blockCols - 1) / trace.config().blockCols;
        if (!s[2].is_number_integer() || s[2].get<long long>() < -1 || s[2].get<long long>() >= keyTiles)
            badFile(at, "has a tile that is not -1 or one of the launch's key tiles");
        span.tile = s[2].get<int>();
        span.startNs = nonNegative(s[3], at, "a start");
        span.endNs = nonNegative(s[4], at, "an end");
        if (span.endNs < span.startNs) badFile(at, "ends before it starts");
        block.spans.push_back(span);
    }
    // As setSpansFromMarks orders them: by warpgroup, then start.
    std::stable_sort(block.spans.begin(), block.spans.end(), [](const HopperSpan& x, const HopperSpan& y) {
        return std::pair(x.warpgroup, x.startNs) < std::pair(y.warpgroup, y.startNs);
    });
    return block;
}

HopperTrace parseTrace(const Json& j, const std::string& where) {
    HopperTrace t;
    t.kernel = stringMember(j, "kernel", where);
    t.configRow = -1;
    for (int i = 0; i < kHopperConfigCount; ++i)
        if (hopperConfigName(kHopperConfigs[i]) == t.kernel) t.configRow = i;
    if (t.configRow < 0) badFile(where, "is of a kernel this FlashViz does not have, " + t.kernel);
    t.element = stringMember(j, "element", where);
    if (t.element != "fp16" && t.element != "bf16") badFile(where, "has an element other than fp16 or bf16");
    const Json& causal = member(j, "causal", where);
    if (!causal.is_boolean()) badFile(where, "has 'causal' not true or false");
    t.causal = causal.get<bool>();
    t.batch = intMember(j, "batch", where, 1);
    t.heads = intMember(j, "heads", where, 1);
    t.queries = intMember(j, "queries", where, 1);
    t.keys = intMember(j, "keys", where, 1);
    t.headDim = intMember(j, "headDim", where, 1);
    if (t.headDim != t.config().headDim) badFile(where, "has a d its kernel is not built for");
    t.device = stringMember(j, "device", where);
    t.recorded = stringMember(j, "recorded", where);
    t.plainKernelNs = nonNegative(member(j, "plainKernelNs", where), where, "'plainKernelNs'");
    t.tracedKernelNs = nonNegative(member(j, "tracedKernelNs", where), where, "'tracedKernelNs'");
    t.nsPerCycle = nonNegative(member(j, "nsPerCycle", where), where, "'nsPerCycle'");
    t.timerStepNs = nonNegative(member(j, "timerStepNs", where), where, "'timerStepNs'");
    const Json& blocks = member(j, "blocks", where);
    if (!blocks.is_array() || blocks.empty()) badFile(where, "has no blocks");
    for (std::size_t i = 0; i < blocks.size(); ++i)
        t.blocks.push_back(parseBlock(blocks[i], t, where + "block " + std::to_string(i + 1) + " "));
    return t;
}

} // namespace

void validateHopperTraceRequest(const HopperTraceRequest& r) {
    auto refuse = [](ErrorKind kind, const std::string& what) {
        throw EngineError(kind, "The Hopper trace: " + what + ".");
    };
    if (r.headDim != 64 && r.headDim != 128)
        refuse(ErrorKind::Unsupported, "the Hopper kernel is built for d = 64 and 128, not " + std::to_string(r.headDim));
    if (r.configRow < -1 || r.configRow >= kHopperConfigCount)
        refuse(ErrorKind::InvalidArgument, "variant " + std::to_string(r.configRow) + " does not exist (0 to " +
                                               std::to_string(kHopperConfigCount - 1) + ", or -1 for the default)");
    if (r.configRow >= 0 && kHopperConfigs[r.configRow].headDim != r.headDim)
        refuse(ErrorKind::InvalidArgument, hopperConfigName(kHopperConfigs[r.configRow]) + " is not built for d = " +
                                               std::to_string(r.headDim));
    if (r.element != "fp16" && r.element != "bf16")
        refuse(ErrorKind::InvalidArgument, "the element type is fp16 or bf16, not '" + r.element + "'");
    auto range = [&](int value, int highest, const char* what) {
        if (value < 1) refuse(ErrorKind::InvalidArgument, std::string(what) + " must be at least 1");
        if (value > highest)
            refuse(ErrorKind::LimitExceeded, std::string(what) + " is at most " + std::to_string(highest) +
                                                 " for a trace (got " + std::to_string(value) + ")");
    };
    range(r.queries, kHopperTraceMaxTokens, "n_q");
    range(r.keys, kHopperTraceMaxTokens, "n_k");
    range(r.heads, kHopperTraceMaxHeads, "heads");
    range(r.batch, kHopperTraceMaxHeads, "batch");
    range(r.heads * r.batch, kHopperTraceMaxHeads, "batch x heads");
    // The marks grow with blocks x key tiles (16 bytes, about 13 per tile per consumer).
    const int row = hopperTraceRow(r);
    if (row >= 0) {
        const HopperConfig& c = kHopperConfigs[row];
        const long long blockTiles = (r.queries + c.blockRows() - 1LL) / c.blockRows() * r.heads * r.batch *
                                     ((r.keys + c.blockCols - 1LL) / c.blockCols);
        if (blockTiles > kHopperTraceMaxBlockTiles)
            refuse(ErrorKind::LimitExceeded,
                   "a trace holds at most " + std::to_string(kHopperTraceMaxBlockTiles) +
                       " (block, key tile) pairs, and this launch has " + std::to_string(blockTiles) +
                       "; take fewer keys, queries or heads");
    }
    range(r.repeats, kHopperTraceMaxRepeats, "the repeat count");
}

int hopperTraceRow(const HopperTraceRequest& r) {
    if (r.configRow >= 0) return r.configRow;
    // The H100's limits (the H200 has the same SMs): what the launcher picks there.
    const HardwareProfile& hopper = findHardwareProfile("h100-sxm");
    return chooseHopperConfig(r.headDim, r.causal, std::size_t(hopper.sharedMemoryPerBlockBytes.value),
                              std::size_t(hopper.sharedMemoryPerSmBytes.value),
                              std::size_t(hopper.reservedSharedPerBlockBytes.value));
}

HopperUnit unitOf(HopperActivity activity) { return entry(activity).unit; }
const char* toString(HopperActivity activity) { return entry(activity).name; }
const char* describe(HopperActivity activity) { return entry(activity).description; }

double HopperBlockTrace::startNs() const {
    double t = std::numeric_limits<double>::infinity();
    for (const HopperSpan& s : spans) t = std::min(t, s.startNs);
    return spans.empty() ? 0 : t;
}

double HopperBlockTrace::endNs() const {
    double t = 0;
    for (const HopperSpan& s : spans) t = std::max(t, s.endNs);
    return t;
}

HopperRawMark unpackMark(const HopperDeviceMark& mark) {
    HopperRawMark m;
    m.mark = HopperMark(mark.markAndTile & 0xFFu);
    m.tile = std::int32_t(mark.markAndTile) >> 8; // arithmetic shift keeps -1
    m.globalNs = mark.globalNs;
    m.clock = mark.clockLow;
    return m;
}

void setSpansFromMarks(HopperTrace& trace, const std::vector<HopperRawBlock>& blocks,
                       double fallbackNsPerCycle) {
    // %globaltimer counts nanoseconds since 1970: ~1.8e18, where a double's step is 256 ns. Every
    // reading is taken from the launch's first in whole numbers before it becomes a double.
    std::uint64_t base = 0;
    for (const HopperRawBlock& block : blocks)
        for (const auto& marks : block.warpgroups)
            for (const HopperRawMark& m : marks)
                if (m.globalNs != 0 && (base == 0 || m.globalNs < base)) base = m.globalNs;
    auto sinceBase = [base](std::uint64_t reading) { return double(reading - base); };
    // One rate for every SM: the sum of the blocks' timer spans over their cycle spans. The
    // timer's step: the smallest move from a Finish's reading to the next (TimerTick).
    double cycles = 0, nanoseconds = 0, step = 0;
    std::vector<BlockClock> clocks;
    for (const HopperRawBlock& block : blocks) {
        for (std::size_t wg = 0; wg < block.warpgroups.size(); ++wg) {
            const auto& marks = block.warpgroups[wg];
            for (std::size_t i = 0; i < marks.size(); ++i) {
                if (marks[i].mark >= HopperMark::Count) badMarks(block, int(wg), "an unknown mark");
                if (marks[i].mark == HopperMark::TimerTick && i > 0 && marks[i - 1].mark == HopperMark::Finish &&
                    marks[i].globalNs > marks[i - 1].globalNs) {
                    const double d = double(marks[i].globalNs - marks[i - 1].globalNs);
                    step = step == 0 ? d : std::min(step, d);
                }
            }
        }
        clocks.push_back(clockOf(block));
        cycles += clocks.back().lastCycles - clocks.back().firstCycles;
        nanoseconds += sinceBase(clocks.back().lastGlobal) - sinceBase(clocks.back().firstGlobal);
    }
    const double fitted = cycles > 0 ? nanoseconds / cycles : 0;
    // A rate from under ~100 timer steps is noise: take the SM clock's nominal rate instead.
    const bool trustFit = cycles > 0 && nanoseconds > 100 * std::max(step, 1.0) && fitted > 0.1 && fitted < 10;
    trace.nsPerCycle = trustFit ? fitted : fallbackNsPerCycle;
    trace.timerStepNs = step;

    // Each block's offset: the timer never runs ahead of the truth (it steps), so the latest
    // offset any mark allows is the tightest.
    std::vector<std::vector<std::vector<double>>> times(blocks.size());
    double launchStart = std::numeric_limits<double>::infinity();
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        double offset = -std::numeric_limits<double>::infinity();
        for (const auto& marks : blocks[b].warpgroups)
            for (const HopperRawMark& m : marks)
                if (m.globalNs != 0)
                    offset = std::max(offset, sinceBase(m.globalNs) -
                                                  cyclesAfter(m.clock, clocks[b].reference) * trace.nsPerCycle);
        if (!std::isfinite(offset)) badMarks(blocks[b], 0, "no reading of %globaltimer");
        for (const auto& marks : blocks[b].warpgroups) {
            times[b].emplace_back();
            for (const HopperRawMark& m : marks) {
                times[b].back().push_back(offset + cyclesAfter(m.clock, clocks[b].reference) * trace.nsPerCycle);
                launchStart = std::min(launchStart, times[b].back().back());
            }
        }
    }
    trace.blocks.clear();
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        for (auto& wg : times[b])
            for (double& t : wg) t -= launchStart;
        HopperBlockTrace out;
        out.queryBlock = blocks[b].queryBlock;
        out.head = blocks[b].head;
        out.batch = blocks[b].batch;
        out.sm = blocks[b].sm;
        for (std::size_t wg = 0; wg < blocks[b].warpgroups.size(); ++wg) {
            std::vector<HopperSpan> spans = pairMarks(blocks[b], int(wg), times[b][wg]);
            out.spans.insert(out.spans.end(), spans.begin(), spans.end());
        }
        addCopies(blocks[b], times[b], out.spans);
        std::stable_sort(out.spans.begin(), out.spans.end(), [](const HopperSpan& x, const HopperSpan& y) {
            return std::pair(x.warpgroup, x.startNs) < std::pair(y.warpgroup, y.startNs);
        });
        trace.blocks.push_back(std::move(out));
    }
}

// The shortest span of this kind that no softmax or store of its warpgroup ran beside: a product
// waited for at once, the nearest the trace comes to its own time on the tensor cores.
double shortestWaitedAtOnce(const HopperBlockTrace& block, HopperActivity kind) {
    double shortest = 0;
    for (const HopperSpan& product : block.spans) {
        if (product.activity != kind) continue;
        const bool beside = std::any_of(block.spans.begin(), block.spans.end(), [&](const HopperSpan& s) {
            return s.warpgroup == product.warpgroup && unitOf(s.activity) == HopperUnit::CudaCores &&
                   s.startNs < product.endNs && s.endNs > product.startNs;
        });
        if (!beside && (shortest == 0 || product.durationNs() < shortest)) shortest = product.durationNs();
    }
    return shortest;
}

HopperBlockSummary summarize(const HopperBlockTrace& block, int warpgroups) {
    HopperBlockSummary s;
    s.durationNs = block.endNs() - block.startNs();
    s.warpgroups.resize(std::size_t(std::max(warpgroups, 0)));
    s.scoresOwnNs = shortestWaitedAtOnce(block, HopperActivity::Scores);
    s.valuesOwnNs = shortestWaitedAtOnce(block, HopperActivity::Values);
    std::vector<Interval> allProducts;
    std::vector<std::vector<Interval>> products(s.warpgroups.size()), waits(s.warpgroups.size()),
        copies(s.warpgroups.size());
    for (const HopperSpan& span : block.spans) {
        if (span.warpgroup < 0 || span.warpgroup >= warpgroups) continue;
        const std::size_t wg = std::size_t(span.warpgroup);
        const Interval i{span.startNs, span.endNs};
        switch (unitOf(span.activity)) {
        case HopperUnit::TensorCores:
            products[wg].push_back(i), allProducts.push_back(i);
            s.tensorWorkNs += span.activity == HopperActivity::Scores ? s.scoresOwnNs : s.valuesOwnNs;
            break;
        case HopperUnit::CudaCores: s.warpgroups[wg].cudaCoresNs += span.durationNs(); break;
        case HopperUnit::Waiting: waits[wg].push_back(i); break;
        case HopperUnit::CopyEngine: copies[wg].push_back(i); break;
        }
    }
    const std::vector<Interval> outstanding = merged(allProducts);
    s.outstandingNs = length(outstanding);
    // Products of several consumers in flight together share the tensor cores, so their shortest
    // times may add up past the time any was outstanding: never more than that.
    s.tensorWorkNs = std::min(s.tensorWorkNs, s.outstandingNs);
    for (const HopperSpan& span : block.spans)
        if (span.activity == HopperActivity::Softmax) {
            s.softmaxNs += span.durationNs();
            s.softmaxBesideProductsNs += overlap({span.startNs, span.endNs}, outstanding);
        }
    for (std::size_t wg = 0; wg < s.warpgroups.size(); ++wg) {
        s.warpgroups[wg].outstandingNs = length(merged(products[wg]));
        s.warpgroups[wg].waitingNs = length(merged(waits[wg]));
        s.warpgroups[wg].copyNs = length(merged(copies[wg]));
    }
    return s;
}

int longestBlock(const HopperTrace& trace) {
    int best = 0;
    for (int i = 1; i < int(trace.blocks.size()); ++i) {
        const auto& a = trace.blocks[std::size_t(i)];
        const auto& b = trace.blocks[std::size_t(best)];
        if (a.endNs() - a.startNs() > b.endNs() - b.startNs()) best = i;
    }
    return best;
}

std::string hopperTracesJson(const std::vector<HopperTrace>& traces) {
    Json list = Json::array();
    for (const HopperTrace& t : traces) {
        Json blocks = Json::array();
        for (const HopperBlockTrace& b : t.blocks) blocks.push_back(blockJson(b));
        list.push_back(Json{{"kernel", t.kernel}, {"element", t.element}, {"causal", t.causal},
                            {"batch", t.batch}, {"heads", t.heads}, {"queries", t.queries},
                            {"keys", t.keys}, {"headDim", t.headDim}, {"device", t.device},
                            {"recorded", t.recorded}, {"plainKernelNs", rounded(t.plainKernelNs)},
                            {"tracedKernelNs", rounded(t.tracedKernelNs)},
                            {"nsPerCycle", std::round(t.nsPerCycle * 1e6) / 1e6},
                            {"timerStepNs", rounded(t.timerStepNs)}, {"blocks", blocks}});
    }
    return Json{{"format", kHopperTraceFormat}, {"version", kHopperTraceVersion}, {"traces", list}}.dump() + "\n";
}

std::vector<HopperTrace> parseHopperTraces(const std::string& text) {
    const Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded()) badFile("", "is not JSON");
    if (!j.is_object() || !j.contains("format") || j["format"] != kHopperTraceFormat)
        badFile("", std::string("is not a ") + kHopperTraceFormat + " file");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kHopperTraceVersion)
        badFile("", "has a version other than " + std::to_string(kHopperTraceVersion) + ", which this FlashViz reads");
    const Json& traces = member(j, "traces", "");
    if (!traces.is_array() || traces.empty()) badFile("", "holds no traces");
    std::vector<HopperTrace> out;
    for (std::size_t i = 0; i < traces.size(); ++i)
        out.push_back(parseTrace(traces[i], "'s trace " + std::to_string(i + 1) + " "));
    return out;
}

} // namespace flashviz::kernels
