#include "widgets/controls_panel.h"
#include "widgets/input_designer_dialog.h"
#include "widgets/input_files_dialog.h"

#include "style/format.h"
#include "style/theme.h"

#include "core/errors.h"
#include "core/hardware.h"
#include "core/setup.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTextLayout>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <functional>
#include <string_view>

namespace flashviz::gui {

namespace {

// A spin box that refuses what is not a whole number, with a message, where QSpinBox dropped the
// characters it does not take as they were typed ("3.5" became 35). Anything typed stays in the
// field until Return or leaving it; then text that is not a number in range is refused and the
// previous value shown again.
class WholeNumberField final : public QSpinBox {
  public:
    WholeNumberField(QWidget* parent, QString label, std::function<void(const QString&)> refuse)
        : QSpinBox(parent), m_label(std::move(label)), m_refuse(std::move(refuse)) {}

    QValidator::State validate(QString& text, int& pos) const override {
        const QValidator::State state = QSpinBox::validate(text, pos);
        return state == QValidator::Invalid ? QValidator::Intermediate : state;
    }

    void fixup(QString& text) const override {
        const QString typed = text.trimmed();
        if (typed.isEmpty()) return;
        static const QRegularExpression digits(QStringLiteral("^[+-]?[0-9]+$"));
        // The field's range is wider than the engine's on purpose (the engine names its own
        // limits when it refuses a value); only a number past the field's own is refused here.
        if (digits.match(typed).hasMatch())
            m_refuse(ControlsPanel::tr("%1 takes %2 to %3; %4 is out of range")
                         .arg(m_label)
                         .arg(minimum())
                         .arg(maximum())
                         .arg(typed));
        else
            m_refuse(ControlsPanel::tr("%1 takes a whole number; \"%2\" is not one")
                         .arg(m_label, typed));
    }

  private:
    QString m_label;
    std::function<void(const QString&)> m_refuse;
};

bool isReturn(const QEvent* event) {
    if (event->type() != QEvent::KeyPress) return false;
    const int key = static_cast<const QKeyEvent*>(event)->key();
    return key == Qt::Key_Return || key == Qt::Key_Enter;
}

// How the window shows each of the backward's switches (core's backwardSwitches(), by name): its
// box, what it does, and how the preset note names the change.
struct BackwardBox {
    const char* switchName;
    const char* objectName;
    const char* label;
    const char* tip;
    const char* switchedOn;
    const char* switchedOff;
};
constexpr BackwardBox kBackwardBoxes[] = {
    {"no-row-dot", "noRowDot", QT_TRANSLATE_NOOP("ControlsPanel", "Leave D out of dS   [B]"),
     QT_TRANSLATE_NOOP("ControlsPanel",
                       "dS = P ∘ dP instead of P ∘ (dP − D), D = rowsum(dO ∘ O): the classic "
                       "mistake. The softmax's rows sum to one, and D is what that constraint "
                       "takes back; without it dQ and dK are wrong from the first dS (dV = Pᵀ dO is not)."),
     QT_TRANSLATE_NOOP("ControlsPanel", "D left out of dS (the bug)"),
     QT_TRANSLATE_NOOP("ControlsPanel", "D back in dS")},
    {"no-lse", "noLse", QT_TRANSLATE_NOOP("ControlsPanel", "Recompute P from m alone, not L"),
     QT_TRANSLATE_NOOP("ControlsPanel",
                       "P = exp(S − m) from the forward's final running maximum instead of "
                       "exp(S − L), L = m + log ℓ: the weights are not divided by their row's "
                       "total, so they no longer sum to one."),
     QT_TRANSLATE_NOOP("ControlsPanel", "P recomputed without log ℓ (a bug)"),
     QT_TRANSLATE_NOOP("ControlsPanel", "P recomputed from L again")},
    {"overwrite-dq", "overwriteDq", QT_TRANSLATE_NOOP("ControlsPanel", "Overwrite dQ, not add"),
     QT_TRANSLATE_NOOP("ControlsPanel",
                       "Each key block writes dQ_i = scale · dS K_j over what the earlier key "
                       "blocks added: only the last key block's share survives. It also skips "
                       "reading dQ_i back, which the traffic shows."),
     QT_TRANSLATE_NOOP("ControlsPanel", "dQ overwritten (a bug)"),
     QT_TRANSLATE_NOOP("ControlsPanel", "dQ accumulated again")},
    {"no-mask-recompute", "noMaskRecompute",
     QT_TRANSLATE_NOOP("ControlsPanel", "Forget the mask in the recompute"),
     QT_TRANSLATE_NOOP("ControlsPanel",
                       "S is recomputed without the causal mask: keys after the query get "
                       "weights the forward never gave them. Only causal problems, and only "
                       "tiles that cross the diagonal, go wrong."),
     QT_TRANSLATE_NOOP("ControlsPanel", "the mask forgotten in the recompute (a bug)"),
     QT_TRANSLATE_NOOP("ControlsPanel", "the mask kept in the recompute")},
    {"store-p", "storeWeights", QT_TRANSLATE_NOOP("ControlsPanel", "Store P (undo the trade)"),
     QT_TRANSLATE_NOOP("ControlsPanel",
                       "The forward stores the n_q × n_k weights P and the backward reads each "
                       "tile back instead of recomputing S and P: still correct, but P's memory "
                       "and traffic grow with n² again. FlashAttention trades that for FLOPs."),
     QT_TRANSLATE_NOOP("ControlsPanel", "P stored and read back"),
     QT_TRANSLATE_NOOP("ControlsPanel", "P recomputed again")},
    {"ones-upstream", "onesUpstream", QT_TRANSLATE_NOOP("ControlsPanel", "dO = ones"),
     QT_TRANSLATE_NOOP("ControlsPanel",
                       "The upstream gradient dO is all ones (the gradient of sum(O)) instead of "
                       "N(0, 1) values drawn from the seed: easier to follow by hand, and the "
                       "check still holds."),
     QT_TRANSLATE_NOOP("ControlsPanel", "dO all ones"),
     QT_TRANSLATE_NOOP("ControlsPanel", "dO from the seed again")},
};

const BackwardBox& backwardBox(const BackwardSwitch& flag) {
    for (const BackwardBox& box : kBackwardBoxes)
        if (std::string_view(box.switchName) == flag.name) return box;
    return kBackwardBoxes[0]; // unreachable: every switch has its box (tst_window checks)
}

template <typename T> void selectData(QComboBox* box, T value) {
    const int i = box->findData(QVariant::fromValue(int(value)));
    if (i >= 0) box->setCurrentIndex(i);
}

} // namespace

// The seed, 0 to kMaxSeed (2^63 - 1) as on every other face. Like the whole-number fields, what is
// typed is read when Return commits it or the field is left; text that is not a seed in range is
// refused with a message and the seed in force shown again.
class SeedField final : public QLineEdit {
  public:
    SeedField(QWidget* parent, std::function<void()> changed,
              std::function<void(const QString&)> refuse)
        : QLineEdit(parent), m_changed(std::move(changed)), m_refuse(std::move(refuse)) {
        connect(this, &QLineEdit::editingFinished, this, [this] { commit(); });
    }
    void setSeed(std::uint64_t seed) {
        m_seed = seed;
        setText(QString::number(seed));
    }
    std::uint64_t seed() const { return m_seed; }

