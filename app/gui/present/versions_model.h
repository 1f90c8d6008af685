#pragma once
// The FlashAttention-2 page's model: what FlashAttention-2 changed, for the scene's sizes and the
// step on screen, from core/flash_versions.h. (1) non-matmul operations of the step's tile and of
// the whole pass for both versions, what they cost against the matmuls at the GPU's rates, and
// both versions' check; (2) the step's tile split across the warps by keys (split-K) and by rows
// (split-Q), with the shared-memory exchange split-K needs; (3) the grid of thread blocks on the
// GPU's SMs for FlashViz's kernel of these sizes. Plain values, no QPainter.
#include "session/scene.h"
#include "session/view_options.h"

#include "core/flash_versions.h"

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace flashviz::gui {

struct VersionsModel {
    QString title;   // the sizes and the GPU
    QString error;   // why there is nothing to show (warps out of range, say)
    VersionsRequest request;
    // Everything counted: the whole pass, the tile (the step's for a forward flash step that has
    // one, else the first) and its warp split, the grid (or report.gridError).
    VersionsReport report;
    bool stepTile = false; // the tile is the step's own

    QString checkLine;     // both versions against ordinary attention, or why they did not run
    bool checkPassed = false;
    bool checkRan = false;

    // Per SM: the thread blocks the first wave puts on it, for each version.
    std::vector<int> firstWaveOne, firstWaveTwo;

    // One sentence per part, with the numbers beside them on the page.
    QString arithmeticFinding, warpFinding, gridFinding;
    QString kernelLine; // the grid's kernel and its occupancy
};

// The request the page and the lecture's figures use: the scene's sizes, the user's tiles, the
// scene's kernel and the view options' warps, batch and heads; the first tile.
VersionsRequest versionsRequest(const Scene& scene, const ViewOptions& options);
// "fp16 / bf16" or "fp32": the kernel's operands, as the warp picture counts their bytes.
QString operandsName(const KernelShape& kernel);

// Per SM (hardware SM count entries), the blocks of the first wave, dealt round-robin.
std::vector<int> firstWave(const GridPicture& grid);

VersionsModel versionsModel(const Frame& frame, const ViewOptions& options);

} // namespace flashviz::gui
