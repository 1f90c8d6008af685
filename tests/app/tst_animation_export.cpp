// The animation export (shell/animation_recorder.h over export/animation_writer.h): MP4, GIF and
// WebP files read back by FFmpeg's own demuxers and decoders, not by the code that wrote them:
// codec, size, frame count, rate, duration, the first and last frames against the window's own
// render of those steps; the lecture's beats; cancel; the refusals; the window kept responsive
// and untouched; and `flashviz --export` run as a process.
#include "lecture/lecture.h"
#include "flashviz_process.h"
#include "session/controller.h"
#include "shell/animation_recorder.h"
#include "shell/command_line.h"
#include "shell/main_window.h"

#include "export/animation_writer.h"
#include "session/scene.h"

#include "core/problem.h"

#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QMenuBar>
#include <QProcess>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <cmath>
#include <memory>

using namespace flashviz::gui;

namespace {

constexpr QSize kSmall{320, 240};
constexpr int kFramesPerStep = 2;
constexpr int kFps = 10; // a whole number of GIF centiseconds per frame

StartOptions freshOptions() {
    StartOptions options;
    options.preset = QStringLiteral("toy");
    options.restore = false;
    options.save = false;
    options.fullScreen = false;
    return options;
}

// What FFmpeg reads in a file: its codec, size, frames, rate, duration, first and last pictures.
struct Decoded {
    QString error;
    QString codec;
    QSize size;
    int frames = 0;
    double averageFps = 0;
    double seconds = 0; // the packets' durations added up
    QImage first, last;
};

QImage toImage(const AVFrame* frame) {
    QImage image(frame->width, frame->height, QImage::Format_RGB32);
    SwsContext* scale =
        sws_getContext(frame->width, frame->height, AVPixelFormat(frame->format), frame->width,
                       frame->height, AV_PIX_FMT_RGB32, SWS_BICUBIC, nullptr, nullptr, nullptr);
    uint8_t* planes[1] = {image.bits()};
    const int strides[1] = {int(image.bytesPerLine())};
    sws_scale(scale, frame->data, frame->linesize, 0, frame->height, planes, strides);
    sws_freeContext(scale);
    return image;
}

Decoded decode(const QString& file) {
    Decoded out;
    AVFormatContext* format = nullptr;
    const QByteArray path = QFile::encodeName(file);
    if (avformat_open_input(&format, path.constData(), nullptr, nullptr) < 0) {
        out.error = QStringLiteral("cannot open");
        return out;
    }
    AVCodecContext* codec = nullptr;
    AVPacket* packet = av_packet_alloc();
    AVFrame* frame = av_frame_alloc();
    const AVCodec* decoder = nullptr;
    int index = -1;
    if (avformat_find_stream_info(format, nullptr) >= 0)
        index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (index >= 0 && decoder) {
        const AVStream* stream = format->streams[index];
        codec = avcodec_alloc_context3(decoder);
        avcodec_parameters_to_context(codec, stream->codecpar);
        if (avcodec_open2(codec, decoder, nullptr) < 0) out.error = QStringLiteral("no decoder");
        out.codec = QString::fromLatin1(avcodec_get_name(stream->codecpar->codec_id));
        out.size = QSize(stream->codecpar->width, stream->codecpar->height);
        out.averageFps = av_q2d(stream->avg_frame_rate);
        std::int64_t ticks = 0;
        auto receive = [&] {
            while (avcodec_receive_frame(codec, frame) >= 0) {
                if (out.frames == 0) out.first = toImage(frame);
                out.last = toImage(frame);
                ++out.frames;
                av_frame_unref(frame);
            }
        };
        while (out.error.isEmpty() && av_read_frame(format, packet) >= 0) {
            if (packet->stream_index == index) {
                ticks += packet->duration;
                avcodec_send_packet(codec, packet);
                receive();
            }
            av_packet_unref(packet);
        }
        avcodec_send_packet(codec, nullptr);
        receive();
        out.seconds = double(ticks) * av_q2d(stream->time_base);
    } else {
        out.error = QStringLiteral("no video stream");
    }
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&codec);
    avformat_close_input(&format);
    return out;
}