  private:
    void commit() {
        const QString typed = text().trimmed();
        static const QRegularExpression digits(QStringLiteral("^[0-9]+$"));
        bool ok = digits.match(typed).hasMatch();
        const qulonglong value = ok ? typed.toULongLong(&ok) : 0;
        if (!ok || value > kMaxSeed) {
            m_refuse(ControlsPanel::tr("seed takes a whole number from 0 to %1; \"%2\" is not one")
                         .arg(kMaxSeed)
                         .arg(typed));
            setSeed(m_seed);
            return;
        }
        if (value == m_seed) return;
        setSeed(value);
        m_changed();
    }

    std::uint64_t m_seed = 0;
    std::function<void()> m_changed;
    std::function<void(const QString&)> m_refuse;
};

// The preset's note (or the settings in words) in a fixed two lines, the rest elided and the
// whole text in the tooltip: wrapped to its length it took one to three lines and moved every
// field below it under the mouse.
class NoteLabel final : public QLabel {
  public:
    static constexpr int kLines = 2;
    explicit NoteLabel(QWidget* parent) : QLabel(parent) {
        setTextFormat(Qt::PlainText);
        setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
        fitHeight();
    }
    void setFullText(const QString& text) {
        m_full = text;
        elide();
    }
    QString fullText() const { return m_full; }

  protected:
    void resizeEvent(QResizeEvent* event) override {
        QLabel::resizeEvent(event);
        elide();
    }
    void changeEvent(QEvent* event) override {
        QLabel::changeEvent(event);
        if (event->type() == QEvent::FontChange) {
            fitHeight();
            elide();
        }
    }

  private:
    void fitHeight() { setFixedHeight(fontMetrics().lineSpacing() * kLines + 2); }
    void elide() {
        const QString flat = m_full.simplified();
        const int width = std::max(1, contentsRect().width());
        QTextLayout layout(flat, font());
        layout.beginLayout();
        QStringList lines;
        for (int start = 0; start < flat.size() && lines.size() < kLines;) {
            QTextLine line = layout.createLine();
            if (!line.isValid()) break;
            line.setLineWidth(width);
            const bool last = lines.size() + 1 == kLines;
            const QString piece = last ? flat.mid(start) : flat.mid(start, line.textLength());
            lines << fontMetrics().elidedText(piece.trimmed(), Qt::ElideRight, width);
            start += line.textLength();
        }
        layout.endLayout();
        const QString shown = lines.join(QLatin1Char('\n'));
        setText(shown);
        setToolTip(shown.simplified() == flat ? QString() : m_full);
    }

