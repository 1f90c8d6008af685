// The step data export (core/step_export.h): every field of the JSON is the step engine's state
// at that step (forward, rescale, causal, backward, a run that overflows), each value sits at its
// place in the problem, inf and NaN are written as strings and counted, and the CSV reads back
// to the same numbers.
#include "core/errors.h"
#include "core/step_export.h"
#include "core/steps.h"
#include "test_support.h"

#include <QtTest/QtTest>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace flashviz;
using namespace flashviz::test;
using Json = nlohmann::ordered_json;

namespace {

// The test's own map from the file's names to the state's fields (not the export's table).
std::map<std::string, const Matrix*> matricesOf(const StepState& s) {
    return {{"Q", &s.query},        {"K", &s.key},        {"V", &s.value},
            {"S", &s.scores},       {"P", &s.weights},    {"acc_old", &s.accOld},
            {"acc_new", &s.accNew}, {"O", &s.output},     {"dO", &s.dO},
            {"dP", &s.dP},          {"dS", &s.dS},        {"dQ_old", &s.dQOld},
            {"dQ_new", &s.dQNew},   {"dK_old", &s.dKOld}, {"dK_new", &s.dKNew},
            {"dV_old", &s.dVOld},   {"dV_new", &s.dVNew}};
}

std::map<std::string, const Vector*> vectorsOf(const StepState& s) {
    return {{"m_old", &s.mOld},
            {"m_new", &s.mNew},
            {"l_old", &s.lOld},
            {"l_new", &s.lNew},
            {"correction", &s.correction},
            {"L", &s.lse},
            {"D", &s.delta}};
}

// A number of the file: a JSON number, or "inf", "-inf", "nan".
double numberOf(const Json& value) {
    if (value.is_number()) return value.get<double>();
    const std::string text = value.get<std::string>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    throw std::runtime_error("not a number of the step data: " + text);
}

bool sameNumber(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

int countNonFinite(const StepState& s) {
    int count = 0;
    for (const auto& [name, m] : matricesOf(s))
        count += int(m->size() - m->array().isFinite().count());
    for (const auto& [name, v] : vectorsOf(s))
        count += int(v->size() - v->array().isFinite().count());
    return count;
}

// Where the rows and columns of a value start in the problem, by what they index.
int firstOf(const std::string& axis, const StepInfo& info) {
    if (axis == "query") return info.rows.begin;
    if (axis == "key") return info.cols.begin;
    return 0;
}

int sizeOf(const std::string& axis, const StepInfo& info, int headDim) {
    if (axis == "query") return info.rows.size();
    if (axis == "key") return info.cols.size();
    return headDim;
}

// The step's JSON against the engine's state, field by field and value by value.
void compareStep(const Json& j, const StepEngine& engine, const StepState& s) {
    const StepInfo& info = s.info;
    QCOMPARE(j.at("step").get<int>(), info.index);
    QCOMPARE(j.at("kind").get<std::string>(), std::string(toString(info.kind)));
    QCOMPARE(j.at("sentence").get<std::string>(),
             describe(info.kind, engine.options(), engine.algorithm()));
    QCOMPARE(j.at("blocks").get<std::string>(), describeBlocks(info, engine.algorithm()));
    const Json& tile = j.at("tile");
    QCOMPARE(tile.at("i").is_null() ? -1 : tile.at("i").get<int>(), info.queryBlock);
    QCOMPARE(tile.at("j").is_null() ? -1 : tile.at("j").get<int>(), info.keyBlock);
    QCOMPARE(tile.at("rows")[0].get<int>(), info.rows.begin);
    QCOMPARE(tile.at("rows")[1].get<int>(), info.rows.end);
    QCOMPARE(tile.at("cols")[0].get<int>(), info.cols.begin);
    QCOMPARE(tile.at("cols")[1].get<int>(), info.cols.end);
    QCOMPARE(tile.at("last_key_block").get<bool>(), info.lastKeyBlock);
    const Json& c = j.at("counters");
    QCOMPARE(c.at("hbm_read_bytes").get<std::uint64_t>(), s.counters.hbmReadBytes);
    QCOMPARE(c.at("hbm_write_bytes").get<std::uint64_t>(), s.counters.hbmWriteBytes);
    QCOMPARE(c.at("hbm_bytes").get<std::uint64_t>(), s.counters.hbmBytes());
    QCOMPARE(c.at("flops").get<std::uint64_t>(), s.counters.flops);
    QCOMPARE(c.at("peak_scratch_floats").get<std::uint64_t>(), s.counters.peakScratchElements);
    const Counters before = info.index ? engine.countersThrough(info.index - 1) : Counters{};
    const Json& own = j.at("counters_this_step");
    QCOMPARE(own.at("hbm_read_bytes").get<std::uint64_t>(),
             s.counters.hbmReadBytes - before.hbmReadBytes);
    QCOMPARE(own.at("hbm_write_bytes").get<std::uint64_t>(),
             s.counters.hbmWriteBytes - before.hbmWriteBytes);
    QCOMPARE(own.at("flops").get<std::uint64_t>(), s.counters.flops - before.flops);
    QCOMPARE(j.at("sram_elements").get<std::uint64_t>(), s.sramElements);
    QCOMPARE(j.at("sram_bytes").get<std::uint64_t>(), s.sramElements * 4);

    const Json& values = j.at("values");
    const int d = engine.problem().spec.headDim;
    int written = 0;
    for (const auto& [name, m] : matricesOf(s)) {
        QCOMPARE(values.contains(name), m->size() > 0);
        if (!m->size()) continue;
        ++written;
        const Json& q = values.at(name);
        const std::string rows = q.at("rows").get<std::string>();
        const std::string cols = q.at("cols").get<std::string>();
        QCOMPARE(q.at("first_row").get<int>(), firstOf(rows, info));
        QCOMPARE(q.at("first_col").get<int>(), firstOf(cols, info));
        // The place the file gives is the tile's: its extent matches the value's shape.
        QCOMPARE(int(m->rows()), sizeOf(rows, info, d));
        QCOMPARE(int(m->cols()), sizeOf(cols, info, d));
        const Json& data = q.at("data");
        QCOMPARE(data.size(), std::size_t(m->rows()));
        for (Eigen::Index r = 0; r < m->rows(); ++r) {
            QCOMPARE(data[std::size_t(r)].size(), std::size_t(m->cols()));
            for (Eigen::Index col = 0; col < m->cols(); ++col)
                QVERIFY2(sameNumber(numberOf(data[std::size_t(r)][std::size_t(col)]), (*m)(r, col)),
                         name.c_str());
        }
    }
    for (const auto& [name, v] : vectorsOf(s)) {
        QCOMPARE(values.contains(name), v->size() > 0);
        if (!v->size()) continue;
        ++written;
        const Json& q = values.at(name);
        QCOMPARE(q.at("rows").get<std::string>(), std::string("query"));
        QVERIFY(!q.contains("cols"));
        QCOMPARE(q.at("first_row").get<int>(), info.rows.begin);
        QCOMPARE(int(v->size()), info.rows.size());
        const Json& data = q.at("data");
        QCOMPARE(data.size(), std::size_t(v->size()));
        for (Eigen::Index r = 0; r < v->size(); ++r)
            QVERIFY2(sameNumber(numberOf(data[std::size_t(r)]), (*v)(r)), name.c_str());
    }
    QCOMPARE(int(values.size()), written);
}

// The whole file for one step: its header, the problem, the options and the step.
Json exportAndCompare(const StepEngine& engine, int step) {
    const Json data = stepDataJson(engine, std::vector<int>{step});
    const StepState s = engine.state(step);
    [&] {
        QCOMPARE(data.at("format").get<std::string>(), std::string(kStepDataFormat));
        QCOMPARE(data.at("version").get<int>(), kStepDataVersion);
        QCOMPARE(data.at("step_count").get<int>(), engine.stepCount());
        QCOMPARE(data.at("non_finite_values").get<int>(), countNonFinite(s));
        QVERIFY(data.at("note").get<std::string>().find("\"inf\"") != std::string::npos);
        const ProblemSpec& spec = engine.problem().spec;
        const Json& p = data.at("problem");
        QCOMPARE(p.at("n_q").get<int>(), spec.queries);
        QCOMPARE(p.at("n_k").get<int>(), spec.keys);
        QCOMPARE(p.at("d").get<int>(), spec.headDim);
        QCOMPARE(p.at("scale").get<double>(), engine.problem().scale());
        QCOMPARE(p.at("causal").get<bool>(), spec.causal);
        QCOMPARE(p.at("inputs").at("pattern").get<std::string>(),
                 std::string(toString(spec.pattern)));
        QCOMPARE(p.at("inputs").at("seed").get<std::uint64_t>(), spec.seed);
        const FlashOptions& o = engine.options();
        const Json& opt = data.at("options");
        QCOMPARE(opt.at("algorithm").get<std::string>(), std::string(toString(engine.algorithm())));
        QCOMPARE(opt.at("br").get<int>(), o.blockRows);
        QCOMPARE(opt.at("bc").get<int>(), o.blockCols);
        QCOMPARE(opt.at("rescale").get<bool>(), o.rescale);
        QCOMPARE(opt.at("running_max").get<bool>(), o.runningMax);
        QCOMPARE(opt.at("keep_full_s").get<bool>(), o.keepFullScores);
        QCOMPARE(opt.contains("backward"), engine.algorithm() == Algorithm::Backward);
        if (engine.algorithm() == Algorithm::Backward)
            for (const BackwardSwitch& flag : backwardSwitches())
                QCOMPARE(opt.at("backward").at(flag.name).get<bool>(), isOn(o.backward, flag));
        QCOMPARE(data.at("steps").size(), std::size_t(1));
        for (auto it = data.at("steps")[0].at("values").begin();
             it != data.at("steps")[0].at("values").end(); ++it)
            QVERIFY2(data.at("quantities").contains(it.key()), it.key().c_str());
        compareStep(data.at("steps")[0], engine, s);
    }();
    return data;
}

int firstStepOfKind(const StepEngine& engine, StepKind kind) {
    for (int k = 0; k < engine.stepCount(); ++k)
        if (engine.info(k).kind == kind) return k;
    return -1;
}

// RFC 4180 fields of one line (quoted fields may hold commas and doubled quotes).
std::vector<std::string> csvFields(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
            fields.back() += '"';
            ++i;
        } else if (c == '"') {
            quoted = !quoted;
        } else if (c == ',' && !quoted) {
            fields.emplace_back();
        } else {
            fields.back() += c;
        }
    }
    return fields;
}

