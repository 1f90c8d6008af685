#pragma once
// What the flashviz-cli suites share: the CLI run in-process, as its main() runs it, with what it
// printed and its exit code.
#include "app/cli/cli.h"

#include <sstream>
#include <string>
#include <vector>

namespace flashviz::test {

struct CliResult {
    int code = 0;
    std::string out;
    std::string err;
};

// `args` after the program's name.
inline CliResult runCli(std::vector<std::string> args) {
    args.insert(args.begin(), "flashviz-cli");
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::ostringstream out, err;
    const int code = cli::run(int(args.size()), argv.data(), out, err);
    return {code, out.str(), err.str()};
}

} // namespace flashviz::test
