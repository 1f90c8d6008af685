#include "shell/command_line.h"

#include "lecture/lecture.h"
#include "pages/analysis/analysis_charts.h"
#include "session/scene.h"

#include "core/errors.h"
#include "core/setup.h"
#include "core/steps.h"
#include "kernels/backend_registry.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <cmath>

namespace flashviz::gui {

namespace {

// --size for --screenshot: the window's own size, up to 8K (an --export frame has the
// recorder's limits, kAnimationMinSize to kAnimationMaxSize).
constexpr QSize kScreenshotMinSize{320, 240};
constexpr QSize kScreenshotMaxSize{8192, 8192};
constexpr QSize kScreenshotExampleSize{1600, 1000}; // the window's first size

// A whole number written plainly (digits, an optional leading '-'; no spaces, no '+', nothing
// after), within [lowest, highest]; std::nullopt otherwise.
std::optional<qint64> wholeNumber(const QString& text, qint64 lowest, qint64 highest) {
    static const QRegularExpression digits(QStringLiteral("^-?[0-9]{1,18}$"));
    if (!digits.match(text).hasMatch()) return std::nullopt;
    const qint64 value = text.toLongLong();
    if (value < lowest || value > highest) return std::nullopt;
    return value;
}

// A finite number (no nan, no inf, nothing after it) within [lowest, highest].
std::optional<double> finiteNumber(const QString& text, double lowest, double highest) {
    if (text != text.trimmed()) return std::nullopt;
    bool ok = false;
    const double value = text.toDouble(&ok);
    if (!ok || !std::isfinite(value) || value < lowest || value > highest) return std::nullopt;
    return value;
}

// The problem options, named, explained and checked by core as flashviz-cli's (core/setup.h).
void addProblemOptions(QCommandLineParser& parser) {
    for (const ProblemOption& o : problemOptions()) {
        QString help = QString::fromStdString(o.help);
        help[0] = help[0].toUpper();
        if (!o.toyDefault.empty())
            help += QStringLiteral(" (toy: %1)").arg(QString::fromStdString(o.toyDefault));
        help += QLatin1Char('.');
        const QString name = QString::fromStdString(o.name);
        parser.addOption(o.valueName.empty()
                             ? QCommandLineOption(name, help)
                             : QCommandLineOption(name, help, QString::fromStdString(o.valueName)));
    }
}

// The problem options given, read over the preset's settings or the toy into out.start.problem;
// false, with out.error set, when core refuses one.
bool readProblem(const QCommandLineParser& parser, CommandLine& out) {
    GivenOptions given;
    for (const ProblemOption& o : problemOptions()) {
        const QString name = QString::fromStdString(o.name);
        if (parser.isSet(name))
            given[o.name] = o.valueName.empty() ? std::string() : parser.value(name).toStdString();
    }
    if (given.empty()) return true;
    const Preset* preset = findPreset(out.start.preset);
    const VizSettings base = preset ? preset->settings : toySettings();
    try {
        out.start.problem =
            readProblemOptions(given, RunSetup{base.spec, base.options, base.algorithm});
        // The window saves its settings and sessions: keep the files' paths absolute there, so
        // that they still name the same files when the window starts in another folder.
        if (std::optional<InputFiles>& files = out.start.problem->spec.files)
            for (std::string* path : {&files->q, &files->k, &files->v, &files->upstream})
                if (!path->empty())
                    *path = QFileInfo(QString::fromStdString(*path)).absoluteFilePath().toStdString();
        VizSettings settings = base;
        settings.spec = out.start.problem->spec;
        settings.options = out.start.problem->options;
        settings.algorithm = out.start.problem->algorithm;
        settings.backend = BackendKind::Cpu; // the backend's own check is fallBackWhenMissing's
        (void)validateForWindow(settings);   // the window's own limits (n, tiles, memory)
    } catch (const EngineError& e) {
        out.error = QString::fromUtf8(e.what());
        return false;
    }
    return true;
}

// A backend that is not here (a CUDA build without a device, a CPU build) is replaced by the CPU,
// with a warning; the window then runs as asked otherwise.
void fallBackWhenMissing(CommandLine& out) {
    for (const BackendAvailability& b : listBackends())
        if (b.kind == out.start.backend && !b.available) {
            out.warning =
                QObject::tr("--backend %1: the %2 backend is not available here (%3); "
                            "the CPU computes instead")
                    .arg(QString::fromLatin1(toString(b.kind)), QString::fromStdString(b.name),
                         QString::fromStdString(b.reason));
            out.start.backend = BackendKind::Cpu;
            out.backendFellBack = true;
        }
}

// What --help-all adds to --help: the options QApplication itself reads (spelt with one dash).
QString qtOptionsHelp() {
    return QObject::tr(
        "\nQt's own options (one dash), read by QApplication before the above:\n"
        "  -platform <name>     The windowing platform: xcb, wayland, offscreen, ...\n"
        "  -style <style>       The widget style.\n"
        "  -stylesheet <file>   A Qt style sheet.\n"
        "  -reverse             Lay the window out right to left.\n"
        "  -qwindowgeometry <g> The window's geometry, e.g. 1600x1000+0+0.\n"
        "  -display <name>      The X display (xcb).\n");
}

// --export FILE and the options that shape its animation; their limits and defaults are
// shell/animation_recorder.h's.
struct ExportOptions {
    QCommandLineOption file{
        QStringLiteral("export"),
        QObject::tr("Record an animation of the steps to the file (.mp4 H.264, .gif, .webp: by the "
                    "extension) and exit; the step view, or with --lecture the chapter's slide. "
                    "Headless with -platform offscreen."),
        QStringLiteral("file")};
    QCommandLineOption from{
        QStringLiteral("from"),
        QObject::tr("--export: the first step, as --step takes it (default 0; with --lecture "
                    "and neither --from nor --to: the chapter's beats)."),
        QStringLiteral("step")};
    QCommandLineOption to{QStringLiteral("to"),
                          QObject::tr("--export: the last step, as --step takes it (default end)."),
                          QStringLiteral("step")};
    QCommandLineOption fps{QStringLiteral("fps"),
                           QObject::tr("--export: frames per second, %1 to %2 (default %3).")
                               .arg(kAnimationMinFps)
                               .arg(kAnimationMaxFps)
                               .arg(kAnimationDefaultFps),
                           QStringLiteral("n")};
    QCommandLineOption framesPerStep{
        QStringLiteral("frames-per-step"),
        QObject::tr("--export: frames for each step, the tile movements in between, %1 to %2 "
                    "(default %3).")
            .arg(kAnimationMinFramesPerStep)
            .arg(kAnimationMaxFramesPerStep)
            .arg(kAnimationDefaultFramesPerStep),
        QStringLiteral("n")};
    QList<QCommandLineOption> all() const { return {file, from, to, fps, framesPerStep}; }
};

// A whole number option of --export within [lowest, highest]; false with out.error otherwise.
bool readWholeOption(const QCommandLineParser& parser, const QCommandLineOption& option, int lowest,
                     int highest, int& value, CommandLine& out) {
    if (!parser.isSet(option)) return true;
    const auto n = wholeNumber(parser.value(option), lowest, highest);
    if (!n) {
        out.error = QObject::tr("--%1 takes a whole number from %2 to %3 (got '%4')")
                        .arg(option.names().constFirst())
                        .arg(lowest)
                        .arg(highest)
                        .arg(parser.value(option));
        return false;
    }
    value = int(*n);
    return true;
}

// --export's request, checked as the window's dialog checks it (validateAnimationRequest); the
// options that only shape an animation are refused without it.
bool readExport(const QCommandLineParser& parser, const ExportOptions& options, CommandLine& out) {
    if (!parser.isSet(options.file)) {
        for (const QCommandLineOption& o : options.all())
            if (parser.isSet(o)) {
                out.error = QObject::tr("--%1 shapes an animation: give --export FILE too")
                                .arg(o.names().constFirst());
                return false;
            }
        return true;
    }
    if (parser.isSet(QStringLiteral("screenshot")) || parser.isSet(QStringLiteral("step"))) {
        out.error = QObject::tr("--export records the steps --from … --to …; it takes neither "
                                "--screenshot nor --step");
        return false;
    }
    AnimationRequest request;
    request.file = parser.value(options.file);
    request.view = out.start.lecture ? AnimationView::Lecture : AnimationView::Step;
    request.chapter = out.start.chapter;
    if (parser.isSet(options.from) || parser.isSet(options.to)) {
        request.range = AnimationRange::Steps;
        if (parser.isSet(options.from)) request.from = parser.value(options.from);
        if (parser.isSet(options.to)) request.to = parser.value(options.to);
    } else if (out.start.lecture) {
        request.range = AnimationRange::Chapter;
    }
    if (parser.isSet(QStringLiteral("size"))) request.size = out.size;
    if (!readWholeOption(parser, options.fps, kAnimationMinFps, kAnimationMaxFps, request.fps,
                         out) ||
        !readWholeOption(parser, options.framesPerStep, kAnimationMinFramesPerStep,
                         kAnimationMaxFramesPerStep, request.framesPerStep, out))
        return false;
    if (const QString bad = validateAnimationRequest(request); !bad.isEmpty()) {
        out.error = QStringLiteral("--export: %1").arg(bad);
        return false;
    }
    out.animation = request;
    // Like a screenshot: exactly what the command line asks for, and no trace left.
    out.start.restore = false;
    out.start.save = false;
    out.start.fullScreen = false;
    return true;
}

} // namespace

CommandLine parseCommandLine(const QStringList& arguments) {
    CommandLine out;
    QCommandLineParser parser;
    parser.setApplicationDescription(QObject::tr(
        "FlashViz: how FlashAttention computes exact attention, tile by tile.\n\n"
        "The problem options (--n to --keep-full-s) set the problem over the preset's settings\n"
        "(--preset), else over the explainer's toy, named, checked and explained as flashviz-cli\n"
        "takes them.\n\n"
        "Exit status: 0 done; 1 the screenshot or the animation could not be written (or the\n"
        "run lacks a step of --from/--to); 2 an option refused (the message names the valid\n"
        "range); 3 --screenshot or --export written, but the --backend asked for is not\n"
        "available here and the CPU computed it (stderr says why)."));
    const QCommandLineOption help = parser.addHelpOption();
    // --version alone: Qt's version option also takes -v, the short form of --v FILE.
    const QCommandLineOption version(QStringLiteral("version"),
                                     QObject::tr("Displays version information."));
    parser.addOption(version);
    QStringList presetIds;
    for (const Preset& p : presets())
        presetIds << p.id;
    const QCommandLineOption preset(
        QStringLiteral("preset"),
        QObject::tr("Start from a preset: %1.").arg(presetIds.join(QStringLiteral(", "))),
        QStringLiteral("name"));
    const QCommandLineOption step(
        QStringLiteral("step"),
        QObject::tr("Start at this step: a number, 'end' or 'first-rescale', either name "
                    "optionally followed by +K or -K; a step the run does not have is refused, "
                    "naming the steps it has."),
        QStringLiteral("step"));
    const QCommandLineOption lecture(QStringLiteral("lecture"),
                                     QObject::tr("Start in lecture mode."));
    const QCommandLineOption chapter(QStringLiteral("chapter"),
                                     QObject::tr("Lecture chapter to start at (1 = first)."),
                                     QStringLiteral("n"));
    const QCommandLineOption presenter(
        QStringLiteral("presenter"),
        QObject::tr("Start in lecture mode with the presenter view: the speaker notes, the next "
                    "step, the clock and the keys in a window of their own (on a second screen "
                    "when there is one)."));
    parser.addOption(presenter);
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QObject::tr("Render the window at that state to a PNG and exit."), QStringLiteral("file"));
    const QCommandLineOption size(
        QStringLiteral("size"),
        QObject::tr("Window size for --screenshot (default 1920x1080); frame size "
                    "for --export (default %1x%2, at most %3x%4).")
            .arg(kAnimationDefaultSize.width())
            .arg(kAnimationDefaultSize.height())
            .arg(kAnimationMaxSize.width())
            .arg(kAnimationMaxSize.height()),
        QStringLiteral("WxH"));
    const QCommandLineOption bug(QStringLiteral("bug"),
                                 QObject::tr("Switch the rescale off (the bug); for the "
                                             "backward, leave D out of dS."));
    const QCommandLineOption analysis(QStringLiteral("analysis"),
                                      QObject::tr("Open the analysis page at chart n (1 = first)."),
                                      QStringLiteral("n"));
    const QCommandLineOption versions(
        QStringLiteral("versions"),
        QObject::tr("Open the FlashAttention-2 page: what -2 changed from -1."));
    const QCommandLineOption hopper(
        QStringLiteral("hopper"),
        QObject::tr("Open the Hopper page: how a Hopper GPU runs FlashAttention (FlashAttention-3)."));
    const QCommandLineOption hopperTrace(
        QStringLiteral("hopper-trace"),
        QObject::tr("Open the Hopper page with the traces of this file (flashviz-cli hopper-trace "
                    "--out FILE)."),
        QStringLiteral("file"));
    const QCommandLineOption transition(
        QStringLiteral("transition"),
        QObject::tr("Hold the step's animation at t in [0, 1] (for screenshots)."),
        QStringLiteral("t"));
    const QCommandLineOption backendValues(
        QStringLiteral("backend-values"),
        QObject::tr("Show the backend's recorded per-tile values beside the engine's."));
    const QCommandLineOption play(QStringLiteral("play"),
                                  QObject::tr("Start playing at once (a demo on a kiosk)."));
    const QCommandLineOption noRestore(QStringLiteral("no-restore"),
                                       QObject::tr("Ignore the saved settings."));
    const QCommandLineOption backend(QStringLiteral("backend"),
                                     QObject::tr("Compute on this backend: cpu or cuda."),
                                     QStringLiteral("name"));
    const QCommandLineOption tensorCoreCheck(
        QLatin1String(kLowPrecisionCheckOption),
        QObject::tr("The backward on a GPU backend: its tensor-core gradient check, the kernels "
                    "on the inputs rounded to fp16 or bf16, or off (else the saved choice; %1 at "
                    "first).")
            .arg(QLatin1String(toString(kDefaultLowPrecision))),
        QStringLiteral("type"));
    const QCommandLineOption gpu(
        QStringLiteral("gpu"),
        QObject::tr("Draw against this GPU's hardware profile: its SRAM, HBM, L2 and rates "
                    "(flashviz-cli profiles lists them)."),
        QStringLiteral("id"));
    parser.addOptions({preset, step, lecture, chapter, screenshot, size, bug, analysis, versions,
                       hopper, hopperTrace, transition, backendValues, play, noRestore, backend,
                       tensorCoreCheck, gpu});
    addProblemOptions(parser);
    const ExportOptions exportOptions;
    parser.addOptions(exportOptions.all());
    parser.addPositionalArgument(
        QStringLiteral("session"),
        QObject::tr("A session (.%1) to open over the options above: its settings, step, tab, "
                    "chart, view options and lecture chapter. One that cannot be read is "
                    "reported, and the window starts without it.")
            .arg(QLatin1String(kSessionExtension)),
        QStringLiteral("[FILE.%1]").arg(QLatin1String(kSessionExtension)));
    if (!parser.parse(arguments)) {
        out.error = parser.errorText();
        return out;
    }
    if (parser.isSet(help) || parser.isSet(QStringLiteral("help-all"))) {
        out.exitNow = true;
        out.output = parser.helpText();
        if (parser.isSet(QStringLiteral("help-all"))) out.output += qtOptionsHelp();
        return out;
    }
    if (parser.isSet(version)) {
        out.exitNow = true;
        out.output = QStringLiteral("flashviz %1\n").arg(QCoreApplication::applicationVersion());
        return out;
    }
    StartOptions& s = out.start;
    if (const QStringList files = parser.positionalArguments(); files.size() > 1) {
        out.error = QObject::tr("flashviz opens one session at a time (got %1: %2)")
                        .arg(files.size())
                        .arg(files.join(QStringLiteral(", ")));
        return out;
    } else if (!files.isEmpty()) {
        s.session = files.front();
    }
    s.preset = parser.value(preset);
    if (!s.preset.isEmpty() && !findPreset(s.preset)) {
        out.error = QObject::tr("Unknown preset '%1'; known presets: %2")
                        .arg(s.preset, presetIds.join(QStringLiteral(", ")));
        return out;
    }
    s.step = parser.value(step);
    if (parser.isSet(step)) {
        try {
            (void)parseStepExpression(s.step.toStdString());
        } catch (const EngineError& e) {
            out.error = QStringLiteral("--step: %1").arg(QString::fromStdString(e.what()));
            return out;
        }
    }
    s.lecture = parser.isSet(lecture);
    if (parser.isSet(chapter)) {
        const qint64 chapters = qint64(lectureChapters().size());
        const auto n = wholeNumber(parser.value(chapter), 1, chapters);
        if (!n) {
            out.error = QObject::tr("--chapter takes a chapter number from 1 to %1 (got '%2')")
                            .arg(chapters)
                            .arg(parser.value(chapter));
            return out;
        }
        s.chapter = int(*n - 1);
        s.lecture = true;
    }
    s.presenter = parser.isSet(presenter);
    if (s.presenter && (parser.isSet(screenshot) || parser.isSet(exportOptions.file))) {
        out.error = QObject::tr("--presenter opens the lecturer's own window, which --screenshot "
                                "and --export do not draw; for the slide, give --lecture");
        return out;
    }
    if (s.presenter) s.lecture = true;
    if (!readProblem(parser, out)) return out;
    s.bug = parser.isSet(bug);
    if (parser.isSet(backend)) {
        s.backend = parseBackendKind(parser.value(backend).toStdString());
        if (!s.backend) {
            out.error =
                QString::fromStdString(unknownBackendMessage(parser.value(backend).toStdString()));
            return out;
        }
        fallBackWhenMissing(out);
    }
    if (parser.isSet(tensorCoreCheck)) {
        const std::string text = parser.value(tensorCoreCheck).toStdString();
        s.tensorCoreCheck = parseLowPrecisionCheck(text);
        if (!s.tensorCoreCheck) {
            out.error = QString::fromStdString(unknownLowPrecisionCheckMessage(text));
            return out;
        }
    }
    if (parser.isSet(gpu)) {
        VizSettings probe;
        probe.hardwareId = parser.value(gpu).toStdString();
        try {
            (void)hardwareFor(probe); // the same refusal, naming the profiles, as a saved id's
        } catch (const EngineError& e) {
            out.error = QStringLiteral("--gpu: %1").arg(QString::fromUtf8(e.what()));
            return out;
        }
        s.hardwareId = probe.hardwareId;
    }
    s.backendValues = parser.isSet(backendValues);
    s.play = parser.isSet(play);
    s.versionsPage = parser.isSet(versions);
    s.hopperPage = parser.isSet(hopper);
    s.hopperTrace = parser.value(hopperTrace);
    if (parser.isSet(analysis)) {
        const qint64 charts = analysisChartTitles().size();
        const auto n = wholeNumber(parser.value(analysis), 1, charts);
        if (!n) {
            out.error = QObject::tr("--analysis takes a chart number from 1 to %1 (got '%2')")
                            .arg(charts)
                            .arg(parser.value(analysis));
            return out;
        }
        s.analysisChart = int(*n - 1);
    }
    if (parser.isSet(transition)) {
        const auto t = finiteNumber(parser.value(transition), 0.0, 1.0);
        if (!t) {
            out.error = QObject::tr("--transition takes a number from 0 to 1 (got '%1')")
                            .arg(parser.value(transition));
            return out;
        }
        s.transition = *t;
    }
    out.screenshot = parser.value(screenshot);
    if (parser.isSet(screenshot)) {
        // Checked before any window exists: an empty name would open the interactive window,
        // a missing folder would be found only after the scene was built.
        const QFileInfo file(out.screenshot);
        if (out.screenshot.isEmpty()) {
            out.error = QObject::tr("--screenshot takes the name of a PNG file to write (got '')");
            return out;
        }
        if (file.isDir()) {
            out.error = QObject::tr("--screenshot takes a file name, but '%1' is a folder")
                            .arg(out.screenshot);
            return out;
        }
        if (!file.absoluteDir().exists()) {
            out.error = QObject::tr("--screenshot '%1': the folder '%2' does not exist")
                            .arg(out.screenshot, QDir::toNativeSeparators(file.absolutePath()));
            return out;
        }
    }
    if (parser.isSet(size)) {
        const bool animation = parser.isSet(exportOptions.file);
        const QSize lo = animation ? kAnimationMinSize : kScreenshotMinSize;
        const QSize hi = animation ? kAnimationMaxSize : kScreenshotMaxSize;
        const QSize example = animation ? kAnimationDefaultSize : kScreenshotExampleSize;
        const QStringList parts = parser.value(size).split(QLatin1Char('x'));
        const auto w =
            parts.size() == 2 ? wholeNumber(parts[0], lo.width(), hi.width()) : std::nullopt;
        const auto h =
            parts.size() == 2 ? wholeNumber(parts[1], lo.height(), hi.height()) : std::nullopt;
        if (!w || !h) {
            out.error = QObject::tr("--size takes WIDTHxHEIGHT from %1x%2 to %3x%4, e.g. %5x%6 "
                                    "(got '%7')")
                            .arg(lo.width())
                            .arg(lo.height())
                            .arg(hi.width())
                            .arg(hi.height())
                            .arg(example.width())
                            .arg(example.height())
                            .arg(parser.value(size));
            return out;
        }
        out.size = QSize(int(*w), int(*h));
    }
    if (!readExport(parser, exportOptions, out)) return out;
    if (!out.screenshot.isEmpty()) {
        // A screenshot shows exactly what the command line asks for and leaves no trace.
        s.restore = false;
        s.save = false;
        s.fullScreen = false;
        if (!s.transition) s.transition = 1.0;
    }
    if (parser.isSet(noRestore)) s.restore = false;
    return out;
}

} // namespace flashviz::gui
