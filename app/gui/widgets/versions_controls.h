#pragma once
// The FlashAttention-2 page's own settings, above its picture: the warps that share one tile and
// the batch and heads of the grid (ViewOptions::warps, gridBatch, gridHeads). The window's one set
// of view options holds them, so sessions keep them and the lecture shows the same.
#include "session/view_options.h"

#include <QWidget>

class QSpinBox;

namespace flashviz::gui {

class VersionsControls : public QWidget {
    Q_OBJECT
  public:
    explicit VersionsControls(QWidget* parent = nullptr);
    // Shows these options; emits nothing.
    void setViewOptions(const ViewOptions& options);
    // `options` with this bar's three values.
    ViewOptions applyTo(ViewOptions options) const;

  signals:
    void edited(); // the user changed a value

  private:
    QSpinBox* m_warps;
    QSpinBox* m_batch;
    QSpinBox* m_heads;
};

} // namespace flashviz::gui
