#include "lecture/presenter_window.h"

#include "lecture/lecture.h"
#include "session/controller.h"
#include "views/frame_feed.h"
#include "widgets/key_help.h"

#include <QAction>
#include <QCloseEvent>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTimeEdit>
#include <QVBoxLayout>

#include <algorithm>

namespace flashviz::gui {

namespace {

constexpr int kClockTickMs = 500;
constexpr int kPreviewPollMs = 30; // while the preview's scene or frame is still being computed
constexpr std::chrono::seconds kMaxTarget{10 * 3600 - 1};

// "7:05", "1:02:09".
QString clockFace(std::chrono::seconds t) {
    const qint64 s = t.count();
    if (s >= 3600)
        return QStringLiteral("%1:%2:%3")
            .arg(s / 3600)
            .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
            .arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QTime timeOf(std::chrono::seconds t) {
    return QTime(0, 0).addSecs(int(t.count()));
}

// The notes a paragraph a line, each line's lead ("Say:", "Ask the room:") in the accent colour,
// so that the lecturer finds the question or the numbers at a glance.
QString notesHtml(const QString& notes, const Theme& theme, int paragraphGap) {
    static const QRegularExpression lead(QStringLiteral("^([^:]{1,24}:)\\s"));
    QString html;
    for (const QString& line : notes.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QRegularExpressionMatch match = lead.match(line);
        const QString body =
            match.hasMatch()
                ? QStringLiteral("<span style=\"color:%1; font-weight:600\">%2</span> %3")
                      .arg(theme.accent.name(), match.captured(1).toHtmlEscaped(),
                           line.mid(match.capturedLength()).toHtmlEscaped())
                : line.toHtmlEscaped();
        html += QStringLiteral("<p style=\"margin-top:0; margin-bottom:%1px\">%2</p>")
                    .arg(paragraphGap)
                    .arg(body);
    }
    return html;
}

} // namespace

QImage renderSlide(LectureView& lecture) {
    QImage image(lecture.size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::black);
    lecture.render(&image);
    return image;
}

void showOffscreen(LectureView& lecture, QSize size) {
    lecture.setAttribute(Qt::WA_DontShowOnScreen);
    lecture.layout()->setSizeConstraint(QLayout::SetNoConstraint);
    lecture.showKeysLine(false);
    lecture.resize(size);
    lecture.show();
}

PresenterWindow::PresenterWindow(LectureView* lecture, Controller* controller, FrameFeed* feed,
                                 QWidget* parent, const QString& notesPath)
    : QWidget(parent, Qt::Window), m_lecture(lecture), m_controller(controller), m_notes(notesPath),
      m_theme(Theme::presentation()), m_previewController(new Controller(this)),
      m_previewFeed(new FrameFeed(m_previewController, this)) {
    setObjectName(QStringLiteral("presenter"));
    setWindowTitle(tr("FlashViz — presenter view"));

    // The slide the next click shows, painted by a lecture of its own: the audience's views,
    // controller and step are never touched.
    m_previewFeed->holdTransition(1.0);
    m_previewFeed->setViewOptions(feed->viewOptions());
    connect(feed, &FrameFeed::viewOptionsChanged, this, [this](const ViewOptions& options) {
        m_previewFeed->setViewOptions(options);
        m_previewTarget.reset(); // the same beat looks different now
        requestPreview();
        m_notesScene.reset(); // the notes' FlashAttention-2 figures follow the options too
        showNotes();
    });
    m_previewLecture = std::make_unique<LectureView>(m_previewController, m_previewFeed);
    showOffscreen(*m_previewLecture, QSize(1920, 1080));
    m_previewCheck.setSingleShot(true);
    connect(&m_previewCheck, &QTimer::timeout, this, &PresenterWindow::checkPreview);

    buildUi();
    applyTheme(Theme::presentation(size()));
    if (!m_notes.loadProblem().isEmpty())
        showMessage(tr("Your notes could not be read: %1. The shipped notes are shown; the file "
                       "is left as it is until you save.")
                        .arg(m_notes.loadProblem()));

    connect(lecture, &LectureView::slideChanged, this, &PresenterWindow::refresh);
    lecture->installEventFilter(this); // its size is the preview's
    connect(lecture, &LectureView::chapterChanged, this,
            [this] { m_title->setText(m_lecture->titleText()); });
    m_clock.start();
    m_tick.setInterval(kClockTickMs);
    connect(&m_tick, &QTimer::timeout, this, &PresenterWindow::updateClock);
    m_tick.start();
    updateClock();
    refresh();
}

PresenterWindow::~PresenterWindow() = default;

void PresenterWindow::buildUi() {
    m_title = new QLabel;
    m_title->setObjectName(QStringLiteral("presenterTitle"));
    m_title->setWordWrap(true);
    m_clockLabel = new QLabel;
    m_clockLabel->setObjectName(QStringLiteral("presenterClock"));
    m_targetTime = new QTimeEdit;
    m_targetTime->setObjectName(QStringLiteral("presenterTarget"));
    m_targetTime->setDisplayFormat(QStringLiteral("H:mm:ss"));
    m_targetTime->setTimeRange(QTime(0, 0, 1), timeOf(kMaxTarget));
    m_targetTime->setTime(timeOf(m_target));
    m_targetTime->setToolTip(tr("The talk's target length; the clock turns red past it."));
    connect(m_targetTime, &QTimeEdit::timeChanged, this,
            [this](QTime t) { setTarget(std::chrono::seconds(QTime(0, 0).secsTo(t))); });
    m_resetClock = new QPushButton(tr("Restart clock"));
    m_resetClock->setObjectName(QStringLiteral("presenterResetClock"));
    connect(m_resetClock, &QPushButton::clicked, this, &PresenterWindow::resetClock);
    m_targetLabel = new QLabel(tr("target"));

    auto* top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(m_clockLabel);
    top->addWidget(m_targetLabel);
    top->addWidget(m_targetTime);
    top->addWidget(m_resetClock);

    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("presenterMessage"));
    m_message->setWordWrap(true);
    m_message->setTextFormat(Qt::PlainText);
    m_message->hide();
    m_notesLabel = new QLabel;
    m_notesLabel->setObjectName(QStringLiteral("presenterNotes"));
    m_notesLabel->setWordWrap(true);
    m_notesLabel->setTextFormat(Qt::RichText);
    m_notesLabel->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_notesLabel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setFocusPolicy(Qt::NoFocus);
    m_editor = new QPlainTextEdit;
    m_editor->setObjectName(QStringLiteral("presenterEditor"));
    m_editor->installEventFilter(this);
    m_notesStack = new QStackedWidget;
    m_notesStack->addWidget(scroll);
    m_notesStack->addWidget(m_editor);

