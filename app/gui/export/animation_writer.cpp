#include "export/animation_writer.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QRandomGenerator>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

namespace flashviz::gui {

namespace {

// Frames waiting for the encoder: enough to keep it busy while the next is drawn, few enough
// that 4K frames (33 MB each) stay in bounds.
constexpr std::size_t kQueueCapacity = 4;
// H.264's constant rate factor: flat colours and small type stay sharp at a few MB a minute.
constexpr const char* kMp4Crf = "20";
// Every frame is a picture in QImage::Format_RGB32, which is FFmpeg's native-endian RGB32.
constexpr AVPixelFormat kInputPixelFormat = AV_PIX_FMT_RGB32;

struct FormatTraits {
    AnimationFormat format;
    const char* extension;
    const char* name;
    const char* encoder;
    const char* muxer;
};

const FormatTraits kFormats[] = {
    {AnimationFormat::Mp4, "mp4", "MP4 video (H.264)", "libx264", "mp4"},
    {AnimationFormat::Gif, "gif", "Animated GIF", "gif", "gif"},
    {AnimationFormat::WebP, "webp", "Animated WebP", "libwebp_anim", "webp"},
};

const FormatTraits& traitsOf(AnimationFormat format) {
    for (const FormatTraits& t : kFormats)
        if (t.format == format) return t;
    return kFormats[0];
}

bool isAvailable(const FormatTraits& t) {
    return avcodec_find_encoder_by_name(t.encoder) && av_guess_format(t.muxer, nullptr, nullptr);
}

QString ffmpegError(int code) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(code, text, sizeof text);
    return QString::fromLocal8Bit(text);
}

struct FrameDeleter {
    void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketDeleter {
    void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct CodecDeleter {
    void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct GraphDeleter {
    void operator()(AVFilterGraph* g) const { avfilter_graph_free(&g); }
};
struct ScaleDeleter {
    void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct FormatDeleter {
    void operator()(AVFormatContext* f) const {
        if (f->pb) avio_closep(&f->pb);
        avformat_free_context(f);
    }
};
using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;

// Options handed to libavformat/libavcodec: freed on every path, with what they did not use.
class Options {
  public:
    void set(const char* key, const char* value) { av_dict_set(&m_dict, key, value, 0); }
    AVDictionary** get() { return &m_dict; }
    ~Options() { av_dict_free(&m_dict); }

  private:
    AVDictionary* m_dict = nullptr;
};

} // namespace

std::vector<AnimationFormatInfo> availableAnimationFormats() {
    std::vector<AnimationFormatInfo> formats;
    for (const FormatTraits& t : kFormats)
        if (isAvailable(t))
            formats.push_back({t.format, QString::fromLatin1(t.extension), QObject::tr(t.name),
                               QString::fromLatin1(t.encoder)});
    return formats;
}

std::optional<AnimationFormat> animationFormatForFile(const QString& file, QString* error) {
    const QString extension = QFileInfo(file).suffix().toLower();
    QStringList known;
    for (const FormatTraits& t : kFormats) {
        if (extension == QLatin1String(t.extension)) {
            if (isAvailable(t)) return t.format;
            if (error)
                *error = QObject::tr("'%1': this FFmpeg (libavcodec %2) has no %3 encoder for %4")
                             .arg(file, QString::fromLatin1(LIBAVCODEC_IDENT),
                                  QString::fromLatin1(t.encoder), QObject::tr(t.name));
            return std::nullopt;
        }
        if (isAvailable(t)) known << QStringLiteral(".") + QLatin1String(t.extension);
    }
    if (error)
        *error = QObject::tr("'%1': an animation is written as %2 (chosen by the extension)")
                     .arg(file, known.join(QStringLiteral(", ")));
    return std::nullopt;
}

QString checkAnimationFile(const QString& file) {
    if (file.isEmpty()) return QObject::tr("no file named for the animation");
    QString error;
    if (!animationFormatForFile(file, &error)) return error;
    const QFileInfo info(file);
    if (info.isDir()) return QObject::tr("'%1' is a folder, not a file").arg(file);
    if (!info.absoluteDir().exists())
        return QObject::tr("'%1': the folder '%2' does not exist")
            .arg(file, QDir::toNativeSeparators(info.absolutePath()));
    if (info.exists() && !info.isWritable()) return QObject::tr("'%1' is read-only").arg(file);
    return {};
}

QString checkAnimationSize(AnimationFormat format, QSize size) {
    if (format == AnimationFormat::Mp4 && (size.width() % 2 || size.height() % 2))
        return QObject::tr("an MP4 (H.264, 4:2:0) needs an even width and height (got %1x%2)")
            .arg(size.width())
            .arg(size.height());
    return {};
}

struct AnimationWriter::Worker {
    ~Worker() { stopAndDiscard(); }

    bool open(const QString& file, QSize frameSize, int framesPerSecond, QString* error);
    bool push(const QImage& frame);
    void close();
    bool isDone() const;
    bool finish(QString* error);
    void stopAndDiscard();
    QString currentError() const {
        std::lock_guard lock(mutex);
        return error;
    }

    // The worker thread.
    void run();
    void encodeAll();
    bool encode(const QImage& image);
    bool sendFrame(AVFrame* frame); // nullptr: flush
    bool sendFiltered();            // the palette filter's frames, to the encoder
    bool writePackets();
    bool flush();
    void fail(const QString& message);

    bool openTemporary(QString* error);
    bool openMuxer(QString* error);
    bool openEncoder(QString* error);
    bool openPaletteFilter(QString* error);
    void release(); // every FFmpeg context, the file closed
    bool filled(const QImage& image, AVFrame* frame) const;

    AnimationFormat format = AnimationFormat::Mp4;
    QSize size;
    int fps = 0;
    QString target;
    QString temporary;
    std::unique_ptr<AVFormatContext, FormatDeleter> muxer;
    std::unique_ptr<AVCodecContext, CodecDeleter> encoder;
    std::unique_ptr<AVFilterGraph, GraphDeleter> graph;
    std::unique_ptr<SwsContext, ScaleDeleter> scaler;
    AVStream* stream = nullptr;
    AVFilterContext* source = nullptr;
    AVFilterContext* sink = nullptr;
    FramePtr input;   // the picture as drawn (RGB32)
    FramePtr encoded; // as the encoder takes it (YUV 4:2:0, a palette); or input itself
    PacketPtr packet;
    std::int64_t nextPts = 0;
    bool trailerPending = false; // the header is written and the trailer not yet

    mutable std::mutex mutex;
    std::condition_variable changed;
    std::deque<QImage> queue;
    bool closing = false;
    bool stopping = false;
    bool done = false; // the worker has returned
    QString error;
    std::thread thread;
};

bool AnimationWriter::Worker::openTemporary(QString* failure) {
    const QFileInfo info(target);
    // Beside the target, so that the rename at the end stays on one file system; created as a
    // new file is (the umask's permissions), where a QTemporaryFile would be private.
    const QDir folder = info.absoluteDir();
    do {
        temporary = folder.filePath(
            QStringLiteral(".%1.%2.part")
                .arg(info.fileName())
                .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0')));
    } while (QFileInfo::exists(temporary));
    QFile reserved(temporary);
    if (!reserved.open(QIODevice::WriteOnly | QIODevice::NewOnly)) {
        *failure =
            QObject::tr("'%1': cannot write in the folder '%2' (%3)")
                .arg(target, QDir::toNativeSeparators(info.absolutePath()), reserved.errorString());
        temporary.clear();
        return false;
    }
    // A file replaced keeps its permissions.
    if (info.exists()) reserved.setPermissions(info.permissions());
    return true;
}

bool AnimationWriter::Worker::openEncoder(QString* failure) {
    const FormatTraits& traits = traitsOf(format);
    const AVCodec* codec = avcodec_find_encoder_by_name(traits.encoder);
    encoder.reset(codec ? avcodec_alloc_context3(codec) : nullptr);
    if (!encoder) {
        *failure = QObject::tr("this FFmpeg has no %1 encoder").arg(QLatin1String(traits.encoder));
        return false;
    }
    AVCodecContext* c = encoder.get();
    c->width = size.width();
    c->height = size.height();
    c->time_base = AVRational{1, fps};
    c->framerate = AVRational{fps, 1};
    c->sample_aspect_ratio = AVRational{1, 1};
    Options options;
    switch (format) {
    case AnimationFormat::Mp4:
        c->pix_fmt = AV_PIX_FMT_YUV420P;
        c->gop_size = 2 * fps; // a key frame every two seconds: seeking in a slide stays quick
        c->color_range = AVCOL_RANGE_MPEG;
        c->colorspace = AVCOL_SPC_BT709;
        c->color_primaries = AVCOL_PRI_BT709;
        c->color_trc = AVCOL_TRC_BT709;
        options.set("crf", kMp4Crf);
        options.set("preset", "medium");
        options.set("profile", "high");
        break;
    case AnimationFormat::Gif:
        c->pix_fmt = AV_PIX_FMT_PAL8;
        break;
    case AnimationFormat::WebP:
        c->pix_fmt = kInputPixelFormat;
        options.set("lossless", "1"); // flat colours and type: lossless is small and sharp
        break;
    }
    if (muxer->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (const int code = avcodec_open2(c, codec, options.get()); code < 0) {
        *failure = QObject::tr("the %1 encoder refused %2x%3 at %4 fps: %5")
                       .arg(QLatin1String(traits.encoder))
                       .arg(size.width())
                       .arg(size.height())
                       .arg(fps)
                       .arg(ffmpegError(code));
        return false;
    }
    stream = avformat_new_stream(muxer.get(), nullptr);
    if (!stream || avcodec_parameters_from_context(stream->codecpar, c) < 0) {
        *failure = QObject::tr("could not add the video stream");
        return false;
    }
    stream->time_base = c->time_base;
    stream->avg_frame_rate = c->framerate;
    return true;
}

bool AnimationWriter::Worker::openMuxer(QString* failure) {
    const FormatTraits& traits = traitsOf(format);
    AVFormatContext* context = nullptr;
    const QByteArray path = QFile::encodeName(temporary);
    if (avformat_alloc_output_context2(&context, nullptr, traits.muxer, path.constData()) < 0 ||
        !context) {
        *failure = QObject::tr("this FFmpeg has no %1 muxer").arg(QLatin1String(traits.muxer));
        return false;
    }
    muxer.reset(context);
    if (const int code = avio_open(&muxer->pb, path.constData(), AVIO_FLAG_WRITE); code < 0) {
        *failure = QObject::tr("'%1': cannot write it (%2)").arg(target, ffmpegError(code));
        return false;
    }
    return true;
}

// GIF: one palette for the whole animation, made from its first frame (palettegen over a trim of
// one frame; paletteuse keeps applying the last palette it was given) and applied without
// dithering. A palette per frame (stats_mode=single, new=1) changed the colour indices of
// every still pixel from frame to frame: 14.7 MB for the toy's 120 frames at 1280x720, against
// 0.85 MB here, where each frame stores only the rectangle that changed. The views' colours are
// on screen from the first step (the theme, the heatmaps' scales); a colour that appears only
// later takes the nearest of the 255.
bool AnimationWriter::Worker::openPaletteFilter(QString* failure) {
    graph.reset(avfilter_graph_alloc());
    const QByteArray sourceArgs = QStringLiteral("video_size=%1x%2:pix_fmt=%3:time_base=1/%4:"
                                                 "pixel_aspect=1/1")
                                      .arg(size.width())
                                      .arg(size.height())
                                      .arg(int(kInputPixelFormat))
                                      .arg(fps)
                                      .toLatin1();
    const AVFilter* bufferIn = avfilter_get_by_name("buffer");
    const AVFilter* bufferOut = avfilter_get_by_name("buffersink");
    if (!graph || !bufferIn || !bufferOut ||
        avfilter_graph_create_filter(&source, bufferIn, "in", sourceArgs.constData(), nullptr,
                                     graph.get()) < 0 ||
        avfilter_graph_create_filter(&sink, bufferOut, "out", nullptr, nullptr, graph.get()) < 0) {
        *failure = QObject::tr("libavfilter could not make the GIF palette's filters");
        return false;
    }
    const AVPixelFormat palette[] = {AV_PIX_FMT_PAL8, AV_PIX_FMT_NONE};
    av_opt_set_int_list(sink, "pix_fmts", palette, AV_PIX_FMT_NONE, AV_OPT_SEARCH_CHILDREN);
    AVFilterInOut* outputs = avfilter_inout_alloc();
    AVFilterInOut* inputs = avfilter_inout_alloc();
    int code = AVERROR(ENOMEM);
    if (outputs && inputs) {
        outputs->name = av_strdup("in");
        outputs->filter_ctx = source;
        inputs->name = av_strdup("out");
        inputs->filter_ctx = sink;
        code = avfilter_graph_parse_ptr(graph.get(),
                                        "split[a][b];[a]trim=end_frame=1,palettegen[p];"
                                        "[b][p]paletteuse=dither=none:diff_mode=rectangle",
                                        &inputs, &outputs, nullptr);
    }
    avfilter_inout_free(&inputs);
    avfilter_inout_free(&outputs);
    if (code >= 0) code = avfilter_graph_config(graph.get(), nullptr);
    if (code < 0) {
        *failure = QObject::tr("libavfilter's palettegen/paletteuse: %1").arg(ffmpegError(code));
        return false;
    }
    return true;
}

bool AnimationWriter::Worker::open(const QString& file, QSize frameSize, int framesPerSecond,
                                   QString* failure) {
    // FFmpeg's notes (x264's statistics, the second pass of +faststart) would fill the terminal
    // of `flashviz --export`; its errors come back as the messages below.
    static std::once_flag quiet;
    std::call_once(quiet, [] { av_log_set_level(AV_LOG_ERROR); });
    target = file;
    size = frameSize;
    fps = framesPerSecond;
    if (const QString bad = checkAnimationFile(file); !bad.isEmpty()) {
        *failure = bad;
        return false;
    }
    format = *animationFormatForFile(file, nullptr);
    if (const QString bad = checkAnimationSize(format, size); !bad.isEmpty()) {
        *failure = QStringLiteral("'%1': %2").arg(file, bad);
        return false;
    }
    if (fps < 1 || size.width() < 2 || size.height() < 2) {
        *failure = QObject::tr("'%1': %2x%3 at %4 fps cannot be encoded")
                       .arg(file, QString::number(size.width()), QString::number(size.height()),
                            QString::number(fps));
        return false;
    }
    if (!openTemporary(failure)) return false;
    QString why;
    bool ok = openMuxer(&why) && openEncoder(&why);
    if (ok && format == AnimationFormat::Gif) ok = openPaletteFilter(&why);
    input.reset(av_frame_alloc());
    packet.reset(av_packet_alloc());
    if (ok && (!input || !packet)) {
        why = QObject::tr("out of memory");
        ok = false;
    }
    if (ok && format == AnimationFormat::Mp4) {
        encoded.reset(av_frame_alloc());
        scaler.reset(sws_getContext(size.width(), size.height(), kInputPixelFormat, size.width(),
                                    size.height(), AV_PIX_FMT_YUV420P, SWS_BICUBIC, nullptr,
                                    nullptr, nullptr));
        if (encoded && scaler) {
            // Full-range RGB to limited-range BT.709, as the stream is tagged.
            sws_setColorspaceDetails(scaler.get(), sws_getCoefficients(SWS_CS_ITU709), 1,
                                     sws_getCoefficients(SWS_CS_ITU709), 0, 0, 1 << 16, 1 << 16);
            encoded->format = AV_PIX_FMT_YUV420P;
            encoded->width = size.width();
            encoded->height = size.height();
            ok = av_frame_get_buffer(encoded.get(), 0) >= 0;
        } else {
            ok = false;
        }
        if (!ok) why = QObject::tr("libswscale could not convert to YUV 4:2:0");
    }
    if (ok) {
        Options options;
        if (format == AnimationFormat::Mp4) options.set("movflags", "+faststart");
        if (format != AnimationFormat::Mp4) options.set("loop", "0"); // forever
        if (const int code = avformat_write_header(muxer.get(), options.get()); code < 0) {
            why = QObject::tr("could not start the file: %1").arg(ffmpegError(code));
            ok = false;
        }
        trailerPending = ok;
    }
    if (!ok) {
        *failure = QStringLiteral("'%1': %2").arg(file, why);
        release();
        QFile::remove(temporary);
        return false;
    }
    thread = std::thread([this] { run(); });
    return true;
}

bool AnimationWriter::Worker::push(const QImage& frame) {
    std::lock_guard lock(mutex);
    if (!error.isEmpty() || queue.size() >= kQueueCapacity) return false;
    queue.push_back(frame);
    changed.notify_all();
    return true;
}

void AnimationWriter::Worker::fail(const QString& message) {
    std::lock_guard lock(mutex);
    if (error.isEmpty()) error = QStringLiteral("'%1': %2").arg(target, message);
    queue.clear();
    changed.notify_all();
}

void AnimationWriter::Worker::close() {
    std::lock_guard lock(mutex);
    closing = true;
    changed.notify_all();
}

bool AnimationWriter::Worker::isDone() const {
    std::lock_guard lock(mutex);
    return done;
}

void AnimationWriter::Worker::run() {
    encodeAll();
    std::lock_guard lock(mutex);
    done = true;
}

void AnimationWriter::Worker::encodeAll() {
    for (;;) {
        QImage image;
        {
            std::unique_lock lock(mutex);
            changed.wait(lock, [this] { return stopping || closing || !queue.empty(); });
            if (stopping) return;
            if (queue.empty()) break; // closing, everything encoded
            image = std::move(queue.front());
            queue.pop_front();
        }
        if (!encode(image)) return;
    }
    if (!flush()) return;
    trailerPending = false;
    if (const int code = av_write_trailer(muxer.get()); code < 0)
        fail(QObject::tr("could not finish the file: %1").arg(ffmpegError(code)));
    else if (const int closed = avio_closep(&muxer->pb); closed < 0)
        fail(QObject::tr("could not write it: %1").arg(ffmpegError(closed)));
}

bool AnimationWriter::Worker::filled(const QImage& image, AVFrame* frame) const {
    QImage picture = image.size() == size
                         ? image
                         : image.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    picture.convertTo(QImage::Format_RGB32);
    av_frame_unref(frame);
    frame->format = kInputPixelFormat;
    frame->width = size.width();
    frame->height = size.height();
    if (av_frame_get_buffer(frame, 0) < 0) return false;
    const std::size_t rowBytes = std::size_t(size.width()) * 4;
    for (int y = 0; y < size.height(); ++y)
        std::memcpy(frame->data[0] + std::ptrdiff_t(y) * frame->linesize[0],
                    picture.constScanLine(y), rowBytes);
    return true;
}

bool AnimationWriter::Worker::encode(const QImage& image) {
    if (!filled(image, input.get())) {
        fail(QObject::tr("out of memory"));
        return false;
    }
    input->pts = nextPts++;
    switch (format) {
    case AnimationFormat::Mp4:
        if (av_frame_make_writable(encoded.get()) < 0) {
            fail(QObject::tr("out of memory"));
            return false;
        }
        sws_scale(scaler.get(), input->data, input->linesize, 0, size.height(), encoded->data,
                  encoded->linesize);
        encoded->pts = input->pts;
        return sendFrame(encoded.get());
    case AnimationFormat::Gif: {
        if (const int code = av_buffersrc_add_frame(source, input.get()); code < 0) {
            fail(QObject::tr("the GIF palette: %1").arg(ffmpegError(code)));
            return false;
        }
        return sendFiltered();
    }
    case AnimationFormat::WebP:
        return sendFrame(input.get());
    }
    return false;
}

bool AnimationWriter::Worker::sendFrame(AVFrame* frame) {
    if (const int code = avcodec_send_frame(encoder.get(), frame); code < 0) {
        fail(QObject::tr("the encoder: %1").arg(ffmpegError(code)));
        return false;
    }
    return writePackets();
}

bool AnimationWriter::Worker::sendFiltered() {
    const FramePtr filtered(av_frame_alloc());
    if (!filtered) {
        fail(QObject::tr("out of memory"));
        return false;
    }
    for (;;) {
        const int code = av_buffersink_get_frame(sink, filtered.get());
        if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return true;
        if (code < 0) {
            fail(QObject::tr("the GIF palette: %1").arg(ffmpegError(code)));
            return false;
        }
        const bool sent = sendFrame(filtered.get());
        av_frame_unref(filtered.get());
        if (!sent) return false;
    }
}

bool AnimationWriter::Worker::writePackets() {
    for (;;) {
        const int code = avcodec_receive_packet(encoder.get(), packet.get());
        if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return true;
        if (code < 0) {
            fail(QObject::tr("the encoder: %1").arg(ffmpegError(code)));
            return false;
        }
        if (packet->duration <= 0) packet->duration = 1;
        av_packet_rescale_ts(packet.get(), encoder->time_base, stream->time_base);
        packet->stream_index = stream->index;
        // Takes the packet's reference, also when it fails.
        if (const int written = av_interleaved_write_frame(muxer.get(), packet.get());
            written < 0) {
            fail(QObject::tr("could not write it: %1").arg(ffmpegError(written)));
            return false;
        }
    }
}

bool AnimationWriter::Worker::flush() {
    if (format == AnimationFormat::Gif) {
        if (const int code = av_buffersrc_add_frame(source, nullptr); code < 0) {
            fail(QObject::tr("the GIF palette: %1").arg(ffmpegError(code)));
            return false;
        }
        if (!sendFiltered()) return false;
    }
    return sendFrame(nullptr);
}

void AnimationWriter::Worker::stopAndDiscard() {
    {
        std::lock_guard lock(mutex);
        stopping = true;
        queue.clear();
        changed.notify_all();
    }
    if (thread.joinable()) thread.join();
    release();
    if (!temporary.isEmpty()) QFile::remove(temporary);
    temporary.clear();
}

bool AnimationWriter::Worker::finish(QString* failure) {
    close();
    if (thread.joinable()) thread.join();
    QString why = currentError();
    release();
    if (why.isEmpty()) {
        std::error_code code;
        std::filesystem::rename(QFile::encodeName(temporary).toStdString(),
                                QFile::encodeName(target).toStdString(), code);
        if (code)
            why = QObject::tr("'%1': could not put it in place: %2")
                      .arg(target, QString::fromLocal8Bit(code.message().c_str()));
    }
    if (!why.isEmpty()) {
        QFile::remove(temporary);
        temporary.clear();
        if (failure) *failure = why;
        return false;
    }
    temporary.clear();
    return true;
}

void AnimationWriter::Worker::release() {
    // A GIF given up (cancel, an error) still gets its trailer, into the temporary file that is
    // removed next: FFmpeg 5.1's GIF muxer frees the last packet it keeps only there (valgrind
    // and LeakSanitizer report it otherwise). The other muxers free their state in
    // avformat_free_context(), and an MP4's trailer would cost: with +faststart it rewrites the
    // whole file to move the index, on the thread that cancels (the GUI's).
    if (muxer && trailerPending && format == AnimationFormat::Gif)
        (void)av_write_trailer(muxer.get());
    trailerPending = false;
    packet.reset();
    encoded.reset();
    input.reset();
    scaler.reset();
    graph.reset();
    source = sink = nullptr;
    encoder.reset();
    muxer.reset();
    stream = nullptr;
}

AnimationWriter::AnimationWriter() = default;
AnimationWriter::~AnimationWriter() = default;

bool AnimationWriter::open(const QString& file, QSize size, int fps, QString* error) {
    m_worker.reset();
    auto worker = std::make_unique<Worker>();
    QString why;
    if (!worker->open(file, size, fps, &why)) {
        if (error) *error = why;
        return false;
    }
    m_worker = std::move(worker);
    return true;
}

void AnimationWriter::close() {
    if (m_worker) m_worker->close();
}

bool AnimationWriter::isDone() const {
    return !m_worker || m_worker->isDone();
}

bool AnimationWriter::tryAddFrame(const QImage& frame) {
    return m_worker && m_worker->push(frame);
}

bool AnimationWriter::finish(QString* error) {
    if (!m_worker) {
        if (error) *error = QObject::tr("no animation file is open");
        return false;
    }
    const bool ok = m_worker->finish(error);
    m_worker.reset();
    return ok;
}

void AnimationWriter::cancel() {
    m_worker.reset();
}

bool AnimationWriter::hasFailed() const {
    return m_worker && !m_worker->currentError().isEmpty();
}

QString AnimationWriter::error() const {
    return m_worker ? m_worker->currentError() : QString();
}

} // namespace flashviz::gui
