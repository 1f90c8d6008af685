#include "widgets/input_designer_dialog.h"

#include "session/scene.h"
#include "style/heatmap.h"
#include "style/theme.h"

#include "core/errors.h"
#include "core/flash.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace flashviz::gui {

namespace {

// S is kept as an image for problems up to this many scores (standard attention computes it).
constexpr std::int64_t kPreviewScoreEntries = 512 * 512;
// Designs whose preview costs less than this many multiply-adds are previewed at once.
constexpr double kInlinePreviewFlops = 4e6;
// The grid's cells: at least this high (rows are grouped below it), at most these sizes.
constexpr double kMinCellHeight = 3, kMaxCellHeight = 30, kMaxCellWidth = 80;
constexpr int kLeftMargin = 46, kTopMargin = 22;

QString rowsText(int rows) {
    return rows == 1 ? InputDesignerDialog::tr("1 row")
                     : InputDesignerDialog::tr("%1 rows").arg(rows);
}

QString factorText(double sharpness) {
    return QStringLiteral("e^−%1 = %2").arg(sharpness).arg(std::exp(-sharpness), 0, 'g', 3);
}

} // namespace

DesignPreview previewDesign(const VizSettings& settings) {
    DesignPreview out;
    try {
        (void)validateForWindow(settings);
        const Problem problem = makeProblem(settings.spec);
        out.blockCols = settings.options.blockCols;
        out.realised = realisedMaxima(problem, settings.options);
        out.unrealisedRow = firstUnrealisedRow(settings.spec, out.realised, out.blockCols);
        // Where the forward's step view shows the first rescale (its --step first-rescale).
        FlashOptions forward = settings.options;
        forward.runningMax = true;
        const StepEngine engine(problem, Algorithm::Flash, forward);
        out.firstRescaleStep = engine.firstRescaleStep();
        if (out.firstRescaleStep) out.firstRescaleInfo = engine.info(*out.firstRescaleStep);
        if (std::int64_t(settings.spec.queries) * settings.spec.keys <= kPreviewScoreEntries) {
            const Matrix scores = standardForward(problem).scores;
            out.scoreMax = finiteAbsMax(scores);
            out.scores = heatmapImage(scores, Colouring::Diverging, out.scoreMax);
        }
    } catch (const EngineError& e) {
        out = DesignPreview{};
        out.error = QString::fromUtf8(e.what());
    }
    return out;
}

// --- the grid ---------------------------------------------------------------------------------

