#include "core/step_export.h"

#include "core/errors.h"

#include <cmath>
#include <set>
#include <string_view>

namespace flashviz {

namespace {

using Json = nlohmann::ordered_json;

// Which problem index a value's row or column stands for.
enum class Axis { Query, Key, Dim };

const char* toString(Axis axis) {
    switch (axis) {
    case Axis::Query:
        return "query";
    case Axis::Key:
        return "key";
    case Axis::Dim:
        return "dim";
    }
    return "";
}

struct MatrixQuantity {
    const char* name;
    Matrix StepState::*field;
    Axis rows;
    Axis cols;
    const char* what;
};

struct VectorQuantity {
    const char* name;
    Vector StepState::*field;
    const char* what;
};

// Every value a StepState carries, in the order a tile computes them; rows of a vector are query
// rows.
const std::vector<MatrixQuantity>& matrixQuantities() {
    static const std::vector<MatrixQuantity> quantities{
        {"Q", &StepState::query, Axis::Query, Axis::Dim, "the query tile Q_i on chip"},
        {"K", &StepState::key, Axis::Key, Axis::Dim, "the key tile K_j on chip"},
        {"V", &StepState::value, Axis::Key, Axis::Dim, "the value tile V_j on chip"},
        {"S", &StepState::scores, Axis::Query, Axis::Key,
         "the score tile S_ij = scale * Q_i K_j^T (masked scores are -inf)"},
        {"P", &StepState::weights, Axis::Query, Axis::Key,
         "the weights P_ij: exp(S_ij - m_new) forward, exp(S_ij - L_i) backward"},
        {"acc_old", &StepState::accOld, Axis::Query, Axis::Dim,
         "the output accumulator before this tile"},
        {"acc_new", &StepState::accNew, Axis::Query, Axis::Dim,
         "the output accumulator after this tile: correction * acc_old + P_ij V_j"},
        {"O", &StepState::output, Axis::Query, Axis::Dim,
         "rows of the output O once normalised (the backward's pre-pass: the forward's O)"},
        {"dO", &StepState::dO, Axis::Query, Axis::Dim, "the upstream gradient's rows dO_i"},
        {"dP", &StepState::dP, Axis::Query, Axis::Key, "dP_ij = dO_i V_j^T"},
        {"dS", &StepState::dS, Axis::Query, Axis::Key, "dS_ij = P_ij * (dP_ij - D_i)"},
        {"dQ_old", &StepState::dQOld, Axis::Query, Axis::Dim, "dQ_i in HBM before this tile"},
        {"dQ_new", &StepState::dQNew, Axis::Query, Axis::Dim, "dQ_i in HBM after this step"},
        {"dK_old", &StepState::dKOld, Axis::Key, Axis::Dim, "dK_j on chip before this tile"},
        {"dK_new", &StepState::dKNew, Axis::Key, Axis::Dim, "dK_j on chip after this step"},
        {"dV_old", &StepState::dVOld, Axis::Key, Axis::Dim, "dV_j on chip before this tile"},
        {"dV_new", &StepState::dVNew, Axis::Key, Axis::Dim, "dV_j on chip after this step"},
    };
    return quantities;
}

const std::vector<VectorQuantity>& vectorQuantities() {
    static const std::vector<VectorQuantity> quantities{
        {"m_old", &StepState::mOld, "the running maximum m before this tile"},
        {"m_new", &StepState::mNew, "the running maximum m after this tile"},
        {"l_old", &StepState::lOld, "the running sum l before this tile"},
        {"l_new", &StepState::lNew, "the running sum l after this tile"},
        {"correction", &StepState::correction, "the rescale exp(m_old - m_new) of l and acc"},
        {"L", &StepState::lse, "the forward's log-sum-exp L_i = m + log l"},
        {"D", &StepState::delta, "the pre-pass's D_i = rowsum(dO_i * O_i)"},
    };
    return quantities;
}

constexpr const char* kNonFiniteNote =
    "numbers that are not finite are written as the strings \"inf\", \"-inf\" and \"nan\"";

// Numbers as JSON numbers; inf and NaN, which JSON has no numbers for, as strings (counted).
class NumberWriter {
  public:
    Json number(double value) {
        if (std::isfinite(value)) return value;
        ++m_nonFinite;
        return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
    }
    Json vector(const Vector& v) {
        Json list = Json::array();
        for (Eigen::Index i = 0; i < v.size(); ++i)
            list.push_back(number(v(i)));
        return list;
    }
    Json matrix(const Matrix& m) {
        Json rows = Json::array();
        for (Eigen::Index r = 0; r < m.rows(); ++r) {
            Json row = Json::array();
            for (Eigen::Index c = 0; c < m.cols(); ++c)
                row.push_back(number(m(r, c)));
            rows.push_back(std::move(row));
        }
        return rows;
    }
    std::uint64_t nonFinite() const { return m_nonFinite; }