double csvNumber(const std::string& text) {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used != text.size()) throw std::runtime_error("not a number: " + text);
    return value;
}

} // namespace

class TestStepExport : public QObject {
    Q_OBJECT
  private slots:
    void forwardToyStep();
    void rescaleStep();
    void causalStepWritesMaskedScoresAsStrings();
    void backwardStep();
    void overflowRunCountsNonFiniteValues();
    void everyStepPlacesItsValues_data();
    void everyStepPlacesItsValues();
    void refusesStepsOutsideTheRun();
    void csvReadsBackToTheSameNumbers();
    void csvQuotesText();
};

void TestStepExport::forwardToyStep() {
    const StepEngine engine(makeProblem(makeSpec(8, 8, 4)), Algorithm::Flash, makeOptions(4, 4));
    // The first tile's update: m before it is -inf, written as the string.
    const int first = firstStepOfKind(engine, StepKind::UpdateOutput);
    QVERIFY(first > 0);
    const Json start = exportAndCompare(engine, first);
    for (const Json& m : start.at("steps")[0].at("values").at("m_old").at("data"))
        QCOMPARE(m.get<std::string>(), std::string("-inf"));
    QCOMPARE(start.at("non_finite_values").get<int>(), 4);
    // The second tile's: every value finite.
    int step = first + 1;
    while (engine.info(step).kind != StepKind::UpdateOutput)
        ++step;
    QCOMPARE(engine.info(step).keyBlock, 1);
    const Json data = exportAndCompare(engine, step);
    const Json& values = data.at("steps")[0].at("values");
    for (const char* name :
         {"m_old", "m_new", "l_old", "l_new", "correction", "acc_old", "acc_new"})
        QVERIFY2(values.contains(name), name);
    QCOMPARE(data.at("non_finite_values").get<int>(), 0);
    // The one function that also writes the text.
    QCOMPARE(stepDataJsonText(data), data.dump(2) + '\n');
}