    QString m_full;
};

QSpinBox* ControlsPanel::wholeNumberField(QWidget* parent, int min, int max, const QString& label,
                                          const char* name, const QString& tip) {
    auto* s = new WholeNumberField(parent, label, [this](const QString& why) {
        showRefusal(why);
        emit inputRefused(why);
    });
    // Wide ranges on purpose: the engine, not the spin box, decides what is valid, and says why.
    s->setRange(min, max);
    s->setKeyboardTracking(false);
    s->setObjectName(QLatin1String(name));
    s->setToolTip(tip);
    s->setAccelerated(true);
    s->installEventFilter(this);
    return s;
}

bool ControlsPanel::eventFilter(QObject* watched, QEvent* event) {
    // After the field has taken the Return (and proposed its value).
    if (isReturn(event) && (qobject_cast<QSpinBox*>(watched) || watched == m_seed))
        QMetaObject::invokeMethod(this, &ControlsPanel::fieldCommitted, Qt::QueuedConnection);
    return QWidget::eventFilter(watched, event);
}

ControlsPanel::ControlsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    addPresets(layout);
    layout->addWidget(makeProblemGroup());
    layout->addWidget(makeAlgorithmGroup());
    layout->addWidget(makeSwitchesGroup());
    layout->addWidget(makeBackwardGroup());

    m_backendValues = new QCheckBox(tr("Show the backend's recorded values"), this);
    m_backendValues->setObjectName(QStringLiteral("backendValues"));
    m_backendValues->setToolTip(
        tr("Per-tile m, ℓ and accumulator as the backend computed them, beside the "
           "step engine's, with their difference"));
    layout->addWidget(m_backendValues);

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("refusal"));
    m_message->setWordWrap(true);
    m_message->setTextFormat(Qt::PlainText);
    m_message->hide();
    layout->addWidget(m_message);
    layout->addStretch(1);
    connectControls();
    showInputSource(m_base);
}

void ControlsPanel::addPresets(QVBoxLayout* layout) {
    m_preset = new QComboBox(this);
    m_preset->setObjectName(QStringLiteral("preset"));
    m_preset->addItem(tr("Choose a preset…"), QString());
    for (const Preset& p : presets()) {
        m_preset->addItem(p.title, p.id);
        m_preset->setItemData(m_preset->count() - 1, p.description, Qt::ToolTipRole);
    }
    m_presetNote = new NoteLabel(this);
    m_presetNote->setObjectName(QStringLiteral("presetNote"));
    layout->addWidget(m_preset);
    layout->addWidget(m_presetNote);
}

QGroupBox* ControlsPanel::makeProblemGroup() {
    auto* problem = new QGroupBox(tr("Problem"), this);
    auto* pf = new QFormLayout(problem);
    const QString queries = tr("n (queries)"), keys = tr("n_k (keys)"), headDim = tr("d"),
                  seed = tr("seed");
    m_queries = wholeNumberField(problem, 0, 1 << 22, queries, "queries",
                                 tr("n_q: query rows (the window animates up to 16384)"));
    m_keys = wholeNumberField(problem, 0, 1 << 22, keys, "keys", tr("n_k: keys and values"));
    m_headDim =
        wholeNumberField(problem, 0, 1 << 14, headDim, "headDim", tr("d: the head dimension"));
    m_seed = new SeedField(
        problem, [this] { propose(); },
        [this](const QString& why) {
            showRefusal(why);
            emit inputRefused(why);
        });
    m_seed->setObjectName(QStringLiteral("seed"));
    m_seed->setToolTip(
        tr("The generator's seed, 0 to %1: same seed, same inputs on every machine").arg(kMaxSeed));
    m_seed->installEventFilter(this);
    m_pattern = new QComboBox(problem);
    m_pattern->setObjectName(QStringLiteral("pattern"));
    for (InputPattern pattern : allInputPatterns()) {
        m_pattern->addItem(QString::fromLatin1(toString(pattern)), int(pattern));
        m_pattern->setItemData(m_pattern->count() - 1, QString::fromStdString(describe(pattern)),
                               Qt::ToolTipRole);
    }
    m_precision = new QComboBox(problem);
    m_precision->setObjectName(QStringLiteral("precision"));
    m_precision->addItem(tr("double (fp64)"), int(Precision::Double));
    m_precision->addItem(tr("float (fp32)"), int(Precision::Float));
    m_causal = new QCheckBox(tr("causal mask"), problem);
    m_causal->setObjectName(QStringLiteral("causal"));
    m_causal->setToolTip(tr("Each query sees only the keys up to its own position: tiles wholly "
                            "above the diagonal are skipped."));
    pf->addRow(queries, m_queries);
    pf->addRow(keys, m_keys);
    pf->addRow(headDim, m_headDim);
    pf->addRow(seed, m_seed);
    pf->addRow(tr("inputs"), m_pattern);
    pf->addRow(QString(), makeInputFilesRow(problem));
    auto* designInputs = new QPushButton(tr("Design the inputs…"), problem);
    designInputs->setObjectName(QStringLiteral("designInputs"));
    designInputs->setToolTip(tr("Choose for each query row the key block that holds its maximum "
                                "and how sharp it is: Q and K are made so that the rescale "
                                "fires there"));
    connect(designInputs, &QPushButton::clicked, this, &ControlsPanel::openInputDesigner);
    pf->addRow(QString(), designInputs);
    // The CPU engine's arithmetic; the memory view counts fp32 bytes, as the GPU drawn moves them.
    m_precision->setToolTip(tr("The CPU engine's arithmetic. The memory view's bytes and times are "
                               "for fp32 values on the GPU drawn, whichever is chosen here."));
    pf->addRow(tr("CPU arithmetic"), m_precision);
    pf->addRow(QString(), m_causal);
    return problem;
}

