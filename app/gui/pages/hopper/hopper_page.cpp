#include "pages/hopper/hopper_page.h"

#include "pages/hopper/hopper_view.h"
#include "session/save_file.h"

#include "app/measured/shipped_measurements.h"
#include "core/errors.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>

namespace flashviz::gui {

// What the page's job brings back: a recording's trace, or a file's traces, or why not.
struct HopperPage::Outcome {
    std::vector<kernels::HopperTrace> traces;
    QString error;
    QString file; // the file read; empty for a recording
    bool cancelled = false;
};

namespace {

// A trace file larger than this is not one FlashViz wrote (the largest launch a trace may record,
// 16 384 blocks of a few hundred spans, takes about 100 MB).
constexpr qint64 kMaxTraceFileBytes = 256LL << 20;

// A trace file's traces, or why it cannot be read (off the GUI thread: a large launch's file
// takes seconds to parse).
std::vector<kernels::HopperTrace> readTraceFile(const QString& file, QString& error) {
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly)) {
        error = QObject::tr("Could not open %1: %2.").arg(file, in.errorString());
        return {};
    }
    if (in.size() > kMaxTraceFileBytes) {
        error = QObject::tr("%1 is %2 MB, larger than any trace FlashViz writes.")
                    .arg(file)
                    .arg(in.size() >> 20);
        return {};
    }
    try {
        return kernels::parseHopperTraces(in.readAll().toStdString());
    } catch (const EngineError& e) {
        error = QObject::tr("%1: %2").arg(QFileInfo(file).fileName(), QString::fromUtf8(e.what()));
    }
    return {};
}

QSpinBox* tokensBox(QWidget* parent, const char* name, const QString& tip) {
    auto* box = new QSpinBox(parent);
    box->setObjectName(QLatin1String(name));
    box->setRange(1, kernels::kHopperTraceMaxTokens);
    box->setValue(1024);
    box->setToolTip(tip);
    return box;
}

} // namespace

