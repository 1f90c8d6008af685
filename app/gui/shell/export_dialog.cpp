#include "shell/export_dialog.h"

#include "export/animation_writer.h"
#include "session/controller.h"
#include "session/scene.h"

#include "core/errors.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>
#include <limits>

namespace flashviz::gui {

namespace {

// The sizes slides are made in; anything else is Custom.
struct SizePreset {
    const char* label;
    QSize size;
};
constexpr SizePreset kSizePresets[] = {
    {QT_TRANSLATE_NOOP("ExportAnimationDialog", "1280 × 720 (720p)"), {1280, 720}},
    {QT_TRANSLATE_NOOP("ExportAnimationDialog", "1920 × 1080 (1080p)"), {1920, 1080}},
};
constexpr int kCustomSize = int(std::size(kSizePresets));

QSpinBox* spinBox(int lowest, int highest, const QString& suffix = {}) {
    auto* box = new QSpinBox;
    box->setRange(lowest, highest);
    box->setSuffix(suffix);
    box->setAccelerated(true);
    return box;
}

QString fileFilters() {
    QStringList filters;
    for (const AnimationFormatInfo& f : availableAnimationFormats())
        filters << QStringLiteral("%1 (*.%2)").arg(f.name, f.extension);
    return filters.join(QStringLiteral(";;"));
}

// The dialog's one job: the chapter scene being counted.
constexpr int kCountJob = 0;

} // namespace

QString withFilterExtension(const QString& file, const QString& filter) {
    if (file.isEmpty() || !QFileInfo(file).suffix().isEmpty()) return file;
    const int star = filter.indexOf(QStringLiteral("*."));
    if (star < 0) return file;
    return file +
           filter.mid(star + 1).section(QLatin1Char(')'), 0, 0).section(QLatin1Char(' '), 0, 0);
}

ExportAnimationDialog::ExportAnimationDialog(const QStringList& chapterTitles,
                                             AnimationSceneSource scenes, QWidget* parent)
    : QDialog(parent), m_scenes(std::move(scenes)) {
    setWindowTitle(tr("Export animation"));
    setObjectName(QStringLiteral("exportAnimationDialog"));
    buildFields(chapterTitles);
    setRequest(AnimationRequest{});
}

void ExportAnimationDialog::buildFields(const QStringList& chapterTitles) {
    m_view = new QComboBox;
    m_view->addItem(tr("Step view (the window's step page)"), int(AnimationView::Step));
    m_view->addItem(tr("Lecture view (the chapter's slide)"), int(AnimationView::Lecture));
    m_chapter = new QComboBox;
    for (int i = 0; i < chapterTitles.size(); ++i)
        m_chapter->addItem(QStringLiteral("%1 · %2").arg(i + 1).arg(chapterTitles[i]));
    m_range = new QComboBox;
    m_range->addItem(tr("The whole run"), int(AnimationRange::WholeRun));
    m_range->addItem(tr("Steps from … to"), int(AnimationRange::Steps));
    m_range->addItem(tr("The chapter's clicks (lecture view)"), int(AnimationRange::Chapter));
    m_framesPerStep = spinBox(kAnimationMinFramesPerStep, kAnimationMaxFramesPerStep);
    m_framesPerStep->setToolTip(tr("Frames for each step: the tiles move between them"));
    m_fps = spinBox(kAnimationMinFps, kAnimationMaxFps, tr(" fps"));
    m_format = new QLabel;
    m_format->setObjectName(QStringLiteral("format"));
    m_estimate = new QLabel;
    m_estimate->setObjectName(QStringLiteral("estimate"));
    m_estimate->setWordWrap(true);
    QFont bold = m_estimate->font();
    bold.setBold(true);
    m_estimate->setFont(bold);
    m_problem = new QLabel;
    m_problem->setObjectName(QStringLiteral("problem"));
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #b3261e"));

    auto* form = new QFormLayout;
    form->addRow(tr("View:"), m_view);
    form->addRow(tr("Chapter:"), m_chapter);
    form->addRow(tr("Range:"), m_range);
    form->addRow(tr("Steps:"), buildStepsRow());
    form->addRow(tr("Size:"), buildSizeRow());
    form->addRow(tr("Frames per step:"), m_framesPerStep);
    form->addRow(tr("Frame rate:"), m_fps);
    form->addRow(tr("File:"), buildFileRow());
    form->addRow(tr("Format:"), m_format);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &ExportAnimationDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ExportAnimationDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_estimate);
    layout->addWidget(m_problem);
    layout->addStretch(1);
    layout->addWidget(m_buttons);