QGroupBox* ControlsPanel::makeAlgorithmGroup() {
    auto* algo = new QGroupBox(tr("Algorithm"), this);
    auto* af = new QFormLayout(algo);
    m_algorithm = new QComboBox(algo);
    m_algorithm->setObjectName(QStringLiteral("algorithm"));
    m_algorithm->addItem(tr("FlashAttention (tiled)"), int(Algorithm::Flash));
    m_algorithm->addItem(tr("Standard (S, P in HBM)"), int(Algorithm::Standard));
    m_algorithm->addItem(tr("FlashAttention backward"), int(Algorithm::Backward));
    m_algorithm->setToolTip(tr("FlashAttention keeps each score tile on the chip; standard "
                               "attention writes the n × n scores S and weights P to HBM and "
                               "reads them back. The backward computes dQ, dK and dV from the "
                               "forward's O and L, recomputing S and P tile by tile."));
    const QString blockRows = tr("Br (rows/tile)"), blockCols = tr("Bc (keys/tile)");
    m_blockRows =
        wholeNumberField(algo, 0, 1 << 22, blockRows, "blockRows", tr("Br: query rows per tile"));
    m_blockCols =
        wholeNumberField(algo, 0, 1 << 22, blockCols, "blockCols", tr("Bc: keys per tile"));
    m_loopOrder = new QComboBox(algo);
    m_loopOrder->setObjectName(QStringLiteral("loopOrder"));
    m_loopOrder->addItem(tr("query blocks outer"), int(LoopOrder::QueryOuter));
    m_loopOrder->addItem(tr("K/V blocks outer (paper)"), int(LoopOrder::KeyValueOuter));
    m_loopOrder->setToolTip(tr("Query blocks outer: a block of Q stays on chip while K and V "
                               "stream past. K/V blocks outer (the paper's Algorithm 1): a block "
                               "of K and V stays while O, m and ℓ of every query block are read "
                               "and written back each time. The backward is always K/V blocks "
                               "outer (FlashAttention-2): K_j, V_j, dK_j and dV_j stay on chip "
                               "while dQ is read and written back."));
    m_hardware = new QComboBox(algo);
    m_hardware->setObjectName(QStringLiteral("hardware"));
    m_hardware->setToolTip(tr("The GPU whose HBM, SRAM and bandwidths the memory view draws "
                              "(and the lecture uses)"));
    for (const HardwareProfile& h : availableHardware()) {
        m_hardware->addItem(QString::fromStdString(h.name), QString::fromStdString(h.id));
        m_hardware->setItemData(
            m_hardware->count() - 1,
            tr("%1 SMs × %2 shared memory; HBM %3 at %4\nSources: %5; %6")
                .arg(int(h.smCount.value))
                .arg(formatBytes(h.sharedMemoryPerSmBytes.value),
                     formatMemorySize(h.hbmBytes.value),
                     formatRate(h.hbmBandwidthBytesPerSecond.value),
                     QString::fromStdString(h.sharedMemoryPerSmBytes.source),
                     QString::fromStdString(h.hbmBandwidthBytesPerSecond.source)),
            Qt::ToolTipRole);
    }
    m_backend = new QComboBox(algo);
    m_backend->setObjectName(QStringLiteral("backend"));
    m_backend->setModel(new QStandardItemModel(m_backend));
    m_backend->setToolTip(tr("Where the output is computed; the steps shown are always the CPU "
                             "step engine's, with another backend's values beside them."));
    refreshBackends();
    m_tensorCoreCheck = new QComboBox(algo);
    m_tensorCoreCheck->setObjectName(QStringLiteral("tensorCoreCheck"));
    for (const LowPrecisionCheck& check : kLowPrecisionChecks)
        m_tensorCoreCheck->addItem(QLatin1String(toString(check)),
                                   QLatin1String(toString(check)));
    m_tensorCoreCheck->setToolTip(
        tr("The backward on a GPU backend also runs the GPU's fast tensor-core kernels on Q, K, V "
           "and dO rounded to this format, and judges their gradients against exact attention "
           "and plain attention in the format (the check panel's last line); off runs none. "
           "Default %1. The CPU has no such kernels.")
            .arg(QLatin1String(toString(kDefaultLowPrecision))));
    af->addRow(tr("algorithm"), m_algorithm);
    af->addRow(blockRows, m_blockRows);
    af->addRow(blockCols, m_blockCols);
    af->addRow(tr("loop order"), m_loopOrder);
    af->addRow(tr("GPU drawn"), m_hardware);
    af->addRow(tr("backend"), m_backend);
    af->addRow(tr("tensor-core check"), m_tensorCoreCheck);
    return algo;
}