HopperPage::HopperPage(QWidget* parent)
    : Page(kGpuBenchChartFonts, parent), m_availability(hopperTraceAvailability()),
      m_recorder([](const kernels::HopperTraceRequest& r) { return recordHopperTrace(r); }),
      m_shipped(measured::shippedHopperTraces()) {
    messageLine()->setObjectName(QStringLiteral("hopperMessage"));
    messageLine()->hide();
    m_view = new HopperView(this);
    m_view->setObjectName(QStringLiteral("hopperView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->setSpacing(4);
    layout->addLayout(makeChoiceRow());
    layout->addLayout(makeFileRow());
    layout->addWidget(messageLine());
    layout->addWidget(m_view, 1);
    fillVariants();
    setBusy(false);
    updateRecordNote();
    refresh();
}

// d, the mask, the variant; the block of the trace.
QLayout* HopperPage::makeChoiceRow() {
    m_headDim = new QComboBox(this);
    m_headDim->setObjectName(QStringLiteral("hopperHeadDim"));
    for (const int d : {64, 128})
        m_headDim->addItem(QString::number(d), d);
    m_headDim->setCurrentIndex(1);
    m_causal = new QCheckBox(tr("causal"), this);
    m_causal->setObjectName(QStringLiteral("hopperCausal"));
    m_variant = new QComboBox(this);
    m_variant->setObjectName(QStringLiteral("hopperVariant"));
    m_variant->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_variant->setMinimumContentsLength(30);
    m_block = new QSpinBox(this);
    m_block->setObjectName(QStringLiteral("hopperBlock"));
    m_block->setToolTip(tr("The block of the launch whose timeline is drawn"));
    m_blockCount = new QLabel(this);
    m_longest = new QPushButton(tr("Longest"), this);
    m_longest->setObjectName(QStringLiteral("hopperLongest"));
    m_longest->setToolTip(tr("The block that ran longest"));
    connect(m_headDim, &QComboBox::currentIndexChanged, this,
            [this] { fillVariants(), refresh(); });
    connect(m_causal, &QCheckBox::toggled, this, [this] { fillVariants(), refresh(); });
    connect(m_variant, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    connect(m_block, &QSpinBox::valueChanged, this, [this] { refresh(); });
    connect(m_longest, &QPushButton::clicked, this, [this] {
        if (m_shown) setBlock(kernels::longestBlock(*m_shown));
    });
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("d"), this));
    row->addWidget(m_headDim);
    row->addWidget(m_causal);
    row->addSpacing(8);
    row->addWidget(new QLabel(tr("variant"), this));
    row->addWidget(m_variant, 1);
    row->addSpacing(8);
    row->addWidget(new QLabel(tr("block"), this));
    row->addWidget(m_block);
    row->addWidget(m_blockCount);
    row->addWidget(m_longest);
    return row;
}

// Open and save; recording: the element, the sizes, Record, Cancel, the progress.
QLayout* HopperPage::makeFileRow() {
    m_open = new QPushButton(tr("Open trace…"), this);
    m_open->setObjectName(QStringLiteral("hopperOpen"));
    m_open->setToolTip(
        tr("Show the traces of a JSON file (flashviz-cli hopper-trace --out, or Save trace…)"));
    m_save = new QPushButton(tr("Save trace…"), this);
    m_save->setObjectName(QStringLiteral("hopperSave"));
    m_save->setToolTip(tr("Write the trace on screen to a JSON file"));
    connect(m_open, &QPushButton::clicked, this, &HopperPage::openInteractively);
    connect(m_save, &QPushButton::clicked, this, &HopperPage::saveInteractively);
    m_element = new QComboBox(this);
    m_element->setObjectName(QStringLiteral("hopperElement"));
    m_element->addItems({QStringLiteral("fp16"), QStringLiteral("bf16")});
    m_element->setToolTip(tr("The element type of Q, K, V and O for a recording"));
    m_queries = tokensBox(this, "hopperQueries", tr("n_q, the queries of a recording"));
    m_keys = tokensBox(this, "hopperKeys", tr("n_k, the keys of a recording"));
    m_record = new QPushButton(tr("Record on this GPU"), this);
    m_record->setObjectName(QStringLiteral("hopperRecord"));
    connect(m_record, &QPushButton::clicked, this, &HopperPage::record);
    cancelButton()->setObjectName(QStringLiteral("hopperCancel"));
    cancelButton()->setToolTip(
        tr("Drop the recording's result (the launch itself finishes on the GPU)"));
    progressBar()->setObjectName(QStringLiteral("hopperProgress"));
    progressBar()->setMaximumWidth(160);
    m_recordNote = new QLabel(this);
    m_recordNote->setObjectName(QStringLiteral("hopperRecordNote"));
    m_recordNote->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* row = new QHBoxLayout;
    row->addWidget(m_open);
    row->addWidget(m_save);
    row->addSpacing(14);
    row->addWidget(m_element);
    row->addWidget(new QLabel(tr("n_q"), this));
    row->addWidget(m_queries);
    row->addWidget(new QLabel(tr("n_k"), this));
    row->addWidget(m_keys);
    row->addWidget(m_record);
    row->addWidget(cancelButton());
    row->addWidget(progressBar());
    row->addWidget(m_recordNote, 1);
    return row;
}

// d's variants, the GPU's default for the mask marked; the one chosen stays chosen where d
// still has it, except that the default for the old mask becomes the default for the new.
void HopperPage::fillVariants() {
    const int previous = m_variant->currentData().isValid() ? m_variant->currentData().toInt() : -1;
    const bool wasDefault = m_variant->currentText().endsWith(tr("(default)"));
    const QSignalBlocker block(m_variant);
    m_variant->clear();
    int chosen = -1, fallback = 0;
    for (const HopperVariant& v : hopperVariants(headDim(), causal())) {
        m_variant->addItem(v.isDefault ? v.label + QLatin1Char(' ') + tr("(default)") : v.label,
                           v.row);
        const int index = m_variant->count() - 1;
        m_variant->setItemData(
            index,
            v.isDefault ? tr("%1\nThe variant a Hopper GPU runs for this d and mask").arg(v.kernel)
                        : v.kernel,
            Qt::ToolTipRole);
        if (v.isDefault) fallback = index;
        if (v.row == previous && !wasDefault) chosen = index;
    }
    m_variant->setCurrentIndex(chosen >= 0 ? chosen : fallback);
}

int HopperPage::headDim() const {
    return m_headDim->currentData().toInt();
}

bool HopperPage::causal() const {
    return m_causal->isChecked();
}

int HopperPage::variantRow() const {
    return m_variant->currentData().isValid() ? m_variant->currentData().toInt()
                                              : defaultHopperRow(headDim(), causal());
}

int HopperPage::block() const {
    return m_block->value() - 1;
}

void HopperPage::setBlock(int index) {
    m_block->setValue(index + 1);
}

void HopperPage::choose(int row, bool causal) {
    if (row < 0 || row >= kernels::kHopperConfigCount) return;
    {
        const QSignalBlocker blockD(m_headDim), blockMask(m_causal);
        m_headDim->setCurrentIndex(m_headDim->findData(kernels::kHopperConfigs[row].headDim));
        m_causal->setChecked(causal);
        fillVariants();
    }
    m_variant->setCurrentIndex(std::max(0, m_variant->findData(row)));
    refresh();
}

kernels::HopperTraceRequest HopperPage::request() const {
    kernels::HopperTraceRequest r;
    r.configRow = variantRow();
    r.headDim = headDim();
    r.causal = causal();
    r.element = m_element->currentText().toStdString();
    r.queries = m_queries->value();
    r.keys = m_keys->value();
    return r;
}

// The trace for the variant and mask, the block asked for (the longest when the trace is new),
// and the picture when anything of them changed.
void HopperPage::refresh() {
    const int row = variantRow();
    const HopperTraceChoice choice = chooseHopperTrace(m_own, m_shipped, row, causal());
    const bool newTrace = choice.trace != m_shown || row != m_shownRow || causal() != m_shownCausal;
    if (newTrace) {
        const QSignalBlocker blocker(m_block);
        m_block->setRange(1, choice.trace ? int(choice.trace->blocks.size()) : 1);
        m_block->setValue(choice.trace ? kernels::longestBlock(*choice.trace) + 1 : 1);
    }
    m_block->setEnabled(choice.trace && !isBusy());
    m_longest->setEnabled(choice.trace && !isBusy());
    m_save->setEnabled(choice.trace && !isBusy());
    m_blockCount->setText(choice.trace ? tr("of %1").arg(choice.trace->blocks.size()) : QString());
    if (!newTrace && block() == m_shownBlock) return;
    m_shown = choice.trace;
    m_shownOwn = choice.own;
    m_shownRow = row;
    m_shownCausal = causal();
    m_shownBlock = block();
    HopperViewContent content;
    content.picture = hopperBlockPicture(row);
    if (m_shown) {
        content.timeline = hopperTimeline(m_shown->blocks[std::size_t(block())], m_shown->config());
        content.findings = hopperFindings(*m_shown, block());
        content.origin = shownOrigin();
    } else {
        content.timeline = hopperTimeline({}, kernels::kHopperConfigs[row]);
        content.noTrace = hopperNoTraceText(row, causal(), canRecord(),
                                            QString::fromStdString(m_availability.reason));
    }
    m_view->setContent(std::move(content));
    emit traceShown();
}

QString HopperPage::shownOrigin() const {
    if (!m_shown) return {};
    if (!m_shownOwn) return tr("the trace FlashViz ships");
    const auto index = std::size_t(m_shown - m_own.data());
    return index < m_ownOrigins.size() ? m_ownOrigins[index] : QString();
}

// Keeps a trace of the user's own in place of any of the same variant and mask.
void HopperPage::keepOwn(const kernels::HopperTrace& trace, const QString& origin) {
    m_shown = nullptr; // it may point into m_own
    for (std::size_t i = 0; i < m_own.size(); ++i)
        if (m_own[i].configRow == trace.configRow && m_own[i].causal == trace.causal) {
            m_own.erase(m_own.begin() + std::ptrdiff_t(i));
            m_ownOrigins.erase(m_ownOrigins.begin() + std::ptrdiff_t(i));
            break;
        }
    m_own.insert(m_own.begin(), trace);
    m_ownOrigins.insert(m_ownOrigins.begin(), origin);
}

bool HopperPage::openTrace(const QString& file) {
    if (isBusy()) {
        fail(tr("A recording is under way: cancel it, or wait for it, before opening a trace."));
        return false;
    }
    clearMessage();
    progressBar()->setRange(0, 0);
    progressBar()->setFormat(tr("reading %1…").arg(QFileInfo(file).fileName()));
    runJob<Outcome>(
        [file](JobControl& control) {
            Outcome outcome;
            outcome.file = file;
            outcome.traces = readTraceFile(file, outcome.error);
            outcome.cancelled = control.cancelled();
            return outcome;
        },
        [this](const Outcome& outcome) { finished(outcome); });
    setBusy(true);
    return true;
}

// A file's traces kept as the user's own and shown: the variant on screen if the file has it,
// else the file's first.
void HopperPage::opened(const Outcome& outcome) {
    clearMessage();
    const QString origin = tr("opened from %1").arg(QFileInfo(outcome.file).fileName());
    for (auto t = outcome.traces.rbegin(); t != outcome.traces.rend(); ++t)
        keepOwn(*t, origin);
    const bool hasShown =
        chooseHopperTrace(outcome.traces, {}, variantRow(), causal()).trace != nullptr;
    m_shownRow = -1; // shown anew
    if (hasShown)
        refresh();
    else
        choose(outcome.traces.front().configRow, outcome.traces.front().causal);
}

bool HopperPage::saveTrace(const QString& file) {
    if (!m_shown) {
        fail(tr("There is no trace on screen to save."));
        return false;
    }
    const std::string text = kernels::hopperTracesJson({*m_shown});
    QString error;
    if (!writeFileSafely(file, QByteArray::fromStdString(text), &error)) {
        fail(error);
        return false;
    }
    if (m_shownOwn) {
        const auto index = std::size_t(m_shown - m_own.data());
        if (index < m_ownOrigins.size())
            m_ownOrigins[index] = tr("saved to %1").arg(QFileInfo(file).fileName());
    }
    showMessage(
        tr("Saved the trace of %1 to %2.").arg(QString::fromStdString(m_shown->kernel), file),
        false);
    m_shownRow = -1; // the origin changed
    refresh();
    return true;
}

void HopperPage::openInteractively() {
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Open a Hopper trace"),
        QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation),
        tr("Hopper traces (*.json);;All files (*)"));
    if (!file.isEmpty()) openTrace(file);
}

