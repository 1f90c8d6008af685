#include "lecture.h"

#include "check_panel.h"
#include "code_panel.h"
#include "comparison_view.h"
#include "controller.h"
#include "format.h"
#include "matrices_view.h"
#include "memory_stage.h"
#include "tile_detail.h"

#include "core/counters.h"

#include <QFile>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace flashviz::gui {

namespace {

std::vector<LectureChapter> loadChapters() {
    std::vector<LectureChapter> out;
    QFile file(QStringLiteral(":/flashviz/lecture.json"));
    if (!file.open(QIODevice::ReadOnly)) return out;
    const QJsonArray list = QJsonDocument::fromJson(file.readAll())
                                .object()
                                .value(QStringLiteral("chapters"))
                                .toArray();
    for (const QJsonValue& v : list) {
        const QJsonObject o = v.toObject();
        LectureChapter c;
        c.id = o.value(QStringLiteral("id")).toString();
        c.title = o.value(QStringLiteral("title")).toString();
        c.narrative = o.value(QStringLiteral("narrative")).toString();
        c.settings =
            settingsFromJson(o.value(QStringLiteral("settings")).toObject(), toySettings());
        for (const QJsonValue& b : o.value(QStringLiteral("beats")).toArray())
            c.beats << b.toString();
        for (const QJsonValue& w : o.value(QStringLiteral("views")).toArray())
            c.views << w.toString();
        for (const QJsonValue& w : o.value(QStringLiteral("weights")).toArray())
            c.weights << std::max(1, w.toInt());
        out.push_back(std::move(c));
    }
    return out;
}

} // namespace

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
        } else if (auto step = resolveStep(scene, beat)) {
            steps.insert(*step);
        }
    }
    if (steps.empty()) steps.insert(0);
    return {steps.begin(), steps.end()};
}

QString fillNarrative(const QString& narrative, const Scene& scene) {
    const HardwareProfile& hw = scene.hardware;
    const auto& spec = scene.settings.spec;
    const Counters standard = standardCounts(spec.queries, spec.keys, spec.headDim);
    const Counters flash =
        flashCounts(spec.queries, spec.keys, spec.headDim, spec.causal, scene.settings.options);
    QString text = narrative;
    auto put = [&](const char* key, const QString& value) {
        text.replace(QLatin1Char('{') + QLatin1String(key) + QLatin1Char('}'), value);
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
    return text;
}

LectureView::LectureView(Controller* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller) {
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
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("lectureCaption"));
    m_caption->setTextFormat(Qt::PlainText);
    QPalette accent = pal;
    accent.setColor(QPalette::WindowText, theme.accent);
    m_caption->setPalette(accent);
    m_keys = new QLabel(tr("PgDn / PgUp  next / back     ← →  one step     ↓ ↑  chapter     B  bug "
                           "on/off     Esc  leave"),
                        this);
    QPalette muted = pal;
    muted.setColor(QPalette::WindowText, theme.muted);
    m_keys->setPalette(muted);

    m_memory = new MemoryStageView(this);
    m_tile = new TileDetailView(this);
    m_matrices = new MatricesView(this);
    m_code = new CodePanel(this);
    m_comparison = new ComparisonView(this);
    m_check = new CheckPanel(this);
    m_tile->setMaxRows(4);
    connect(m_check, &CheckPanel::jumpRequested, controller, &Controller::setStep);

    m_viewArea = new QWidget(this);
    auto* viewLayout = new QVBoxLayout(m_viewArea);
    viewLayout->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_memory, m_tile, m_matrices, m_code, m_comparison})
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

    connect(controller, &Controller::sceneChanged, this, &LectureView::onSceneChanged);
    connect(controller, &Controller::frameChanged, this, &LectureView::updateCaption);
}

void LectureView::applyTheme(const Theme& theme) {
    m_theme = theme;
    const auto px = [&](qreal v) { return int(v * theme.scale); };
    m_title->setFont(theme.font(17, true));
    m_narrative->setFont(theme.font(12.5));
    m_narrative->setMargin(px(8));
    m_caption->setFont(theme.font(11.5, true));
    m_keys->setFont(theme.font(8.5));
    for (FrameView* v : frameViews())
        v->setTheme(theme);
    m_viewArea->layout()->setSpacing(px(10));
    m_body->setSpacing(px(16));
    layout()->setContentsMargins(px(24), px(14), px(24), px(10));
    layout()->setSpacing(px(8));
}

void LectureView::resizeEvent(QResizeEvent* event) {
    const Theme fitted = Theme::presentation(size());
    if (!qFuzzyCompare(fitted.scale, m_theme.scale)) applyTheme(fitted);
    QWidget::resizeEvent(event);
}

std::vector<FrameView*> LectureView::frameViews() const {
    return {m_memory, m_tile, m_matrices, m_code, m_comparison, m_check};
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
                                                    {m_comparison, "comparison"}};
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
    const auto scene = m_controller->scene();
    if (scene && scene->settings == c.settings) {
        onSceneChanged(); // already showing these settings: only the step moves
        return;
    }
    m_controller->apply(c.settings);
}

void LectureView::onSceneChanged() {
    const auto& chapters = lectureChapters();
    const auto scene = m_controller->scene();
    if (!m_active || !scene || m_chapter >= int(chapters.size())) return;
    const LectureChapter& c = chapters[std::size_t(m_chapter)];
    const bool fresh = m_beats.empty();
    m_beats = resolveBeats(c, *scene);
    m_narrative->setText(fillNarrative(c.narrative, *scene));
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
                                          frame->state.info.kind, frame->scene->settings.options))));
}

void LectureView::nextBeat() {
    const int step = m_controller->step();
    for (int b : m_beats)
        if (b > step) {
            m_controller->setStep(b);
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
