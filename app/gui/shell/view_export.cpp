#include "shell/view_export.h"

#include "core/step_export.h"
#include "session/scene.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QTabBar>
#include <QWidget>

#include <exception>
#include <vector>

namespace flashviz::gui {

namespace {

QString extensionOf(const QString& file) {
    return QFileInfo(file).suffix().toLower();
}

// A widget and its visible children, each drawn alone at its place, the tab bars left out: they
// are the window's navigation, not the view, and Qt 6.4's SVG generator cannot clip, so the
// selected tab's shape spilled over the page below it.
void paintWidget(QWidget& widget, QPainter& painter, QPoint at) {
    widget.render(&painter, at, QRegion(), QWidget::DrawWindowBackground);
    for (QObject* object : widget.children()) {
        auto* child = qobject_cast<QWidget*>(object);
        if (!child || child->isWindow() || !child->isVisible() || qobject_cast<QTabBar*>(child))
            continue;
        paintWidget(*child, painter, at + child->pos());
    }
}

// The view drawn onto a device whose logical resolution is the screen's, so that its fonts (in
// points) take the pixels they take on screen and no label outgrows its box.
void paintView(QWidget& view, QPaintDevice& device) {
    QPainter painter(&device);
    paintWidget(view, painter, QPoint());
}

QByteArray renderSvg(QWidget& view, const QString& title) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(view.size());
    svg.setViewBox(QRect(QPoint(), view.size()));
    svg.setResolution(view.logicalDpiX());
    svg.setTitle(title);
    svg.setDescription(QObject::tr("Drawn by FlashViz"));
    paintView(view, svg);
    return buffer.data();
}

QByteArray renderPdf(QWidget& view, const QString& title) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter pdf(&buffer);
    const int dpi = view.logicalDpiX();
    pdf.setResolution(dpi);
    pdf.setTitle(title);
    pdf.setCreator(QStringLiteral("FlashViz"));
    // One page of the view's own aspect: its pixels at the screen's resolution, in points.
    const QSizeF points = QSizeF(view.size()) * 72.0 / dpi;
    pdf.setPageLayout(QPageLayout(QPageSize(points, QPageSize::Point), QPageLayout::Portrait,
                                  QMarginsF(0, 0, 0, 0)));
    paintView(view, pdf);
    return buffer.data();
}

QByteArray renderPng(QWidget& view) {
    const qreal ratio = view.devicePixelRatioF();
    QImage image(view.size() * ratio, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(ratio);
    image.fill(view.palette().color(QPalette::Window));
    paintView(view, image);
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) return {};
    return buffer.data();
}

} // namespace

std::optional<ViewFileFormat> viewFormatForFile(const QString& file, QString* error) {
    const QString ext = extensionOf(file);
    if (ext == QLatin1String("svg")) return ViewFileFormat::Svg;
    if (ext == QLatin1String("pdf")) return ViewFileFormat::Pdf;
    if (ext == QLatin1String("png")) return ViewFileFormat::Png;
    if (error)
        *error = QObject::tr("%1: a view is exported as .svg, .pdf or .png, not '.%2'")
                     .arg(QFileInfo(file).fileName(), ext);
    return std::nullopt;
}

std::optional<StepDataFormat> stepDataFormatForFile(const QString& file, QString* error) {
    const QString ext = extensionOf(file);
    if (ext == QLatin1String("json")) return StepDataFormat::Json;
    if (ext == QLatin1String("csv")) return StepDataFormat::Csv;
    if (error)
        *error = QObject::tr("%1: step data is exported as .json or .csv, not '.%2'")
                     .arg(QFileInfo(file).fileName(), ext);
    return std::nullopt;
}

QByteArray renderView(QWidget& view, ViewFileFormat format, const QString& title) {
    if (view.size().isEmpty()) return {};
    switch (format) {
    case ViewFileFormat::Svg:
        return renderSvg(view, title);
    case ViewFileFormat::Pdf:
        return renderPdf(view, title);
    case ViewFileFormat::Png:
        return renderPng(view);
    }
    return {};
}

bool exportView(QWidget& view, const QString& file, const QString& title, QString* error) {
    const std::optional<ViewFileFormat> format = viewFormatForFile(file, error);
    if (!format) return false;
    const QByteArray bytes = renderView(view, *format, title);
    if (bytes.isEmpty()) {
        if (error) *error = QObject::tr("%1: the view could not be drawn").arg(file);
        return false;
    }
    return writeFileSafely(file, bytes, error);
}

QByteArray stepDataBytes(const Frame& frame, StepDataFormat format) {
    const nlohmann::ordered_json data =
        stepDataJson(*frame.scene->engine, std::vector<StepState>{frame.state});
    const std::string text =
        format == StepDataFormat::Json ? stepDataJsonText(data) : stepDataCsv(data);
    return QByteArray::fromStdString(text);
}

bool exportStepData(const Frame& frame, const QString& file, QString* error) {
    const std::optional<StepDataFormat> format = stepDataFormatForFile(file, error);
    if (!format) return false;
    QByteArray bytes;
    try {
        bytes = stepDataBytes(frame, *format);
    } catch (const std::exception& e) { // EngineError, or no memory for a large tile's text
        if (error) *error = QObject::tr("%1: %2").arg(file, QString::fromUtf8(e.what()));
        return false;
    }
    return writeFileSafely(file, bytes, error);
}

} // namespace flashviz::gui