void HopperPage::saveInteractively() {
    if (!m_shown) return;
    const QString name = QStringLiteral("%1%2.json")
                             .arg(QString::fromStdString(m_shown->kernel),
                                  m_shown->causal ? QStringLiteral("_causal") : QString());
    const QString file = QFileDialog::getSaveFileName(
        this, tr("Save the Hopper trace"),
        QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation) + QLatin1Char('/') +
            name,
        tr("Hopper traces (*.json)"));
    if (!file.isEmpty()) saveTrace(file);
}

void HopperPage::setRecorder(Recorder recorder, const GpuBenchAvailability& availability) {
    m_recorder = std::move(recorder);
    m_availability = availability;
    updateRecordNote();
    showBusy(isBusy());
    m_shownRow = -1; // the no-trace text says whether this machine records
    refresh();
}

void HopperPage::setShippedTraces(std::vector<kernels::HopperTrace> traces) {
    m_shown = nullptr; // it may point into m_shipped
    m_shipped = std::move(traces);
    m_shownRow = -1;
    refresh();
}

void HopperPage::record() {
    if (isBusy()) return;
    const kernels::HopperTraceRequest r = request();
    try {
        kernels::validateHopperTraceRequest(r);
    } catch (const EngineError& error) {
        const QString message = QString::fromUtf8(error.what());
        fail(message, tr("This recording was refused: %1").arg(message));
        return;
    }
    if (!canRecord()) {
        fail(tr("Recording cannot run here: %1.")
                 .arg(QString::fromStdString(m_availability.reason)));
        return;
    }
    clearMessage();
    progressBar()->setRange(0, 0); // one launch: no steps to count
    progressBar()->setFormat(tr("recording…"));
    runJob<Outcome>(
        [r, recorder = m_recorder](JobControl& control) {
            Outcome outcome;
            try {
                outcome.traces.push_back(recorder(r));
                if (outcome.traces.back().blocks.empty())
                    outcome.error = tr("the launch recorded no blocks");
            } catch (const std::exception& error) {
                outcome.error = QString::fromUtf8(error.what());
            }
            outcome.cancelled = control.cancelled();
            return outcome;
        },
        [this](const Outcome& outcome) { finished(outcome); });
    setBusy(true);
}