// The mean absolute difference of two pictures' channels, 0 … 255.
double meanDifference(const QImage& a, const QImage& b) {
    const QImage x = a.convertToFormat(QImage::Format_RGB32);
    const QImage y = b.scaled(a.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation)
                         .convertToFormat(QImage::Format_RGB32);
    double sum = 0;
    for (int row = 0; row < x.height(); ++row) {
        const auto* p = reinterpret_cast<const QRgb*>(x.constScanLine(row));
        const auto* q = reinterpret_cast<const QRgb*>(y.constScanLine(row));
        for (int col = 0; col < x.width(); ++col)
            sum += std::abs(qRed(p[col]) - qRed(q[col])) +
                   std::abs(qGreen(p[col]) - qGreen(q[col])) +
                   std::abs(qBlue(p[col]) - qBlue(q[col]));
    }
    return sum / (3.0 * x.width() * x.height());
}

// The step view as the audience sees it, drawn by a window of its own at a step, at rest: the
// window's step page without its menus, dock, tabs and status line, at the size the recorder draws
// (animationRenderSize: a frame smaller than the window can be is drawn larger, then scaled).
QImage renderStepView(int step, QSize size) {
    StartOptions options = freshOptions();
    options.step = QString::number(step);
    options.transition = 1.0;
    MainWindow window(options);
    window.setAttribute(Qt::WA_DontShowOnScreen);
    window.menuBar()->hide();
    window.statusBar()->hide();
    window.findChild<QDockWidget*>(QStringLiteral("settingsDock"))->hide();
    window.tabs()->tabBar()->hide();
    window.resize(size);
    window.show();
    window.resize(animationRenderSize(size, window.minimumSizeHint()));
    if (!window.waitUntilIdle()) return {};
    return window.grab().toImage();
}

// FLASHVIZ_EXPORT_DUMP=folder: the decoded and the reference pictures, to look at.
void dump(const QString& name, const QImage& image) {
    if (const QString folder = qEnvironmentVariable("FLASHVIZ_EXPORT_DUMP"); !folder.isEmpty())
        image.save(QDir(folder).filePath(name + QStringLiteral(".png")));
}

struct Outcome {
    bool ok = false;
    QString message;
};

// Records `request` from `source` and waits for finished().
Outcome record(const MainWindow& source, const AnimationRequest& request) {
    AnimationRecorder recorder;
    QSignalSpy finished(&recorder, &AnimationRecorder::finished);
    QString error;
    if (!recorder.start(source, request, &error)) return {false, error};
    if (!finished.wait(120000)) return {false, QStringLiteral("did not finish")};
    return {finished.at(0).at(0).toBool(), finished.at(0).at(1).toString()};
}

AnimationRequest smallRequest(const QString& file) {
    AnimationRequest request;
    request.file = file;
    request.range = AnimationRange::Steps;
    request.from = QStringLiteral("0");
    request.to = QStringLiteral("2");
    request.size = kSmall;
    request.framesPerStep = kFramesPerStep;
    request.fps = kFps;
    return request;
}

bool hasFormat(AnimationFormat format) {
    for (const AnimationFormatInfo& f : availableAnimationFormats())
        if (f.format == format) return true;
    return false;
}

// A float64 (rows, cols) matrix in NumPy's .npy format 1.0: the header padded to 64 bytes.
void writeNpy(const QString& path, int rows, int cols) {
    QByteArray header =
        QStringLiteral("{'descr': '<f8', 'fortran_order': False, 'shape': (%1, %2), }")
            .arg(rows)
            .arg(cols)
            .toLatin1();
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    QByteArray bytes("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 0xff);
    bytes += char(header.size() >> 8);
    bytes += header;
    for (int i = 0; i < rows * cols; ++i) {
        const double value = std::sin(0.7 * i);
        bytes += QByteArray(reinterpret_cast<const char*>(&value), sizeof value);
    }
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("could not write %s", qPrintable(path));
}

// A run of hundreds of thousands of steps that builds in well under a second: n = 2048, d = 4,
// 8 × 8 tiles.
VizSettings longRunSettings() {
    VizSettings s = toySettings();
    s.spec.queries = s.spec.keys = 2048;
    s.options.blockRows = s.options.blockCols = 8;
    return s;
}

using Exit = FlashvizExit;

} // namespace

