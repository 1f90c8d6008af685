#pragma once
// How the views show a frame, apart from what the frame holds: the window's one set of view
// options, chosen in the settings panel, saved with the layout and given to every view (the
// step view's and the lecture's alike).
#include "core/flash_versions.h"

namespace flashviz::gui {

struct ViewOptions {
    // The tile detail's column of values recorded by the backend (the CUDA kernel's own), where
    // the scene has a trace.
    bool showBackendValues = false;
    // The FlashAttention-2 page's: the warps that share one tile, and the batch and heads of the
    // grid picture (the problem shown is one head).
    int warps = kDefaultWarps;
    int gridBatch = kDefaultGridBatch;
    int gridHeads = kDefaultGridHeads;

    friend bool operator==(const ViewOptions&, const ViewOptions&) = default;
};

} // namespace flashviz::gui
