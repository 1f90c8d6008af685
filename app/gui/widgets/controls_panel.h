#pragma once
// The settings as form controls: problem sizes, seed, pattern, causal, loop order, precision,
// hardware profile, algorithm, backend (CUDA greyed with the reason when unavailable), the switches
// that break things, and presets. It only proposes settings; the controller accepts or refuses
// them, and on a refusal the panel shows the engine's message and the settings still in force.
// Every control has an object name (its setting's: "queries", "blockRows", "bug", "preset",
// "backend", "backendValues", …).
#include "session/settings.h"
#include "session/view_options.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QSpinBox;
class QVBoxLayout;

namespace flashviz::gui {

struct Theme;

class ControlsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ControlsPanel(QWidget* parent = nullptr);

    // Shows the settings; emits nothing. `presetId` names the preset they came from when two
    // presets share their settings.
    void setSettings(const VizSettings& settings, const QString& presetId = {});
    VizSettings proposed() const;             // what the controls say now
    void showRefusal(const QString& message); // empty clears it
    QString refusalText() const;
    QString presetNoteText() const;
    void applyTheme(const Theme& theme);
    // Reads again which backends this machine can run: a GPU can become unusable during a
    // session (a kernel fault ends its context), and the list then greys it out with the reason.
    void refreshBackends();

    // Shows the view options (the backend's values); emits nothing. The window owns them (its
    // FrameFeed): the panel proposes a change with viewOptionsRequested.
    void setViewOptions(const ViewOptions& options);
    ViewOptions viewOptions() const; // what the controls say now

  signals:
    void settingsRequested(const flashviz::gui::VizSettings& settings);
    void presetRequested(const QString& id);
    void viewOptionsRequested(const flashviz::gui::ViewOptions& options);

  private:
    void addPresets(QVBoxLayout* layout);
    QGroupBox* makeProblemGroup();
    QGroupBox* makeAlgorithmGroup();
    QGroupBox* makeSwitchesGroup();
    void connectControls();
    void propose();
    void showPreset(const VizSettings& settings, const QString& presetId);

    VizSettings m_base; // fields the panel does not edit (scale) come from here
    QComboBox* m_preset;
    QLabel* m_presetNote;
    QSpinBox* m_queries;
    QSpinBox* m_keys;
    QSpinBox* m_headDim;
    QSpinBox* m_seed;
    QComboBox* m_pattern;
    QComboBox* m_precision;
    QCheckBox* m_causal;
    QComboBox* m_algorithm;
    QSpinBox* m_blockRows;
    QSpinBox* m_blockCols;
    QComboBox* m_loopOrder;
    QComboBox* m_hardware;
    QComboBox* m_backend;
    QCheckBox* m_bug;
    QCheckBox* m_keepScores;
    QCheckBox* m_noMax;
    QCheckBox* m_backendValues;
    QLabel* m_message;
};

} // namespace flashviz::gui