// The switches that break or bloat.
QGroupBox* ControlsPanel::makeSwitchesGroup() {
    auto* breakIt = new QGroupBox(tr("Break it"), this);
    auto* bl = new QVBoxLayout(breakIt);
    m_bug = new QCheckBox(tr("Remove the rescale e^(m_old − m_new)   [B]"), breakIt);
    m_bug->setObjectName(QStringLiteral("bug"));
    m_bug->setToolTip(tr("Skips the factor e^(m_old − m_new) that brings the sums gathered so far "
                         "to a raised maximum. Nothing crashes; rows whose maximum rises after "
                         "their first key block come out wrong, and the check says from which "
                         "step."));
    m_keepScores = new QCheckBox(tr("Keep the full S \"for debugging\""), breakIt);
    m_keepScores->setObjectName(QStringLiteral("keepFullScores"));
    m_keepScores->setToolTip(tr("Also writes every score tile to an n × n copy of S in HBM: the "
                                "answer stays right, but the traffic and the memory grow with n² "
                                "again, as in standard attention."));
    m_noMax = new QCheckBox(tr("No running max (exp may overflow)"), breakIt);
    m_noMax->setObjectName(QStringLiteral("noRunningMax"));
    m_noMax->setToolTip(tr("Takes exp of the raw scores instead of exp(score − running max): "
                           "exact while the scores are small, but exp overflows to infinity once "
                           "a score passes about 88 (fp32) or 709 (fp64)."));
    bl->addWidget(m_bug);
    bl->addWidget(m_keepScores);
    bl->addWidget(m_noMax);
    return breakIt;
}

// The backward's switches, shown for the backward only: four bugs, the trade undone, dO = ones.
QGroupBox* ControlsPanel::makeBackwardGroup() {
    m_backwardGroup = new QGroupBox(tr("Break the backward"), this);
    m_backwardGroup->setObjectName(QStringLiteral("backwardSwitches"));
    auto* bl = new QVBoxLayout(m_backwardGroup);
    for (const BackwardSwitch& flag : backwardSwitches()) {
        const BackwardBox& box = backwardBox(flag);
        auto* check = new QCheckBox(tr(box.label), m_backwardGroup);
        check->setObjectName(QLatin1String(box.objectName));
        check->setToolTip(tr(box.tip));
        bl->addWidget(check);
        m_backwardBoxes.emplace_back(&flag, check);
    }
    return m_backwardGroup;
}

void ControlsPanel::connectControls() {
    for (QSpinBox* s : {m_queries, m_keys, m_headDim, m_blockRows, m_blockCols})
        connect(s, &QSpinBox::valueChanged, this, &ControlsPanel::propose);
    for (QComboBox* c : {m_pattern, m_precision, m_algorithm, m_loopOrder, m_hardware, m_backend,
                         m_tensorCoreCheck})
        connect(c, &QComboBox::activated, this, &ControlsPanel::propose);
    for (QCheckBox* c : {m_causal, m_bug, m_keepScores, m_noMax})
        connect(c, &QCheckBox::toggled, this, &ControlsPanel::propose);
    for (const auto& [flag, box] : m_backwardBoxes) {
        connect(box, &QCheckBox::toggled, this, &ControlsPanel::propose);
        connect(box, &QCheckBox::clicked, this, &ControlsPanel::fieldCommitted);
    }
    // A choice made: the keys go back to playback (a list kept them: End chose its last entry).
    for (QComboBox* c : {m_preset, m_pattern, m_precision, m_algorithm, m_loopOrder, m_hardware,
                         m_backend, m_tensorCoreCheck})
        connect(c, &QComboBox::activated, this, &ControlsPanel::fieldCommitted);
    for (QCheckBox* c : {m_causal, m_bug, m_keepScores, m_noMax, m_backendValues})
        connect(c, &QCheckBox::clicked, this, &ControlsPanel::fieldCommitted);
    connect(m_backendValues, &QCheckBox::toggled, this,
            [this] { emit viewOptionsRequested(viewOptions()); });
    connect(m_preset, &QComboBox::activated, this, [this](int index) {
        const QString id = m_preset->itemData(index).toString();
        if (!id.isEmpty()) emit presetRequested(id);
    });
}

