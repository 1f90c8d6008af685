#include "lecture/lecture.h"
#include "lecture/presenter_notes.h"

#include "session/controller.h"
#include "session/resources.h"
#include "session/step_why.h"
#include "style/format.h"
#include "views/check_panel.h"
#include "views/code_panel.h"
#include "views/comparison_view.h"
#include "views/frame_feed.h"
#include "views/matrices_view.h"
#include "views/memory_stage.h"
#include "views/tile_detail.h"
#include "views/versions_view.h"
#include "present/versions_model.h"

#include "core/analysis.h"
#include "core/backward.h"
#include "core/counters.h"
#include "core/errors.h"
#include "core/steps.h"

#include <QEvent>
#include <QFile>
#include <QFontMetrics>
#include <functional>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPainter>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>
#include <set>

namespace flashviz::gui {

namespace {

constexpr qsizetype kMaxBeatChars = 64;        // "first-rescale+2147483646" is 24
constexpr std::int64_t kMaxWalkedSteps = 4096; // a clicker's evening, not a scrub bar

const QStringList& viewNames() {
    static const QStringList names{QStringLiteral("memory"), QStringLiteral("tile"),
                                   QStringLiteral("matrices"), QStringLiteral("code"),
                                   QStringLiteral("comparison"), QStringLiteral("versions")};
    return names;
}

// The {placeholders} fillNarrative() fills.
const QStringList& placeholderNames() {
    static const QStringList names{
        QStringLiteral("gpu"), QStringLiteral("hbm"), QStringLiteral("hbmBandwidth"),
        QStringLiteral("smCount"), QStringLiteral("sramPerSm"), QStringLiteral("sramTotal"),
        QStringLiteral("sramBandwidth"), QStringLiteral("sramOverHbm"), QStringLiteral("l2"),
        QStringLiteral("l2Bandwidth"), QStringLiteral("l2Keeps"), QStringLiteral("n"),
        QStringLiteral("d"), QStringLiteral("br"), QStringLiteral("bc"), QStringLiteral("scores"),
        QStringLiteral("standardTraffic"), QStringLiteral("flashTraffic"),
        QStringLiteral("trafficCut"), QStringLiteral("standardScratch"),
        QStringLiteral("flashScratch"), QStringLiteral("check"), QStringLiteral("maxDiff"),
        QStringLiteral("wrongRows"), QStringLiteral("firstRescale"), QStringLiteral("memoryBound"),
        QStringLiteral("verdict"), QStringLiteral("bugSwitch"),
        // The backward's, from its scene and the engine's counts.
        QStringLiteral("gradCheck"), QStringLiteral("firstWrong"), QStringLiteral("recomputeFlops"),
        QStringLiteral("keptBytes"), QStringLiteral("keptBytesWithP"), QStringLiteral("dqTraffic"),
        QStringLiteral("backwardTraffic"), QStringLiteral("backwardTrafficWithP"),
        // What FlashAttention-2 changed, from core's versionsReport with the page's options.
        QStringLiteral("nonMatmulOne"), QStringLiteral("nonMatmulTwo"),
        QStringLiteral("nonMatmulRatio"), QStringLiteral("rateRatio"),
        QStringLiteral("restShareOne"), QStringLiteral("restShareTwo"),
        QStringLiteral("restFlopShareTwo"), QStringLiteral("warps"),
        QStringLiteral("rowsPerWarp"), QStringLiteral("exchangeBytes"), QStringLiteral("barriers"),
        QStringLiteral("heads"), QStringLiteral("sms"), QStringLiteral("blocksOne"),
        QStringLiteral("busyOne"), QStringLiteral("queryBlocks"), QStringLiteral("blocksTwo"),
        QStringLiteral("busyTwo"), QStringLiteral("wavesTwo"),
        QStringLiteral("gridSpeedup"), QStringLiteral("versionsCheck")};
    return names;
}

const QJsonArray& jsonList(const QJsonObject& entry, const char* key, qsizetype minSize,
                           qsizetype maxSize, QJsonArray& storage) {
    const QJsonValue v = entry.value(QLatin1String(key));
    if (v.isUndefined()) refuseJson(QStringLiteral("%1 is missing").arg(QLatin1String(key)));
    if (!v.isArray())
        refuseJson(
            QStringLiteral("%1 must be a list, not %2").arg(QLatin1String(key), jsonExcerpt(v)));
    storage = v.toArray();
    if (storage.size() < minSize || storage.size() > maxSize)
        refuseJson(QStringLiteral("%1 has %2 entries; it takes %3 to %4")
                       .arg(QLatin1String(key))
                       .arg(storage.size())
                       .arg(minSize)
                       .arg(maxSize));
    return storage;
}

// {why:<id>} replaced by that sentence of the file's "why" list (step_why.h): the step view
// shows the same words.
QString quoteWhys(const QString& narrative, const std::vector<StepWhy>& whys) {
    static const QRegularExpression quote(QStringLiteral("\\{why:([^{}]*)\\}"));
    QString text = narrative;
    for (const auto& match : quote.globalMatch(narrative)) {
        const auto it = std::find_if(whys.begin(), whys.end(),
                                     [&](const StepWhy& w) { return w.id == match.captured(1); });
        if (it == whys.end()) {
            QStringList ids;
            for (const StepWhy& w : whys)
                ids << w.id;
            refuseJson(QStringLiteral("narrative: {why:%1} names no entry of the why list (%2)")
                           .arg(match.captured(1).left(40), ids.join(QStringLiteral(", "))));
        }
        text.replace(match.captured(0), it->text);
    }
    return text;
}

LectureChapter readChapter(const QJsonObject& o, const std::vector<LectureChapter>& earlier,
                           const std::vector<StepWhy>& whys) {
    static const QStringList known{QStringLiteral("id"),        QStringLiteral("title"),
                                   QStringLiteral("narrative"), QStringLiteral("notes"),
                                   QStringLiteral("settings"),  QStringLiteral("beats"),
                                   QStringLiteral("views"),     QStringLiteral("weights")};
    checkJsonKeys(o, known);
    LectureChapter c;
    c.id = jsonText(o, "id", true, kMaxChapterIdChars);
    for (const LectureChapter& other : earlier)
        if (other.id == c.id)
            refuseJson(QStringLiteral("id '%1' is taken by an earlier chapter").arg(c.id));
    c.title = jsonText(o, "title", true, 200);
    c.narrative = quoteWhys(jsonText(o, "narrative", true, 20000), whys);
    if (const QString problem = placeholderProblem(c.narrative); !problem.isEmpty())
        refuseJson(QStringLiteral("narrative: ") + problem);
    // Bounded by notesProblem(), as the lecturer's own notes are.
    c.notes = jsonText(o, "notes", false, std::numeric_limits<qsizetype>::max());
    if (const QString problem = notesProblem(c.notes); !problem.isEmpty())
        refuseJson(QStringLiteral("notes: ") + problem);
    QJsonArray storage;
    const QJsonArray& beats = jsonList(o, "beats", 1, 256, storage);
    for (qsizetype i = 0; i < beats.size(); ++i) {
        const QJsonValue b = beats.at(i);
        const QString key = QStringLiteral("beats[%1]").arg(i);
        if (!b.isString())
            refuseJson(QStringLiteral("%1 must be text, not %2").arg(key, jsonExcerpt(b)));
        const QString beat = b.toString();
        if (beat.size() > kMaxBeatChars)
            refuseJson(QStringLiteral("%1 is %2 characters long; a beat is at most %3")
                           .arg(key)
                           .arg(beat.size())
                           .arg(kMaxBeatChars));
        if (beat != QLatin1String("all") && beat != QLatin1String("outer0") &&
            beat != QLatin1String("first-wrong"))
            checkStepExpression(beat, qPrintable(key));
        c.beats << beat;
    }
    const QJsonArray& views = jsonList(o, "views", 1, viewNames().size(), storage);
    for (qsizetype i = 0; i < views.size(); ++i) {
        const QJsonValue v = views.at(i);
        if (!v.isString() || !viewNames().contains(v.toString()))
            refuseJson(QStringLiteral("views[%1]: unknown view %2 (the views are %3)")
                           .arg(i)
                           .arg(jsonExcerpt(v), viewNames().join(QStringLiteral(", "))));
        if (c.views.contains(v.toString()))
            refuseJson(QStringLiteral("views[%1]: '%2' is listed twice").arg(i).arg(v.toString()));
        c.views << v.toString();
    }
    if (o.contains(QStringLiteral("weights"))) {
        QJsonArray weightStorage;
        const QJsonArray& weights =
            jsonList(o, "weights", c.views.size(), c.views.size(), weightStorage);
        for (qsizetype i = 0; i < weights.size(); ++i)
            c.weights << int(
                jsonInteger(weights.at(i), QStringLiteral("weights[%1]").arg(i), 1, 100));
    }
    c.settings = jsonEntrySettings(o);
    // 'all' and 'outer0' give the clicker one beat per step: bounded, so a chapter of a large
    // problem cannot ask for billions of them.
    if (c.beats.contains(QStringLiteral("all")) || c.beats.contains(QStringLiteral("outer0"))) {
        const std::int64_t steps =
            countSteps(c.settings.spec, c.settings.algorithm, c.settings.options);
        if (steps > kMaxWalkedSteps)
            refuseJson(
                QStringLiteral("beats 'all' and 'outer0' walk every step, and these settings "
                               "have %1 steps; at most %2 can be walked (name the steps instead)")
                    .arg(steps)
                    .arg(kMaxWalkedSteps));
    }
    return c;
}

std::vector<LectureChapter> loadChapters() {
    return parseResource(QStringLiteral("lecture.json"), parseLectureChapters).chapters;
}

} // namespace

QString placeholderProblem(const QString& text) {
    static const QRegularExpression placeholder(QStringLiteral("\\{([^{}]*)\\}"));
    for (const auto& match : placeholder.globalMatch(text))
        if (!placeholderNames().contains(match.captured(1)))
            return QStringLiteral("unknown placeholder {%1} (the figures are %2)")
                .arg(match.captured(1).left(40), placeholderNames().join(QStringLiteral(", ")));
    return {};
}

LectureParse parseLectureChapters(const QByteArray& bytes, const QString& source) {
    LectureParse out;
    const auto list = jsonEntries(bytes, source, "chapters", out.errors);
    if (!list) return out;
    const std::vector<StepWhy> whys = parseStepWhys(bytes, source).entries;
    for (int i = 0; i < list->size(); ++i) {
        const QJsonValue item = list->at(i);
        const QJsonObject o = item.toObject();
        try {
            if (!item.isObject())
                refuseJson(
                    QStringLiteral("a chapter must be an object, not %1").arg(jsonExcerpt(item)));
            out.chapters.push_back(readChapter(o, out.chapters, whys));
        } catch (const EngineError& error) {
            out.errors << QStringLiteral("%1: chapter %2 skipped: %3")
                              .arg(source, jsonEntryName(o, i), QString::fromUtf8(error.what()));
        }
    }
    return out;
}

const std::vector<LectureChapter>& lectureChapters() {
    static const std::vector<LectureChapter> chapters = loadChapters();
    return chapters;
}

std::vector<int> resolveBeats(const LectureChapter& chapter, const Scene& scene) {
    std::set<int> steps;
    const int count = scene.stepCount();
    for (const QString& beat : chapter.beats) {
        if (beat == QLatin1String("all")) {
            for (int s = 0; s < count; ++s)
                steps.insert(s);
        } else if (beat == QLatin1String("outer0")) {
            const int end = scene.engine->outerBlockCount() > 1
                                ? scene.engine->firstStepOfOuterBlock(1)
                                : count;
            for (int s = 0; s < end; ++s)
                steps.insert(s);
        } else if (beat == QLatin1String("first-wrong")) {
            if (const auto step = firstWrongStep(scene)) steps.insert(*step);
        } else if (auto step = resolveStep(scene, beat)) {
            steps.insert(*step);
        }
    }
    if (steps.empty()) steps.insert(0);
    return {steps.begin(), steps.end()};
}

namespace {

// "dQ by up to 0.25 in 8 of 8 rows": one gradient's failure, rows of its own matrix.
QString gradientFailure(const char* name, const CheckReport& check, int rows) {
    return QObject::tr("%1 by up to %2 in %3 of %4 rows")
        .arg(QLatin1String(name), formatValue(check.maxAbsDiff, 2))
        .arg(check.wrongRows.size())
        .arg(rows);
}

QString backwardVerdict(const Scene& scene, const BackwardScene& b) {
    const GradientCheck& check = b.check;
    const auto& spec = scene.settings.spec;
    if (check.passed())
        return QObject::tr("The check passes: dQ, dK and dV differ from ordinary attention's "
                           "gradients by at most %1, rounding.")
            .arg(formatValue(
                std::max({check.dq.maxAbsDiff, check.dk.maxAbsDiff, check.dv.maxAbsDiff}), 2));
    QStringList wrong;
    if (!check.dq.passed()) wrong << gradientFailure("dQ", check.dq, spec.queries);
    if (!check.dk.passed()) wrong << gradientFailure("dK", check.dk, spec.keys);
    if (!check.dv.passed()) wrong << gradientFailure("dV", check.dv, spec.keys);
    QString text = QObject::tr("The check fails: %1").arg(wrong.join(QStringLiteral(", ")));
    if (const auto step = firstWrongStep(scene))
        text += QObject::tr(", and the first wrong value appears at step %1").arg(*step);
    return text + QLatin1Char('.');
}

// The backward with and without the trade undone (P stored), as the engine counts it.
struct BackwardFigures {
    Counters recomputed, storedP;
    std::uint64_t kept = 0, keptWithP = 0, dqTrips = 0;
};
BackwardFigures backwardFigures(const VizSettings& settings) {
    const auto& spec = settings.spec;
    const BackwardTrade t =
        backwardTrade(spec.queries, spec.keys, spec.headDim, spec.causal, settings.options);
    FlashOptions recompute = settings.options;
    recompute.backward.storeWeights = false;
    return {
        t.recompute, t.stored, t.recomputeKept, t.storedKept,
        queryGradientRoundTripBytes(spec.queries, spec.keys, spec.headDim, spec.causal, recompute)};
}

} // namespace

QString checkVerdict(const Scene& scene) {
    if (scene.backward) return backwardVerdict(scene, *scene.backward);
    const CheckReport& check = scene.check;
    const QString diff = formatValue(check.maxAbsDiff, 2);
    if (check.passed())
        return QObject::tr("The check passes: the output differs from ordinary attention by at "
                           "most %1, rounding.")
            .arg(diff);
    QString text = QObject::tr("The check fails: the output is off by up to %1 in %2 of %3 rows")
                       .arg(diff)
                       .arg(check.wrongRows.size())
                       .arg(scene.settings.spec.queries);
    if (const auto step = firstWrongStep(scene))
        text += QObject::tr(", and the first wrong value appears at step %1").arg(*step);
    return text + QLatin1Char('.');
}

namespace {

// The FlashAttention-2 chapter's figures: the same report the page draws, with the same options.
// Figures the report cannot give (a grid that does not fit the GPU) read "—".
void putVersions(const std::function<void(const char*, const QString&)>& put, const Scene& scene,
                 const ViewOptions& view) {
    VersionsReport r;
    try {
        r = versionsReport(versionsRequest(scene, view), scene.hardware);
    } catch (const EngineError&) {
        for (const char* key : {"nonMatmulOne", "nonMatmulTwo", "nonMatmulRatio", "rateRatio",
                                "restShareOne", "restShareTwo", "restFlopShareTwo", "warps",
                                "rowsPerWarp", "exchangeBytes", "barriers"})
            put(key, QStringLiteral("—"));
        r.gridError = "-";
    }
    if (r.warps > 0) {
        put("nonMatmulOne", formatOperations(r.one.total()));
        put("nonMatmulTwo", formatOperations(r.two.total()));
        put("nonMatmulRatio", formatRatio(r.nonMatmulRatio()));
        put("rateRatio", formatRatio(r.timeOne.rateRatio));
        put("restShareOne", formatShare(r.timeOne.nonMatmulPerMatmul()));
        put("restShareTwo", formatShare(r.timeTwo.nonMatmulPerMatmul()));
        put("restFlopShareTwo", formatShare(r.restFlopShareTwo()));
        put("warps", QString::number(r.warps));
        put("rowsPerWarp", QString::number(r.splitTwo.shares.front().rows.size()));
        put("exchangeBytes", formatBytes(double(r.splitOne.exchangeBytes())));
        put("barriers", QString::number(r.splitOne.exchangeBarriers));
    }
    const bool grid = r.gridError.empty();
    const auto gridFigure = [&](const char* key, const QString& value) {
        put(key, grid ? value : QStringLiteral("—"));
    };
    gridFigure("heads", QString::number(view.gridHeads));
    gridFigure("sms", QString::number(r.gridTwo.sms));
    gridFigure("blocksOne", formatCount(r.gridOne.blocks));
    gridFigure("busyOne", QString::number(r.gridOne.busySms));
    gridFigure("queryBlocks", QString::number(r.gridOne.queryBlocksPerThreadBlock));
    gridFigure("blocksTwo", formatCount(r.gridTwo.blocks));
    gridFigure("busyTwo", QString::number(r.gridTwo.busySms));
    gridFigure("wavesTwo", formatCount(r.gridTwo.waves));
    gridFigure("gridSpeedup", formatRatio(r.gridSpeedup()));
    const VersionComparison* c = scene.versions ? &*scene.versions : nullptr;
    put("versionsCheck",
        !c ? QObject::tr("(both versions run with the FlashAttention algorithm)")
        : c->one.check.passed() && c->two.check.passed()
            ? QObject::tr("Both pass: off by at most %1 and %2.")
                  .arg(formatValue(c->one.check.maxAbsDiff, 2), formatValue(c->two.check.maxAbsDiff, 2))
            : QObject::tr("The check FAILS."));
}

} // namespace

QString fillNarrative(const QString& narrative, const Scene& scene, const ViewOptions& view) {
    const HardwareProfile& hw = scene.hardware;
    const auto& spec = scene.settings.spec;
    const Counters standard = scene.standardTotals;
    const Counters flash = scene.flashTotals();
    QString text = narrative;
    auto put = [&](const char* key, const QString& value) {
        text.replace(QLatin1Char('{') + QLatin1String(key) + QLatin1Char('}'), unbroken(value));
    };
    put("gpu", QString::fromStdString(hw.name));
    put("hbm", formatMemorySize(hw.hbmBytes.value));
    put("hbmBandwidth", formatRate(hw.hbmBandwidthBytesPerSecond.value));
    put("smCount", QString::number(int(hw.smCount.value)));
    put("sramPerSm", formatBytes(hw.sharedMemoryPerSmBytes.value));
    put("sramTotal", formatBytes(hw.totalSramBytes()));
    put("sramBandwidth", formatRate(hw.sramBandwidthBytesPerSecond.value));
    put("sramOverHbm",
        QString::number(hw.sramBandwidthBytesPerSecond.value / hw.hbmBandwidthBytesPerSecond.value,
                        'f', 0));
    put("l2", formatMemorySize(hw.l2Bytes.value));
    put("l2Bandwidth", formatRate(hw.l2BandwidthBytesPerSecond.value));
    // Whether L2 keeps this run's matrices (core/l2_steps.h), as the memory stage draws it.
    if (scene.l2)
        put("l2Keeps",
            scene.l2->fits()
                ? QObject::tr("Here they fit in the L2 cache, so HBM sees each byte once; past "
                              "half of its %1 they cross the link every time.")
                      .arg(formatMemorySize(hw.l2Bytes.value))
                : QObject::tr("Here they do not fit in the L2 cache (%1), so every byte crosses "
                              "the link.")
                      .arg(formatMemorySize(hw.l2Bytes.value)));
    else
        put("l2Keeps", QString());
    put("n", QString::number(spec.queries));
    put("d", QString::number(spec.headDim));
    put("br", QString::number(scene.settings.options.blockRows));
    put("bc", QString::number(scene.settings.options.blockCols));
    put("scores", formatBytes(double(spec.queries) * spec.keys * double(kBytesPerElement)));
    put("standardTraffic", formatBytes(double(standard.hbmBytes())));
    put("flashTraffic", formatBytes(double(flash.hbmBytes())));
    put("trafficCut",
        QString::number(double(standard.hbmBytes()) / std::max(1.0, double(flash.hbmBytes())), 'f',
                        1));
    put("standardScratch", formatBytes(double(standard.peakScratchBytes())));
    put("flashScratch", formatBytes(double(flash.peakScratchBytes())));
    put("check", QString::fromStdString(scene.check.summary()).simplified());
    put("maxDiff", formatValue(scene.check.maxAbsDiff, 2));
    put("wrongRows", QString::number(scene.check.wrongRows.size()));
    put("firstRescale",
        scene.firstRescaleStep ? QString::number(*scene.firstRescaleStep) : QObject::tr("(none)"));
    put("memoryBound", QString::fromStdString(memoryBoundVerdict(hw, spec.queries, spec.headDim,
                                                                 scene.settings.options)));
    put("verdict", checkVerdict(scene));
    // B flips the rescale, and in the backward D (session's setBug).
    if (scene.isBackward())
        put("bugSwitch", scene.settings.options.backward.subtractRowDot
                             ? QObject::tr("Press B to leave D out again.")
                             : QObject::tr("Press B to put D back."));
    else
        put("bugSwitch", scene.settings.options.rescale
                             ? QObject::tr("Press B to take the factor out again.")
                             : QObject::tr("Press B to put the factor back."));
    put("gradCheck", scene.backward
                         ? QString::fromStdString(scene.backward->check.summary()).simplified()
                         : QObject::tr("(no backward pass here)"));
    const auto wrong = firstWrongStep(scene);
    put("firstWrong", wrong ? QString::number(*wrong) : QObject::tr("(none)"));
    const BackwardFigures backward = backwardFigures(scene.settings);
    put("recomputeFlops", formatFlops(double(backward.recomputed.flops - backward.storedP.flops)));
    put("keptBytes", formatBytes(double(backward.kept * kBytesPerElement)));
    put("keptBytesWithP", formatBytes(double(backward.keptWithP * kBytesPerElement)));
    put("dqTraffic", formatBytes(double(backward.dqTrips)));
    put("backwardTraffic", formatBytes(double(backward.recomputed.hbmBytes())));
    put("backwardTrafficWithP", formatBytes(double(backward.storedP.hbmBytes())));
    putVersions(put, scene, view);
    return text;
}

LectureView::LectureView(Controller* controller, FrameFeed* feed, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_feed(feed) {
    setObjectName(QStringLiteral("lecture"));
    const Theme theme = Theme::presentation();
    QPalette pal = palette();
    pal.setColor(QPalette::Window, theme.background);
    pal.setColor(QPalette::WindowText, theme.text);
    setPalette(pal);
    setAutoFillBackground(true);

    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("lectureTitle"));
    m_narrative = new QLabel(this);
    m_narrative->setObjectName(QStringLiteral("lectureNarrative"));
    m_narrative->setWordWrap(true);
    m_narrative->setTextFormat(Qt::PlainText);
    m_narrative->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    // Its column's height is the slide's, not the text's: fitNarrative sizes the type to it.
    m_narrative->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Ignored);
    m_narrative->installEventFilter(this);
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("lectureCaption"));
    m_caption->setTextFormat(Qt::PlainText);
    QPalette accent = pal;
    accent.setColor(QPalette::WindowText, theme.accent);
    m_caption->setPalette(accent);
    m_keys = new QLabel(this); // the window's key hint (setKeysLine)
    m_keys->setObjectName(QStringLiteral("lectureKeys"));
    QPalette muted = pal;
    muted.setColor(QPalette::WindowText, theme.muted);
    m_keys->setPalette(muted);

    m_memory = new MemoryStageView(this);
    m_tile = new TileDetailView(this);
    m_matrices = new MatricesView(this);
    m_code = new CodePanel(this);
    m_comparison = new ComparisonView(this);
    m_versions = new VersionsView(this);
    m_check = new CheckPanel(this);
    m_tile->setMaxRows(4);
    connect(m_check, &CheckPanel::jumpRequested, controller, &Controller::setStep);

    m_viewArea = new QWidget(this);
    auto* viewLayout = new QVBoxLayout(m_viewArea);
    viewLayout->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_memory, m_tile, m_matrices, m_code, m_comparison, m_versions})
        viewLayout->addWidget(w);

    m_body = new QHBoxLayout;
    auto* body = m_body;
    body->addWidget(m_narrative, 27);
    body->addWidget(m_viewArea, 73);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addLayout(body, 1);
    layout->addWidget(m_caption);
    layout->addWidget(m_check);
    layout->addWidget(m_keys);

    applyTheme(theme);
    for (FrameView* v : frameViews())
        feed->attach(v);

    connect(controller, &Controller::sceneChanged, this, &LectureView::onSceneChanged);
    // The FlashAttention-2 figures follow the page's warps, batch and heads.
    connect(feed, &FrameFeed::viewOptionsChanged, this, &LectureView::onSceneChanged);
    connect(controller, &Controller::frameChanged, this, &LectureView::updateCaption);
}

