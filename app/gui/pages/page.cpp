#include "pages/page.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QEventLoop>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>

namespace flashviz::gui {

Page::Page(const ChartFontScales& chartFonts, QWidget* parent)
    : QWidget(parent), m_chartFonts(chartFonts) {
    m_message = new QLabel(this);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(true);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setEnabled(false);
    connect(m_cancel, &QPushButton::clicked, this, &Page::cancel);
}

bool Page::waitForIdle(int timeoutMs) {
    if (!m_busy) return true;
    QEventLoop loop;
    connect(this, &Page::busyChanged, &loop, [&loop](bool busy) {
        if (!busy) loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return !m_busy;
}

AsyncJobs::Progress Page::restartProgress() {
    m_progress->setValue(0);
    return [this](int value, const QString&) { m_progress->setValue(value); };
}

void Page::setBusy(bool busy) {
    const bool changed = busy != m_busy;
    m_busy = busy;
    if (changed && busy) m_progress->setValue(0);
    m_progress->setVisible(busy);
    m_cancel->setEnabled(busy);
    showBusy(busy);
    if (changed) emit busyChanged(busy);
}

// A light red box for an error, a blue-grey one otherwise.
void Page::showMessage(const QString& text, bool error) {
    m_message->setText(text);
    m_message->setStyleSheet(error
                                 ? QStringLiteral("QLabel { background: #fde4e1; color: #7a1408; "
                                                  "padding: 0.4em; border: 1px solid #d9826f; }")
                                 : QStringLiteral("QLabel { background: #eef2f7; color: #1f2d3d; "
                                                  "padding: 0.4em; border: 1px solid #b8c4d2; }"));
    m_message->show();
}

void Page::fail(const QString& error, const QString& shown) {
    m_error = error;
    showMessage(shown.isEmpty() ? error : shown, true);
    emit failed(m_error);
}

void Page::clearMessage() {
    m_error.clear();
    m_message->hide();
}

QChartView* Page::makeChartView(QWidget* parent) {
    auto* view = new QChartView(new QChart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    m_chartViews.append(view);
    return view;
}

void Page::setChart(QChartView* view, QChart* chart) const {
    QChart* old = view->chart();
    applyChartFonts(chart, font(), m_chartFonts);
    view->setChart(chart);
    delete old;
}

void Page::applyFonts() {
    applyLabelFonts();
    for (QChartView* view : m_chartViews)
        applyChartFonts(view->chart(), font(), m_chartFonts);
}

void Page::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) applyFonts();
}

} // namespace flashviz::gui