    for (QComboBox* box : {m_view, m_chapter, m_range})
        connect(box, &QComboBox::currentIndexChanged, this, &ExportAnimationDialog::update);
    connect(m_sizePreset, &QComboBox::currentIndexChanged, this, [this](int preset) {
        if (preset < kCustomSize) {
            m_width->setValue(kSizePresets[preset].size.width());
            m_height->setValue(kSizePresets[preset].size.height());
        }
        update();
    });
    for (QSpinBox* box : {m_from, m_to, m_width, m_height, m_framesPerStep, m_fps})
        connect(box, &QSpinBox::valueChanged, this, &ExportAnimationDialog::update);
    connect(m_file, &QLineEdit::textChanged, this, &ExportAnimationDialog::update);
}

QWidget* ExportAnimationDialog::buildStepsRow() {
    m_from = spinBox(0, std::numeric_limits<int>::max());
    m_to = spinBox(0, std::numeric_limits<int>::max());
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(tr("from")));
    layout->addWidget(m_from);
    layout->addWidget(new QLabel(tr("to")));
    layout->addWidget(m_to);
    layout->addStretch(1);
    return row;
}

QWidget* ExportAnimationDialog::buildSizeRow() {
    m_sizePreset = new QComboBox;
    for (const SizePreset& preset : kSizePresets)
        m_sizePreset->addItem(tr(preset.label));
    m_sizePreset->addItem(tr("Custom"));
    m_width = spinBox(kAnimationMinSize.width(), kAnimationMaxSize.width(), tr(" px"));
    m_height = spinBox(kAnimationMinSize.height(), kAnimationMaxSize.height(), tr(" px"));
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_sizePreset);
    layout->addWidget(m_width);
    layout->addWidget(new QLabel(QStringLiteral("×")));
    layout->addWidget(m_height);
    layout->addStretch(1);
    return row;
}

QWidget* ExportAnimationDialog::buildFileRow() {
    m_file = new QLineEdit;
    m_file->setObjectName(QStringLiteral("file"));
    m_file->setMinimumWidth(360);
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, &ExportAnimationDialog::browse);
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_file, 1);
    layout->addWidget(browse);
    return row;
}

void ExportAnimationDialog::browse() {
    QString selected;
    const QString file = QFileDialog::getSaveFileName(this, tr("Export animation"), m_file->text(),
                                                      fileFilters(), &selected);
    if (!file.isEmpty()) m_file->setText(withFilterExtension(file, selected));
}

AnimationRequest ExportAnimationDialog::request() const {
    AnimationRequest r;
    r.file = m_file->text().trimmed();
    r.view = AnimationView(m_view->currentData().toInt());
    r.range = AnimationRange(m_range->currentData().toInt());
    r.from = QString::number(m_from->value());
    r.to = QString::number(m_to->value());
    r.chapter = std::max(0, m_chapter->currentIndex());
    r.size = QSize(m_width->value(), m_height->value());
    r.framesPerStep = m_framesPerStep->value();
    r.fps = m_fps->value();
    return r;
}

void ExportAnimationDialog::setRequest(const AnimationRequest& r) {
    // The view and chapter first: they choose the scene whose steps from and to count.
    m_view->setCurrentIndex(m_view->findData(int(r.view)));
    m_chapter->setCurrentIndex(std::clamp(r.chapter, 0, std::max(0, m_chapter->count() - 1)));
    m_range->setCurrentIndex(m_range->findData(int(r.range)));
    update();
    const std::shared_ptr<const Scene> s = scene();
    const auto stepOf = [&s](const QString& text, int fallback) {
        if (s)
            if (const std::optional<int> step = resolveStep(*s, text)) return *step;
        bool ok = false;
        const int number = text.toInt(&ok);
        return ok ? number : fallback;
    };
    m_from->setValue(stepOf(r.from, 0));
    m_to->setValue(stepOf(r.to, m_to->maximum()));
    int preset = kCustomSize;
    for (int i = 0; i < kCustomSize; ++i)
        if (kSizePresets[i].size == r.size) preset = i;
    m_sizePreset->setCurrentIndex(preset);
    m_width->setValue(r.size.width());
    m_height->setValue(r.size.height());
    m_framesPerStep->setValue(r.framesPerStep);
    m_fps->setValue(r.fps);
    m_file->setText(r.file);
    update();
}

ExportAnimationDialog::SceneKey ExportAnimationDialog::sceneKey() const {
    const AnimationView view = AnimationView(m_view->currentData().toInt());
    return {int(view),
            view == AnimationView::Lecture ? std::max(0, m_chapter->currentIndex()) : -1};
}

void ExportAnimationDialog::fetchScene() {
    const SceneKey key = sceneKey();
    if (m_sceneCache.count(key) || m_countedScenes.count(key) || m_counting == key || !m_scenes)
        return;
    AnimationSceneOrigin origin = m_scenes(AnimationView(key.first), std::max(0, key.second));
    if (!origin.scene && origin.settings) return countSteps(key, *origin.settings);
    m_sceneCache[key] = std::move(origin.scene);
}

