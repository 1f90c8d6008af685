#include "widgets/playback_bar.h"

#include "session/controller.h"
#include "session/step_why.h"
#include "style/theme.h"

#include <QComboBox>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

namespace flashviz::gui {

static QToolButton* makeButton(QWidget* parent, QStyle::StandardPixmap icon, const QString& tip,
                               const char* name) {
    auto* b = new QToolButton(parent);
    b->setIcon(parent->style()->standardIcon(icon));
    b->setIconSize(QSize(22, 22));
    b->setToolTip(tip);
    b->setObjectName(QLatin1String(name));
    b->setFocusPolicy(Qt::NoFocus);
    b->setAutoRaise(true);
    b->setMinimumWidth(34);
    return b;
}

PlaybackBar::PlaybackBar(Controller* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller) {
    m_start =
        makeButton(this, QStyle::SP_MediaSkipBackward, tr("To the first step (Home)"), "toStart");
    m_back = makeButton(this, QStyle::SP_MediaSeekBackward, tr("Step back (Left)"), "stepBack");
    m_play = makeButton(this, QStyle::SP_MediaPlay, tr("Play / pause (Space)"), "play");
    m_forward =
        makeButton(this, QStyle::SP_MediaSeekForward, tr("Step forward (Right)"), "stepForward");
    m_end = makeButton(this, QStyle::SP_MediaSkipForward, tr("To the last step (End)"), "toEnd");
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setObjectName(QStringLiteral("scrub"));
    m_slider->setFocusPolicy(Qt::NoFocus);
    m_slider->setToolTip(tr("Scrub through the steps"));
    m_position = new QLabel(this);
    m_position->setObjectName(QStringLiteral("position"));
    m_position->setMinimumWidth(120);
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("caption"));
    m_caption->setTextFormat(Qt::PlainText);
    m_caption->setSizePolicy(QSizePolicy::Ignored,
                             QSizePolicy::Preferred); // long captions never widen the window
    m_why = new QLabel(this);
    m_why->setObjectName(QStringLiteral("why"));
    m_why->setTextFormat(Qt::PlainText);
    m_why->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    m_speed = new QComboBox(this);
    m_speed->setObjectName(QStringLiteral("speed"));
    m_speed->setFocusPolicy(Qt::NoFocus);
    m_speed->setToolTip(tr("Playback speed"));
    for (double s : {0.5, 1.0, 2.0, 4.0, 8.0, 30.0, 120.0})
        m_speed->addItem(tr("%1 steps/s").arg(s), s);
    m_chapters = new QComboBox(this);
    m_chapters->setObjectName(QStringLiteral("chapters"));
    m_chapters->setFocusPolicy(Qt::NoFocus);
    m_chapters->setToolTip(tr("Jump to a chapter (PageUp / PageDown)"));
    m_chapters->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_chapters->setMaximumWidth(320);

    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    for (QToolButton* b : {m_start, m_back, m_play, m_forward, m_end})
        row->addWidget(b);
    row->addWidget(m_slider, 1);
    row->addWidget(m_position);
    row->addWidget(m_speed);
    row->addWidget(m_chapters);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(8, 4, 8, 4);
    column->setSpacing(2);
    column->addLayout(row);
    column->addWidget(m_caption);
    column->addWidget(m_why);

