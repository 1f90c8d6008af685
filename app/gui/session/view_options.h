#pragma once
// How the views show a frame, apart from what the frame holds: the window's one set of view
// options, chosen in the settings panel, saved with the layout and given to every view (the
// step view's and the lecture's alike).
#include "core/flash_versions.h"

#include <array>

namespace flashviz::gui {

struct ViewOptions {
    // The tile detail's column of values recorded by the backend (the CUDA kernel's own), where
    // the scene has a trace.
    bool showBackendValues = false;
    // The FlashAttention-2 page's: the warps that share one tile, and the batch and heads of the
    // grid picture (the problem shown is one head).
    int warps = kKernelWarps; // 0: the kernel's own
    int gridBatch = kDefaultGridBatch;
    int gridHeads = kDefaultGridHeads;

    friend bool operator==(const ViewOptions&, const ViewOptions&) = default;
};

// The page's three options by the name sessions and saved settings give them, with their range:
// one table for every reader.
struct ViewOptionRange {
    const char* key;
    int ViewOptions::*field;
    int lowest, highest, fallback;
};
inline constexpr std::array<ViewOptionRange, 3> kPageOptionRanges{{
    {"warps", &ViewOptions::warps, kKernelWarps, kMaxWarps, kKernelWarps},
    {"gridBatch", &ViewOptions::gridBatch, 1, kMaxGridCount, kDefaultGridBatch},
    {"gridHeads", &ViewOptions::gridHeads, 1, kMaxGridCount, kDefaultGridHeads},
}};

} // namespace flashviz::gui