  private:
    std::uint64_t m_nonFinite = 0;
};

int firstIndex(Axis axis, const StepInfo& info) {
    switch (axis) {
    case Axis::Query:
        return info.rows.begin;
    case Axis::Key:
        return info.cols.begin;
    case Axis::Dim:
        return 0;
    }
    return 0;
}

Json inputsJson(const ProblemSpec& spec) {
    if (spec.files) {
        Json files{
            {"kind", "files"}, {"q", spec.files->q}, {"k", spec.files->k}, {"v", spec.files->v}};
        if (!spec.files->upstream.empty()) files["dO"] = spec.files->upstream;
        if (spec.files->head) files["head"] = *spec.files->head;
        files["seed"] = spec.seed;
        return files;
    }
    if (spec.design) {
        Json rows = Json::array();
        for (const RowMaximum& row : spec.design->rows)
            rows.push_back({{"key_block", row.keyBlock}, {"sharpness", row.sharpness}});
        return {{"kind", "design"},
                {"block_size", spec.design->blockSize},
                {"rows", rows},
                {"seed", spec.seed}};
    }
    return {{"kind", "pattern"}, {"pattern", toString(spec.pattern)}, {"seed", spec.seed}};
}

Json problemJson(const Problem& problem) {
    const ProblemSpec& spec = problem.spec;
    return {{"n_q", spec.queries},       {"n_k", spec.keys},
            {"d", spec.headDim},         {"scale", problem.scale()},
            {"causal", spec.causal},     {"precision", toString(spec.precision)},
            {"inputs", inputsJson(spec)}};
}

Json optionsJson(Algorithm algorithm, const FlashOptions& options) {
    Json j{{"algorithm", toString(algorithm)},
           {"br", options.blockRows},
           {"bc", options.blockCols},
           {"loop_order", toString(options.loopOrder)},
           {"rescale", options.rescale},
           {"running_max", options.runningMax},
           {"keep_full_s", options.keepFullScores}};
    if (algorithm == Algorithm::Backward) {
        Json switches = Json::object();
        for (const BackwardSwitch& flag : backwardSwitches())
            switches[flag.name] = isOn(options.backward, flag);
        j["backward"] = switches;
    }
    return j;
}

Json blockJson(int block) {
    return block < 0 ? Json(nullptr) : Json(block);
}

Json tileJson(const StepInfo& info) {
    return {{"i", blockJson(info.queryBlock)},
            {"j", blockJson(info.keyBlock)},
            {"rows", {info.rows.begin, info.rows.end}},
            {"cols", {info.cols.begin, info.cols.end}},
            {"last_key_block", info.lastKeyBlock}};
}

// This step's own traffic and FLOPs: the totals through it less those before it.
Json countersThisStepJson(const StepEngine& engine, const StepState& state) {
    const Counters before =
        state.info.index > 0 ? engine.countersThrough(state.info.index - 1) : Counters{};
    const Counters& after = state.counters;
    return {{"hbm_read_bytes", after.hbmReadBytes - before.hbmReadBytes},
            {"hbm_write_bytes", after.hbmWriteBytes - before.hbmWriteBytes},
            {"flops", after.flops - before.flops}};
}

Json valuesJson(const StepState& state, NumberWriter& numbers, std::set<std::string>& used) {
    Json values = Json::object();
    for (const VectorQuantity& q : vectorQuantities()) {
        const Vector& v = state.*q.field;
        if (!v.size()) continue;
        values[q.name] = {{"rows", toString(Axis::Query)},
                          {"first_row", firstIndex(Axis::Query, state.info)},
                          {"data", numbers.vector(v)}};
        used.insert(q.name);
    }
    for (const MatrixQuantity& q : matrixQuantities()) {
        const Matrix& m = state.*q.field;
        if (!m.size()) continue;
        values[q.name] = {{"rows", toString(q.rows)},
                          {"first_row", firstIndex(q.rows, state.info)},
                          {"cols", toString(q.cols)},
                          {"first_col", firstIndex(q.cols, state.info)},
                          {"data", numbers.matrix(m)}};
        used.insert(q.name);
    }
    return values;
}

Json stepJson(const StepEngine& engine, const StepState& state, NumberWriter& numbers,
              std::set<std::string>& used) {
    const StepInfo& info = state.info;
    return {{"step", info.index},
            {"kind", toString(info.kind)},
            {"sentence", describe(info.kind, engine.options(), engine.algorithm())},
            {"blocks", describeBlocks(info, engine.algorithm())},
            {"tile", tileJson(info)},
            {"counters", countersJson(state.counters)},
            {"counters_this_step", countersThisStepJson(engine, state)},
            {"sram_elements", state.sramElements},
            {"sram_bytes", state.sramElements * kBytesPerElement},
            {"values", valuesJson(state, numbers, used)}};
}

// What each value written is, in the order of the tables.
Json legendJson(const std::set<std::string>& used) {
    Json legend = Json::object();
    for (const VectorQuantity& q : vectorQuantities())
        if (used.count(q.name)) legend[q.name] = q.what;
    for (const MatrixQuantity& q : matrixQuantities())
        if (used.count(q.name)) legend[q.name] = q.what;
    return legend;
}

void requireStep(const StepEngine& engine, int step) {
    if (step < 0 || step >= engine.stepCount())
        throw EngineError(ErrorKind::InvalidArgument,
                          "step data: step " + std::to_string(step) + " is not one of this run's " +
                              std::to_string(engine.stepCount()) + " steps (0 to " +
                              std::to_string(engine.stepCount() - 1) + ")");
}

// CSV, as RFC 4180 quotes a field: only when it holds a comma, a quote or a line break.
std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + '"';
}

// A scalar as a cell: text as it is (inf, nan included), null empty, numbers as JSON writes them
// (the shortest text that reads back to the same double).
std::string csvValue(const Json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_null()) return {};
    return value.dump();
}