    const auto button = [this](const QString& text, const char* name,
                               void (PresenterWindow::*slot)()) {
        auto* b = new QPushButton(text);
        b->setObjectName(QLatin1String(name));
        b->setFocusPolicy(Qt::NoFocus); // the keys stay with the lecture
        connect(b, &QPushButton::clicked, this, slot);
        return b;
    };
    m_edit = button(tr("Edit notes"), "presenterEdit", &PresenterWindow::editNotes);
    m_save = button(tr("Save notes"), "presenterSave", &PresenterWindow::saveNotes);
    m_cancel = button(tr("Cancel"), "presenterCancel", &PresenterWindow::cancelEdit);
    m_revert =
        button(tr("Revert to the shipped notes"), "presenterRevert", &PresenterWindow::revertNotes);
    m_save->hide();
    m_cancel->hide();
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {m_edit, m_save, m_cancel, m_revert})
        buttons->addWidget(b);
    buttons->addStretch(1);

    auto* left = new QVBoxLayout;
    left->addWidget(m_message);
    left->addWidget(m_notesStack, 1);
    left->addLayout(buttons);

    m_beat = new QLabel;
    m_beat->setObjectName(QStringLiteral("presenterBeat"));
    m_beat->setWordWrap(true);
    m_beat->setTextFormat(Qt::PlainText);
    m_nextHeading = new QLabel;
    m_nextHeading->setObjectName(QStringLiteral("presenterNextHeading"));
    m_nextHeading->setWordWrap(true);
    m_preview = new QLabel;
    m_preview->setObjectName(QStringLiteral("presenterPreview"));
    m_preview->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_preview->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    m_preview->setMinimumSize(160, 90);
    auto* right = new QVBoxLayout;
    right->addWidget(m_beat);
    right->addWidget(m_nextHeading);
    right->addWidget(m_preview, 1);

