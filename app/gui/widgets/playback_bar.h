#pragma once
// Playback: to the start, step back, play/pause, step forward, to the end, a scrub slider, the
// speed, the chapters, what the current step does in words and, under it, why (step_why.h: the
// sentences the lecture quotes).
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
    QString why() const { return m_whyText; } // the current step's "why", in full; may be empty
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
    QLabel* m_why; // one line, elided to its width with the whole sentence as its tooltip
    QString m_whyText;
    QComboBox* m_speed;
    QComboBox* m_chapters;
};

} // namespace flashviz::gui
