#pragma once
// Everything the user can set, as one value: the problem, the algorithm and its switches, the
// hardware drawn and the backend that computes. Presets, the command line, lecture chapters and
// QSettings all produce or store one of these.
#include "core/options.h"
#include "core/problem.h"
#include "kernels/backend_registry.h"

#include <QJsonObject>
#include <QString>

#include <optional>
#include <string>
#include <vector>

class QSettings;

namespace flashviz::gui {

struct VizSettings {
    ProblemSpec spec;
    FlashOptions options;
    Algorithm algorithm = Algorithm::Flash;
    std::string hardwareId = "a100-40gb";
    BackendKind backend = BackendKind::Cpu;

    // A switch that makes the output wrong (the rescale bug, no running max).
    bool hasBug() const { return !options.rescale || !options.runningMax; }
    bool operator==(const VizSettings&) const = default;
};

// The explainer's toy: 8 tokens, d = 4, 4 x 4 tiles, gaussian inputs, a fixed seed, flash on the
// CPU.
VizSettings toySettings();

// Reads the fields present in `json` on top of `base`. Throws EngineError(InvalidArgument) for an
// unknown name (pattern, algorithm, ...), naming the field.
VizSettings settingsFromJson(const QJsonObject& json, const VizSettings& base);
QJsonObject settingsToJson(const VizSettings& settings);

void saveSettings(QSettings& store, const VizSettings& settings);
// What was saved, or nullopt when nothing (or nothing readable) was.
std::optional<VizSettings> loadSettings(QSettings& store);

// The hardware profile a settings value names: the built-in ones and "this GPU" when present.
std::vector<HardwareProfile> availableHardware();
HardwareProfile hardwareFor(const VizSettings& settings); // throws EngineError for unknown ids

// One line naming the problem: "flash · n 8 · d 4 · 4×4 tiles · gaussian · seed 1".
QString describeSettings(const VizSettings& settings);

struct Preset {
    QString id;
    QString title;
    QString description;
    VizSettings settings;
    QString step; // "", a number, "end" or "first-rescale"
};
// Presets shipped in resources/presets.json.
const std::vector<Preset>& presets();
const Preset* findPreset(const QString& id);

} // namespace flashviz::gui
