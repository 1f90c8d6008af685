#pragma once
// The .npy input files in the settings (and so in presets and sessions): the key "inputFiles",
//
//   "inputFiles": {"q": "/data/q.npy", "k": "/data/k.npy", "v": "/data/v.npy",
//                  "dO": "/data/do.npy", "head": 3}                      or   null (no files)
//
// "q", "k" and "v" are required, "dO" (the backward's upstream gradient) and "head" (the head of
// (h, n, d) files, 0 to kMaxNpyHeads - 1) optional. The files themselves are read by the settings
// reader (core's withInputFiles: the sizes are theirs), so a file gone or changed since is that
// field's problem, and the rest of the settings still load.
#include "core/inputs.h"

#include <QJsonValue>

#include <optional>

namespace flashviz::gui {

// The field's structure only; throws EngineError(InvalidArgument) naming the field
// ("inputFiles.head: ...") and what is allowed.
std::optional<InputFiles> inputFilesFromJson(const QJsonValue& value);
QJsonValue inputFilesToJson(const std::optional<InputFiles>& files);

} // namespace flashviz::gui
