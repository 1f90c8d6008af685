#pragma once
// The comparison every run is held to: the output against ordinary attention.
#include "core/problem.h"

#include <string>
#include <vector>

namespace flashviz {

struct CheckReport {
    double maxAbsDiff = 0;      // over finite entries; inf when any entry is non-finite
    Vector rowMaxDiff;          // per query row (inf where the row holds inf or NaN)
    std::vector<int> wrongRows; // rows whose error exceeds the tolerance or are non-finite
    int nonFiniteCount = 0;     // inf and NaN entries in the output
    double tolerance = 0;
    bool passed() const { return wrongRows.empty() && nonFiniteCount == 0; }
    std::string summary() const; // one line: "PASS max |diff| 2.8e-16" / "FAIL ..."
};

// The tolerance a correct run meets in this precision (double: 1e-10, float: 1e-4).
double defaultTolerance(Precision precision);

// Throws EngineError(InvalidArgument) when the shapes differ.
CheckReport compareOutputs(const Matrix& output, const Matrix& reference, double tolerance);

} // namespace flashviz
