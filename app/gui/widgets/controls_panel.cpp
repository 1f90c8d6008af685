#include "widgets/controls_panel.h"

#include "style/format.h"
#include "style/theme.h"

#include "core/hardware.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

namespace flashviz::gui {

namespace {

QSpinBox* spin(QWidget* parent, int min, int max, const char* name, const QString& tip) {
    auto* s = new QSpinBox(parent);
    // Wide ranges on purpose: the engine, not the spin box, decides what is valid, and says why.
    s->setRange(min, max);
    s->setKeyboardTracking(false);
    s->setObjectName(QLatin1String(name));
    s->setToolTip(tip);
    s->setAccelerated(true);
    return s;
}

template <typename T> void selectData(QComboBox* box, T value) {
    const int i = box->findData(QVariant::fromValue(int(value)));
    if (i >= 0) box->setCurrentIndex(i);
}

} // namespace

ControlsPanel::ControlsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    addPresets(layout);
    layout->addWidget(makeProblemGroup());
    layout->addWidget(makeAlgorithmGroup());
    layout->addWidget(makeSwitchesGroup());

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
}

void ControlsPanel::addPresets(QVBoxLayout* layout) {
    m_preset = new QComboBox(this);
    m_preset->setObjectName(QStringLiteral("preset"));
    m_preset->addItem(tr("Choose a preset…"), QString());
    for (const Preset& p : presets()) {
        m_preset->addItem(p.title, p.id);
        m_preset->setItemData(m_preset->count() - 1, p.description, Qt::ToolTipRole);
    }
    m_presetNote = new QLabel(this);
    m_presetNote->setWordWrap(true);
    m_presetNote->setObjectName(QStringLiteral("presetNote"));
    layout->addWidget(m_preset);
    layout->addWidget(m_presetNote);
}

QGroupBox* ControlsPanel::makeProblemGroup() {
    auto* problem = new QGroupBox(tr("Problem"), this);
    auto* pf = new QFormLayout(problem);
    m_queries = spin(problem, 0, 1 << 22, "queries",
                     tr("n_q: query rows (the window animates up to 16384)"));
    m_keys = spin(problem, 0, 1 << 22, "keys", tr("n_k: keys and values"));
    m_headDim = spin(problem, 0, 1 << 14, "headDim", tr("d: the head dimension"));
    m_seed = spin(problem, 0, INT_MAX, "seed",
                  tr("The generator's seed: same seed, same inputs on every machine"));
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
    pf->addRow(tr("n (queries)"), m_queries);
    pf->addRow(tr("n_k (keys)"), m_keys);
    pf->addRow(tr("d"), m_headDim);
    pf->addRow(tr("seed"), m_seed);
    pf->addRow(tr("inputs"), m_pattern);
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
    m_blockRows = spin(algo, 0, 1 << 22, "blockRows", tr("Br: query rows per tile"));
    m_blockCols = spin(algo, 0, 1 << 22, "blockCols", tr("Bc: keys per tile"));
    m_loopOrder = new QComboBox(algo);
    m_loopOrder->setObjectName(QStringLiteral("loopOrder"));
    m_loopOrder->addItem(tr("query blocks outer"), int(LoopOrder::QueryOuter));
    m_loopOrder->addItem(tr("K/V blocks outer (paper)"), int(LoopOrder::KeyValueOuter));
    m_hardware = new QComboBox(algo);
    m_hardware->setObjectName(QStringLiteral("hardware"));
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
    refreshBackends();
    af->addRow(tr("algorithm"), m_algorithm);
    af->addRow(tr("Br (rows/tile)"), m_blockRows);
    af->addRow(tr("Bc (keys/tile)"), m_blockCols);
    af->addRow(tr("loop order"), m_loopOrder);
    af->addRow(tr("GPU drawn"), m_hardware);
    af->addRow(tr("backend"), m_backend);
    return algo;
}

