#pragma once
// "Q, K, V from .npy files": a file picker for each of Q, K, V and the backward's optional dO,
// and the head index of (h, n, d) files. Each file's header is read as it is chosen: its dtype
// and shape are shown beside it, or, for a bad file, the engine's message; the problem the files
// make (n_q, n_k, d) or why they do not fit together is shown below. The values are read by the
// build, which refuses a non-finite one. OK stays disabled until the
// files make a problem. The dialog only proposes the files; the controls panel applies them
// through the controller like any other settings change.
#include "core/inputs.h"

#include <QColor>
#include <QDialog>

#include <array>
#include <optional>

class QDialogButtonBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace flashviz::gui {

class InputFilesDialog final : public QDialog {
    Q_OBJECT
  public:
    // `current` fills the fields (nothing when the inputs are generated); `errorColor` is the
    // theme's colour for what is wrong.
    InputFilesDialog(const std::optional<InputFiles>& current, QColor errorColor,
                     QWidget* parent = nullptr);

    InputFiles files() const; // what the fields say now, each path absolute
    bool filesFit() const;    // the files make a problem (OK is enabled)
    QString problemText() const;
    QString fileText(int role) const; // the shape or the error shown beside one file

    // The matrices, in the order of their rows.
    enum Role { Q, K, V, Upstream, RoleCount };
    void setPath(Role role, const QString& path); // as if typed, then read

  private:
    struct Row {
        QLineEdit* path = nullptr;
        QLabel* status = nullptr;
    };
    void addFileRow(Role role, QGridLayout* grid);
    void browse(Role role);
    void check();
    void showStatus(QLabel* label, const QString& text, bool bad);

    std::array<Row, RoleCount> m_rows;
    QSpinBox* m_head;
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
    QColor m_errorColor;
    bool m_fit = false;
};

} // namespace flashviz::gui
