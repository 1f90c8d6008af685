// flashviz: the application. Everything it shows is built in the libraries of app/gui
// (flashviz_gui_shell and what it links).
#include "session/controller.h"
#include "shell/animation_recorder.h"
#include "shell/command_line.h"
#include "shell/main_window.h"

#include "core/errors.h"
#include "core/setup.h"

#include <QApplication>
#include <QEventLoop>
#include <QRegularExpression>
#include <QTimer>

#include <cstdio>
#include <optional>
#include <unistd.h>

namespace {

void setIdentity() {
    QCoreApplication::setOrganizationName(QStringLiteral("FlashViz"));
    QCoreApplication::setApplicationName(QStringLiteral("flashviz"));
    QCoreApplication::setApplicationVersion(QStringLiteral(FLASHVIZ_VERSION));
}

// Qt's own options (-platform, -style, …) are spelt with one dash; only QApplication knows them.
bool hasQtOption(const QStringList& arguments) {
    static const QRegularExpression qtStyle(QStringLiteral("^-[A-Za-z]{2,}"));
    for (qsizetype i = 1; i < arguments.size(); ++i)
        if (qtStyle.match(arguments[i]).hasMatch()) return true;
    return false;
}

// --help, --version and a command line that cannot be used are answered before a QApplication
// looks for a display, so that they work on a terminal without one. Returns the exit code then.
std::optional<int> answerWithoutDisplay(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    setIdentity();
    const QStringList arguments = QCoreApplication::arguments();
    const flashviz::gui::CommandLine command = flashviz::gui::parseCommandLine(arguments);
    if (command.exitNow) {
        std::fputs(qPrintable(command.output), stdout);
        return 0;
    }
    if (!command.error.isEmpty() && !hasQtOption(arguments)) {
        std::fprintf(stderr, "flashviz: %s\n", qPrintable(command.error));
        return flashviz::gui::kExitRefused;
    }
    return std::nullopt;
}

// --step names a step of the run the window starts on, once it is built: one it does not have
// is refused (as flashviz-cli refuses it), not shown as the nearest. Returns the message.
QString refusedStartStep(const flashviz::gui::Scene& scene, const QString& step) {
    try {
        (void)flashviz::resolveStepOption(step.toStdString(), scene.stepCount(),
                                          [&scene] { return scene.firstRescaleStep; });
    } catch (const flashviz::EngineError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

// The same check for a window already on screen (a large start builds for seconds, with its
// progress and Cancel in view): on the first scene built, a refused step ends the program.
void refuseStartStepOnceBuilt(flashviz::gui::MainWindow& window, const QString& step) {
    if (step.isEmpty()) return;
    auto* controller = window.controller();
    auto check = [controller, step] {
        const auto scene = controller->scene();
        if (!scene) return false;
        if (const QString refused = refusedStartStep(*scene, step); !refused.isEmpty()) {
            std::fprintf(stderr, "flashviz: %s\n", qPrintable(refused));
            QCoreApplication::exit(flashviz::gui::kExitRefused);
        }
        return true;
    };
    // From the event loop: QCoreApplication::exit() before exec() would be lost.
    if (!controller->isBusy() && controller->scene()) {
        QTimer::singleShot(0, controller, [check] { check(); });
        return;
    }
    auto* once = new QObject(controller);
    QObject::connect(controller, &flashviz::gui::Controller::sceneChanged, once, [check, once] {
        if (check()) once->deleteLater();
    });
}

// --export: records the animation from the window's state (the window itself never shown) and
// returns the exit status; the frames are counted on a terminal.
int exportAnimation(flashviz::gui::MainWindow& window, const flashviz::gui::CommandLine& command) {
    if (!window.waitUntilIdle()) {
        std::fprintf(stderr, "flashviz: the computation did not finish in time\n");
        return 1;
    }
    flashviz::gui::AnimationRecorder recorder;
    QEventLoop loop;
    bool written = false;
    QObject::connect(&recorder, &flashviz::gui::AnimationRecorder::finished, &loop,
                     [&loop, &written](bool ok, const QString& message) {
                         written = ok;
                         std::fprintf(ok ? stdout : stderr, "%s%s\n",
                                      ok ? "" : "flashviz: ", qPrintable(message));
                         loop.quit();
                     });
    if (isatty(fileno(stderr)))
        QObject::connect(&recorder, &flashviz::gui::AnimationRecorder::progress, &loop,
                         [](int done, int total) {
                             std::fprintf(stderr, "\rframe %d of %d", done, total);
                             if (done == total) std::fputc('\n', stderr);
                         });
    QString error;
    if (!recorder.start(window, *command.animation, &error)) {
        std::fprintf(stderr, "flashviz: %s\n", qPrintable(error));
        return 1;
    }
    loop.exec();
    if (!written) return 1;
    return command.backendFellBack ? flashviz::gui::kExitBackendFellBack : 0;
}

} // namespace

int main(int argc, char** argv) {
    if (const std::optional<int> answered = answerWithoutDisplay(argc, argv)) return *answered;
    QApplication app(argc, argv);
    setIdentity();
    const flashviz::gui::CommandLine command =
        flashviz::gui::parseCommandLine(QApplication::arguments());
    if (!command.error.isEmpty()) {
        std::fprintf(stderr, "flashviz: %s\n", qPrintable(command.error));
        return flashviz::gui::kExitRefused;
    }
    if (command.exitNow) {
        std::fputs(qPrintable(command.output), stdout);
        return 0;
    }
    if (!command.warning.isEmpty())
        std::fprintf(stderr, "flashviz: %s\n", qPrintable(command.warning));
    flashviz::gui::MainWindow window(command.start);
    if (command.animation) return exportAnimation(window, command);
    if (!command.screenshot.isEmpty()) {
        const auto scene = window.waitUntilIdle() ? window.controller()->scene() : nullptr;
        if (const QString refused =
                scene ? refusedStartStep(*scene, command.start.step) : QString();
            !command.start.step.isEmpty() && !refused.isEmpty()) {
            std::fprintf(stderr, "flashviz: %s\n", qPrintable(refused));
            return flashviz::gui::kExitRefused;
        }
        window.resize(command.size);
        window.show();
        QString error;
        if (!flashviz::gui::saveScreenshot(window, command.screenshot, &error)) {
            std::fprintf(stderr, "flashviz: %s\n", qPrintable(error));
            return 1;
        }
        std::printf("%s\n", qPrintable(command.screenshot));
        return command.backendFellBack ? flashviz::gui::kExitBackendFellBack : 0;
    }
    if (command.start.lecture)
        window.showFullScreen();
    else
        flashviz::gui::showWithinScreen(window);
    refuseStartStepOnceBuilt(window, command.start.step);
    if (command.start.play) window.controller()->play();
    return QApplication::exec();
}
