#include "command_line.h"

#include "kernels/backend_registry.h"

#include <QCommandLineParser>

namespace flashviz::gui {

CommandLine parseCommandLine(const QStringList& arguments) {
    CommandLine out;
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QObject::tr("FlashViz: how FlashAttention computes exact attention, tile by tile."));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    QStringList presetIds;
    for (const Preset& p : presets())
        presetIds << p.id;
    const QCommandLineOption preset(
        QStringLiteral("preset"),
        QObject::tr("Start from a preset: %1.").arg(presetIds.join(QStringLiteral(", "))),
        QStringLiteral("name"));
    const QCommandLineOption step(
        QStringLiteral("step"),
        QObject::tr("Start at this step (a number, 'end' or 'first-rescale')."),
        QStringLiteral("step"));
    const QCommandLineOption lecture(QStringLiteral("lecture"),
                                     QObject::tr("Start in lecture mode."));
    const QCommandLineOption chapter(QStringLiteral("chapter"),
                                     QObject::tr("Lecture chapter to start at (1 = first)."),
                                     QStringLiteral("n"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QObject::tr("Render the window at that state to a PNG and exit."), QStringLiteral("file"));
    const QCommandLineOption size(QStringLiteral("size"),
                                  QObject::tr("Window size for --screenshot (default 1920x1080)."),
                                  QStringLiteral("WxH"));
    const QCommandLineOption bug(QStringLiteral("bug"),
                                 QObject::tr("Switch the rescale off (the bug)."));
    const QCommandLineOption analysis(QStringLiteral("analysis"),
                                      QObject::tr("Open the analysis page at chart n (1 = first)."),
                                      QStringLiteral("n"));
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
    parser.addOptions({preset, step, lecture, chapter, screenshot, size, bug, analysis, transition,
                       backendValues, play, noRestore, backend});
    if (!parser.parse(arguments)) {
        out.error = parser.errorText();
        return out;
    }
    if (parser.isSet(help)) {
        out.exitNow = true;
        out.output = parser.helpText();
        return out;
    }
    if (parser.isSet(version)) {
        out.exitNow = true;
        out.output = QStringLiteral("flashviz %1\n").arg(QCoreApplication::applicationVersion());
        return out;
    }
    StartOptions& s = out.start;
    s.preset = parser.value(preset);
    if (!s.preset.isEmpty() && !findPreset(s.preset)) {
        out.error = QObject::tr("Unknown preset '%1'; known presets: %2")
                        .arg(s.preset, presetIds.join(QStringLiteral(", ")));
        return out;
    }
    s.step = parser.value(step);
    if (!s.step.isEmpty()) {
        bool ok = false;
        const int n = s.step.toInt(&ok);
        if ((ok && n < 0) || (!ok && s.step != QLatin1String("end") &&
                              !s.step.startsWith(QLatin1String("first-rescale")))) {
            out.error =
                QObject::tr("--step takes a step number, 'end' or 'first-rescale' (got '%1')")
                    .arg(s.step);
            return out;
        }
    }
    s.lecture = parser.isSet(lecture);
    if (parser.isSet(chapter)) {
        bool ok = false;
        const int n = parser.value(chapter).toInt(&ok);
        if (!ok || n < 1) {
            out.error = QObject::tr("--chapter takes a chapter number from 1 (got '%1')")
                            .arg(parser.value(chapter));
            return out;
        }
        s.chapter = n - 1;
        s.lecture = true;
    }
    s.bug = parser.isSet(bug);
    if (parser.isSet(backend)) {
        s.backend = parseBackendKind(parser.value(backend).toStdString());
        if (!s.backend) {
            out.error = QObject::tr("--backend takes cpu or cuda (got '%1')").arg(parser.value(backend));
            return out;
        }
    }
    s.backendValues = parser.isSet(backendValues);
    s.play = parser.isSet(play);
    if (parser.isSet(analysis)) {
        bool ok = false;
        const int n = parser.value(analysis).toInt(&ok);
        if (!ok || n < 1) {
            out.error = QObject::tr("--analysis takes a chart number from 1 (got '%1')")
                            .arg(parser.value(analysis));
            return out;
        }
        s.analysisChart = n - 1;
    }
    if (parser.isSet(transition)) {
        bool ok = false;
        const double t = parser.value(transition).toDouble(&ok);
        if (!ok || t < 0 || t > 1) {
            out.error = QObject::tr("--transition takes a number from 0 to 1 (got '%1')")
                            .arg(parser.value(transition));
            return out;
        }
        s.transition = t;
    }
    out.screenshot = parser.value(screenshot);
    if (parser.isSet(size)) {
        const QStringList parts = parser.value(size).split(QLatin1Char('x'));
        bool okW = false, okH = false;
        const int w = parts.size() == 2 ? parts[0].toInt(&okW) : 0;
        const int h = parts.size() == 2 ? parts[1].toInt(&okH) : 0;
        if (!okW || !okH || w < 320 || h < 240 || w > 8192 || h > 8192) {
            out.error = QObject::tr("--size takes WIDTHxHEIGHT, e.g. 1600x1000 (got '%1')")
                            .arg(parser.value(size));
            return out;
        }
        out.size = QSize(w, h);
    }
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
