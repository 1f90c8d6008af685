#pragma once
// flashviz-cli: `demos`, `run`, `steps`, `bench`, `profiles`. Everything it prints comes from
// the engine; the CLI only parses options and formats.
#include <iosfwd>

namespace flashviz::cli {

// Parses argv, runs the command, writes to out/err; returns the process exit code.
int run(int argc, char** argv);
int run(int argc, char** argv, std::ostream& out, std::ostream& err);

} // namespace flashviz::cli
