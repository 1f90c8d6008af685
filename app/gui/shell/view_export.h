#pragma once
// The window's exports besides the animation: the view on screen as SVG, PDF or PNG, and the
// state at the step on screen as JSON or CSV (core/step_export.h, the same bytes as
// `flashviz-cli steps --json`). Every file is written through QSaveFile: a write that fails
// leaves what was there before.
#include "session/save_file.h" // writeFileSafely(), which every export writes through

#include <QByteArray>
#include <QString>

#include <optional>

class QWidget;

namespace flashviz::gui {

struct Frame;

enum class ViewFileFormat { Svg, Pdf, Png };
enum class StepDataFormat { Json, Csv };

// The format a file name asks for by its extension (any case); std::nullopt with *error naming
// the file and the extensions allowed.
std::optional<ViewFileFormat> viewFormatForFile(const QString& file, QString* error);
std::optional<StepDataFormat> stepDataFormatForFile(const QString& file, QString* error);

// The view as it is on screen, at its size and the screen's resolution, without its tab bars:
// SVG and PDF keep lines and text as vectors (the text stays text: it can be searched and
// copied), the matrices' heatmaps as images; PNG at the screen's pixel ratio. `title` names the
// drawing in SVG and PDF.
QByteArray renderView(QWidget& view, ViewFileFormat format, const QString& title);
bool exportView(QWidget& view, const QString& file, const QString& title, QString* error);

// The frame's state, as core's stepDataJson() writes it for the frame's scene and step.
QByteArray stepDataBytes(const Frame& frame, StepDataFormat format);
bool exportStepData(const Frame& frame, const QString& file, QString* error);

} // namespace flashviz::gui