void LectureView::applyTheme(const Theme& theme) {
    m_theme = theme;
    const auto px = [&](qreal v) { return int(v * theme.scale); };
    m_title->setFont(theme.font(17, true));
    m_narrative->setMargin(px(8));
    fitNarrative();
    m_caption->setFont(theme.font(11.5, true));
    m_keys->setFont(theme.font(8.5));
    for (FrameView* v : frameViews())
        v->setTheme(theme);
    m_viewArea->layout()->setSpacing(px(10));
    m_body->setSpacing(px(16));
    layout()->setContentsMargins(px(24), px(14), px(24), px(10));
    layout()->setSpacing(px(8));
}

// The narrative at the theme's size, or smaller (down to 70 % of it) until every line fits its
// column: a long chapter's last lines were cut off at 1920 x 1080 and 1366 x 768.
void LectureView::fitNarrative() {
    QFont font = m_theme.font(12.5);
    const qreal least = font.pointSizeF() * 0.7;
    const int margin = m_narrative->margin();
    const QRect room = m_narrative->contentsRect().adjusted(margin, margin, -margin, -margin);
    const QString text = m_narrative->text();
    const auto fits = [&](const QFont& f) {
        return room.width() <= 0 || QFontMetrics(f)
                                            .boundingRect(QRect(0, 0, room.width(), 1 << 20),
                                                          Qt::AlignLeft | Qt::TextWordWrap, text)
                                            .height() <= room.height();
    };
    while (!fits(font) && font.pointSizeF() - 0.5 >= least) font.setPointSizeF(font.pointSizeF() - 0.5);
    if (font != m_narrative->font()) m_narrative->setFont(font);
}

