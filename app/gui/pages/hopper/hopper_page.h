#pragma once
// The Hopper page (issue 17): how a Hopper GPU runs FlashViz's wgmma kernel. The controls pick a
// variant of the kernel (kernels::kHopperConfigs: d, the mask, the row; the GPU's default marked)
// and a block of its trace; the picture (hopper_view.h) draws the block as the variant configures
// it and, where a trace of that variant and mask is at hand, the block's timeline and what it
// says. A trace is the user's own (recorded on this GPU, or opened from a file) where one
// matches, else the one FlashViz ships (app/measured), else none: then the page says so and how
// to record one. Recording runs on the page's worker job with progress and Cancel (a launch on
// the GPU cannot be stopped: Cancel drops its result); Save trace… writes the trace on screen as
// JSON (kernels::hopperTracesJson), Open trace… reads one back, and a file that cannot be read
// leaves the trace on screen as it was, with the reason.
#include "pages/hopper/hopper_model.h"
#include "pages/page.h"

#include "kernels/backend_registry.h"

#include <functional>
#include <vector>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
QT_END_NAMESPACE

namespace flashviz::gui {

class HopperView;

class HopperPage : public Page {
    Q_OBJECT
  public:
    // What records a trace (recordHopperTrace unless replaced); it runs on a worker thread.
    using Recorder = std::function<kernels::HopperTrace(const kernels::HopperTraceRequest&)>;

    explicit HopperPage(QWidget* parent = nullptr);

    // The variant and mask shown: sets d, the mask and the row (one of d's rows).
    void choose(int row, bool causal);
    int variantRow() const;
    bool causal() const;
    int headDim() const;
    // The block shown, from 0 (the longest when a trace is first shown).
    int block() const;
    void setBlock(int index);
    // The launch Record on this GPU asks for: the variant, the mask, the element and the sizes.
    kernels::HopperTraceRequest request() const;

    // The trace on screen (null: none for this variant and mask) and whose it is.
    const kernels::HopperTrace* shownTrace() const { return m_shown; }
    bool showsOwnTrace() const { return m_shown && m_shownOwn; }
    // Reads a trace file (hopperTracesJson's format) on the page's job and shows it; a file that
    // cannot be read leaves what is on screen, with why. False (and why) while a recording runs.
    bool openTrace(const QString& file);
    // Writes the trace on screen; false, with the message shown, when it could not.
    bool saveTrace(const QString& file);

    const GpuBenchAvailability& availability() const { return m_availability; }
    bool canRecord() const { return m_availability.available; }
    // Replaces what records, and whether and why it can (tests; a build without a GPU).
    void setRecorder(Recorder recorder, const GpuBenchAvailability& availability);
    // Replaces the shipped traces (measured::shippedHopperTraces() unless replaced: tests).
    void setShippedTraces(std::vector<kernels::HopperTrace> traces);

    HopperView* view() const { return m_view; }
    QPushButton* recordButton() const { return m_record; }

  public slots:
    void record();          // validates the controls' request and records it on the worker thread
    void cancel() override; // drops the recording's or the file's result; the trace on screen stays
    void openInteractively();
    void saveInteractively();

  signals:
    void traceShown(); // the picture changed: another variant, mask, block or trace

  protected:
    void showBusy(bool busy) override;
    void applyLabelFonts() override {}
    void resizeEvent(QResizeEvent* event) override;

  private:
    struct Outcome;

    QLayout* makeChoiceRow();
    QLayout* makeFileRow();
    void fillVariants();
    void refresh();
    void finished(const Outcome& outcome);
    void opened(const Outcome& outcome);
    void keepOwn(const kernels::HopperTrace& trace, const QString& origin);
    QString shownOrigin() const;
    void updateRecordNote();

    GpuBenchAvailability m_availability;
    Recorder m_recorder;
    std::vector<kernels::HopperTrace> m_shipped;
    std::vector<kernels::HopperTrace> m_own; // recorded here or opened, the latest first
    std::vector<QString> m_ownOrigins;       // one per trace of m_own: "opened from trace.json"
    const kernels::HopperTrace* m_shown = nullptr;
    bool m_shownOwn = false;
    int m_shownRow = -1;
    bool m_shownCausal = false;
    int m_shownBlock = -1;

    QComboBox* m_headDim = nullptr;
    QCheckBox* m_causal = nullptr;
    QComboBox* m_variant = nullptr;
    QSpinBox* m_block = nullptr;
    QLabel* m_blockCount = nullptr;
    QPushButton* m_longest = nullptr;
    QPushButton* m_open = nullptr;
    QPushButton* m_save = nullptr;
    QComboBox* m_element = nullptr;
    QSpinBox* m_queries = nullptr;
    QSpinBox* m_keys = nullptr;
    QPushButton* m_record = nullptr;
    QLabel* m_recordNote = nullptr;
    HopperView* m_view = nullptr;
};

} // namespace flashviz::gui