    connect(m_start, &QToolButton::clicked, controller, &Controller::goToStart);
    connect(m_back, &QToolButton::clicked, controller, &Controller::stepBackward);
    connect(m_play, &QToolButton::clicked, controller, &Controller::togglePlay);
    connect(m_forward, &QToolButton::clicked, controller, &Controller::stepForward);
    connect(m_end, &QToolButton::clicked, controller, &Controller::goToEnd);
    connect(m_slider, &QSlider::valueChanged, controller, &Controller::setStep);
    connect(m_speed, &QComboBox::activated, this,
            [this](int index) { m_controller->setSpeed(m_speed->itemData(index).toDouble()); });
    connect(m_chapters, &QComboBox::activated, this,
            [this](int index) { m_controller->setStep(m_chapters->itemData(index).toInt()); });
    connect(controller, &Controller::sceneChanged, this, &PlaybackBar::onSceneChanged);
    connect(controller, &Controller::stepChanged, this, &PlaybackBar::onStepChanged);
    connect(controller, &Controller::frameChanged, this, &PlaybackBar::onFrameChanged);
    connect(controller, &Controller::playingChanged, this, [this](bool playing) {
        m_play->setIcon(
            style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    });
    connect(controller, &Controller::speedChanged, this, [this](double speed) {
        const QSignalBlocker block(m_speed);
        const int index = m_speed->findData(speed);
        if (index >= 0) m_speed->setCurrentIndex(index);
    });
    const int index = m_speed->findData(controller->speed());
    m_speed->setCurrentIndex(index >= 0 ? index : 2);
    onSceneChanged();
}

void PlaybackBar::applyTheme(const Theme& theme) {
    QFont f = theme.font(10);
    for (QWidget* w : std::initializer_list<QWidget*>{m_position, m_speed, m_chapters})
        w->setFont(f);
    const int icon = int(22 * theme.scale);
    for (QToolButton* b : {m_start, m_back, m_play, m_forward, m_end})
        b->setIconSize(QSize(icon, icon));
    m_caption->setFont(theme.font(10.5, true));
    m_why->setFont(theme.font(10));
    m_why->setStyleSheet(QStringLiteral("color: %1").arg(theme.muted.name()));
    // Always one line high, empty or not: the views above never move from step to step.
    m_why->setFixedHeight(QFontMetrics(m_why->font()).lineSpacing() + 2);
}

QString PlaybackBar::caption() const {
    return m_caption->text();
}

void PlaybackBar::onSceneChanged() {
    const auto scene = m_controller->scene();
    {
        const QSignalBlocker block(m_slider);
        m_slider->setRange(0, scene ? scene->stepCount() - 1 : 0);
        m_slider->setValue(m_controller->step());
    }
    const QSignalBlocker block(m_chapters);
    m_chapters->clear();
    if (!scene) return;
    for (const Chapter& c : scene->chapters)
        m_chapters->addItem(c.title, c.step);
    onStepChanged(m_controller->step());
}

void PlaybackBar::onStepChanged(int step) {
    {
        const QSignalBlocker block(m_slider);
        m_slider->setValue(step);
    }
    m_position->setText(tr("step %1 / %2").arg(step).arg(m_controller->stepCount() - 1));
    if (const auto scene = m_controller->scene()) {
        const QSignalBlocker block(m_chapters);
        m_chapters->setCurrentIndex(scene->chapterOf(step));
    }
}

void PlaybackBar::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    onFrameChanged();
}

void PlaybackBar::setKeysHint(const QString& keys) {
    if (keys == m_keysHint) return;
    m_keysHint = keys;
    onFrameChanged();
}

void PlaybackBar::onFrameChanged() {
    const auto frame = m_controller->frame();
    if (!frame) return;
    const StepInfo& info = frame->state.info;
    const Algorithm algorithm = frame->scene->settings.algorithm;
    const QString where =
        QStringLiteral("  [%1]").arg(QString::fromStdString(describeBlocks(info, algorithm)));
    const QString sentence = tr("Step %1: %2")
                                 .arg(frame->step)
                                 .arg(QString::fromStdString(describe(
                                     info.kind, frame->scene->settings.options, algorithm)));
    // One line that never runs off: the blocks go first when it is short (the tile's heading
    // names them too), then the sentence is elided, whole in the tooltip.
    const QFontMetricsF fm(m_caption->font());
    const auto fits = [&](const QString& t) {
        return fm.horizontalAdvance(t) <= m_caption->width();
    };
    QString text = fits(sentence + where) ? sentence + where : sentence;
    if (!fits(text))
        text = fm.elidedText(sentence, Qt::ElideRight, std::max(1, m_caption->width()));
    // The keys hint at step 0, where there is room for all of it (cut, it read "B breaks the re").
    const QString hint = m_keysHint.isEmpty() ? QString() : tr("     (%1)").arg(m_keysHint);
    if (frame->step == 0 && !m_controller->isPlaying() && fits(text + hint)) text += hint;
    m_caption->setText(text);
    m_caption->setToolTip(text.startsWith(sentence + where) ? QString() : sentence + where);

    m_whyText =
        whyOfStep(info.kind, frame->scene->settings.options, frame->scene->settings.algorithm);
    const QString why = m_whyText.isEmpty() ? QString() : tr("Why: %1").arg(m_whyText);
    const QString shown =
        QFontMetrics(m_why->font()).elidedText(why, Qt::ElideRight, std::max(1, m_why->width()));
    m_why->setText(shown);
    m_why->setToolTip(shown == why ? QString() : m_whyText);
}

} // namespace flashviz::gui
