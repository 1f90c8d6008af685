#pragma once
#include <cstddef>
#include <iosfwd>
#include <string>

namespace flashviz::cli {

// Prints the explainer script's nine demos as tables with the script's columns; `only` picks
// one demo (1-9), 0 prints all.
void printDemos(std::ostream& out, int only = 0);

// Words filled into lines of at most `width` characters (UTF-8), for the paragraphs core writes.
std::string wrapped(const std::string& text, std::size_t width = 76);

} // namespace flashviz::cli
