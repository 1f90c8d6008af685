#pragma once
// Inputs a user brings instead of a generated pattern: Q, K, V (and the backward's dO) read from
// .npy files, or Q and K designed so that each query row's maximum score sits in a chosen key
// block. Either one, kept in the ProblemSpec, is saved with the settings and the session and
// makes the same Problem every time it is read.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flashviz {

// .npy files (NumPy's format, core/npy.h): float32 or float64, C order, shape (n, d), or
// (h, n, d) with `head` choosing one head. `upstream` (dO, n_q x d) is optional: without it the
// backward draws dO from the problem's seed.
struct InputFiles {
    std::string q, k, v, upstream;
    std::optional<int> head;
    bool operator==(const InputFiles&) const = default;
};

// Where one query row's largest score lies and how far it stands out.
struct RowMaximum {
    int keyBlock = 0;       // the key block (of `InputDesign::blockSize` keys) holding the maximum
    // How far that score stands above the row's next largest (key 0's, which a design holds at
    // 0), in logits after the softmax scale: the rescale there multiplies by e^-sharpness.
    double sharpness = 8.0;
    bool operator==(const RowMaximum&) const = default;
};

// Q and K made so that row i's maximum lies in key block rows[i].keyBlock (core/input_design.h).
// V (and dO) still come from the seed, as does the noise in Q and K.
struct InputDesign {
    int blockSize = 4; // the Bc the design was made for; another Bc keeps the same key positions
    std::vector<RowMaximum> rows; // one per query row
    bool operator==(const InputDesign&) const = default;
};

} // namespace flashviz
