#pragma once
#include <iosfwd>

namespace flashviz::cli {

// Prints the explainer script's nine demos as tables with the script's columns; `only` picks
// one demo (1-9), 0 prints all.
void printDemos(std::ostream& out, int only = 0);

} // namespace flashviz::cli
