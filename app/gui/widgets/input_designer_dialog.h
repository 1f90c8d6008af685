#pragma once
// "Design the inputs…": for each query row, the key block that holds its maximum and how sharp
// it is (core/input_design.h makes Q and K that realise it). A grid of rows (down) by key blocks
// (across), rows grouped when there are more than fit: a click puts the row's maximum in the
// block clicked, a drag down the rows does it for a range; the quick designs (one block, the
// diagonal, the last block, random from the seed); the sharpness given to the rows clicked. The
// preview is the engine's own: the scores S the inputs give, and for every row where its maximum
// came out and where its rescale fires, marked on the grid, with the step the step view shows it
// at. Apply proposes the settings with the design (or, after "Use the pattern", without one); a
// design the engine refuses shows its message and cannot be applied.
#include "session/async_job.h"
#include "session/settings.h"

#include "core/input_design.h"
#include "core/steps.h"

#include <QColor>
#include <QDialog>
#include <QImage>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace flashviz::gui {

class ScorePreview;

// What the engine makes of a design, computed off the GUI thread when it is large.
struct DesignPreview {
    QString error;                       // the engine's refusal; the rest is empty then
    std::vector<RealisedRow> realised;   // per row, in blocks of the run's Bc
    int blockCols = 0;                   // the run's Bc the report counts in
    int unrealisedRow = -1;              // firstUnrealisedRow
    std::optional<int> firstRescaleStep; // the forward's step view
    std::optional<StepInfo> firstRescaleInfo;
    QImage scores; // S, for problems small enough to keep it (empty otherwise)
    double scoreMax = 0;
};
// Throws nothing: a refusal comes back as `error`.
DesignPreview previewDesign(const VizSettings& settings);

// The rows × key blocks grid: the design filled in the score colour (a group of rows shaded by
// how many of its rows chose the block), where the maximum came out as a dot (ringed in red where
// it is not the block designed), where the rescale fires as a bar on the block's left edge, the
// blocks a causal row does not see greyed. Press, drag down the rows, release: `picked(first,
// last, block)` for the block pressed.
class DesignGrid final : public QWidget {
  public:
    DesignGrid(ProblemSpec spec, int blockSize, std::function<void(int, int, int)> picked,
               QWidget* parent = nullptr);
    void setDesign(const InputDesign* design);
    void setPreview(const DesignPreview* preview);
    int rowsPerGroup() const;
    int blockCount() const { return m_blocks; }
    QPoint pointFor(int row, int keyBlock) const;  // the centre of its cell
    QString cellText(int row, int keyBlock) const; // the tooltip there
    QSize sizeHint() const override { return {520, 520}; }
    QSize minimumSizeHint() const override { return {200, 160}; }

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

  private:
    struct Cells {
        QRectF area;
        int groups = 0;
        int rowsPerGroup = 1;
        double width = 0, height = 0;
    };
    Cells cells() const;
    std::optional<std::pair<int, int>> cellAt(QPointF point) const; // (row, block)
    int designBlockOfKey(int key) const { return key / m_blockSize; }

    ProblemSpec m_spec;
    int m_blockSize;
    int m_blocks;
    std::function<void(int, int, int)> m_picked;
    const InputDesign* m_design = nullptr;
    const DesignPreview* m_preview = nullptr;
    std::optional<std::pair<int, int>> m_press; // (row, block) where the drag began
    int m_dragRow = -1;
};

class InputDesignerDialog final : public QDialog {
    Q_OBJECT
  public:
    // `settings` are those in force: their sizes, mask, seed and Bc; their design, when it has
    // one row per query, is where the dialog starts (else the diagonal).
    InputDesignerDialog(const VizSettings& settings, QColor errorColor, QWidget* parent = nullptr);

    // The settings with the design (without one after "Use the pattern").
    VizSettings settings() const;
    const InputDesign& design() const { return m_design; }
    bool usesDesign() const { return m_useDesign; }
    void setDesign(const InputDesign& design);
    // Rows first..last (inclusive) get their maximum in `keyBlock` at the sharpness shown.
    void pickRows(int first, int last, int keyBlock);
    void setSharpness(double sharpness); // the control's value, for the rows clicked next
    // The preview of the design shown, once computed (waitForPreview); what the summary says.
    const DesignPreview& preview() const { return m_preview; }
    bool waitForPreview(int timeoutMs = 60000);
    QString summaryText() const;
    QString messageText() const;
    DesignGrid* grid() const { return m_grid; }

  public slots:
    void accept() override; // refused, with the message shown, while the engine refuses

  private:
    QWidget* makeControls();
    void quickDesign(InputDesign design);
    void designChanged();
    void showPreview(DesignPreview preview);
    void showMessage(const QString& text);

    VizSettings m_base;
    InputDesign m_design;
    bool m_useDesign = true;
    QColor m_errorColor;
    DesignGrid* m_grid;
    ScorePreview* m_scores;
    QLabel* m_axes;
    QLabel* m_summary;
    QLabel* m_message;
    QDoubleSpinBox* m_sharpness;
    QSpinBox* m_oneBlock;
    QPushButton* m_apply;
    AsyncJobs m_jobs;
    DesignPreview m_preview;
    bool m_previewPending = false;
};

} // namespace flashviz::gui