bool LectureView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_narrative && event->type() == QEvent::Resize) fitNarrative();
    return QWidget::eventFilter(watched, event);
}

void LectureView::resizeEvent(QResizeEvent* event) {
    const Theme fitted = Theme::presentation(size());
    if (!qFuzzyCompare(fitted.scale, m_theme.scale)) applyTheme(fitted);
    QWidget::resizeEvent(event);
}

std::vector<FrameView*> LectureView::frameViews() const {
    return {m_memory, m_tile, m_matrices, m_code, m_comparison, m_versions, m_check};
}

void LectureView::setKeysLine(const QString& keys) {
    m_keys->setText(keys);
}

void LectureView::showKeysLine(bool shown) {
    m_keys->setVisible(shown);
}

QString LectureView::titleText() const {
    return m_title->text();
}

QString LectureView::captionText() const {
    return m_caption->text();
}

QString LectureView::keysLine() const {
    return m_keys->text();
}

QString LectureView::narrativeText() const {
    return m_narrative->text();
}

void LectureView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), m_theme.background);
}

void LectureView::layoutViews() {
    const auto& chapters = lectureChapters();
    if (m_chapter < 0 || m_chapter >= int(chapters.size())) return;
    const QStringList views = chapters[std::size_t(m_chapter)].views;
    const QList<int> weights = chapters[std::size_t(m_chapter)].weights;
    auto* layout = static_cast<QVBoxLayout*>(m_viewArea->layout());
    const std::pair<QWidget*, const char*> all[] = {{m_memory, "memory"},
                                                    {m_tile, "tile"},
                                                    {m_matrices, "matrices"},
                                                    {m_code, "code"},
                                                    {m_comparison, "comparison"},
                                                    {m_versions, "versions"}};
    for (const auto& [widget, name] : all) {
        const int index = int(views.indexOf(QLatin1String(name)));
        widget->setVisible(index >= 0);
        layout->setStretchFactor(widget, index >= 0 && index < weights.size() ? weights[index] : 1);
    }
}