class TestAnimationExport : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void mp4ReadsBack();
    void gifReadsBackAndLoops();
    void webpIsAnimatedAndLoops();
    void lectureChapterFollowsItsBeats();
    void cancelLeavesNoFile();
    void badRequestsAreRefused_data();
    void badRequestsAreRefused();
    void stepsTheRunLacksAreRefused();
    void settingsTheCopyRefusesAreNotRecorded();
    void longRunsAreRefusedOverTheFrameCap();
    void windowStaysResponsiveAndUntouched();
    void commandLineReadsTheRequest();
    void commandLineExports();
    void commandLineRefuses();

  private:
    void checkEnds(const Decoded& decoded, double tolerance, const QString& name);

    std::unique_ptr<MainWindow> m_source;
    QTemporaryDir m_dir;
};

void TestAnimationExport::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_source = std::make_unique<MainWindow>(freshOptions());
    QVERIFY(m_source->waitUntilIdle());
    QVERIFY(m_source->controller()->stepCount() > 3);
}

// It moves, and its ends are the window's own render of the first and the last step: each
// close to its own, and closer to its own than to the other.
void TestAnimationExport::checkEnds(const Decoded& d, double tolerance, const QString& name) {
    const QImage step0 = renderStepView(0, kSmall), step2 = renderStepView(2, kSmall);
    dump(name + QStringLiteral("-first"), d.first);
    dump(name + QStringLiteral("-last"), d.last);
    dump(name + QStringLiteral("-step0"), step0);
    dump(name + QStringLiteral("-step2"), step2);
    QVERIFY(meanDifference(step0, step2) > 0.5);
    QVERIFY(meanDifference(d.first, d.last) > 0.5);
    const double first = meanDifference(d.first, step0), last = meanDifference(d.last, step2);
    QVERIFY2(first < tolerance, qPrintable(QString::number(first)));
    QVERIFY2(last < tolerance, qPrintable(QString::number(last)));
    QVERIFY(first < meanDifference(d.first, step2));
    QVERIFY(last < meanDifference(d.last, step0));
}

void TestAnimationExport::mp4ReadsBack() {
    const QString file = m_dir.filePath(QStringLiteral("steps.mp4"));
    const Outcome outcome = record(*m_source, smallRequest(file));
    QVERIFY2(outcome.ok, qPrintable(outcome.message));
    const Decoded d = decode(file);
    QVERIFY2(d.error.isEmpty(), qPrintable(d.error));
    QCOMPARE(d.codec, QStringLiteral("h264"));
    QCOMPARE(d.size, kSmall);
    QCOMPARE(d.frames, 3 * kFramesPerStep);
    QCOMPARE(d.averageFps, double(kFps));
    QVERIFY2(std::abs(d.seconds - 3.0 * kFramesPerStep / kFps) < 0.5 / kFps,
             qPrintable(QString::number(d.seconds)));
    // The index before the data (+faststart): a browser or a slide plays it while it loads.
    QFile bytes(file);
    QVERIFY(bytes.open(QIODevice::ReadOnly));
    const QByteArray head = bytes.read(64 * 1024);
    QVERIFY(head.indexOf("moov") >= 0);
    QVERIFY(head.indexOf("moov") < head.indexOf("mdat"));
    checkEnds(d, 4.0, QStringLiteral("mp4"));
}

void TestAnimationExport::gifReadsBackAndLoops() {
    const QString file = m_dir.filePath(QStringLiteral("steps.gif"));
    const Outcome outcome = record(*m_source, smallRequest(file));
    QVERIFY2(outcome.ok, qPrintable(outcome.message));
    const Decoded d = decode(file);
    QVERIFY2(d.error.isEmpty(), qPrintable(d.error));
    QCOMPARE(d.codec, QStringLiteral("gif"));
    QCOMPARE(d.size, kSmall);
    QCOMPARE(d.frames, 3 * kFramesPerStep);
    QVERIFY2(std::abs(d.seconds - 3.0 * kFramesPerStep / kFps) < 0.011,
             qPrintable(QString::number(d.seconds)));
    QFile bytes(file);
    QVERIFY(bytes.open(QIODevice::ReadOnly));
    const QByteArray all = bytes.readAll();
    // The application extension that loops: NETSCAPE2.0, sub-block 1, a loop count of 0.
    const qsizetype loop = all.indexOf("NETSCAPE2.0");
    QVERIFY(loop > 0);
    QCOMPARE(all.mid(loop + 11, 5), QByteArray("\x03\x01\x00\x00\x00", 5));
    checkEnds(d, 6.0, QStringLiteral("gif"));
}