    auto* body = new QHBoxLayout;
    body->addLayout(left, 55);
    body->addLayout(right, 45);

    m_keys = new QLabel;
    m_keys->setObjectName(QStringLiteral("presenterKeys"));
    m_keys->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(body, 1);
    layout->addWidget(m_keys);
    resize(1280, 800);
}

void PresenterWindow::applyTheme(const Theme& theme) {
    m_theme = theme;
    QPalette pal = palette();
    pal.setColor(QPalette::Window, theme.background);
    pal.setColor(QPalette::WindowText, theme.text);
    pal.setColor(QPalette::Base, theme.panel);
    pal.setColor(QPalette::Text, theme.text);
    pal.setColor(QPalette::Button, theme.panel);
    pal.setColor(QPalette::ButtonText, theme.text);
    pal.setColor(QPalette::Disabled, QPalette::ButtonText, theme.muted);
    setPalette(pal);
    setAutoFillBackground(true);
    const auto colour = [&](QWidget* w, const QColor& c) {
        QPalette p = pal;
        p.setColor(QPalette::WindowText, c);
        w->setPalette(p);
    };
    colour(m_beat, theme.accent);
    colour(m_nextHeading, theme.muted);
    colour(m_keys, theme.muted);
    colour(m_message, theme.bad);
    m_title->setFont(theme.font(13, true));
    m_clockLabel->setFont(theme.mono(13, true));
    m_notesLabel->setFont(theme.font(13));
    m_notesSource.clear(); // the notes' spacing follows the type
    for (QWidget* w : std::initializer_list<QWidget*>{m_targetTime, m_resetClock, m_edit, m_save,
                                                      m_cancel, m_revert, m_targetLabel})
        w->setFont(theme.font(7.5));
    m_editor->setFont(theme.mono(8.5));
    m_message->setFont(theme.font(8));
    m_beat->setFont(theme.font(9, true));
    m_nextHeading->setFont(theme.font(8.5));
    m_keys->setFont(theme.font(8));
    const int margin = int(14 * theme.scale);
    layout()->setContentsMargins(margin, margin / 2, margin, margin / 2);
    layout()->setSpacing(margin / 2);
    updateClock();
    showNotes();
}

void PresenterWindow::resizeEvent(QResizeEvent* event) {
    const Theme fitted = Theme::presentation(size());
    if (!qFuzzyCompare(fitted.scale, m_theme.scale)) applyTheme(fitted);
    QWidget::resizeEvent(event);
    showPreview();
}

void PresenterWindow::closeEvent(QCloseEvent* event) {
    event->accept();
    emit closed();
}

