// The File menu's exports (MainWindow's members): the view as SVG, PDF or PNG and the step's data
// (shell/view_export.h), the animation through the dialog (shell/export_dialog.h) and the
// recorder (shell/animation_recorder.h), its progress and Cancel in the status bar.
#include "shell/animation_recorder.h"
#include "shell/export_dialog.h"
#include "shell/main_window.h"
#include "shell/view_export.h"

#include "lecture/lecture.h"
#include "session/controller.h"
#include "session/scene.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

namespace flashviz::gui {

namespace {

// Where a file dialog first offers to save: the user's folder for the kind, else the home.
QString defaultPath(QStandardPaths::StandardLocation location, const QString& name) {
    const QString folder = QStandardPaths::writableLocation(location);
    return QDir(QFileInfo::exists(folder) ? folder : QDir::homePath()).filePath(name);
}

} // namespace

void MainWindow::buildExportActions(QMenu* file) {
    const auto add = [this, file](const QString& text, const QKeySequence& key, auto slot) {
        auto* a = new QAction(text, this);
        if (!key.isEmpty()) a->setShortcut(key);
        a->setShortcutContext(Qt::WindowShortcut);
        connect(a, &QAction::triggered, this, slot);
        addAction(a); // the shortcut works in lecture mode too, where the menus are hidden
        file->addAction(a);
        return a;
    };
    add(tr("Export view as SVG / PDF / PNG…"), QKeySequence(Qt::CTRL | Qt::Key_E),
        [this] { exportViewInteractively(); });
    add(tr("Export animation…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E),
        [this] { exportAnimationInteractively(); });
    add(tr("Export step data as CSV / JSON…"), QKeySequence(),
        [this] { exportStepDataInteractively(); });

    m_exportProgress = new QProgressBar;
    m_exportProgress->setObjectName(QStringLiteral("exportProgress"));
    m_exportProgress->hide();
    m_exportCancel = new QPushButton(tr("Cancel export"));
    m_exportCancel->setObjectName(QStringLiteral("exportCancel"));
    m_exportCancel->hide();
    connect(m_exportCancel, &QPushButton::clicked, this, [this] {
        if (!m_recorder || !m_recorder->isRunning()) return;
        m_exportCancelled = true;
        m_recorder->cancel();
    });
    statusBar()->addPermanentWidget(m_exportProgress);
    statusBar()->addPermanentWidget(m_exportCancel);
}

QWidget* MainWindow::exportedView() const {
    if (isLectureMode()) return m_lecture;
    // The step page as the animation's step view draws it: the check, the views and playback.
    if (m_tabs->currentIndex() == 0) return m_stack->widget(0);
    return m_tabs->currentWidget();
}

void MainWindow::showExportError(const QString& title, const QString& message) {
    // Not exec(): an export that fails while the window plays on must not stop its event loop.
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("exportError"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::exportViewInteractively() {
    const QString step = QString::number(m_controller->step());
    QString filter;
    const QString file = withFilterExtension(
        QFileDialog::getSaveFileName(
            this, tr("Export view"),
            defaultPath(QStandardPaths::PicturesLocation,
                        QStringLiteral("flashviz-step-%1.svg").arg(step)),
            tr("SVG drawing (*.svg);;PDF document (*.pdf);;PNG image (*.png)"), &filter),
        filter);
    if (file.isEmpty()) return;
    if (!waitUntilIdle()) {
        showExportError(tr("Export view"), tr("The computation did not finish in time"));
        return;
    }
    const auto scene = m_controller->scene();
    const QString title = scene ? tr("FlashViz · %1 · step %2 of %3")
                                      .arg(describeSettings(scene->settings), step)
                                      .arg(scene->stepCount())
                                : windowTitle();
    QString error;
    if (!exportView(*exportedView(), file, title, &error))
        showExportError(tr("Export view"), error);
    else
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(file)), 10000);
}

void MainWindow::exportStepDataInteractively() {
    if (!waitUntilIdle() || !m_controller->frame()) {
        showExportError(tr("Export step data"), tr("The step is still being computed"));
        return;
    }
    const std::shared_ptr<const Frame> frame = m_controller->frame();
    QString filter;
    const QString file = withFilterExtension(
        QFileDialog::getSaveFileName(
            this, tr("Export step data"),
            defaultPath(QStandardPaths::DocumentsLocation,
                        QStringLiteral("flashviz-step-%1.json").arg(frame->step)),
            tr("JSON (*.json);;CSV, one value a line (*.csv)"), &filter),
        filter);
    if (file.isEmpty()) return;
    QString error;
    if (!exportStepData(*frame, file, &error))
        showExportError(tr("Export step data"), error);
    else
        statusBar()->showMessage(
            tr("Wrote step %1 to %2").arg(frame->step).arg(QDir::toNativeSeparators(file)), 10000);
}

ExportAnimationDialog* MainWindow::exportAnimationDialog() {
    if (!m_exportDialog) {
        QStringList titles;
        for (const LectureChapter& chapter : lectureChapters())
            titles << chapter.title;
        const AnimationSceneSource scenes = [this](AnimationView view,
                                                   int chapter) -> AnimationSceneOrigin {
            // The scene on screen is the one recorded: the window's, or the chapter shown.
            if (view == AnimationView::Step || (isLectureMode() && chapter == m_lecture->chapter()))
                return {m_controller->scene(), std::nullopt};
            const auto& chapters = lectureChapters();
            if (chapter < 0 || chapter >= int(chapters.size())) return {};
            return {nullptr, m_lecture->chapterSettings(chapters[std::size_t(chapter)])};
        };
        m_exportDialog = new ExportAnimationDialog(titles, scenes, this);
        AnimationRequest request;
        request.file = defaultPath(QStandardPaths::MoviesLocation, QStringLiteral("flashviz.mp4"));
        m_exportDialog->setRequest(request);
    }
    // The last request, in the view of the mode the window is in now: lecture mode offers the
    // chapter on screen and its clicks.
    AnimationRequest request = m_exportDialog->request();
    if (isLectureMode()) {
        if (request.view != AnimationView::Lecture) request.range = AnimationRange::Chapter;
        request.view = AnimationView::Lecture;
        request.chapter = m_lecture->chapter();
    } else {
        request.view = AnimationView::Step;
        if (request.range == AnimationRange::Chapter) request.range = AnimationRange::WholeRun;
    }
    m_exportDialog->setRequest(request);
    return m_exportDialog;
}

void MainWindow::exportAnimationInteractively() {
    ExportAnimationDialog* dialog = exportAnimationDialog();
    if (dialog->exec() != QDialog::Accepted) return;
    const QString error = startAnimationExport(dialog->request());
    if (!error.isEmpty()) showExportError(tr("Export animation"), error);
}

QString MainWindow::startAnimationExport(const AnimationRequest& request) {
    if (!m_recorder) {
        m_recorder = new AnimationRecorder(this);
        connect(m_recorder, &AnimationRecorder::progress, this, [this](int done, int total) {
            m_exportProgress->setRange(0, total);
            m_exportProgress->setValue(done);
        });
        connect(m_recorder, &AnimationRecorder::finished, this,
                &MainWindow::onAnimationExportFinished);
    }
    if (m_recorder->isRunning())
        return tr("An animation is being exported already; cancel it or wait for it to finish");
    QString error;
    if (!m_recorder->start(*this, request, &error)) return error;
    m_exportCancelled = false;
    m_exportProgress->setRange(0, 0); // busy until the recorder has counted the frames
    m_exportProgress->setFormat(tr("%1: %v / %m frames").arg(QFileInfo(request.file).fileName()));
    // Room for the format at its widest (the frame count is known only once the scene is built).
    m_exportProgress->setMinimumWidth(
        m_exportProgress->fontMetrics().horizontalAdvance(
            m_exportProgress->format()
                .replace(QLatin1String("%v"), QLatin1String("00000"))
                .replace(QLatin1String("%m"), QLatin1String("00000"))) +
        48);
    m_exportProgress->show();
    m_exportCancel->show();
    return {};
}

void MainWindow::onAnimationExportFinished(bool ok, const QString& message) {
    m_exportProgress->hide();
    m_exportCancel->hide();
    if (ok || m_exportCancelled)
        statusBar()->showMessage(message, 20000);
    else
        showExportError(tr("Export animation"), message);
    m_exportCancelled = false;
}

} // namespace flashviz::gui