void ControlsPanel::applyTheme(const Theme& theme) {
    QPalette pal = m_message->palette();
    pal.setColor(QPalette::WindowText, theme.bad);
    m_message->setPalette(pal);
    QFont bold = font();
    bold.setBold(true);
    m_message->setFont(bold);
    m_presetNote->setStyleSheet(QStringLiteral("color: %1").arg(theme.muted.name()));
    m_inputSource->setStyleSheet(QStringLiteral("color: %1").arg(theme.muted.name()));
    m_errorColor = theme.bad;
}

// Under the pattern: Q, K, V from files instead, the way back, and the files now in use.
QWidget* ControlsPanel::makeInputFilesRow(QWidget* parent) {
    auto* row = new QWidget(parent);
    auto* layout = new QVBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* buttons = new QHBoxLayout;
    m_inputFiles = new QPushButton(tr("Q, K, V from .npy files…"), row);
    m_inputFiles->setObjectName(QStringLiteral("inputFiles"));
    m_inputFiles->setToolTip(tr("Read Q, K, V (and the backward's dO) from NumPy .npy files: "
                                "float32 or float64, (n, d) or one head of (h, n, d)"));
    m_generatedInputs = new QPushButton(tr("Generated"), row);
    m_generatedInputs->setObjectName(QStringLiteral("generatedInputs"));
    m_generatedInputs->setToolTip(
        tr("Back to the generated pattern above, at the sizes of the files or the design"));
    buttons->addWidget(m_inputFiles, 1);
    buttons->addWidget(m_generatedInputs);
    layout->addLayout(buttons);
    m_inputSource = new QLabel(row);
    m_inputSource->setObjectName(QStringLiteral("inputSource"));
    m_inputSource->setWordWrap(true);
    m_inputSource->setTextFormat(Qt::PlainText);
    layout->addWidget(m_inputSource);
    connect(m_inputFiles, &QPushButton::clicked, this, &ControlsPanel::openInputFiles);
    connect(m_generatedInputs, &QPushButton::clicked, this, [this] {
        VizSettings s = proposed();
        s.spec.files.reset();
        s.spec.design.reset();
        emit settingsRequested(s);
        emit fieldCommitted();
    });
    return row;
}

void ControlsPanel::openInputFiles() {
    InputFilesDialog dialog(m_base.spec.files, m_errorColor, this);
    if (dialog.exec() == QDialog::Accepted) proposeInputFiles(dialog.files());
    emit fieldCommitted();
}

// The design is proposed like any other settings change: the controller applies or refuses it.
void ControlsPanel::openInputDesigner() {
    InputDesignerDialog dialog(m_base, m_errorColor, this);
    if (dialog.exec() == QDialog::Accepted) emit settingsRequested(dialog.settings());
    emit fieldCommitted();
}

void ControlsPanel::proposeInputFiles(const InputFiles& files) {
    VizSettings s = proposed();
    try {
        s.spec.design.reset(); // the files replace designed inputs
        s.spec = withInputFiles(s.spec, files);
    } catch (const EngineError& e) {
        const QString why = QString::fromUtf8(e.what());
        showRefusal(why);
        emit inputRefused(why);
        return;
    }
    // As on the command line: the blocks shrink to files shorter than them.
    s.options = withBlocksWithin(s.options, s.spec, false, false);
    emit settingsRequested(s);
}

QString ControlsPanel::inputSourceText() const {
    return m_inputSource->isHidden() ? QString() : m_inputSource->text();
}

// The files' or the design's sizes are the problem's: their fields and the pattern wait until
// the inputs are generated again.
void ControlsPanel::showInputSource(const VizSettings& s) {
    const bool own = s.spec.files.has_value() || s.spec.design.has_value();
    m_inputSource->setText(
        own ? QString::fromStdString(describeInputs(s.spec, InputPaths::FileNames)) : QString());
    m_inputSource->setToolTip(own ? QString::fromStdString(describeInputs(s.spec)) : QString());
    m_inputSource->setVisible(own);
    m_generatedInputs->setVisible(own);
    for (QWidget* w : {static_cast<QWidget*>(m_queries), static_cast<QWidget*>(m_keys),
                       static_cast<QWidget*>(m_headDim), static_cast<QWidget*>(m_pattern)})
        w->setEnabled(!own);
}

QString ControlsPanel::presetNoteText() const {
    return m_presetNote->fullText();
}

void ControlsPanel::setViewOptions(const ViewOptions& options) {
    const QSignalBlocker blocker(m_backendValues);
    m_backendValues->setChecked(options.showBackendValues);
}

ViewOptions ControlsPanel::viewOptions() const {
    ViewOptions options;
    options.showBackendValues = m_backendValues->isChecked();
    return options;
}

