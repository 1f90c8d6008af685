#pragma once
// The settings as form controls: problem sizes, seed, pattern, causal, loop order, precision,
// hardware profile, algorithm, backend (CUDA greyed with the reason when unavailable), the switches
// that break things, and presets. It only proposes settings; the controller accepts or refuses
// them, and on a refusal the panel shows the engine's message and the settings still in force.
#include "session/settings.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;

namespace flashviz::gui {

struct Theme;

class ControlsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ControlsPanel(QWidget* parent = nullptr);

    // Shows the settings; emits nothing. `presetId` names the preset they came from when two
    // presets share their settings.
    void setSettings(const VizSettings& settings, const QString& presetId = {});
    VizSettings proposed() const;                  // what the controls say now
    void showRefusal(const QString& message);      // empty clears it
    QString refusalText() const;
    void applyTheme(const Theme& theme);
    // Reads again which backends this machine can run: a GPU can become unusable during a
    // session (a kernel fault ends its context), and the list then greys it out with the reason.
    void refreshBackends();

    // For tests: the controls by name.
    QSpinBox* queriesBox() const { return m_queries; }
    QSpinBox* keysBox() const { return m_keys; }
    QSpinBox* headDimBox() const { return m_headDim; }
    QSpinBox* blockRowsBox() const { return m_blockRows; }
    QSpinBox* blockColsBox() const { return m_blockCols; }
    QCheckBox* bugBox() const { return m_bug; }
    QComboBox* presetBox() const { return m_preset; }
    QString presetNoteText() const;
    QComboBox* backendBox() const { return m_backend; }
    QCheckBox* backendValuesBox() const { return m_backendValues; }

  signals:
    void settingsRequested(const flashviz::gui::VizSettings& settings);
    void presetRequested(const QString& id);
    void showBackendValuesChanged(bool show);

  private:
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
