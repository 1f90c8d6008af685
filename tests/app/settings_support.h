#pragma once
// Settings the app suites share: the toy grown to n x n, d 64, 64 x 64 tiles (a scene that builds
// on a worker for a while, at n in the thousands).
#include "session/settings.h"

namespace flashviz::gui::test {

inline VizSettings largeSettings(int n, VizSettings s = toySettings()) {
    s.spec.queries = s.spec.keys = n;
    s.spec.headDim = 64;
    s.options.blockRows = s.options.blockCols = 64;
    return s;
}

} // namespace flashviz::gui::test