void ControlsPanel::refreshBackends() {
    auto* model = static_cast<QStandardItemModel*>(m_backend->model());
    const QVariant chosen = m_backend->currentData(Qt::UserRole);
    const QSignalBlocker blocker(m_backend);
    model->clear();
    for (const BackendAvailability& b : listBackends()) {
        auto* item = new QStandardItem(
            b.available ? QString::fromStdString(b.name)
                        : tr("%1 (unavailable)").arg(QString::fromStdString(b.name)));
        item->setData(int(b.kind), Qt::UserRole);
        if (!b.available) {
            item->setFlags(item->flags() & ~(Qt::ItemIsEnabled | Qt::ItemIsSelectable));
            item->setToolTip(QString::fromStdString(b.reason));
        }
        model->appendRow(item);
    }
    // The choice stays as it was, greyed if it no longer runs: the settings still name it.
    const int at = chosen.isValid() ? m_backend->findData(chosen, Qt::UserRole) : -1;
    m_backend->setCurrentIndex(std::max(at, 0));
}

void ControlsPanel::setSettings(const VizSettings& s, const QString& presetId) {
    m_base = s;
    const QSignalBlocker b1(m_queries), b2(m_keys), b3(m_headDim), b4(m_seed), b5(m_pattern),
        b6(m_precision), b7(m_causal), b8(m_algorithm), b9(m_blockRows), b10(m_blockCols),
        b11(m_loopOrder), b12(m_hardware), b13(m_backend), b14(m_bug), b15(m_keepScores),
        b16(m_noMax), b17(m_tensorCoreCheck);
    m_queries->setValue(s.spec.queries);
    m_keys->setValue(s.spec.keys);
    m_headDim->setValue(s.spec.headDim);
    m_seed->setSeed(s.spec.seed);
    selectData(m_pattern, s.spec.pattern);
    selectData(m_precision, s.spec.precision);
    m_causal->setChecked(s.spec.causal);
    selectData(m_algorithm, s.algorithm);
    m_blockRows->setValue(s.options.blockRows);
    m_blockCols->setValue(s.options.blockCols);
    selectData(m_loopOrder, s.options.loopOrder);
    const int hw = m_hardware->findData(QString::fromStdString(s.hardwareId));
    if (hw >= 0) m_hardware->setCurrentIndex(hw);
    for (int i = 0; i < m_backend->count(); ++i)
        if (m_backend->itemData(i, Qt::UserRole).toInt() == int(s.backend))
            m_backend->setCurrentIndex(i);
    const int check = m_tensorCoreCheck->findData(QLatin1String(toString(s.tensorCoreCheck)));
    if (check >= 0) m_tensorCoreCheck->setCurrentIndex(check);
    m_bug->setChecked(!s.options.rescale);
    m_keepScores->setChecked(s.options.keepFullScores);
    m_noMax->setChecked(!s.options.runningMax);
    for (const auto& [flag, box] : m_backwardBoxes) {
        const QSignalBlocker blocker(box);
        box->setChecked(isOn(s.options.backward, *flag));
    }
    enableFor(s);
    showInputSource(s);
    showPreset(s, presetId);
}

// The backward runs FlashAttention's forward first, with the forward's rescale and running
// maximum (off, they break O and L and so every gradient), but keeps no debug copy of S, and its
// loop order is its own (key blocks outer). B switches the backward's own classic bug. The
// tensor-core check runs beside the backward on a GPU backend only (the CPU has no such kernels);
// elsewhere it keeps its choice, greyed.
void ControlsPanel::enableFor(const VizSettings& settings) {
    const bool flash = settings.algorithm == Algorithm::Flash;
    const bool backward = settings.algorithm == Algorithm::Backward;
    m_tensorCoreCheck->setEnabled(backward && settings.backend != BackendKind::Cpu);
    for (QWidget* w : {static_cast<QWidget*>(m_blockRows), static_cast<QWidget*>(m_blockCols),
                       static_cast<QWidget*>(m_bug), static_cast<QWidget*>(m_noMax)})
        w->setEnabled(flash || backward);
    m_loopOrder->setEnabled(flash);
    m_keepScores->setEnabled(flash);
    m_bug->setText(backward ? tr("Remove the rescale e^(m_old − m_new)")
                            : tr("Remove the rescale e^(m_old − m_new)   [B]"));
    m_backwardGroup->setVisible(backward);
}

