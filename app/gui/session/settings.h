#pragma once
// Everything the user can set, as one value: the problem, the algorithm and its switches, the
// hardware drawn and the backend that computes. Presets, the command line, lecture chapters and
// QSettings all produce or store one of these.
#include "core/low_precision.h"
#include "core/options.h"
#include "core/problem.h"
#include "core/setup.h"
#include "kernels/backend_registry.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <vector>

class QSettings;

namespace flashviz::gui {

struct VizSettings {
    ProblemSpec spec;
    FlashOptions options;
    Algorithm algorithm = Algorithm::Flash;
    std::string hardwareId = kDefaultHardwareId;
    BackendKind backend = BackendKind::Cpu;
    // The backward on a GPU backend: its tensor-core kernels' gradient check, in this format or
    // none (RunRequest::lowPrecision; saved as "tensorCoreCheck": "fp16", "bf16" or "off").
    LowPrecisionCheck tensorCoreCheck = kDefaultLowPrecision;

    // A switch that makes the output wrong (the rescale bug, no running max, a backward bug;
    // the backward's forward runs with the forward's switches, so those break it too).
    bool hasBug() const {
        return !options.rescale || !options.runningMax ||
               (algorithm == Algorithm::Backward && options.backward.anyBug());
    }
    bool operator==(const VizSettings&) const = default;
};

// The bug the B key and the window's --bug switch: the forward's rescale, or for the backward the
// classic mistake, D left out of dS (the other backward bugs are the controls panel's).
bool isClassicBugOn(const VizSettings& settings);
void setClassicBug(VizSettings& settings, bool on);

// The explainer's toy (core's toySetup(), as the CLI's defaults), flash on the CPU.
VizSettings toySettings();

// Reads the fields present in `json` on top of `base`. Every field is read strictly: a whole
// number inside its range (n 8.5, 10^12 or 2^31 used to become 0), true/false, a known name
// (pattern, algorithm, hardware, ...); an unknown field is refused too. Throws
// EngineError(InvalidArgument) naming the field and the value for the first bad one, or, with
// `problems`, notes each bad one there and keeps its value from `base`.
VizSettings settingsFromJson(const QJsonObject& json, const VizSettings& base,
                             QStringList* problems = nullptr);
QJsonObject settingsToJson(const VizSettings& settings);

void saveSettings(QSettings& store, const VizSettings& settings);
// What was saved, or nullopt when nothing (or nothing readable) was. A field that cannot be
// read keeps the toy's value; each problem, naming the key and the field, goes to qWarning and
// to `problems`.
std::optional<VizSettings> loadSettings(QSettings& store, QStringList* problems = nullptr);

// Strict JSON readers shared by the settings, presets and lecture chapters. jsonInteger throws
// EngineError naming `name` and the value unless `v` is a whole number in [lo, hi];
// jsonExcerpt is a value as a message shows it (numbers as written, text cut at 40 characters).
qint64 jsonInteger(const QJsonValue& v, const QString& name, qint64 lo, qint64 hi);
QString jsonExcerpt(const QJsonValue& v);
// How every strict JSON reader refuses a value: EngineError(InvalidArgument) with `why`.
[[noreturn]] void refuseJson(const QString& why);
// The "version" of a versioned file (a session, the lecturer's notes), from 1 to `newest`; a whole
// number past it is refused as "This <what> was saved by a newer FlashViz (format version N; this
// one reads up to M)", anything else as jsonInteger() does. Read it before the other fields: a
// newer file may hold fields this build does not know.
int readFormatVersion(const QJsonObject& json, int newest, const QString& what);

// The hardware profile a settings value names: the built-in ones and "this GPU" when present.
std::vector<HardwareProfile> availableHardware();
HardwareProfile hardwareFor(const VizSettings& settings); // throws EngineError for unknown ids

// One line naming the problem: "flash · n 8 · d 4 · 4×4 tiles · gaussian · seed 1"; a backward
// run adds the switches on by their command-line names ("· no-row-dot").
QString describeSettings(const VizSettings& settings);

struct Preset {
    QString id;
    QString title;
    QString description;
    VizSettings settings;
    QString step; // "", a number, "end" or "first-rescale"
};
// The presets in a presets.json: each entry that reads (id, title, description, step, settings
// all checked, the settings as the engine would take them), and one message for each entry
// skipped, naming `source`, the entry and the field. Any bytes at all; never throws.
struct PresetsParse {
    std::vector<Preset> presets;
    QStringList errors;
};
PresetsParse parsePresets(const QByteArray& bytes, const QString& source);

// Presets shipped in resources/presets.json (a bad entry is skipped with a qWarning).
const std::vector<Preset>& presets();
const Preset* findPreset(const QString& id);

// Helpers for the byte parsers of presets and lecture chapters: the list `listKey` of a JSON
// object (nullopt with a message in `errors` for bytes that are not one); an entry's name for
// messages; a text field (required: present and not blank); an entry's "settings" read and
// validated as the engine would; unknown fields refused; a step expression checked. Throw
// EngineError naming the field.
std::optional<QJsonArray> jsonEntries(const QByteArray& bytes, const QString& source,
                                      const char* listKey, QStringList& errors);
QString jsonEntryName(const QJsonObject& entry, int index);
QString jsonText(const QJsonObject& entry, const char* key, bool required, qsizetype maxChars);
VizSettings jsonEntrySettings(const QJsonObject& entry);
void checkJsonKeys(const QJsonObject& entry, const QStringList& known);
void checkStepExpression(const QString& text, const char* key);

} // namespace flashviz::gui