void HopperPage::cancel() {
    if (!isBusy()) return;
    cancelJob();
    cancelButton()->setEnabled(false);
    showMessage(
        tr("Stopping; a launch on the GPU cannot be stopped, so a recording's result is dropped "
           "once it ends…"),
        false);
}

void HopperPage::finished(const Outcome& outcome) {
    setBusy(false);
    const QString kept = m_shown ? tr(" The page still shows the trace it showed.") : QString();
    const bool recording = outcome.file.isEmpty();
    if (outcome.cancelled) {
        showMessage((recording ? tr("The recording was cancelled and its trace dropped.")
                               : tr("Reading %1 was cancelled.").arg(outcome.file)) +
                        kept,
                    false);
        return;
    }
    if (!outcome.error.isEmpty()) {
        fail(outcome.error,
             (recording ? tr("The recording failed: %1").arg(outcome.error) : outcome.error) +
                 kept);
        return;
    }
    if (!recording) return opened(outcome);
    const kernels::HopperTrace& trace = outcome.traces.front();
    const QString when = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm"));
    keepOwn(trace, tr("recorded on this GPU at %1, not saved").arg(when));
    clearMessage(); // a refusal made meanwhile is over
    showMessage(
        tr("Recorded %1 on %2. Save trace… keeps it.")
            .arg(QString::fromStdString(trace.kernel), QString::fromStdString(trace.device)),
        false);
    m_shownRow = -1;
    choose(trace.configRow, trace.causal);
}