namespace {

// What the "Break it" switches of `now` change from `preset`, when nothing else differs;
// empty otherwise (and when nothing differs at all).
QStringList switchedFrom(const VizSettings& preset, const VizSettings& now) {
    VizSettings same = preset;
    same.options.rescale = now.options.rescale;
    same.options.keepFullScores = now.options.keepFullScores;
    same.options.runningMax = now.options.runningMax;
    same.options.backward = now.options.backward;
    if (!(same == now)) return {};
    QStringList changes;
    for (const BackwardSwitch& flag : backwardSwitches())
        if (isOn(preset.options.backward, flag) != isOn(now.options.backward, flag)) {
            const BackwardBox& box = backwardBox(flag);
            changes << ControlsPanel::tr(isOn(now.options.backward, flag) ? box.switchedOn
                                                                          : box.switchedOff);
        }
    if (preset.options.rescale != now.options.rescale)
        changes << (now.options.rescale ? ControlsPanel::tr("the rescale back on")
                                        : ControlsPanel::tr("the rescale switched off (the bug)"));
    if (preset.options.keepFullScores != now.options.keepFullScores)
        changes << (now.options.keepFullScores ? ControlsPanel::tr("the full S kept")
                                               : ControlsPanel::tr("the full S no longer kept"));
    if (preset.options.runningMax != now.options.runningMax)
        changes << (now.options.runningMax ? ControlsPanel::tr("the running max back on")
                                           : ControlsPanel::tr("no running max"));
    return changes;
}

} // namespace

// The preset combo names the preset these settings are, if any; settings that only flip a
// "Break it" switch of a preset keep its name, marked as changed, and its note. Candidates in
// order: the preset applied last (two presets can share their settings), then the list
// (`--preset toy --bug` arrives as one set of settings).
void ControlsPanel::showPreset(const VizSettings& s, const QString& presetId) {
    std::vector<const Preset*> candidates;
    auto consider = [&](const Preset* p) {
        if (p && std::find(candidates.begin(), candidates.end(), p) == candidates.end())
            candidates.push_back(p);
    };
    consider(findPreset(presetId));
    for (const Preset& p : presets())
        consider(&p);
    const Preset* shown = nullptr;
    QStringList changes;
    for (const Preset* p : candidates)
        if (p->settings == s) {
            shown = p;
            break;
        }
    for (std::size_t i = 0; !shown && i < candidates.size(); ++i) {
        changes = switchedFrom(candidates[i]->settings, s);
        if (!changes.isEmpty()) shown = candidates[i];
    }
    const int index = shown ? std::max(m_preset->findData(shown->id), 0) : 0;
    const QSignalBlocker blocker(m_preset);
    for (int i = 1; i < m_preset->count(); ++i)
        if (const Preset* p = findPreset(m_preset->itemData(i).toString()))
            m_preset->setItemText(
                i, i == index && !changes.isEmpty() ? tr("%1 (changed)").arg(p->title) : p->title);
    m_preset->setCurrentIndex(index);
    if (!shown)
        m_presetNote->setFullText(describeSettings(s));
    else if (changes.isEmpty())
        m_presetNote->setFullText(shown->description);
    else
        m_presetNote->setFullText(tr("%1\nChanged here: %2.")
                                      .arg(shown->description, changes.join(QStringLiteral(", "))));
}

VizSettings ControlsPanel::proposed() const {
    VizSettings s = m_base;
    s.spec.queries = m_queries->value();
    s.spec.keys = m_keys->value();
    s.spec.headDim = m_headDim->value();
    s.spec.seed = m_seed->seed();
    s.spec.pattern = InputPattern(m_pattern->currentData().toInt());
    s.spec.precision = Precision(m_precision->currentData().toInt());
    s.spec.causal = m_causal->isChecked();
    s.algorithm = Algorithm(m_algorithm->currentData().toInt());
    s.options.blockRows = m_blockRows->value();
    s.options.blockCols = m_blockCols->value();
    // As on the command line: a block size left as it was follows a shorter n.
    s.options = withBlocksWithin(s.options, s.spec, s.options.blockRows != m_base.options.blockRows,
                                 s.options.blockCols != m_base.options.blockCols);
    s.options.loopOrder = LoopOrder(m_loopOrder->currentData().toInt());
    s.hardwareId = m_hardware->currentData().toString().toStdString();
    s.backend = BackendKind(m_backend->itemData(m_backend->currentIndex(), Qt::UserRole).toInt());
    if (const auto check =
            parseLowPrecisionCheck(m_tensorCoreCheck->currentData().toString().toStdString()))
        s.tensorCoreCheck = *check;
    s.options.rescale = !m_bug->isChecked();
    s.options.keepFullScores = m_keepScores->isChecked();
    s.options.runningMax = !m_noMax->isChecked();
    for (const auto& [flag, box] : m_backwardBoxes)
        s.options.backward.*flag->field = box->isChecked() ? flag->onValue : !flag->onValue;
    return s;
}

void ControlsPanel::propose() {
    emit settingsRequested(proposed());
}

void ControlsPanel::showRefusal(const QString& message) {
    m_message->setText(message.isEmpty()
                           ? QString()
                           : tr("Refused: %1. The previous settings stay.").arg(message));
    m_message->setVisible(!message.isEmpty());
}

QString ControlsPanel::refusalText() const {
    return m_message->isHidden() ? QString() : m_message->text();
}

} // namespace flashviz::gui