// The audience's size is the preview's; Escape in the editor ends the edit, not the lecture.
bool PresenterWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_lecture && event->type() == QEvent::Resize) requestPreview();
    if (watched == m_editor &&
        (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress) &&
        static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
        event->accept();
        if (event->type() == QEvent::KeyPress) cancelEdit();
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void PresenterWindow::setKeyActions(const QList<QAction*>& actions) {
    m_keyActions = actions;
    addActions(actions);
    for (QAction* a : actions)
        connect(a, &QAction::changed, this, [this] { m_keys->setText(keysText()); });
    m_keys->setText(keysText());
}

const LectureChapter* PresenterWindow::chapter() const {
    const auto& chapters = lectureChapters();
    const int index = m_lecture->chapter();
    return index >= 0 && index < int(chapters.size()) ? &chapters[std::size_t(index)] : nullptr;
}

void PresenterWindow::refresh() {
    m_title->setText(m_lecture->titleText());
    const auto frame = m_controller->frame();
    m_beat->setText(frame ? tr("Now: %1   (step %2 of %3)")
                                .arg(m_lecture->captionText())
                                .arg(frame->step)
                                .arg(frame->scene->stepCount())
                          : QString());
    showNotes();
    requestPreview();
}

void PresenterWindow::showNotes() {
    const LectureChapter* c = chapter();
    const auto scene = m_controller->scene();
    if (!c || !scene) return;
    const QString source = m_notes.notes(*c);
    if (scene == m_notesScene && source == m_notesSource) return;
    m_notesScene = scene;
    m_notesSource = source;
    m_notesPlain = source.trimmed().isEmpty()
                       ? tr("(No notes for this chapter: Edit notes writes some.)")
                       : fillNarrative(source, *scene, m_previewFeed->viewOptions());
    m_notesLabel->setText(notesHtml(m_notesPlain, m_theme, int(8 * m_theme.scale)));
    m_revert->setEnabled(m_notes.isEdited(c->id));
}

void PresenterWindow::showMessage(const QString& text) {
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

QString PresenterWindow::titleText() const {
    return m_title->text();
}
QString PresenterWindow::notesText() const {
    return m_notesPlain;
}
QString PresenterWindow::beatText() const {
    return m_beat->text();
}
QString PresenterWindow::keysText() const {
    return keyHelp(m_keyActions, KeyHelpForm::LectureKeys);
}
QString PresenterWindow::clockText() const {
    return m_clockLabel->text();
}
QString PresenterWindow::messageText() const {
    return m_message->isVisibleTo(this) ? m_message->text() : QString();
}

std::chrono::milliseconds PresenterWindow::elapsed() const {
    return std::chrono::milliseconds(m_clock.elapsed());
}

bool PresenterWindow::isClockOver() const {
    return elapsed() > m_target;
}

void PresenterWindow::setTarget(std::chrono::seconds target) {
    m_target = std::clamp(target, std::chrono::seconds(1), kMaxTarget);
    if (m_targetTime->time() != timeOf(m_target)) m_targetTime->setTime(timeOf(m_target));
    updateClock();
}

void PresenterWindow::resetClock() {
    m_clock.restart();
    updateClock();
}

void PresenterWindow::updateClock() {
    const auto spent = std::chrono::duration_cast<std::chrono::seconds>(elapsed());
    QString text = tr("%1 / %2").arg(clockFace(spent), clockFace(m_target));
    if (isClockOver()) text += tr("  (+%1)").arg(clockFace(spent - m_target));
    m_clockLabel->setText(text);
    QPalette p = m_clockLabel->palette();
    p.setColor(QPalette::WindowText, isClockOver() ? m_theme.bad : m_theme.text);
    m_clockLabel->setPalette(p);
}

std::optional<PresenterWindow::PreviewTarget> PresenterWindow::nextTarget() const {
    const auto scene = m_controller->scene();
    if (!scene || !m_lecture->isActive()) return std::nullopt;
    const int index = m_lecture->chapter();
    if (const auto beat = m_lecture->nextBeatInChapter())
        return PreviewTarget{index, *beat, scene->settings};
    const auto& chapters = lectureChapters();
    if (index + 1 >= int(chapters.size())) return std::nullopt;
    return PreviewTarget{index + 1, std::nullopt,
                         m_lecture->chapterSettings(chapters[std::size_t(index + 1)])};
}

void PresenterWindow::requestPreview() {
    // While the lecture's own scene is being built its beats are not known yet.
    if (m_controller->isBusy()) return;
    const auto target = nextTarget();
    const QSize audience = m_lecture->size().isEmpty() ? QSize(1920, 1080) : m_lecture->size();
    if (target == m_previewTarget && audience == m_previewLecture->size()) return;
    m_previewTarget = target;
    m_previewReady = false;
    if (!target) {
        m_previewImage = QImage();
        m_previewReady = true;
        showPreview();
        return;
    }
    m_previewLecture->resize(audience);
    m_previewLecture->useHardware(target->settings.hardwareId);
    if (!m_previewLecture->isActive() || m_previewLecture->chapter() != target->chapter)
        m_previewLecture->start(target->chapter);
    if (m_previewController->requestedSettings() != target->settings)
        m_previewController->apply(target->settings);
    showPreview();
    m_previewCheck.start(0);
}

// Renders the preview once its lecture shows the target: the scene built, the step on it, the
// frame on the views.
void PresenterWindow::checkPreview() {
    if (!m_previewTarget || m_previewReady) return;
    const PreviewTarget& target = *m_previewTarget;
    Controller& c = *m_previewController;
    const auto scene = c.scene();
    if (!c.isIdle() || !scene || scene->settings != target.settings ||
        m_previewLecture->chapter() != target.chapter || m_previewLecture->beats().empty()) {
        if (!c.isBusy() && !c.lastRefusal().isEmpty()) {
            m_nextHeading->setText(tr("No preview: %1").arg(c.lastRefusal()));
            return;
        }
        m_previewCheck.start(kPreviewPollMs);
        return;
    }
    const int step = target.step ? *target.step : m_previewLecture->beats().front();
    if (c.step() != step) {
        c.setStep(step);
        m_previewCheck.start(0);
        return;
    }
    m_previewImage = renderSlide(*m_previewLecture);
    m_previewReady = true;
    showPreview();
}

void PresenterWindow::showPreview() {
    const auto& chapters = lectureChapters();
    if (!m_previewTarget) {
        m_nextHeading->setText(tr("Next: nothing, this is the lecture's last beat."));
        m_preview->setPixmap(QPixmap());
        return;
    }
    const PreviewTarget& target = *m_previewTarget;
    const QString where = target.step ? tr("Next click: this chapter's next beat")
                                      : tr("Next click: chapter %1 / %2, %3")
                                            .arg(target.chapter + 1)
                                            .arg(chapters.size())
                                            .arg(chapters[std::size_t(target.chapter)].title);
    m_nextHeading->setText(m_previewReady ? where : where + tr(" (preparing…)"));
    if (!m_previewReady || m_previewImage.isNull()) return;
    m_preview->setPixmap(QPixmap::fromImage(
        m_previewImage.scaled(m_preview->size(), Qt::KeepAspectRatio, Qt::SmoothTransformation)));
}

bool PresenterWindow::waitForPreview(int timeoutMs) {
    QElapsedTimer timer;
    timer.start();
    while (!m_previewReady || m_controller->isBusy()) {
        if (timer.elapsed() > timeoutMs) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    }
    return true;
}

bool PresenterWindow::isEditing() const {
    return m_notesStack->currentWidget() == m_editor;
}

void PresenterWindow::editNotes() {
    const LectureChapter* c = chapter();
    if (!c) return;
    m_editingChapter = m_lecture->chapter();
    m_editor->setPlainText(m_notes.notes(*c));
    m_notesStack->setCurrentWidget(m_editor);
    m_edit->hide();
    m_revert->hide();
    m_save->show();
    m_cancel->show();
    m_editor->setFocus(Qt::OtherFocusReason);
}

void PresenterWindow::cancelEdit() {
    m_notesStack->setCurrentIndex(0);
    m_save->hide();
    m_cancel->hide();
    m_edit->show();
    m_revert->show();
    setFocus(Qt::OtherFocusReason);
}

void PresenterWindow::saveNotes() {
    const auto& chapters = lectureChapters();
    if (m_editingChapter < 0 || m_editingChapter >= int(chapters.size())) return;
    const QString error =
        m_notes.save(chapters[std::size_t(m_editingChapter)], m_editor->toPlainText());
    showMessage(error);
    if (!error.isEmpty()) return; // the edit stays open, the notes as they were
    cancelEdit();
    m_notesSource.clear();
    showNotes();
}

void PresenterWindow::revertNotes() {
    const LectureChapter* c = chapter();
    if (!c) return;
    showMessage(m_notes.revert(*c));
    m_notesSource.clear();
    showNotes();
}

void placePresenter(QWidget& audience, PresenterWindow& presenter) {
    QScreen* own = audience.screen() ? audience.screen() : QGuiApplication::primaryScreen();
    if (!own) return;
    QScreen* other = nullptr;
    for (QScreen* s : QGuiApplication::screens())
        if (s != own) {
            other = s;
            break;
        }
    const QRect room = own->availableGeometry();
    if (other) {
        presenter.setGeometry(room);
        const bool full = audience.isFullScreen();
        if (full) audience.showNormal();
        audience.move(other->availableGeometry().topLeft());
        if (full) audience.showFullScreen();
        return;
    }
    // One screen: beside the audience window where there is room, else over its right part.
    const QSize size(std::max(room.width() * 2 / 5, 640), std::max(room.height() * 3 / 5, 480));
    QPoint at(audience.frameGeometry().right() + 1, audience.frameGeometry().top());
    if (at.x() + size.width() > room.right() + 1) at.setX(room.right() + 1 - size.width());
    at.setY(
        std::clamp(at.y(), room.top(), std::max(room.top(), room.bottom() + 1 - size.height())));
    presenter.setGeometry(QRect(at, size));
}

} // namespace flashviz::gui
