#include "core/l2_traffic.h"

#include "core/counters.h"
#include "core/errors.h"
#include "core/options.h"
#include "core/tiling.h"
#include "core/units.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace flashviz {

namespace {

void require(bool ok, const std::string& what) {
    if (!ok) throw EngineError(ErrorKind::InvalidArgument, what);
}

void validateShape(const TrafficShape& s, const HardwareProfile& hw) {
    require(s.queries >= 1 && s.keys >= 1 && s.headDim >= 1 && s.batch >= 1 && s.heads >= 1,
            "The traffic model needs n_q, n_k, d, batch and heads of at least 1");
    require(s.elementBytes == 2 || s.elementBytes == 4,
            "The traffic model takes elements of 2 bytes (fp16, bf16) or 4 (fp32)");
    require(hw.l2Bytes.value > 0, "The hardware profile '" + hw.id + "' has no L2 size");
    require(s.residentBlocks >= 0, "The traffic model needs at least 0 resident thread blocks");
    if (s.method == TrafficMethod::Flash)
        require(s.blockRows >= 1 && s.blockCols >= 1, "The traffic model needs Br and Bc of at least 1");
    else
        require(s.elementBytes == 4 && s.gemmTile >= 1,
                "The traffic model's standard attention is FlashViz's fp32 three-step method, "
                "with a GEMM tile of at least 1");
}

double headsOf(const TrafficShape& s) {
    return double(s.batch) * s.heads;
}

// The counting model's per-head counts at this element size, for every head.
LevelBytes countingBytes(const TrafficShape& s) {
    Counters c;
    if (s.method == TrafficMethod::Flash) {
        FlashOptions options;
        options.blockRows = std::min(s.blockRows, s.queries);
        options.blockCols = std::min(s.blockCols, s.keys);
        options.loopOrder = LoopOrder::QueryOuter; // FlashViz's GPU kernels
        c = flashCounts(s.queries, s.keys, s.headDim, s.causal, options);
    } else {
        c = standardCounts(s.queries, s.keys, s.headDim);
    }
    const double scale = headsOf(s) * s.elementBytes / double(kBytesPerElement);
    return {double(c.hbmReadBytes) * scale, double(c.hbmWriteBytes) * scale};
}

void flashEstimate(const TrafficShape& s, const HardwareProfile& hw, TrafficEstimate& e) {
    const double heads = headsOf(s);
    const double nq = s.queries, nk = s.keys, d = s.headDim, bytes = s.elementBytes;
    const double statistics = s.writesRowStatistics ? heads * nq * 2 * 4 : 0; // m and ℓ, fp32
    e.l2 = {e.counting.read, e.counting.write + statistics};

    const double queryBlocks = blockCount(s.queries, std::min(s.blockRows, s.queries));
    const double resident = s.residentBlocks > 0 ? s.residentBlocks : hw.smCount.value;
    const double keyValuePerHead = 2 * nk * d * bytes;
    const double headsAtOnce = std::min(heads, std::ceil(resident / queryBlocks) + 1);
    e.workingSetBytes = headsAtOnce * keyValuePerHead;
    e.workingSetFits = e.workingSetBytes <= e.usableL2Bytes;
    const bool inStep = queryBlocks <= resident;
    e.keyValuePasses = inStep || keyValuePerHead <= e.usableL2Bytes
                           ? 1
                           : std::ceil(queryBlocks / resident);
    e.dram = {heads * (nq * d * bytes + e.keyValuePasses * keyValuePerHead),
              heads * nq * d * bytes + statistics};

    e.assumptions.push_back("the launch starts with an empty L2");
    e.assumptions.push_back(
        "SMs read Q once, K and V once per query block and write O once, as the counting model "
        "counts them");
    e.assumptions.push_back(
        inStep ? "all query blocks of a head run at once and walk through K and V in step, so "
                 "DRAM sends each head's K and V once"
               : (e.keyValuePasses == 1
                      ? "a head's query blocks run in several waves, and its K and V (" +
                            formatByteAmount(keyValuePerHead) + ") stay in the usable L2 between them"
                      : "a head's K and V (" + formatByteAmount(keyValuePerHead) +
                            ") do not fit in the usable L2, so DRAM sends them once per wave"));
    e.assumptions.push_back("DRAM writes O once (lines still in L2 at the end are written later)");
}

void standardEstimate(const TrafficShape& s, TrafficEstimate& e) {
    const double heads = headsOf(s);
    const double nq = s.queries, nk = s.keys, d = s.headDim, b = 4;
    const double tile = s.gemmTile;
    const double rowTiles = std::ceil(nq / tile), keyTiles = std::ceil(nk / tile),
                 dimTiles = std::ceil(d / tile);
    const double scores = heads * nq * nk * b;
    // S = Q Kᵀ: Q once per key tile, K once per row tile; the softmax: S twice, P once; O = P V:
    // P once per column tile of O, V once per row tile.
    const double gemm1 = heads * (keyTiles * nq * d + rowTiles * nk * d) * b;
    const double gemm2 = dimTiles * scores + heads * rowTiles * nk * d * b;
    e.l2 = {gemm1 + 2 * scores + gemm2, scores + scores + heads * nq * d * b};

    e.workingSetBytes = scores;
    e.workingSetFits = scores <= e.usableL2Bytes;
    const bool kept = e.workingSetFits && !s.flushedBetweenKernels;
    const double inputs = heads * (nq * d + 2 * nk * d) * b;
    e.dram = {inputs + (kept ? 0 : 2 * scores), heads * nq * d * b + (kept ? 0 : 2 * scores)};

    e.assumptions.push_back(s.flushedBetweenKernels ? "each kernel starts with an empty L2"
                                                    : "L2 keeps its data between the kernels");
    e.assumptions.push_back(
        kept ? "S and P (" + formatByteAmount(scores) + ") fit in the usable L2 and never reach DRAM"
             : "S and P (" + formatByteAmount(scores) + ") go to DRAM and back between the kernels");
    e.assumptions.push_back("cuBLAS's GEMMs read each operand once per " + std::to_string(s.gemmTile) +
                            " x " + std::to_string(s.gemmTile) +
                            " output tile (an assumed tile), the softmax reads S twice");
}

double relativeError(double model, double measured) {
    return measured > 0 ? model / measured - 1 : (model > 0 ? INFINITY : 0);
}

// A relative error with its sign: "+3.6 %", "-14 %".
std::string percent(double error) {
    return (error >= 0 ? "+" : "-") + formatPercent(std::abs(error));
}

// The sizes every launch has; the method's own fields keep their defaults.
TrafficShape sizedShape(TrafficMethod method, int queries, int keys, int headDim, int batch,
                        int heads, bool causal) {
    TrafficShape s;
    s.method = method;
    s.queries = queries;
    s.keys = keys;
    s.headDim = headDim;
    s.batch = batch;
    s.heads = heads;
    s.causal = causal;
    return s;
}

using Json = nlohmann::json;

double numberAt(const Json& object, const char* key, const std::string& where) {
    const auto it = object.find(key);
    require(it != object.end() && it->is_number() && std::isfinite(it->get<double>()) &&
                it->get<double>() >= 0,
            "The measured traffic " + where + " needs a number '" + key + "' of at least 0");
    return it->get<double>();
}

std::string textAt(const Json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int wholeAt(const Json& object, const char* key, const std::string& where) {
    const double value = numberAt(object, key, where);
    require(value == std::floor(value) && value <= 1 << 30,
            "The measured traffic " + where + " needs a whole number '" + key + "'");
    return int(value);
}

// One entry: its shape from the method's name (cublas-3step, flash-<fp32 kernel>,
// tc-<fp16|bf16>-<kernel>) and the sizes; its resident blocks from its kernel's waves.
MeasuredTraffic parsePoint(const Json& p, std::size_t index) {
    const std::string where = "entry " + std::to_string(index + 1);
    require(p.is_object(), "The measured traffic " + where + " is not an object");
    MeasuredTraffic m;
    m.method = textAt(p, "method");
    m.variant = textAt(p, "variant");
    TrafficShape& s = m.shape;
    if (m.method == "cublas-3step") {
        s.method = TrafficMethod::Standard;
    } else if (m.method.rfind("flash-", 0) == 0) {
        s.writesRowStatistics = true;
    } else if (m.method.rfind("tc-fp16-", 0) == 0 || m.method.rfind("tc-bf16-", 0) == 0) {
        s.elementBytes = 2;
    } else {
        require(false, "The measured traffic " + where + " has an unknown method '" + m.method + "'");
    }
    s.headDim = wholeAt(p, "d", where);
    s.queries = s.keys = wholeAt(p, "n", where);
    s.batch = wholeAt(p, "batch", where);
    s.heads = wholeAt(p, "heads", where);
    if (s.method == TrafficMethod::Flash) {
        s.blockRows = wholeAt(p, "blockRows", where);
        s.blockCols = wholeAt(p, "blockCols", where);
        const auto kernels = p.find("kernels");
        if (kernels != p.end() && kernels->is_array() && kernels->size() == 1) {
            const Json& k = kernels->front();
            const auto waves = k.find("waves");
            if (waves != k.end() && waves->is_number() && waves->get<double>() > 0)
                s.residentBlocks = int(std::lround(numberAt(k, "grid", where) / waves->get<double>()));
        }
    }
    m.dramReadBytes = numberAt(p, "dramReadBytes", where);
    m.dramWriteBytes = numberAt(p, "dramWriteBytes", where);
    m.l2Bytes = numberAt(p, "l2Bytes", where);
    m.durationNs = numberAt(p, "durationNs", where);
    // The breakdown is optional (older files, GPUs without the metrics) but checked when there.
    const auto optional = [&](const char* key) {
        return p.contains(key) ? numberAt(p, key, where) : -1.0;
    };
    m.l2FromSmBytes = optional("l2FromSmBytes");
    m.l2FabricBytes = optional("l2FabricBytes");
    if (p.contains("localLoadBytes") || p.contains("localStoreBytes"))
        m.localBytes = std::max(0.0, optional("localLoadBytes")) +
                       std::max(0.0, optional("localStoreBytes"));
    return m;
}

} // namespace

std::string hardwareIdForGpu(const std::string& gpuName) {
    const auto has = [&](const char* part) { return gpuName.find(part) != std::string::npos; };
    if (has("H200")) return "h200";
    if (has("H100")) return "h100-sxm";
    if (has("A100")) return has("80GB") || has("80 GB") ? "a100-80gb" : "a100-40gb";
    return {};
}

MeasuredTrafficFile parseMeasuredTraffic(const std::string& text) {
    const Json root = Json::parse(text, nullptr, false);
    require(!root.is_discarded() && root.is_object(), "The measured traffic is not a JSON object");
    require(textAt(root, "format") == "flashviz-measured-traffic",
            "The file is not FlashViz's measured traffic (its \"format\" is not "
            "'flashviz-measured-traffic')");
    MeasuredTrafficFile file;
    file.gpu = textAt(root, "gpu");
    file.date = textAt(root, "date");
    file.driver = textAt(root, "driver");
    file.nvcc = textAt(root, "nvcc");
    file.ncu = textAt(root, "ncu");
    file.hardwareId = hardwareIdForGpu(file.gpu);
    const auto bandwidth = root.find("bandwidth");
    if (bandwidth != root.end() && bandwidth->is_object()) {
        const auto rate = [&](const char* key) {
            const auto it = bandwidth->find(key);
            return it != bandwidth->end() && it->is_number() ? it->get<double>() : 0.0;
        };
        file.l2ReadBytesPerSecond = rate("l2ReadBytesPerSecond");
        file.dramReadBytesPerSecond = rate("dramReadBytesPerSecond");
        file.l2SizeBytes = rate("l2Bytes");
    }
    const auto points = root.find("points");
    require(points != root.end() && points->is_array() && !points->empty(),
            "The measured traffic has no 'points'");
    for (std::size_t i = 0; i < points->size(); ++i) file.points.push_back(parsePoint((*points)[i], i));
    return file;
}

double usableL2Bytes(const HardwareProfile& hardware) {
    return hardware.l2Bytes.value / 2;
}

TrafficEstimate estimateTraffic(const TrafficShape& shape, const HardwareProfile& hardware) {
    validateShape(shape, hardware);
    TrafficEstimate e;
    e.usableL2Bytes = usableL2Bytes(hardware);
    e.counting = countingBytes(shape);
    if (shape.method == TrafficMethod::Flash)
        flashEstimate(shape, hardware, e);
    else
        standardEstimate(shape, e);
    e.assumptions.push_back("half the L2 (" + formatByteAmount(e.usableL2Bytes) +
                            ") holds one working set: lines read on both sides are held twice");
    return e;
}

TrafficShape flashLaunchShape(int queries, int keys, int headDim, int batch, int heads, bool causal,
                              const KernelShape& kernel, const HardwareProfile& hardware) {
    TrafficShape s = sizedShape(TrafficMethod::Flash, queries, keys, headDim, batch, heads, causal);
    s.elementBytes = kernel.elementBytes;
    s.blockRows = kernel.blockRows;
    s.blockCols = kernel.blockCols;
    try {
        s.residentBlocks = occupancy(kernel, hardware).blocksPerSm * int(hardware.smCount.value);
    } catch (const EngineError&) {
        s.residentBlocks = 0; // fits no SM: the model's one block per SM
    }
    return s;
}

TrafficShape standardLaunchShape(int queries, int keys, int headDim, int batch, int heads,
                                 bool causal) {
    return sizedShape(TrafficMethod::Standard, queries, keys, headDim, batch, heads, causal);
}

namespace {

// Why the counting model misses the L2 counter of a flash kernel: what the counter holds besides
// the SMs' requests (lines crossing between L2's two partitions, spills), and how far the count
// is from those requests alone, where the measurement has the breakdown.
std::string countingMissReason(const TrafficCheck& c, const MeasuredTraffic& m) {
    std::string reason = "the counting model is " + percent(c.countingL2Error) + " off the L2 counter";
    if (m.l2FromSmBytes < 0 || m.l2FabricBytes < 0)
        return reason + ", which also counts the kernel's other requests";
    std::vector<std::string> parts;
    if (m.l2FabricBytes > 0.05 * m.l2Bytes)
        parts.push_back(formatPercent(m.l2FabricBytes / m.l2Bytes) +
                        " of it is lines crossing between L2's two halves");
    if (m.localBytes > 0.05 * m.l2Bytes)
        parts.push_back("the kernel's local memory (register spills) moves " +
                        formatByteAmount(m.localBytes) + " through L1");
    const double fromSm = relativeError(c.model.counting.total(), m.l2FromSmBytes);
    parts.push_back(std::abs(fromSm) <= kTrafficTolerance
                        ? "against the SMs' own requests it is within " +
                              formatPercent(kTrafficTolerance) + " (" + percent(fromSm) + ")"
                        : "against the SMs' own requests it is " + percent(fromSm) +
                              (fromSm > 0 ? " off (the SMs asked L2 for fewer bytes than counted)"
                                          : " off (the SMs asked L2 for more bytes than counted)"));
    for (std::size_t i = 0; i < parts.size(); ++i)
        reason += (i == 0 ? ": " : i + 1 == parts.size() ? "; and " : "; ") + parts[i];
    return reason;
}

} // namespace

TrafficCheck checkTraffic(const MeasuredTraffic& m, const HardwareProfile& hardware) {
    TrafficCheck c;
    c.model = estimateTraffic(m.shape, hardware);
    c.dramError = relativeError(c.model.dram.total(), m.dramReadBytes + m.dramWriteBytes);
    c.dramReadError = relativeError(c.model.dram.read, m.dramReadBytes);
    c.dramWriteError = relativeError(c.model.dram.write, m.dramWriteBytes);
    c.l2Error = relativeError(c.model.l2.total(), m.l2Bytes);
    c.countingL2Error = relativeError(c.model.counting.total(), m.l2Bytes);
    c.dramWithin = std::abs(c.dramError) <= kTrafficTolerance;
    c.l2Within = std::abs(c.l2Error) <= kTrafficTolerance;
    c.countingWithin = std::abs(c.countingL2Error) <= kTrafficTolerance;

    std::vector<std::string> why;
    if (c.dramWriteError > kTrafficTolerance)
        // model / measured = 1 + e, so the measured writes fall short of the model by e / (1 + e).
        why.push_back("DRAM wrote " + formatPercent(c.dramWriteError / (1 + c.dramWriteError)) +
                      " less than the output: its last lines were still in L2 when the kernel "
                      "ended");
    if (!c.dramWithin && c.dramReadError > kTrafficTolerance)
        why.push_back("DRAM read less than the model: more re-reads hit in L2 than it assumes");
    if (!c.dramWithin && c.dramReadError < -kTrafficTolerance)
        why.push_back("DRAM read more than the model: re-reads missed in L2");
    if (!c.countingWithin && m.shape.method == TrafficMethod::Standard)
        why.push_back("the counting model moves each matrix once, but cuBLAS's GEMMs read their "
                      "operands once per output tile and the softmax reads S twice");
    else if (!c.countingWithin)
        why.push_back(countingMissReason(c, m));
    if (!c.l2Within && m.shape.method == TrafficMethod::Standard)
        why.push_back("the L2 model is " + percent(c.l2Error) +
                      " off: cuBLAS's real tiles differ from the assumed " +
                      std::to_string(m.shape.gemmTile) + " x " + std::to_string(m.shape.gemmTile));
    for (std::size_t i = 0; i < why.size(); ++i) c.why += (i ? "; " : "") + why[i];
    if (!c.why.empty()) c.why[0] = char(std::toupper(static_cast<unsigned char>(c.why[0])));
    if (!c.why.empty()) c.why += ".";
    return c;
}

} // namespace flashviz
