#pragma once
// File → Export animation…: the fields of an AnimationRequest (shell/animation_recorder.h, whose
// defaults, limits and validation are the only ones), the format the file name asks for, and
// how many frames and seconds the export will take. A request the recorder would refuse shows
// its message and cannot be accepted.
#include "shell/animation_recorder.h"

#include <QDialog>
#include <QStringList>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace flashviz::gui {

struct Scene;

// The scene a request records (the window's, or a lecture chapter's), for its steps and the
// estimate; nullptr when it cannot be had without a long build (the recorder builds it).
using AnimationSceneSource =
    std::function<std::shared_ptr<const Scene>(AnimationView view, int chapter)>;

class ExportAnimationDialog : public QDialog {
    Q_OBJECT
  public:
    ExportAnimationDialog(const QStringList& chapterTitles, AnimationSceneSource scenes,
                          QWidget* parent = nullptr);

    // The fields as a request; setRequest() shows one (the defaults, the last export).
    AnimationRequest request() const;
    void setRequest(const AnimationRequest& request);
    // Why the recorder would refuse the request (its validation, then the steps of the run);
    // empty when it may start.
    QString problem() const;
    // The frames and seconds the request makes, once its steps are known.
    std::optional<int> estimatedFrames() const;
    QString estimateText() const;

  public slots:
    void accept() override; // refused (the message stays shown) while problem() is not empty

  protected:
    // The window's scene may have changed since the dialog was last open.
    void showEvent(QShowEvent* event) override;

  private:
    void buildFields(const QStringList& chapterTitles);
    QWidget* buildSizeRow();
    QWidget* buildStepsRow();
    QWidget* buildFileRow();
    void browse();
    void update(); // enables the fields that apply and refreshes the estimate and the message
    std::shared_ptr<const Scene> scene() const;
    std::optional<std::vector<int>> steps(QString* error) const;

    AnimationSceneSource m_scenes;
    mutable std::map<std::pair<int, int>, std::shared_ptr<const Scene>> m_sceneCache;
    QComboBox* m_view = nullptr;
    QComboBox* m_chapter = nullptr;
    QComboBox* m_range = nullptr;
    QSpinBox* m_from = nullptr;
    QSpinBox* m_to = nullptr;
    QComboBox* m_sizePreset = nullptr;
    QSpinBox* m_width = nullptr;
    QSpinBox* m_height = nullptr;
    QSpinBox* m_framesPerStep = nullptr;
    QSpinBox* m_fps = nullptr;
    QLineEdit* m_file = nullptr;
    QLabel* m_format = nullptr;
    QLabel* m_estimate = nullptr;
    QLabel* m_problem = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    bool m_updating = false;
};

} // namespace flashviz::gui