// FFmpeg 5's WebP decoder reads still pictures only; the container is read here instead: RIFF,
// the canvas, an ANIM chunk looping forever, one ANMF chunk per frame.
void TestAnimationExport::webpIsAnimatedAndLoops() {
    if (!hasFormat(AnimationFormat::WebP)) QSKIP("this libavcodec has no libwebp_anim encoder");
    const QString file = m_dir.filePath(QStringLiteral("steps.webp"));
    const Outcome outcome = record(*m_source, smallRequest(file));
    QVERIFY2(outcome.ok, qPrintable(outcome.message));
    QFile bytes(file);
    QVERIFY(bytes.open(QIODevice::ReadOnly));
    const QByteArray all = bytes.readAll();
    QCOMPARE(all.left(4), QByteArray("RIFF"));
    QCOMPARE(all.mid(8, 4), QByteArray("WEBP"));
    auto uint24 = [&all](qsizetype at) {
        const auto* b = reinterpret_cast<const uchar*>(all.constData() + at);
        return int(b[0] | b[1] << 8 | b[2] << 16);
    };
    int frames = 0, milliseconds = 0;
    bool loopsForever = false;
    QSize canvas;
    for (qsizetype at = 12; at + 8 <= all.size();) {
        const QByteArray id = all.mid(at, 4);
        const qsizetype length = uint24(at + 4) | qsizetype(uchar(all[at + 7])) << 24;
        if (id == "VP8X") canvas = QSize(1 + uint24(at + 12), 1 + uint24(at + 15));
        if (id == "ANIM") loopsForever = all.mid(at + 12, 2) == QByteArray("\0\0", 2);
        if (id == "ANMF") {
            ++frames;
            milliseconds += uint24(at + 8 + 12);
        }
        at += 8 + length + (length & 1);
    }
    QCOMPARE(canvas, kSmall);
    QVERIFY(loopsForever);
    // libwebp merges frames that do not change (the first step's, held still) into one longer
    // frame: the duration is the frames', and the steps that move are frames of their own.
    QCOMPARE(milliseconds, 3 * kFramesPerStep * 1000 / kFps);
    QVERIFY(frames >= 2 * kFramesPerStep + 1);
}

void TestAnimationExport::lectureChapterFollowsItsBeats() {
    // The chapter with the fewest beats (more than one), so that the test stays quick.
    StartOptions lecture = freshOptions();
    lecture.lecture = true;
    int chapter = -1;
    std::size_t fewest = 1000000;
    MainWindow window(lecture);
    for (int c = 0; c < int(lectureChapters().size()); ++c) {
        window.enterLecture(c);
        QVERIFY(window.waitUntilIdle());
        const std::size_t beats = window.lecture()->beats().size();
        if (beats > 1 && beats < fewest) {
            fewest = beats;
            chapter = c;
        }
    }
    QVERIFY(chapter >= 0);
    AnimationRequest request;
    request.file = m_dir.filePath(QStringLiteral("chapter.mp4"));
    request.view = AnimationView::Lecture;
    request.range = AnimationRange::Chapter;
    request.chapter = chapter;
    request.size = kSmall;
    request.framesPerStep = kFramesPerStep;
    request.fps = kFps;
    const Outcome outcome = record(*m_source, request);
    QVERIFY2(outcome.ok, qPrintable(outcome.message));
    const Decoded d = decode(request.file);
    QCOMPARE(d.frames, int(fewest) * kFramesPerStep);
    QCOMPARE(d.size, kSmall);
    QVERIFY(meanDifference(d.first, d.last) > 0.5);
}

void TestAnimationExport::cancelLeavesNoFile() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("cancelled.mp4"));
    AnimationRequest request = smallRequest(file);
    request.range = AnimationRange::WholeRun;
    AnimationRecorder recorder;
    QSignalSpy finished(&recorder, &AnimationRecorder::finished);
    connect(&recorder, &AnimationRecorder::progress, &recorder, [&recorder](int done, int) {
        if (done == 3) recorder.cancel();
    });
    const auto nothingLeft = [&dir] {
        return QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
    };
    QString error;
    QVERIFY2(recorder.start(*m_source, request, &error), qPrintable(error));
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.at(0).at(0).toBool(), false);
    QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("Export cancelled"));
    QVERIFY(!recorder.isRunning());
    QCOMPARE(nothingLeft(), QStringList());

    // A file that was there before is kept as it was.
    const QString previous = dir.filePath(QStringLiteral("kept.gif"));
    QFile old(previous);
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write("what was there");
    old.close();
    request.file = previous;
    finished.clear();
    QVERIFY2(recorder.start(*m_source, request, &error), qPrintable(error));
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.at(0).at(0).toBool(), false);
    QFile back(previous);
    QVERIFY(back.open(QIODevice::ReadOnly));
    QCOMPARE(back.readAll(), QByteArray("what was there"));
    QCOMPARE(nothingLeft(), QStringList{QStringLiteral("kept.gif")});
}

