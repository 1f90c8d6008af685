#pragma once
// Playback: to the start, step back, play/pause, step forward, to the end, a scrub slider, the
// speed, the chapters, and what the current step does in words.
#include <QWidget>

class QComboBox;
class QLabel;
class QSlider;
class QToolButton;

namespace flashviz::gui {

class Controller;
struct Theme;

class PlaybackBar : public QWidget {
    Q_OBJECT
  public:
    explicit PlaybackBar(Controller* controller, QWidget* parent = nullptr);
    void applyTheme(const Theme& theme);

    QSlider* slider() const { return m_slider; }
    QComboBox* chapters() const { return m_chapters; }
    QComboBox* speeds() const { return m_speed; }
    QString caption() const;
    // The keys hint the caption adds at step 0 ("Space plays, …"), from the window's actions.
    void setKeysHint(const QString& keys);

  protected:
    // The caption's keys hint depends on the width (onFrameChanged).
    void resizeEvent(QResizeEvent* event) override;

  private:
    void onSceneChanged();
    void onStepChanged(int step);
    void onFrameChanged();

    Controller* m_controller;
    QString m_keysHint;
    QToolButton* m_start;
    QToolButton* m_back;
    QToolButton* m_play;
    QToolButton* m_forward;
    QToolButton* m_end;
    QSlider* m_slider;
    QLabel* m_position;
    QLabel* m_caption;
    QComboBox* m_speed;
    QComboBox* m_chapters;
};

} // namespace flashviz::gui