void TestStepExport::rescaleStep() {
    const StepEngine engine(
        makeProblem(makeSpec(16, 16, 4, false, Precision::Double, InputPattern::LateMaximum)),
        Algorithm::Flash, makeOptions(4, 4));
    const std::optional<int> step = engine.firstRescaleStep();
    QVERIFY(step);
    const Json data = exportAndCompare(engine, *step);
    // At the first rescale some row's correction bites.
    bool bites = false;
    for (const Json& c : data.at("steps")[0].at("values").at("correction").at("data"))
        bites = bites || numberOf(c) < 1.0;
    QVERIFY(bites);
}

void TestStepExport::causalStepWritesMaskedScoresAsStrings() {
    const StepEngine engine(makeProblem(makeSpec(8, 8, 4, true)), Algorithm::Flash,
                            makeOptions(4, 4));
    const int step = firstStepOfKind(engine, StepKind::ComputeScores);
    const Json data = exportAndCompare(engine, step);
    QVERIFY(data.at("non_finite_values").get<int>() > 0);
    const std::string text = stepDataJsonText(data);
    QVERIFY(text.find("\"-inf\"") != std::string::npos);
    QCOMPARE(text.find("Infinity"), std::string::npos);
    QVERIFY(data.at("problem").at("causal").get<bool>());
}