void LectureView::start(int chapter) {
    m_active = true;
    goToChapter(chapter, false);
}

void LectureView::useHardware(const std::string& hardwareId) {
    m_hardwareId = hardwareId;
}

VizSettings LectureView::chapterSettings(const LectureChapter& chapter) const {
    VizSettings settings = chapter.settings;
    if (!m_hardwareId.empty()) settings.hardwareId = m_hardwareId;
    return settings;
}

void LectureView::setActive(bool active) {
    m_active = active;
    if (!active) m_beats.clear();
}

void LectureView::goToChapter(int chapter, bool atEnd) {
    const auto& chapters = lectureChapters();
    if (chapters.empty()) return;
    m_chapter = std::clamp(chapter, 0, int(chapters.size()) - 1);
    m_pendingEnd = atEnd;
    m_beats.clear();
    const LectureChapter& c = chapters[std::size_t(m_chapter)];
    m_title->setText(tr("%1 / %2   %3").arg(m_chapter + 1).arg(chapters.size()).arg(c.title));
    layoutViews();
    emit chapterChanged(m_chapter);
    const VizSettings settings = chapterSettings(c);
    const auto scene = m_controller->scene();
    if (scene && scene->settings == settings) {
        onSceneChanged(); // already showing these settings: only the step moves
        return;
    }
    m_controller->apply(settings);
}