void TestAnimationExport::badRequestsAreRefused_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<int>("fps");
    QTest::addColumn<int>("framesPerStep");
    QTest::addColumn<int>("view");
    QTest::addColumn<int>("range");
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("expected");
    const QString mp4 = m_dir.filePath(QStringLiteral("refused.mp4"));
    const QString folder = m_dir.filePath(QStringLiteral("a-folder.gif"));
    QDir().mkpath(folder);
    const int step = int(AnimationView::Step), lecture = int(AnimationView::Lecture);
    const int steps = int(AnimationRange::Steps), chapter = int(AnimationRange::Chapter);
    QTest::newRow("extension") << m_dir.filePath(QStringLiteral("a.avi")) << kSmall << 10 << 2
                               << step << steps << "0"
                               << ".mp4, .gif";
    QTest::newRow("no file") << QString() << kSmall << 10 << 2 << step << steps << "0"
                             << "no file";
    QTest::newRow("folder missing")
        << QStringLiteral("/nonexistent-folder/a.gif") << kSmall << 10 << 2 << step << steps << "0"
        << "does not exist";
    QTest::newRow("a folder") << folder << kSmall << 10 << 2 << step << steps << "0"
                              << "is a folder";
    QTest::newRow("too small") << mp4 << QSize(200, 100) << 10 << 2 << step << steps << "0"
                               << "from 320x240 to 3840x2160";
    QTest::newRow("too large") << mp4 << QSize(4000, 2200) << 10 << 2 << step << steps << "0"
                               << "from 320x240 to 3840x2160";
    QTest::newRow("odd for mp4") << mp4 << QSize(321, 240) << 10 << 2 << step << steps << "0"
                                 << "even";
    QTest::newRow("fps 0") << mp4 << kSmall << 0 << 2 << step << steps << "0"
                           << "1 to 60";
    QTest::newRow("fps 61") << mp4 << kSmall << 61 << 2 << step << steps << "0"
                            << "1 to 60";
    QTest::newRow("frames per step 31") << mp4 << kSmall << 10 << 31 << step << steps << "0"
                                        << "from 1 to 30";
    QTest::newRow("chapter in step view") << mp4 << kSmall << 10 << 2 << step << chapter << "0"
                                          << "lecture view";
    QTest::newRow("from not a step") << mp4 << kSmall << 10 << 2 << lecture << steps << "fourth"
                                     << "From";
}

void TestAnimationExport::badRequestsAreRefused() {
    QFETCH(QString, file);
    QFETCH(QSize, size);
    QFETCH(int, fps);
    QFETCH(int, framesPerStep);
    QFETCH(int, view);
    QFETCH(int, range);
    QFETCH(QString, from);
    QFETCH(QString, expected);
    AnimationRequest request;
    request.file = file;
    request.size = size;
    request.fps = fps;
    request.framesPerStep = framesPerStep;
    request.view = AnimationView(view);
    request.range = AnimationRange(range);
    request.from = from;
    const QString message = validateAnimationRequest(request);
    QVERIFY2(message.contains(expected), qPrintable(message));
    AnimationRecorder recorder;
    QSignalSpy finished(&recorder, &AnimationRecorder::finished);
    QString error;
    QVERIFY(!recorder.start(*m_source, request, &error));
    QCOMPARE(error, message);
    QTest::qWait(20);
    QCOMPARE(finished.size(), 0);
}

void TestAnimationExport::stepsTheRunLacksAreRefused() {
    const QString file = m_dir.filePath(QStringLiteral("refused.gif"));
    AnimationRequest request = smallRequest(file);
    request.from = QStringLiteral("end");
    request.to = QStringLiteral("0");
    Outcome outcome = record(*m_source, request);
    QVERIFY(!outcome.ok);
    QVERIFY2(outcome.message.contains(QStringLiteral("comes after")), qPrintable(outcome.message));
    request.from = QStringLiteral("0");
    request.to = QStringLiteral("100000");
    outcome = record(*m_source, request);
    QVERIFY(!outcome.ok);
    QVERIFY2(outcome.message.startsWith(QStringLiteral("To:")), qPrintable(outcome.message));
    QVERIFY(!QFile::exists(file));
}

