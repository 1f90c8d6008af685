#pragma once
// The input designer's rows in the settings (and so in sessions): the key "inputDesign",
//
//   "inputDesign": {"blockSize": 4, "rows": [[1, 8], [2, 8, 3], ...]}   or   null (no design)
//
// "rows" is a list of runs, one query row after another: [keyBlock, sharpness] is one row,
// [keyBlock, sharpness, repeat] that row `repeat` times (the writer merges equal neighbours, so a
// design of one block is one entry at any n). keyBlock is a whole number from 0, sharpness a
// number from kMinSharpness to kMaxSharpness (core/input_design.h), repeat a whole number from 1;
// at most kMaxSequenceLength rows in all. Whether the rows fit the problem (one per query, each
// block seen by its row) is the engine's validation, as for every other setting.
#include "core/inputs.h"

#include <QJsonValue>

#include <optional>

namespace flashviz::gui {

// Throws EngineError(InvalidArgument) naming the field ("inputDesign.rows[3]: ...") and what is
// allowed.
std::optional<InputDesign> inputDesignFromJson(const QJsonValue& value);
QJsonValue inputDesignToJson(const std::optional<InputDesign>& design);

} // namespace flashviz::gui