void LectureView::onSceneChanged() {
    const auto& chapters = lectureChapters();
    const auto scene = m_controller->scene();
    if (!m_active || !scene || m_chapter >= int(chapters.size())) return;
    const LectureChapter& c = chapters[std::size_t(m_chapter)];
    const bool fresh = m_beats.empty();
    m_beats = resolveBeats(c, *scene);
    m_narrative->setText(fillNarrative(c.narrative, *scene, m_feed->viewOptions()));
    fitNarrative();
    if (fresh) m_controller->setStep(m_pendingEnd ? m_beats.back() : m_beats.front());
    updateCaption();
}

void LectureView::updateCaption() {
    const auto frame = m_controller->frame();
    if (!m_active || !frame) return;
    const auto it = std::find(m_beats.begin(), m_beats.end(), frame->step);
    const QString beat = it != m_beats.end()
                             ? tr("%1 / %2").arg(int(it - m_beats.begin()) + 1).arg(m_beats.size())
                             : tr("step %1").arg(frame->step);
    m_caption->setText(QStringLiteral("%1   ·   %2")
                           .arg(beat, QString::fromStdString(describe(
                                          frame->state.info.kind, frame->scene->settings.options,
                                          frame->scene->settings.algorithm))));
    emit slideChanged();
}

std::optional<int> LectureView::nextBeatInChapter() const {
    const int step = m_controller->step();
    for (int b : m_beats)
        if (b > step) return b;
    return std::nullopt;
}

void LectureView::nextBeat() {
    if (const auto beat = nextBeatInChapter()) {
        m_controller->setStep(*beat);
        return;
    }
    if (m_chapter + 1 < chapterCount()) goToChapter(m_chapter + 1, false);
}

void LectureView::previousBeat() {
    const int step = m_controller->step();
    for (auto it = m_beats.rbegin(); it != m_beats.rend(); ++it)
        if (*it < step) {
            m_controller->setStep(*it);
            return;
        }
    if (m_chapter > 0) goToChapter(m_chapter - 1, true);
}

void LectureView::nextChapter() {
    if (m_chapter + 1 < chapterCount()) goToChapter(m_chapter + 1, false);
}

void LectureView::previousChapter() {
    if (m_chapter > 0) goToChapter(m_chapter - 1, false);
}

} // namespace flashviz::gui