void HopperPage::updateRecordNote() {
    const QString reason = QString::fromStdString(m_availability.reason);
    const QString note = canRecord() ? QString::fromStdString(m_availability.deviceName)
                                     : tr("cannot record here: %1").arg(reason);
    // Elided to the room the row leaves it, the whole of it in the tooltip.
    m_recordNote->setText(m_recordNote->fontMetrics().elidedText(
        note, Qt::ElideRight, std::max(m_recordNote->width(), 40)));
    m_recordNote->setToolTip(note);
    m_record->setToolTip(canRecord() ? tr("Record one launch of the variant on this GPU with the "
                                          "kernel's trace mode, then show it")
                                     : reason);
}

void HopperPage::resizeEvent(QResizeEvent* event) {
    Page::resizeEvent(event);
    updateRecordNote();
}

void HopperPage::showBusy(bool busy) {
    m_record->setEnabled(!busy && canRecord());
    for (QWidget* w : std::initializer_list<QWidget*>{m_headDim, m_causal, m_variant, m_element,
                                                      m_queries, m_keys, m_open})
        w->setEnabled(!busy);
    const bool trace = m_shown != nullptr && !busy;
    m_save->setEnabled(trace);
    m_block->setEnabled(trace);
    m_longest->setEnabled(trace);
}

} // namespace flashviz::gui