// The window's settings whose .npy file went away since the window read it: the copy's build
// refuses them, and the export does not start (no toy scene recorded in their place).
void TestAnimationExport::settingsTheCopyRefusesAreNotRecorded() {
    QTemporaryDir dir;
    VizSettings settings = toySettings();
    const flashviz::InputFiles files{dir.filePath(QStringLiteral("q.npy")).toStdString(),
                                     dir.filePath(QStringLiteral("k.npy")).toStdString(),
                                     dir.filePath(QStringLiteral("v.npy")).toStdString(),
                                     {},
                                     std::nullopt};
    writeNpy(QString::fromStdString(files.q), settings.spec.queries, settings.spec.headDim);
    writeNpy(QString::fromStdString(files.k), settings.spec.keys, settings.spec.headDim);
    writeNpy(QString::fromStdString(files.v), settings.spec.keys, settings.spec.headDim);
    settings.spec = flashviz::withInputFiles(settings.spec, files);
    MainWindow source(freshOptions());
    QVERIFY2(source.controller()->apply(settings), qPrintable(source.controller()->lastRefusal()));
    QVERIFY(source.waitUntilIdle());
    QVERIFY(QFile::remove(QString::fromStdString(files.k)));

    for (const AnimationView view : {AnimationView::Step, AnimationView::Lecture}) {
        AnimationRequest request = smallRequest(dir.filePath(QStringLiteral("refused.gif")));
        request.view = view;
        AnimationRecorder recorder;
        QSignalSpy finished(&recorder, &AnimationRecorder::finished);
        QString error;
        QVERIFY(!recorder.start(source, request, &error));
        QVERIFY2(error.contains(QStringLiteral("k.npy")), qPrintable(error));
        QTest::qWait(50);
        QCOMPARE(finished.size(), 0);
        QCOMPARE(QDir(dir.path()).entryList({QStringLiteral("*.gif*")}, QDir::Files | QDir::Hidden),
                 QStringList());
    }
}

// kAnimationMaxFrames: a whole run of hundreds of thousands of steps is refused, naming the cap,
// before a frame is drawn; a range of it within the cap is counted as it is listed.
void TestAnimationExport::longRunsAreRefusedOverTheFrameCap() {
    const std::shared_ptr<const Scene> scene = buildScene(longRunSettings(), nullptr);
    QVERIFY(qint64(scene->stepCount()) * kAnimationMinFramesPerStep > kAnimationMaxFrames);
    AnimationRequest request = smallRequest(m_dir.filePath(QStringLiteral("long.mp4")));
    request.range = AnimationRange::WholeRun;
    request.framesPerStep = kAnimationMinFramesPerStep;
    QString stepsError, lengthError;
    QVERIFY(animationSteps(request, *scene, &stepsError).empty());
    QVERIFY(!animationLength(request, *scene, &lengthError));
    QCOMPARE(lengthError, stepsError);
    QVERIFY2(stepsError.contains(QStringLiteral("at most %1").arg(kAnimationMaxFrames)) &&
                 stepsError.contains(QString::number(scene->stepCount())),
             qPrintable(stepsError));

    request.range = AnimationRange::Steps;
    request.from = QStringLiteral("end-99");
    request.to = QStringLiteral("end");
    request.framesPerStep = kAnimationMaxFramesPerStep;
    QString error;
    const std::vector<int> steps = animationSteps(request, *scene, &error);
    QCOMPARE(int(steps.size()), 100);
    const std::optional<AnimationLength> length = animationLength(request, *scene, &error);
    QVERIFY2(length, qPrintable(error));
    QCOMPARE(length->steps, 100);
    QCOMPARE(length->frames, 100 * kAnimationMaxFramesPerStep);

    // The recorder refuses it too, once the copy has built the run: no file.
    MainWindow source(freshOptions());
    QVERIFY(source.controller()->apply(longRunSettings()));
    QVERIFY(source.waitUntilIdle());
    request.range = AnimationRange::WholeRun;
    request.framesPerStep = kAnimationMinFramesPerStep;
    const Outcome outcome = record(source, request);
    QVERIFY(!outcome.ok);
    QCOMPARE(outcome.message, stepsError);
    QVERIFY(!QFile::exists(request.file));
}