// Off the GUI thread: a chapter's scene can take seconds to build. A newer request (another
// chapter chosen meanwhile) replaces it.
void ExportAnimationDialog::countSteps(const SceneKey& key, const VizSettings& settings) {
    m_counting = key;
    m_jobs.run<std::shared_ptr<const Scene>>(
        kCountJob,
        [settings](JobControl&) -> std::shared_ptr<const Scene> {
            try {
                return buildScene(settings, nullptr);
            } catch (const EngineError&) {
                return nullptr; // the recorder says why when it builds the chapter itself
            }
        },
        [this, key](std::shared_ptr<const Scene> scene) {
            m_countedScenes[key] = std::move(scene);
            m_counting.reset();
            update();
        });
}

std::shared_ptr<const Scene> ExportAnimationDialog::scene() const {
    const SceneKey key = sceneKey();
    for (const auto* cache : {&m_sceneCache, &m_countedScenes})
        if (const auto found = cache->find(key); found != cache->end()) return found->second;
    return nullptr;
}

std::optional<AnimationLength> ExportAnimationDialog::length(QString* error) const {
    const std::shared_ptr<const Scene> s = scene();
    if (!s) return std::nullopt;
    return animationLength(request(), *s, error);
}

QString ExportAnimationDialog::problem() const {
    const QString refused = validateAnimationRequest(request());
    if (!refused.isEmpty()) return refused;
    QString error;
    if (!length(&error) && !error.isEmpty()) return error;
    return {};
}

std::optional<int> ExportAnimationDialog::estimatedFrames() const {
    QString error;
    const std::optional<AnimationLength> l = length(&error);
    return l ? std::optional<int>(l->frames) : std::nullopt;
}

QString ExportAnimationDialog::estimateText() const {
    QString error;
    const std::optional<AnimationLength> l = length(&error);
    if (!l) {
        if (!error.isEmpty()) return {}; // the problem line says why
        return m_counting == sceneKey()
                   ? tr("Counting the chapter's steps…")
                   : tr("The steps are counted when the export starts and builds the chapter.");
    }
    const double seconds = double(l->frames) / m_fps->value();
    if (l->steps == 1)
        return tr("1 step × %1 frames = %2 frames, %3 s at %4 fps")
            .arg(m_framesPerStep->value())
            .arg(l->frames)
            .arg(seconds, 0, 'f', 1)
            .arg(m_fps->value());
    return tr("%1 steps × %2 frames = %3 frames, %4 s at %5 fps")
        .arg(l->steps)
        .arg(m_framesPerStep->value())
        .arg(l->frames)
        .arg(seconds, 0, 'f', 1)
        .arg(m_fps->value());
}

void ExportAnimationDialog::update() {
    // Setting a field's range below emits its valueChanged again.
    if (m_updating) return;
    m_updating = true;
    const bool lecture = AnimationView(m_view->currentData().toInt()) == AnimationView::Lecture;
    m_chapter->setEnabled(lecture);
    const bool stepRange = AnimationRange(m_range->currentData().toInt()) == AnimationRange::Steps;
    m_from->setEnabled(stepRange);
    m_to->setEnabled(stepRange);
    fetchScene();
    // From and to within the run's steps, where the run is known; "to" at the end stays there.
    const std::shared_ptr<const Scene> s = scene();
    const int last = s ? s->stepCount() - 1 : std::numeric_limits<int>::max();
    const bool wasAtEnd = m_to->value() == m_to->maximum();
    m_from->setMaximum(last);
    m_to->setMaximum(last);
    if (wasAtEnd) m_to->setValue(last);
    const bool custom = m_sizePreset->currentIndex() == kCustomSize;
    m_width->setEnabled(custom);
    m_height->setEnabled(custom);
    QString formatError;
    const std::optional<AnimationFormat> format =
        animationFormatForFile(request().file, &formatError);
    QString formatName;
    QStringList extensions;
    for (const AnimationFormatInfo& f : availableAnimationFormats()) {
        if (format && f.format == *format) formatName = f.name;
        extensions << QLatin1Char('.') + f.extension;
    }
    m_format->setText(
        formatName.isEmpty()
            ? tr("from the file's extension: %1").arg(extensions.join(QStringLiteral(", ")))
            : formatName);
    const QString why = problem();
    m_problem->setText(why);
    m_problem->setVisible(!why.isEmpty());
    m_estimate->setText(estimateText());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
    m_updating = false;
}

void ExportAnimationDialog::showEvent(QShowEvent* event) {
    // The window's scene may be another now; a chapter's, counted or being counted, is the same.
    m_sceneCache.clear();
    update();
    QDialog::showEvent(event);
}

void ExportAnimationDialog::accept() {
    update();
    if (!problem().isEmpty()) return;
    QDialog::accept();
}

} // namespace flashviz::gui
