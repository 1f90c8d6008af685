#include "core/check.h"

#include "core/errors.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace flashviz {

double defaultTolerance(Precision precision) {
    return precision == Precision::Double ? 1e-10 : 1e-4;
}

CheckReport compareOutputs(const Matrix& output, const Matrix& reference, double tolerance) {
    if (output.rows() != reference.rows() || output.cols() != reference.cols())
        throw EngineError(ErrorKind::InvalidArgument,
                          "Cannot compare a " + std::to_string(output.rows()) + "x" +
                              std::to_string(output.cols()) + " output with a " +
                              std::to_string(reference.rows()) + "x" +
                              std::to_string(reference.cols()) + " reference");
    constexpr double inf = std::numeric_limits<double>::infinity();
    CheckReport report;
    report.tolerance = tolerance;
    report.rowMaxDiff = Vector::Zero(output.rows());
    for (int r = 0; r < output.rows(); ++r) {
        double worst = 0;
        for (int c = 0; c < output.cols(); ++c) {
            const double value = output(r, c);
            if (!std::isfinite(value)) {
                ++report.nonFiniteCount;
                worst = inf;
                continue;
            }
            worst = std::max(worst, std::abs(value - reference(r, c)));
        }
        report.rowMaxDiff(r) = worst;
        report.maxAbsDiff = std::max(report.maxAbsDiff, worst);
        if (!(worst <= tolerance)) report.wrongRows.push_back(r);
    }
    return report;
}

std::string CheckReport::summary() const {
    char text[200];
    if (passed()) {
        std::snprintf(text, sizeof text, "PASS  max |diff| %.2e (tolerance %.0e)", maxAbsDiff, tolerance);
    } else if (nonFiniteCount > 0) {
        std::snprintf(text, sizeof text, "FAIL  %d non-finite values (inf/NaN) in %zu rows",
                      nonFiniteCount, wrongRows.size());
    } else {
        std::snprintf(text, sizeof text, "FAIL  max |diff| %.2e in %zu of %lld rows (tolerance %.0e)",
                      maxAbsDiff, wrongRows.size(), static_cast<long long>(rowMaxDiff.size()), tolerance);
    }
    return text;
}

} // namespace flashviz