// The switches that break or bloat.
QGroupBox* ControlsPanel::makeSwitchesGroup() {
    auto* breakIt = new QGroupBox(tr("Break it"), this);
    auto* bl = new QVBoxLayout(breakIt);
    m_bug = new QCheckBox(tr("Remove the rescale e^(m_old − m_new)   [B]"), breakIt);
    m_bug->setObjectName(QStringLiteral("bug"));
    m_keepScores = new QCheckBox(tr("Keep the full S \"for debugging\""), breakIt);
    m_keepScores->setObjectName(QStringLiteral("keepFullScores"));
    m_noMax = new QCheckBox(tr("No running max (exp may overflow)"), breakIt);
    m_noMax->setObjectName(QStringLiteral("noRunningMax"));
    bl->addWidget(m_bug);
    bl->addWidget(m_keepScores);
    bl->addWidget(m_noMax);
    return breakIt;
}

void ControlsPanel::connectControls() {
    for (QSpinBox* s : {m_queries, m_keys, m_headDim, m_seed, m_blockRows, m_blockCols})
        connect(s, &QSpinBox::valueChanged, this, &ControlsPanel::propose);
    for (QComboBox* c : {m_pattern, m_precision, m_algorithm, m_loopOrder, m_hardware, m_backend})
        connect(c, &QComboBox::activated, this, &ControlsPanel::propose);
    for (QCheckBox* c : {m_causal, m_bug, m_keepScores, m_noMax})
        connect(c, &QCheckBox::toggled, this, &ControlsPanel::propose);
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
}

QString ControlsPanel::presetNoteText() const {
    return m_presetNote->text();
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
        b16(m_noMax);
    m_queries->setValue(s.spec.queries);
    m_keys->setValue(s.spec.keys);
    m_headDim->setValue(s.spec.headDim);
    m_seed->setValue(int(std::min<std::uint64_t>(s.spec.seed, INT_MAX)));
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
    m_bug->setChecked(!s.options.rescale);
    m_keepScores->setChecked(s.options.keepFullScores);
    m_noMax->setChecked(!s.options.runningMax);
    const bool flash = s.algorithm == Algorithm::Flash;
    for (QWidget* w : std::initializer_list<QWidget*>{m_blockRows, m_blockCols, m_loopOrder, m_bug,
                                                      m_keepScores, m_noMax})
        w->setEnabled(flash);
    showPreset(s, presetId);
}

namespace {

// What the "Break it" switches of `now` change from `preset`, when nothing else differs;
// empty otherwise (and when nothing differs at all).
QStringList switchedFrom(const VizSettings& preset, const VizSettings& now) {
    VizSettings same = preset;
    same.options.rescale = now.options.rescale;
    same.options.keepFullScores = now.options.keepFullScores;
    same.options.runningMax = now.options.runningMax;
    if (!(same == now)) return {};
    QStringList changes;
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
    for (const Preset& p : presets()) consider(&p);
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
            m_preset->setItemText(i, i == index && !changes.isEmpty()
                                         ? tr("%1 (changed)").arg(p->title)
                                         : p->title);
    m_preset->setCurrentIndex(index);
    if (!shown)
        m_presetNote->setText(describeSettings(s));
    else if (changes.isEmpty())
        m_presetNote->setText(shown->description);
    else
        m_presetNote->setText(tr("%1\nChanged here: %2.")
                                  .arg(shown->description, changes.join(QStringLiteral(", "))));
}

VizSettings ControlsPanel::proposed() const {
    VizSettings s = m_base;
    s.spec.queries = m_queries->value();
    s.spec.keys = m_keys->value();
    s.spec.headDim = m_headDim->value();
    s.spec.seed = std::uint64_t(m_seed->value());
    s.spec.pattern = InputPattern(m_pattern->currentData().toInt());
    s.spec.precision = Precision(m_precision->currentData().toInt());
    s.spec.causal = m_causal->isChecked();
    s.algorithm = Algorithm(m_algorithm->currentData().toInt());
    s.options.blockRows = m_blockRows->value();
    s.options.blockCols = m_blockCols->value();
    s.options.loopOrder = LoopOrder(m_loopOrder->currentData().toInt());
    s.hardwareId = m_hardware->currentData().toString().toStdString();
    s.backend = BackendKind(m_backend->itemData(m_backend->currentIndex(), Qt::UserRole).toInt());
    s.options.rescale = !m_bug->isChecked();
    s.options.keepFullScores = m_keepScores->isChecked();
    s.options.runningMax = !m_noMax->isChecked();
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
