#pragma once
// Frames in, an animation file out, through FFmpeg's libraries: the format follows the file's
// extension.
//   .mp4  H.264 (libx264), 4:2:0 in BT.709, CRF 20, the index at the front (+faststart) so that
//         browsers, PowerPoint, Keynote and Google Slides play it while it loads; even sizes.
//   .gif  one 256-colour palette for the whole animation, from its first frame (libavfilter's
//         palettegen and paletteuse), each frame storing only what changed; looping forever.
//   .webp animated WebP (libwebp_anim), lossless, looping forever; where libavcodec has it.
// The encoding runs on a worker thread fed through a bounded queue, so that the thread drawing
// the frames (the GUI's) only copies them in. The file appears only when finish() succeeds: it
// is written beside the target under a temporary name and renamed over it at the end; an error,
// cancel() or destroying an unfinished writer removes the temporary file and keeps what was
// there before.
#include <QImage>
#include <QSize>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace flashviz::gui {

enum class AnimationFormat { Mp4, Gif, WebP };

struct AnimationFormatInfo {
    AnimationFormat format;
    QString extension; // without the dot, lower case
    QString name;      // for a file dialog: "MP4 video (H.264)"
    QString encoder;   // libavcodec's encoder
};

// The formats this build can write (their encoders are in libavcodec), MP4 first.
std::vector<AnimationFormatInfo> availableAnimationFormats();
// The format a file name asks for by its extension (any case); std::nullopt with *error naming
// the extensions allowed, or the encoder missing from this libavcodec.
std::optional<AnimationFormat> animationFormatForFile(const QString& file, QString* error);
// Whether `file` can be written as an animation: its extension, its folder (there, a folder, not
// itself a folder), not read-only. Empty when it can, else a sentence naming the file.
QString checkAnimationFile(const QString& file);
// The size a format needs (MP4's 4:2:0: even sides); empty when `size` will do, else why not.
QString checkAnimationSize(AnimationFormat format, QSize size);

class AnimationWriter {
  public:
    AnimationWriter();
    ~AnimationWriter(); // unfinished: as cancel()
    AnimationWriter(const AnimationWriter&) = delete;
    AnimationWriter& operator=(const AnimationWriter&) = delete;

    // Opens the encoder and the temporary file and starts the worker; false with *error (the
    // file, its folder, the extension, the size, the encoder) when it cannot.
    bool open(const QString& file, QSize size, int fps, QString* error);
    // No more frames come: the worker encodes what is queued and completes the file in the
    // background; isDone() tells when finish() will not wait.
    void close();
    bool isDone() const;
    // Hands a frame over (scaled to the size given to open() if it differs), never waiting:
    // false when the queue is full (try again later) or after an error (hasFailed(), error()).
    bool tryAddFrame(const QImage& frame);
    // Encodes what is queued (waiting for it), completes the file and renames it into place;
    // false with *error.
    bool finish(QString* error);
    // Stops the worker and removes the temporary file.
    void cancel();
    bool hasFailed() const;
    QString error() const;

  private:
    struct Worker;
    std::unique_ptr<Worker> m_worker;
};

} // namespace flashviz::gui
