#include "widgets/versions_controls.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

namespace flashviz::gui {

namespace {

QSpinBox* spinBox(const char* name, const ViewOptionRange& range, const QString& tip) {
    auto* box = new QSpinBox;
    box->setObjectName(QLatin1String(name));
    box->setRange(range.lowest, range.highest);
    box->setToolTip(tip);
    box->setKeyboardTracking(false); // one change per number typed, not per digit
    return box;
}

} // namespace

VersionsControls::VersionsControls(QWidget* parent)
    : QWidget(parent),
      m_warps(spinBox("versionsWarps", kPageOptionRanges[0],
                      tr("Warps of one thread block sharing the tile; \"the kernel's\": as many "
                         "as the grid's kernel runs (FlashViz's tensor-core kernels: 4 or 8)"))),
      m_batch(spinBox("versionsBatch", kPageOptionRanges[1], tr("Sequences in the batch of the grid picture"))),
      m_heads(spinBox("versionsHeads", kPageOptionRanges[2], tr("Attention heads of the grid picture"))) {
    m_warps->setSpecialValueText(tr("the kernel's"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 2, 8, 2);
    const auto add = [&](const QString& label, QSpinBox* box) {
        auto* text = new QLabel(label);
        text->setBuddy(box);
        layout->addWidget(text);
        layout->addWidget(box);
        layout->addSpacing(12);
    };
    add(tr("&Warps per block"), m_warps);
    add(tr("Ba&tch"), m_batch);
    add(tr("H&eads"), m_heads);
    layout->addStretch(1);
    setViewOptions(ViewOptions{});
    for (QSpinBox* box : {m_warps, m_batch, m_heads})
        connect(box, &QSpinBox::valueChanged, this, &VersionsControls::edited);
}

void VersionsControls::setViewOptions(const ViewOptions& options) {
    const QSignalBlocker a(m_warps), b(m_batch), c(m_heads);
    m_warps->setValue(options.warps);
    m_batch->setValue(options.gridBatch);
    m_heads->setValue(options.gridHeads);
}

ViewOptions VersionsControls::applyTo(ViewOptions options) const {
    options.warps = m_warps->value();
    options.gridBatch = m_batch->value();
    options.gridHeads = m_heads->value();
    return options;
}

} // namespace flashviz::gui