// Frames are drawn one per turn of the event loop: a timer of the GUI thread keeps firing, and
// the user's window keeps its size and step.
void TestAnimationExport::windowStaysResponsiveAndUntouched() {
    m_source->resize(900, 700);
    m_source->controller()->setStep(1);
    QVERIFY(m_source->waitUntilIdle());
    const QSize sizeBefore = m_source->size();
    AnimationRequest request = smallRequest(m_dir.filePath(QStringLiteral("responsive.mp4")));
    request.range = AnimationRange::WholeRun;
    request.size = QSize(640, 480);
    AnimationRecorder recorder;
    QSignalSpy finished(&recorder, &AnimationRecorder::finished);
    QElapsedTimer clock;
    qint64 last = 0, longest = 0;
    QTimer beat;
    connect(&beat, &QTimer::timeout, &beat, [&] {
        longest = std::max(longest, clock.elapsed() - last);
        last = clock.elapsed();
    });
    QString error;
    QVERIFY2(recorder.start(*m_source, request, &error), qPrintable(error));
    clock.start();
    beat.start(10);
    QVERIFY(finished.wait(120000));
    beat.stop();
    QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
    QVERIFY2(longest < 500,
             qPrintable(QStringLiteral("the GUI thread stalled %1 ms").arg(longest)));
    QCOMPARE(m_source->size(), sizeBefore);
    QCOMPARE(m_source->controller()->step(), 1);
}

// The options as the recorder gets them: the range from --from/--to or --lecture's chapter, the
// defaults where an option is not given, and the window told to leave no trace.
void TestAnimationExport::commandLineReadsTheRequest() {
    const auto parse = [](const QStringList& options) {
        return parseCommandLine(QStringList{QStringLiteral("flashviz")} + options);
    };
    CommandLine line = parse({QStringLiteral("--export"), QStringLiteral("a.mp4")});
    QVERIFY2(line.error.isEmpty(), qPrintable(line.error));
    QVERIFY(line.animation);
    QCOMPARE(line.animation->range, AnimationRange::WholeRun);
    QCOMPARE(line.animation->view, AnimationView::Step);
    QCOMPARE(line.animation->size, kAnimationDefaultSize);
    QCOMPARE(line.animation->fps, kAnimationDefaultFps);
    QCOMPARE(line.animation->framesPerStep, kAnimationDefaultFramesPerStep);
    QVERIFY(!line.start.restore && !line.start.save && !line.start.fullScreen);

    line = parse({QStringLiteral("--export"), QStringLiteral("a.gif"), QStringLiteral("--to"),
                  QStringLiteral("first-rescale+1"), QStringLiteral("--size"),
                  QStringLiteral("640x360"), QStringLiteral("--fps"), QStringLiteral("24"),
                  QStringLiteral("--frames-per-step"), QStringLiteral("8")});
    QVERIFY2(line.error.isEmpty(), qPrintable(line.error));
    QCOMPARE(line.animation->range, AnimationRange::Steps);
    QCOMPARE(line.animation->from, QStringLiteral("0"));
    QCOMPARE(line.animation->to, QStringLiteral("first-rescale+1"));
    QCOMPARE(line.animation->size, QSize(640, 360));
    QCOMPARE(line.animation->fps, 24);
    QCOMPARE(line.animation->framesPerStep, 8);

    line = parse({QStringLiteral("--export"), QStringLiteral("a.mp4"), QStringLiteral("--lecture"),
                  QStringLiteral("--chapter"), QStringLiteral("2")});
    QVERIFY2(line.error.isEmpty(), qPrintable(line.error));
    QCOMPARE(line.animation->view, AnimationView::Lecture);
    QCOMPARE(line.animation->range, AnimationRange::Chapter);
    QCOMPARE(line.animation->chapter, 1);

    line = parse({QStringLiteral("--export"), QStringLiteral("a.mp4"), QStringLiteral("--step"),
                  QStringLiteral("3")});
    QVERIFY(line.error.contains(QStringLiteral("--step")));
    line = parse({QStringLiteral("--export"), QStringLiteral("a.mov")});
    QVERIFY2(line.error.contains(QStringLiteral(".mp4")), qPrintable(line.error));
    line = parse({QStringLiteral("--to"), QStringLiteral("end")});
    QVERIFY2(line.error.contains(QStringLiteral("--export FILE")), qPrintable(line.error));

    // --size with --export: the recorder's limits, in the one sentence the recorder would say.
    const QString limits = QStringLiteral("from %1x%2 to %3x%4")
                               .arg(kAnimationMinSize.width())
                               .arg(kAnimationMinSize.height())
                               .arg(kAnimationMaxSize.width())
                               .arg(kAnimationMaxSize.height());
    for (const char* tooLarge : {"9000x9000", "4000x2000", "3840x2161"}) {
        line = parse({QStringLiteral("--export"), QStringLiteral("a.mp4"), QStringLiteral("--size"),
                      QString::fromLatin1(tooLarge)});
        QVERIFY2(line.error.startsWith(QStringLiteral("--size")) && line.error.contains(limits),
                 qPrintable(line.error));
    }
    line = parse({QStringLiteral("--export"), QStringLiteral("a.mp4"), QStringLiteral("--size"),
                  QStringLiteral("3840x2160")});
    QVERIFY2(line.error.isEmpty(), qPrintable(line.error));
    line = parse({QStringLiteral("--screenshot"), QStringLiteral("a.png"), QStringLiteral("--size"),
                  QStringLiteral("5000x3000")}); // a window may be larger than a video
    QVERIFY2(line.error.isEmpty(), qPrintable(line.error));

    // The presenter's window is neither recorded nor shot.
    for (const char* output : {"--export", "--screenshot"}) {
        line = parse(
            {QString::fromLatin1(output), QStringLiteral("a.mp4"), QStringLiteral("--presenter")});
        QVERIFY2(line.error.contains(QStringLiteral("--presenter")) &&
                     line.error.contains(QStringLiteral("--lecture")),
                 qPrintable(line.error));
        QVERIFY(!line.animation);
    }
}