DesignGrid::DesignGrid(ProblemSpec spec, int blockSize, std::function<void(int, int, int)> picked,
                       QWidget* parent)
    : QWidget(parent), m_spec(std::move(spec)), m_blockSize(blockSize),
      m_blocks(flashviz::blockCount(m_spec.keys, blockSize)), m_picked(std::move(picked)) {
    setObjectName(QStringLiteral("designGrid"));
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void DesignGrid::setDesign(const InputDesign* design) {
    m_design = design;
    update();
}

void DesignGrid::setPreview(const DesignPreview* preview) {
    m_preview = preview;
    update();
}

DesignGrid::Cells DesignGrid::cells() const {
    Cells c;
    const QRectF room = QRectF(rect()).adjusted(kLeftMargin, kTopMargin, -6, -6);
    const int fit = std::max(1, int(room.height() / kMinCellHeight));
    c.rowsPerGroup = (m_spec.queries + fit - 1) / fit;
    c.groups = (m_spec.queries + c.rowsPerGroup - 1) / c.rowsPerGroup;
    c.height = std::min(kMaxCellHeight, room.height() / c.groups);
    c.width = std::min(kMaxCellWidth, room.width() / m_blocks);
    c.area = QRectF(room.topLeft(), QSizeF(c.width * m_blocks, c.height * c.groups));
    return c;
}

int DesignGrid::rowsPerGroup() const {
    return cells().rowsPerGroup;
}

QPoint DesignGrid::pointFor(int row, int keyBlock) const {
    const Cells c = cells();
    return QPointF(c.area.left() + (keyBlock + 0.5) * c.width,
                   c.area.top() + (row / c.rowsPerGroup + 0.5) * c.height)
        .toPoint();
}

std::optional<std::pair<int, int>> DesignGrid::cellAt(QPointF point) const {
    const Cells c = cells();
    if (!c.area.contains(point)) return std::nullopt;
    const int group = std::clamp(int((point.y() - c.area.top()) / c.height), 0, c.groups - 1);
    const int block = std::clamp(int((point.x() - c.area.left()) / c.width), 0, m_blocks - 1);
    return std::pair{group * c.rowsPerGroup, block};
}

QString DesignGrid::cellText(int row, int keyBlock) const {
    const int rows = cells().rowsPerGroup;
    const int last = std::min(m_spec.queries, row + rows) - 1;
    QString text = rows == 1 ? QStringLiteral("row %1").arg(row)
                             : QStringLiteral("rows %1–%2").arg(row).arg(last);
    text += QStringLiteral(", key block %1 (keys %2–%3)")
                .arg(keyBlock)
                .arg(keyBlock * m_blockSize)
                .arg(std::min(m_spec.keys, (keyBlock + 1) * m_blockSize) - 1);
    if (!m_design || rows != 1) return text;
    const RowMaximum& r = m_design->rows[std::size_t(row)];
    text += QStringLiteral("\nDesigned: the maximum in block %1, %2 logits above key 0")
                .arg(r.keyBlock)
                .arg(r.sharpness);
    if (m_preview && m_preview->realised.size() == m_design->rows.size()) {
        const RealisedRow& got = m_preview->realised[std::size_t(row)];
        if (got.maxKey < 0) return text + QStringLiteral("\nThe row sees no key");
        text += QStringLiteral("\nRealised: key %1 (block %2), %3 logits above the next")
                    .arg(got.maxKey)
                    .arg(got.maxKey / m_blockSize)
                    .arg(got.gap, 0, 'g', 4);
        for (const RescaleEvent& e : got.rescales)
            text += QStringLiteral("\nThe rescale fires at the run's key block %1: × %2")
                        .arg(e.keyBlock)
                        .arg(e.factor, 0, 'g', 3);
    }
    return text;
}

void DesignGrid::paintEvent(QPaintEvent*) {
    const Theme theme = Theme::desktop();
    QPainter p(this);
    p.fillRect(rect(), theme.panel);
    if (!m_design || int(m_design->rows.size()) != m_spec.queries) return;
    const Cells c = cells();
    const bool withPreview = m_preview && m_preview->realised.size() == m_design->rows.size();
    const int bc = withPreview ? std::max(m_preview->blockCols, 1) : m_blockSize;
    QColor masked = theme.muted;
    masked.setAlpha(110);
    QColor designed = theme.s;
    std::vector<int> count(std::size_t(m_blocks), 0);
    std::vector<char> maxHere(std::size_t(m_blocks), 0), wrongHere(std::size_t(m_blocks), 0),
        firesHere(std::size_t(m_blocks), 0);
    std::vector<int> touched;
    for (int g = 0; g < c.groups; ++g) {
        const int first = g * c.rowsPerGroup;
        const int last = std::min(m_spec.queries, first + c.rowsPerGroup) - 1;
        const double y = c.area.top() + g * c.height;
        // What the group's rows see: the last row sees the most (a causal prefix grows).
        const int seen = visibleDesignBlocks(m_spec, m_blockSize, last);
        p.fillRect(QRectF(c.area.left(), y, c.width * seen, c.height), QColor(Qt::white));
        p.fillRect(QRectF(c.area.left() + c.width * seen, y, c.width * (m_blocks - seen), c.height),
                   masked);
        touched.clear();
        const auto touch = [&](int block) {
            if (count[std::size_t(block)] == 0 && !maxHere[std::size_t(block)] &&
                !firesHere[std::size_t(block)])
                touched.push_back(block);
        };
        for (int row = first; row <= last; ++row) {
            const int b = m_design->rows[std::size_t(row)].keyBlock;
            touch(b);
            ++count[std::size_t(b)];
            if (!withPreview) continue;
            const RealisedRow& got = m_preview->realised[std::size_t(row)];
            if (got.maxKey < 0) continue;
            const int at = std::min(got.maxKey / m_blockSize, m_blocks - 1);
            touch(at);
            maxHere[std::size_t(at)] = 1;
            if (at != b) wrongHere[std::size_t(at)] = 1;
            for (const RescaleEvent& e : got.rescales) {
                const int block = std::min(e.keyBlock * bc / m_blockSize, m_blocks - 1);
                touch(block);
                firesHere[std::size_t(block)] = 1;
            }
        }
        for (int b : touched) {
            const QRectF cell(c.area.left() + b * c.width, y, c.width, c.height);
            const std::size_t i = std::size_t(b);
            if (count[i] > 0) {
                designed.setAlphaF(0.25 + 0.75 * double(count[i]) / (last - first + 1));
                p.fillRect(cell, designed);
            }
            if (firesHere[i]) // the running maximum rises here: a bar on the block's left edge
                p.fillRect(
                    QRectF(cell.left(), cell.top(), std::max(2.0, c.width * 0.18), cell.height()),
                    theme.accent);
            if (maxHere[i]) {
                const double r = std::max(1.0, std::min(cell.width(), cell.height()) * 0.22);
                p.setPen(Qt::NoPen);
                p.setBrush(wrongHere[i] ? theme.bad : theme.text);
                p.drawEllipse(cell.center(), r, r);
            }
            count[i] = 0;
            maxHere[i] = wrongHere[i] = firesHere[i] = 0;
        }
    }
    // Grid lines where the cells are large enough to tell apart.
    p.setPen(QPen(theme.border, 1));
    p.setBrush(Qt::NoBrush);
    if (c.width >= 6)
        for (int b = 0; b <= m_blocks; ++b)
            p.drawLine(QPointF(c.area.left() + b * c.width, c.area.top()),
                       QPointF(c.area.left() + b * c.width, c.area.bottom()));
    if (c.height >= 6)
        for (int g = 0; g <= c.groups; ++g)
            p.drawLine(QPointF(c.area.left(), c.area.top() + g * c.height),
                       QPointF(c.area.right(), c.area.top() + g * c.height));
    p.drawRect(c.area);
    // The rows being picked.
    if (m_press && m_dragRow >= 0) {
        const int from = std::min(m_press->first, m_dragRow) / c.rowsPerGroup;
        const int to = std::max(m_press->first, m_dragRow) / c.rowsPerGroup;
        p.setPen(QPen(theme.accent, 2));
        p.drawRect(QRectF(c.area.left() + m_press->second * c.width, c.area.top() + from * c.height,
                          c.width, (to - from + 1) * c.height));
    }
    // Axes: key blocks across, rows down, thinned to what fits.
    p.setPen(theme.muted);
    p.setFont(theme.font(8));
    const QFontMetrics fm(p.font());
    const int blockStep =
        std::max(1, int(std::ceil(fm.horizontalAdvance(QStringLiteral("0000")) / c.width)));
    for (int b = 0; b < m_blocks; b += blockStep)
        p.drawText(QRectF(c.area.left() + b * c.width - 20, 2, c.width + 40, kTopMargin - 4),
                   Qt::AlignHCenter | Qt::AlignBottom, QString::number(b));
    const int groupStep = std::max(1, int(std::ceil(fm.height() / c.height)));
    for (int g = 0; g < c.groups; g += groupStep)
        p.drawText(QRectF(0, c.area.top() + g * c.height + (c.height - fm.height()) / 2,
                          kLeftMargin - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QString::number(g * c.rowsPerGroup));
}

void DesignGrid::mousePressEvent(QMouseEvent* event) {
    m_press = cellAt(event->position());
    m_dragRow = m_press ? m_press->first : -1;
    update();
}

void DesignGrid::mouseMoveEvent(QMouseEvent* event) {
    if (!m_press) return;
    const Cells c = cells();
    const double y = std::clamp(event->position().y(), c.area.top(), c.area.bottom() - 1);
    m_dragRow = std::clamp(int((y - c.area.top()) / c.height), 0, c.groups - 1) * c.rowsPerGroup;
    update();
}

void DesignGrid::mouseReleaseEvent(QMouseEvent*) {
    if (!m_press) return;
    const int rows = cells().rowsPerGroup;
    const int first = std::min(m_press->first, m_dragRow);
    const int last = std::min(m_spec.queries - 1, std::max(m_press->first, m_dragRow) + rows - 1);
    const int block = m_press->second;
    m_press.reset();
    m_dragRow = -1;
    update();
    m_picked(first, last, block);
}

bool DesignGrid::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        if (const auto cell = cellAt(help->pos()))
            QToolTip::showText(help->globalPos(), cellText(cell->first, cell->second), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

// --- the score preview ------------------------------------------------------------------------

// S as the engine computes it, with the design's key blocks marked; or why it is not shown.
class ScorePreview final : public QWidget {
  public:
    explicit ScorePreview(int blockSize, QWidget* parent)
        : QWidget(parent), m_blockSize(blockSize) {
        setObjectName(QStringLiteral("scorePreview"));
        setMinimumSize(180, 180);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }
    void setPreview(const DesignPreview* preview, const ProblemSpec& spec) {
        m_preview = preview;
        m_spec = spec;
        update();
    }

  protected:
    void paintEvent(QPaintEvent*) override {
        const Theme theme = Theme::desktop();
        QPainter p(this);
        p.fillRect(rect(), theme.panel);
        p.setPen(theme.muted);
        p.setFont(theme.font(8.5));
        const QFontMetrics fm(p.font());
        const QRectF caption(4, 0, width() - 8, fm.height() + 6);
        if (!m_preview || m_preview->scores.isNull()) {
            p.drawText(
                rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
                m_preview && m_preview->error.isEmpty()
                    ? InputDesignerDialog::tr("S is drawn for up to %1 scores; the grid shows "
                                              "where each row's maximum came out")
                          .arg(kPreviewScoreEntries)
                    : QString());
            return;
        }
        p.drawText(caption, Qt::AlignLeft | Qt::AlignVCenter,
                   InputDesignerDialog::tr("S = scale · QKᵀ from the engine, colour ±%1")
                       .arg(m_preview->scoreMax, 0, 'g', 3));
        const QSizeF image = m_preview->scores.size();
        const QRectF room = QRectF(rect()).adjusted(4, caption.bottom() + 2, -4, -4);
        const double zoom = std::min(room.width() / image.width(), room.height() / image.height());
        const QRectF target(room.topLeft(), image * zoom);
        p.drawImage(target, m_preview->scores);
        // The design's key blocks, where they are far enough apart to see.
        const double keyWidth = target.width() / m_spec.keys;
        if (keyWidth * m_blockSize >= 5) {
            p.setPen(QPen(theme.border, 1));
            for (int key = m_blockSize; key < m_spec.keys; key += m_blockSize)
                p.drawLine(QPointF(target.left() + key * keyWidth, target.top()),
                           QPointF(target.left() + key * keyWidth, target.bottom()));
        }
        p.setPen(theme.border);
        p.setBrush(Qt::NoBrush);
        p.drawRect(target);
    }

  private:
    int m_blockSize;
    ProblemSpec m_spec;
    const DesignPreview* m_preview = nullptr;
};

// --- the dialog -------------------------------------------------------------------------------

InputDesignerDialog::InputDesignerDialog(const VizSettings& settings, QColor errorColor,
                                         QWidget* parent)
    : QDialog(parent), m_base(settings), m_errorColor(errorColor) {
    setObjectName(QStringLiteral("inputDesigner"));
    setWindowTitle(tr("Design the inputs"));
    const ProblemSpec& spec = m_base.spec;
    const int blockSize = m_base.options.blockCols;
    m_design = spec.design && int(spec.design->rows.size()) == spec.queries
                   ? *spec.design
                   : diagonalDesign(spec, blockSize, RowMaximum{}.sharpness);
    // The design replaces whatever inputs are in force, .npy files included; the sizes stay.
    m_base.spec.design.reset();
    m_base.spec.files.reset();

    m_grid = new DesignGrid(
        spec, m_design.blockSize,
        [this](int first, int last, int block) { pickRows(first, last, block); }, this);
    m_scores = new ScorePreview(m_design.blockSize, this);
    m_axes = new QLabel(this);
    m_axes->setWordWrap(true);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("designSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("designMessage"));
    m_message->setWordWrap(true);
    m_message->setTextFormat(Qt::PlainText);
    QPalette bad = m_message->palette();
    bad.setColor(QPalette::WindowText, m_errorColor);
    m_message->setPalette(bad);
    m_message->hide();
    m_axes->setText(
        tr("Query rows down, key blocks of %1 keys across (the run's Bc is %2). Press on a block "
           "and drag down the rows to put their maximum there. Shaded: the design; dot: where the "
           "maximum came out (red: elsewhere); bar on a block's left edge: the rescale fires "
           "there; "
           "grey: blocks a causal row does not see.")
            .arg(m_design.blockSize)
            .arg(m_base.options.blockCols));

    auto* left = new QVBoxLayout;
    left->addWidget(m_axes);
    left->addWidget(m_grid, 1);
    auto* right = new QVBoxLayout;
    right->addWidget(makeControls());
    right->addWidget(m_scores, 1);
    auto* top = new QHBoxLayout;
    top->addLayout(left, 3);
    top->addLayout(right, 2);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_apply = buttons->addButton(tr("Apply"), QDialogButtonBox::AcceptRole);
    m_apply->setObjectName(QStringLiteral("applyDesign"));
    m_apply->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, &InputDesignerDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &InputDesignerDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top, 1);
    layout->addWidget(m_summary);
    layout->addWidget(m_message);
    layout->addWidget(buttons);
    resize(1040, 700);
    m_grid->setDesign(&m_design);
    designChanged();
}

QWidget* InputDesignerDialog::makeControls() {
    auto* box = new QGroupBox(tr("Quick designs"), this);
    auto* layout = new QVBoxLayout(box);
    const ProblemSpec& spec = m_base.spec;
    const int blockSize = m_design.blockSize;
    const auto button = [&](const QString& text, const char* name, const QString& tip) {
        auto* b = new QPushButton(text, box);
        b->setObjectName(QLatin1String(name));
        b->setToolTip(tip);
        return b;
    };
    auto* oneRow = new QHBoxLayout;
    auto* one = button(tr("Every row in block"), "oneBlockDesign",
                       tr("Every row's maximum in the block chosen (a causal row that does not "
                          "see it: its last block)"));
    m_oneBlock = new QSpinBox(box);
    m_oneBlock->setObjectName(QStringLiteral("oneBlock"));
    m_oneBlock->setRange(0, flashviz::blockCount(spec.keys, blockSize) - 1);
    m_oneBlock->setValue(m_oneBlock->maximum() / 2);
    oneRow->addWidget(one, 1);
    oneRow->addWidget(m_oneBlock);
    layout->addLayout(oneRow);
    auto* diagonal = button(tr("Diagonal"), "diagonalDesign",
                            spec.causal ? tr("Each row's maximum in the block of its own key")
                                        : tr("Row i's maximum in block i · blocks / n_q"));
    auto* last = button(tr("Last block"), "lastBlockDesign",
                        tr("Each row's maximum in the last block it sees: the rescale as late as "
                           "it comes"));
    auto* random = button(tr("Random (seed %1)").arg(spec.seed), "randomDesign",
                          tr("Each row's block drawn from those it sees, from the seed"));
    auto* grid = new QHBoxLayout;
    grid->addWidget(diagonal);
    grid->addWidget(last);
    grid->addWidget(random);
    layout->addLayout(grid);

    auto* sharpRow = new QHBoxLayout;
    auto* sharpLabel = new QLabel(tr("Sharpness"), box);
    m_sharpness = new QDoubleSpinBox(box);
    m_sharpness->setObjectName(QStringLiteral("sharpness"));
    m_sharpness->setRange(kMinSharpness, kMaxSharpness);
    m_sharpness->setSingleStep(0.5);
    m_sharpness->setDecimals(2);
    m_sharpness->setSuffix(tr(" logits"));
    m_sharpness->setValue(m_design.rows.empty() ? RowMaximum{}.sharpness
                                                : m_design.rows.front().sharpness);
    m_sharpness->setToolTip(tr("How far the maximum stands above key 0 (which scores 0): the rows "
                               "clicked and the quick designs get it; the rescale there "
                               "multiplies by e^−sharpness"));
    auto* everyRow = button(tr("Every row"), "sharpnessEveryRow",
                            tr("Give every row this sharpness, the blocks kept"));
    sharpRow->addWidget(sharpLabel);
    sharpRow->addWidget(m_sharpness, 1);
    sharpRow->addWidget(everyRow);
    layout->addLayout(sharpRow);
    auto* factor = new QLabel(box);
    factor->setObjectName(QStringLiteral("rescaleFactor"));
    const auto showFactor = [factor](double value) {
        factor->setText(tr("The rescale at the maximum's block: × %1").arg(factorText(value)));
    };
    showFactor(m_sharpness->value());
    connect(m_sharpness, &QDoubleSpinBox::valueChanged, factor, showFactor);
    layout->addWidget(factor);
    auto* pattern = button(tr("Use the pattern instead"), "usePattern",
                           tr("Apply goes back to the generated inputs (the pattern chosen in the "
                              "panel) and drops the design"));
    layout->addWidget(pattern);

    const auto sharpness = [this] { return m_sharpness->value(); };
    connect(one, &QPushButton::clicked, this, [=, this] {
        quickDesign(oneBlockDesign(m_base.spec, blockSize, m_oneBlock->value(), sharpness()));
    });
    connect(diagonal, &QPushButton::clicked, this,
            [=, this] { quickDesign(diagonalDesign(m_base.spec, blockSize, sharpness())); });
    connect(last, &QPushButton::clicked, this,
            [=, this] { quickDesign(lastBlockDesign(m_base.spec, blockSize, sharpness())); });
    connect(random, &QPushButton::clicked, this,
            [=, this] { quickDesign(randomDesign(m_base.spec, blockSize, sharpness())); });
    connect(everyRow, &QPushButton::clicked, this, [=, this] {
        InputDesign design = m_design;
        for (RowMaximum& r : design.rows)
            r.sharpness = sharpness();
        quickDesign(design);
    });
    connect(pattern, &QPushButton::clicked, this, [this] {
        m_useDesign = false;
        designChanged();
    });
    return box;
}

void InputDesignerDialog::quickDesign(InputDesign design) {
    m_design = std::move(design);
    m_useDesign = true;
    designChanged();
}

void InputDesignerDialog::setDesign(const InputDesign& design) {
    quickDesign(design);
}

void InputDesignerDialog::setSharpness(double sharpness) {
    m_sharpness->setValue(sharpness);
}

void InputDesignerDialog::pickRows(int first, int last, int keyBlock) {
    for (int row = std::max(first, 0); row <= last && row < int(m_design.rows.size()); ++row) {
        const int visible = visibleDesignBlocks(m_base.spec, m_design.blockSize, row);
        m_design.rows[std::size_t(row)] = {visible == 0 ? 0 : std::min(keyBlock, visible - 1),
                                           m_sharpness->value()};
    }
    m_useDesign = true;
    designChanged();
}

VizSettings InputDesignerDialog::settings() const {
    VizSettings s = m_base;
    if (m_useDesign) s.spec.design = m_design;
    return s;
}

void InputDesignerDialog::designChanged() {
    m_grid->setDesign(&m_design);
    showMessage({});
    if (!m_useDesign) {
        m_jobs.drop(0);
        m_previewPending = false;
        m_preview = DesignPreview{};
        m_grid->setPreview(nullptr);
        m_scores->setPreview(nullptr, m_base.spec);
        m_summary->setText(tr("Apply goes back to the generated %1 inputs (seed %2); the grid "
                              "keeps the design for a click to take it up again.")
                               .arg(QLatin1String(toString(m_base.spec.pattern)))
                               .arg(m_base.spec.seed));
        return;
    }
    const VizSettings s = settings();
    const ProblemSpec& spec = s.spec;
    const double cost = 2.0 * spec.queries * spec.keys * spec.headDim;
    if (cost <= kInlinePreviewFlops) {
        m_jobs.drop(0);
        showPreview(previewDesign(s));
        return;
    }
    m_previewPending = true;
    m_summary->setText(tr("Computing what the engine makes of the design…"));
    m_jobs.run<DesignPreview>(
        0, [s](JobControl&) { return previewDesign(s); },
        [this](DesignPreview preview) { showPreview(std::move(preview)); });
}

void InputDesignerDialog::showPreview(DesignPreview preview) {
    m_previewPending = false;
    m_preview = std::move(preview);
    m_grid->setPreview(&m_preview);
    m_scores->setPreview(&m_preview, m_base.spec);
    m_summary->setText(summaryText());
    if (!m_preview.error.isEmpty()) showMessage(tr("Refused: %1").arg(m_preview.error));
}

QString InputDesignerDialog::summaryText() const {
    if (!m_useDesign || m_previewPending) return m_summary->text();
    if (!m_preview.error.isEmpty())
        return tr("The engine refuses this design; Apply keeps the inputs in force.");
    if (m_preview.unrealisedRow >= 0) {
        const int row = m_preview.unrealisedRow;
        const RealisedRow& got = m_preview.realised[std::size_t(row)];
        return tr("Row %1's maximum came out at key %2 (block %3), not in block %4 as designed.")
            .arg(row)
            .arg(got.maxKey)
            .arg(got.maxKey / m_design.blockSize)
            .arg(m_design.rows[std::size_t(row)].keyBlock);
    }
    int firing = 0, first = 0;
    double smallest = 1;
    for (const RealisedRow& r : m_preview.realised) {
        if (r.maxKey < 0) continue;
        if (r.rescales.empty())
            ++first;
        else {
            ++firing;
            smallest = std::min(smallest, r.rescales.front().factor);
        }
    }
    QString text = tr("Every row's maximum lies in the block designed (from the engine's own "
                      "online softmax over these Q and K). ");
    if (firing > 0)
        text += tr("The rescale fires once in %1, at that block, by e^−sharpness (smallest "
                   "factor %2)")
                    .arg(rowsText(firing))
                    .arg(smallest, 0, 'g', 3);
    else
        text += tr("The rescale never fires");
    if (first > 0)
        text += tr("; %1 with the maximum in the first block never rescale").arg(rowsText(first));
    text += QStringLiteral(". ");
    if (m_preview.firstRescaleInfo)
        text += tr("The step view shows the first at step %1 (query block %2, key block %3).")
                    .arg(*m_preview.firstRescaleStep)
                    .arg(m_preview.firstRescaleInfo->queryBlock)
                    .arg(m_preview.firstRescaleInfo->keyBlock);
    return text;
}

QString InputDesignerDialog::messageText() const {
    return m_message->isHidden() ? QString() : m_message->text();
}

void InputDesignerDialog::showMessage(const QString& text) {
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

bool InputDesignerDialog::waitForPreview(int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (m_previewPending && clock.elapsed() < timeoutMs)
        QApplication::processEvents(QEventLoop::AllEvents, 20);
    return !m_previewPending;
}

void InputDesignerDialog::accept() {
    if (m_useDesign) {
        try {
            (void)validateForWindow(settings());
        } catch (const EngineError& e) {
            showMessage(
                tr("Refused: %1. The inputs in force stay.").arg(QString::fromUtf8(e.what())));
            return;
        }
    }
    QDialog::accept();
}

} // namespace flashviz::gui