struct CsvWriter {
    std::string text;
    void line(const std::string& step, const std::string& kind, const std::string& quantity,
              const std::string& row, const std::string& col, const Json& value) {
        text += step + ',' + csvField(kind) + ',' + csvField(quantity) + ',' + row + ',' + col +
                ',' + csvField(csvValue(value)) + '\n';
    }
    // Objects as "a.b", arrays as "a[0]", down to the scalars.
    void fields(const std::string& step, const std::string& kind, const std::string& prefix,
                const Json& value) {
        if (value.is_object()) {
            for (auto it = value.begin(); it != value.end(); ++it)
                fields(step, kind, prefix.empty() ? it.key() : prefix + '.' + it.key(), *it);
        } else if (value.is_array()) {
            for (std::size_t i = 0; i < value.size(); ++i)
                fields(step, kind, prefix + '[' + std::to_string(i) + ']', value[i]);
        } else {
            line(step, kind, prefix, {}, {}, value);
        }
    }
    void values(const std::string& step, const std::string& kind, const Json& values) {
        for (auto it = values.begin(); it != values.end(); ++it) {
            const Json& q = *it;
            const int firstRow = q.at("first_row").get<int>();
            const Json& data = q.at("data");
            if (!q.contains("cols")) {
                for (std::size_t r = 0; r < data.size(); ++r)
                    line(step, kind, it.key(), std::to_string(firstRow + int(r)), {}, data[r]);
                continue;
            }
            const int firstCol = q.at("first_col").get<int>();
            for (std::size_t r = 0; r < data.size(); ++r)
                for (std::size_t c = 0; c < data[r].size(); ++c)
                    line(step, kind, it.key(), std::to_string(firstRow + int(r)),
                         std::to_string(firstCol + int(c)), data[r][c]);
        }
    }
};

} // namespace

nlohmann::ordered_json countersJson(const Counters& c) {
    return {{"hbm_bytes", c.hbmBytes()},
            {"hbm_read_bytes", c.hbmReadBytes},
            {"hbm_write_bytes", c.hbmWriteBytes},
            {"flops", c.flops},
            {"peak_scratch_floats", c.peakScratchElements}};
}

nlohmann::ordered_json stepDataJson(const StepEngine& engine, const std::vector<int>& steps) {
    for (const int step : steps)
        requireStep(engine, step);
    std::vector<StepState> states;
    states.reserve(steps.size());
    for (const int step : steps)
        states.push_back(engine.state(step));
    return stepDataJson(engine, states);
}

nlohmann::ordered_json stepDataJson(const StepEngine& engine,
                                    const std::vector<StepState>& states) {
    NumberWriter numbers;
    std::set<std::string> used;
    Json steps = Json::array();
    for (const StepState& state : states) {
        requireStep(engine, state.info.index);
        steps.push_back(stepJson(engine, state, numbers, used));
    }
    return {{"format", kStepDataFormat},
            {"version", kStepDataVersion},
            {"note", kNonFiniteNote},
            {"non_finite_values", numbers.nonFinite()},
            {"problem", problemJson(engine.problem())},
            {"options", optionsJson(engine.algorithm(), engine.options())},
            {"step_count", engine.stepCount()},
            {"quantities", legendJson(used)},
            {"steps", steps}};
}

std::string stepDataJsonText(const nlohmann::ordered_json& data) {
    return data.dump(2) + '\n';
}

std::string stepDataCsv(const nlohmann::ordered_json& data) {
    CsvWriter csv;
    csv.text = "step,kind,quantity,row,col,value\n";
    for (auto it = data.begin(); it != data.end(); ++it)
        if (it.key() != "steps") csv.fields({}, {}, it.key(), *it);
    for (const Json& step : data.at("steps")) {
        const std::string index = std::to_string(step.at("step").get<int>());
        const std::string kind = step.at("kind").get<std::string>();
        for (auto it = step.begin(); it != step.end(); ++it)
            if (it.key() != "step" && it.key() != "kind" && it.key() != "values")
                csv.fields(index, kind, it.key(), *it);
        csv.values(index, kind, step.at("values"));
    }
    return csv.text;
}

} // namespace flashviz
