#pragma once
// File → Export animation…: the fields of an AnimationRequest (shell/animation_recorder.h, whose
// defaults, limits and validation are the only ones), the format the file name asks for, and
// how many frames and seconds the export will take. A request the recorder would refuse shows
// its message and cannot be accepted.
#include "session/async_job.h"
#include "session/settings.h"
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

// The scene a request records, for its steps and the estimate: the one at hand (the window's,
// or the chapter the lecture shows), else the settings of the chapter's scene, which the dialog
// builds on a worker thread to count its steps.
struct AnimationSceneOrigin {
    std::shared_ptr<const Scene> scene;
    std::optional<VizSettings> settings; // without a scene: what to build
};
using AnimationSceneSource = std::function<AnimationSceneOrigin(AnimationView view, int chapter)>;

// A name typed without an extension takes the one of the file dialog's filter chosen
// ("SVG drawing (*.svg)" makes "a" "a.svg"); a name with one, or an empty one, stays as it is.
QString withFilterExtension(const QString& file, const QString& filter);

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
    // The frames the request makes, once its steps are known (std::nullopt while a chapter's
    // scene is counted, or when it cannot be).
    std::optional<int> estimatedFrames() const;
    QString estimateText() const;
    bool isCounting() const { return m_counting.has_value(); } // a chapter's scene is building

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
    using SceneKey = std::pair<int, int>; // the view, the chapter (-1 for the step view)
    SceneKey sceneKey() const;
    // The scene of the fields' view and chapter into the cache, or its build started.
    void fetchScene();
    void countSteps(const SceneKey& key, const VizSettings& settings);
    std::shared_ptr<const Scene> scene() const; // nullptr while counting or when unknown
    std::optional<AnimationLength> length(QString* error) const;

    AnimationSceneSource m_scenes;
    // The scenes the source gave (until the dialog is shown again) and those the dialog built;
    // nullptr: the scene cannot be had here (the recorder builds it and reports why).
    std::map<SceneKey, std::shared_ptr<const Scene>> m_sceneCache;
    std::map<SceneKey, std::shared_ptr<const Scene>> m_countedScenes;
    AsyncJobs m_jobs;
    std::optional<SceneKey> m_counting; // the scene being built to count its steps
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
