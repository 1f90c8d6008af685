// flashviz: the application. Everything it shows is built in flashviz_gui_lib.
#include "command_line.h"
#include "controller.h"
#include "main_window.h"

#include <QApplication>

#include <cstdio>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("FlashViz"));
    QApplication::setApplicationName(QStringLiteral("flashviz"));
    QApplication::setApplicationVersion(QStringLiteral(FLASHVIZ_VERSION));
    const flashviz::gui::CommandLine command =
        flashviz::gui::parseCommandLine(QApplication::arguments());
    if (!command.error.isEmpty()) {
        std::fprintf(stderr, "flashviz: %s\n", qPrintable(command.error));
        return 2;
    }
    if (command.exitNow) {
        std::fputs(qPrintable(command.output), stdout);
        return 0;
    }
    flashviz::gui::MainWindow window(command.start);
    if (!command.screenshot.isEmpty()) {
        window.resize(command.size);
        window.show();
        QString error;
        if (!flashviz::gui::saveScreenshot(window, command.screenshot, &error)) {
            std::fprintf(stderr, "flashviz: %s\n", qPrintable(error));
            return 1;
        }
        std::printf("%s\n", qPrintable(command.screenshot));
        return 0;
    }
    if (command.start.lecture)
        window.showFullScreen();
    else
        flashviz::gui::showWithinScreen(window);
    if (command.start.play) window.controller()->play();
    return QApplication::exec();
}
