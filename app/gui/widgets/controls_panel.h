#pragma once
// The settings as form controls: problem sizes, seed, pattern, causal, loop order, precision,
// hardware profile, algorithm, backend (CUDA greyed with the reason when unavailable), the backward's
// tensor-core check (fp16, bf16 or off; enabled for the backward on a GPU backend), the switches
// that break things, and presets. It only proposes settings; the controller accepts or refuses
// them, and on a refusal the panel shows the engine's message and the settings still in force.
// Every control has an object name (its setting's: "queries", "blockRows", "bug", "preset",
// "backend", "tensorCoreCheck", "backendValues", …). A field is done with once Return commits it (or a choice is made
// in a list or a switch): the panel says so (fieldCommitted) so that the window can hand the keys
// back to playback.
#include "session/settings.h"
#include "session/view_options.h"

#include <QColor>
#include <QWidget>

#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace flashviz::gui {

struct Theme;
class NoteLabel;
class SeedField;

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

    // Proposes the settings shown with their inputs from these .npy files (the sizes theirs, the
    // blocks shrunk to fit), or, for files that cannot be read, shows why and proposes nothing.
    // What "Use these files" in the input files dialog does.
    void proposeInputFiles(const InputFiles& files);
    QString inputSourceText() const; // "inputs from q.npy, k.npy, v.npy (head 3)", or ""

  signals:
    void settingsRequested(const flashviz::gui::VizSettings& settings);
    // Return was pressed in a field, a list's entry chosen or a switch clicked.
    void fieldCommitted();
    // A field's text was refused before any settings were proposed ("3.5" for n); the field
    // shows its previous value again.
    void inputRefused(const QString& message);
    void presetRequested(const QString& id);
    void viewOptionsRequested(const flashviz::gui::ViewOptions& options);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    // A spin box for a setting; `label` is its row's label, which its refusals name.
    QSpinBox* wholeNumberField(QWidget* parent, int min, int max, const QString& label,
                               const char* name, const QString& tip);
    void addPresets(QVBoxLayout* layout);
    QGroupBox* makeProblemGroup();
    QGroupBox* makeAlgorithmGroup();
    QGroupBox* makeSwitchesGroup();
    QGroupBox* makeBackwardGroup();
    QWidget* makeInputFilesRow(QWidget* parent); // the files button, the way back, the source
    void openInputFiles();
    void openInputDesigner(); // "Design the inputs…" (input_designer_dialog.h)
    void showInputSource(const VizSettings& settings);
    void enableFor(const VizSettings& settings);
    void connectControls();
    void propose();
    void showPreset(const VizSettings& settings, const QString& presetId);

    VizSettings m_base; // fields the panel does not edit (scale) come from here
    QComboBox* m_preset;
    NoteLabel* m_presetNote; // a fixed two lines: its text never moves the fields under the mouse
    QSpinBox* m_queries;
    QSpinBox* m_keys;
    QSpinBox* m_headDim;
    SeedField* m_seed; // 64 bits: a QSpinBox stops at 2^31 - 1, the engine's seeds do not
    QComboBox* m_pattern;
    QComboBox* m_precision;
    QCheckBox* m_causal;
    QComboBox* m_algorithm;
    QSpinBox* m_blockRows;
    QSpinBox* m_blockCols;
    QComboBox* m_loopOrder;
    QComboBox* m_hardware;
    QComboBox* m_backend;
    QComboBox* m_tensorCoreCheck; // item data: core's name of the check ("fp16", "bf16", "off")
    QCheckBox* m_bug;
    QCheckBox* m_keepScores;
    QCheckBox* m_noMax;
    // "Break the backward": one box per core switch (backwardSwitches()), checked when it is on.
    QGroupBox* m_backwardGroup;
    std::vector<std::pair<const BackwardSwitch*, QCheckBox*>> m_backwardBoxes;
    QCheckBox* m_backendValues;
    QLabel* m_message;
    // Inputs from .npy files (input_files_dialog.h): the dialog's button, the way back to the
    // generated patterns, and where the inputs come from now.
    QPushButton* m_inputFiles;
    QPushButton* m_generatedInputs;
    QLabel* m_inputSource;
    QColor m_errorColor = QColor(Qt::red); // the theme's, once applyTheme has run
};

} // namespace flashviz::gui