void TestAnimationExport::commandLineExports() {
    const QString file = m_dir.filePath(QStringLiteral("cli.gif"));
    const Exit exit = runFlashviz(
        {QStringLiteral("--export"), file, QStringLiteral("--preset"), QStringLiteral("toy"),
         QStringLiteral("--from"), QStringLiteral("1"), QStringLiteral("--to"),
         QStringLiteral("first-rescale"), QStringLiteral("--size"), QStringLiteral("320x240"),
         QStringLiteral("--fps"), QStringLiteral("10"), QStringLiteral("--frames-per-step"),
         QStringLiteral("3")});
    QVERIFY2(exit.code == 0, exit.err.constData());
    QVERIFY2(exit.out.contains("cli.gif"), exit.out.constData());
    const auto scene = m_source->controller()->scene();
    QVERIFY(scene->firstRescaleStep);
    const Decoded d = decode(file);
    QCOMPARE(d.codec, QStringLiteral("gif"));
    QCOMPARE(d.size, kSmall);
    QCOMPARE(d.frames, *scene->firstRescaleStep * 3); // steps 1 … first-rescale
}

void TestAnimationExport::commandLineRefuses() {
    const QString file = m_dir.filePath(QStringLiteral("cli-refused.mp4"));
    Exit exit = runFlashviz(
        {QStringLiteral("--export"), file, QStringLiteral("--fps"), QStringLiteral("0")});
    QCOMPARE(exit.code, 2);
    QVERIFY2(exit.err.contains("--fps takes a whole number from 1 to 60"), exit.err.constData());
    exit = runFlashviz({QStringLiteral("--fps"), QStringLiteral("12")});
    QCOMPARE(exit.code, 2);
    QVERIFY2(exit.err.contains("give --export FILE"), exit.err.constData());
    exit = runFlashviz(
        {QStringLiteral("--export"), file, QStringLiteral("--size"), QStringLiteral("321x240")});
    QCOMPARE(exit.code, 2);
    QVERIFY2(exit.err.contains("even"), exit.err.constData());
    exit = runFlashviz({QStringLiteral("--export"), file, QStringLiteral("--presenter")});
    QCOMPARE(exit.code, 2);
    QVERIFY2(exit.err.contains("--presenter"), exit.err.constData());
    exit = runFlashviz({QStringLiteral("--export"), file, QStringLiteral("--preset"),
                        QStringLiteral("toy"), QStringLiteral("--to"), QStringLiteral("100000")});
    QCOMPARE(exit.code, 1);
    QVERIFY2(exit.err.contains("To:"), exit.err.constData());
    QVERIFY(!QFile::exists(file));
}

QTEST_MAIN(TestAnimationExport)
#include "tst_animation_export.moc"