void TestStepExport::backwardStep() {
    FlashOptions options = makeOptions(4, 4);
    options.backward.subtractRowDot = false; // a bug switch, to see it in the options
    const StepEngine engine(makeProblem(makeSpec(8, 8, 4)), Algorithm::Backward, options);
    for (const StepKind kind : {StepKind::ComputeRowDots, StepKind::ComputeScoreGradient,
                                StepKind::UpdateQueryGradient, StepKind::StoreKeyValueGradient}) {
        const int step = firstStepOfKind(engine, kind);
        QVERIFY(step >= 0);
        const Json data = exportAndCompare(engine, step);
        if (QTest::currentTestFailed()) return;
        if (kind == StepKind::ComputeScoreGradient)
            for (const char* name : {"dO", "L", "D", "dP", "dS", "dK_old", "dV_old"})
                QVERIFY2(data.at("steps")[0].at("values").contains(name), name);
        QVERIFY(data.at("options").at("backward").at("no-row-dot").get<bool>());
    }
}

void TestStepExport::overflowRunCountsNonFiniteValues() {
    FlashOptions options = makeOptions(4, 4);
    options.runningMax = false; // exp() of scores in the hundreds overflows
    const StepEngine engine(
        makeProblem(makeSpec(8, 8, 4, false, Precision::Double, InputPattern::LargeScores)),
        Algorithm::Flash, options);
    const int step = firstStepOfKind(engine, StepKind::Normalise);
    const Json data = exportAndCompare(engine, step);
    QVERIFY(data.at("non_finite_values").get<int>() > 0);
    QVERIFY(!data.at("options").at("running_max").get<bool>());
    const std::string text = stepDataJsonText(data);
    QVERIFY(text.find("\"inf\"") != std::string::npos || text.find("\"nan\"") != std::string::npos);
}

void TestStepExport::everyStepPlacesItsValues_data() {
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<bool>("causal");
    QTest::addColumn<int>("order");
    QTest::newRow("flash, ragged") << int(Algorithm::Flash) << false << int(LoopOrder::QueryOuter);
    QTest::newRow("flash, causal") << int(Algorithm::Flash) << true << int(LoopOrder::QueryOuter);
    QTest::newRow("paper order") << int(Algorithm::Flash) << false << int(LoopOrder::KeyValueOuter);
    QTest::newRow("backward, causal")
        << int(Algorithm::Backward) << true << int(LoopOrder::QueryOuter);
    QTest::newRow("standard") << int(Algorithm::Standard) << false << int(LoopOrder::QueryOuter);
}

void TestStepExport::everyStepPlacesItsValues() {
    QFETCH(int, algorithm);
    QFETCH(bool, causal);
    QFETCH(int, order);
    const StepEngine engine(makeProblem(makeSpec(7, 9, 3, causal)), Algorithm(algorithm),
                            makeOptions(3, 4, LoopOrder(order)));
    std::vector<int> steps;
    for (int k = 0; k < engine.stepCount(); ++k)
        steps.push_back(k);
    const Json data = stepDataJson(engine, steps);
    QCOMPARE(data.at("steps").size(), steps.size());
    for (int k : steps) {
        compareStep(data.at("steps")[std::size_t(k)], engine, engine.state(k));
        if (QTest::currentTestFailed()) QFAIL(qPrintable(QString("at step %1").arg(k)));
    }
}

void TestStepExport::refusesStepsOutsideTheRun() {
    const StepEngine engine(makeProblem(makeSpec(8, 8, 4)), Algorithm::Flash, makeOptions(4, 4));
    for (const int step : {-1, engine.stepCount()}) {
        try {
            stepDataJson(engine, std::vector<int>{step});
            QFAIL("a step outside the run was exported");
        } catch (const EngineError& e) {
            QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
            QVERIFY(std::string(e.what()).find(std::to_string(step)) != std::string::npos);
        }
    }
}

void TestStepExport::csvReadsBackToTheSameNumbers() {
    // Masked scores (-inf) and rows of every kind, in two steps.
    const StepEngine engine(makeProblem(makeSpec(8, 8, 4, true)), Algorithm::Flash,
                            makeOptions(4, 4));
    const std::vector<int> steps{firstStepOfKind(engine, StepKind::ComputeScores),
                                 engine.stepCount() - 1};
    const Json data = stepDataJson(engine, steps);
    std::istringstream csv(stepDataCsv(data));
    std::string line;
    std::getline(csv, line);
    QCOMPARE(line, std::string("step,kind,quantity,row,col,value"));
    std::map<int, StepState> states;
    for (int k : steps)
        states[k] = engine.state(k);
    int checked = 0;
    bool sawProblem = false, sawInf = false;
    while (std::getline(csv, line)) {
        const std::vector<std::string> f = csvFields(line);
        QCOMPARE(f.size(), std::size_t(6));
        if (f[0].empty()) { // the file's fields
            if (f[2] == "problem.n_q") sawProblem = csvNumber(f[5]) == 8;
            continue;
        }
        const StepState& s = states.at(std::stoi(f[0]));
        QCOMPARE(f[1], std::string(toString(s.info.kind)));
        if (f[3].empty()) { // a field of the step
            if (f[2] == "counters.flops")
                QCOMPARE(std::uint64_t(csvNumber(f[5])), s.counters.flops);
            if (f[2] == "tile.rows[0]") QCOMPARE(int(csvNumber(f[5])), s.info.rows.begin);
            continue;
        }
        const int row = std::stoi(f[3]);
        const double value = csvNumber(f[5]);
        sawInf = sawInf || std::isinf(value);
        if (f[4].empty()) {
            const Vector& v = *vectorsOf(s).at(f[2]);
            QVERIFY(sameNumber(value, v(row - s.info.rows.begin)));
        } else {
            const Json& q =
                data.at("steps")[s.info.index == steps[0] ? 0 : 1].at("values").at(f[2]);
            const Matrix& m = *matricesOf(s).at(f[2]);
            const int r = row - firstOf(q.at("rows").get<std::string>(), s.info);
            const int c = std::stoi(f[4]) - firstOf(q.at("cols").get<std::string>(), s.info);
            QVERIFY2(sameNumber(value, m(r, c)), line.c_str());
        }
        ++checked;
    }
    QVERIFY(sawProblem);
    QVERIFY(sawInf);
    // Every value of both states came back.
    int expected = 0;
    for (const auto& [k, s] : states) {
        for (const auto& [name, m] : matricesOf(s))
            expected += int(m->size());
        for (const auto& [name, v] : vectorsOf(s))
            expected += int(v->size());
    }
    QCOMPARE(checked, expected);
}

void TestStepExport::csvQuotesText() {
    const StepEngine engine(makeProblem(makeSpec(8, 8, 4)), Algorithm::Flash, makeOptions(4, 4));
    const std::string csv = stepDataCsv(stepDataJson(engine, std::vector<int>{5}));
    // describeBlocks holds a comma: "query block 0 (rows 0–3), key block 0 (keys 0–3)".
    const std::string blocks = describeBlocks(engine.info(5), Algorithm::Flash);
    QVERIFY(blocks.find(',') != std::string::npos);
    QVERIFY(csv.find("5," + std::string(toString(engine.info(5).kind)) + ",blocks,,,\"" + blocks +
                     "\"\n") != std::string::npos);
}

QTEST_APPLESS_MAIN(TestStepExport)
#include "tst_step_export.moc"
