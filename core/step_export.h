#pragma once
// The state at a step as a file: JSON for programs and CSV for spreadsheets, written from the
// step engine alone, so that the window's "Export step data" and `flashviz-cli steps --json` give
// the same bytes for the same problem, options and step.
//
// JSON (version kStepDataVersion; keys in the order below):
//   {"format": "flashviz-step-data", "version": 1,
//    "note": how numbers that are not finite are written, "non_finite_values": how many,
//    "problem": {"n_q", "n_k", "d", "scale", "causal", "precision", "inputs": {...}},
//    "options": {"algorithm", "br", "bc", "loop_order", "rescale", "running_max", "keep_full_s",
//                "backward": {switch name: on}},
//    "step_count": N,
//    "quantities": {name: what it is},
//    "steps": [{"step", "kind", "sentence", "blocks",
//               "tile": {"i", "j", "rows": [begin, end), "cols": [begin, end), "last_key_block"},
//               "counters": totals through the step, "counters_this_step": its own traffic and
//               FLOPs, "sram_elements", "sram_bytes",
//               "values": {name: {"rows": "query" | "key", "first_row",
//                                 ["cols": "key" | "dim", "first_col"], "data": [...]}}}]}
// A vector's data is a list, a matrix's a list of rows; "first_row"/"first_col" place them in
// the problem (query row, key index or head-dimension column). Only the values that exist at the
// step are written. Numbers that are not finite are the strings "inf", "-inf" and "nan".
//
// CSV: one long table, "step,kind,quantity,row,col,value". The file's own fields and the
// problem's and options' come first with an empty step ("problem.n_q"); then, per step, its
// fields ("sentence", "tile.i", "counters.flops") and one line per value, row and col being
// the value's place in the problem (col empty for a vector).
#include "core/steps.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace flashviz {

inline constexpr const char* kStepDataFormat = "flashviz-step-data";
inline constexpr int kStepDataVersion = 1;

// The counters as the command line's JSON names them (hbm_bytes, hbm_read_bytes,
// hbm_write_bytes, flops, peak_scratch_floats).
nlohmann::ordered_json countersJson(const Counters& counters);

// The steps' states (each engine.state(step), in the order given) as the JSON above. Throws
// EngineError (InvalidArgument) for a step outside 0 .. stepCount - 1.
nlohmann::ordered_json stepDataJson(const StepEngine& engine, const std::vector<int>& steps);
// The same for states already computed (the window holds its frame's): each must be
// engine.state(state.info.index).
nlohmann::ordered_json stepDataJson(const StepEngine& engine, const std::vector<StepState>& states);

// The text written to a file: the JSON indented by two, ending in a newline.
std::string stepDataJsonText(const nlohmann::ordered_json& data);
// The CSV above, from the JSON (so that the two can never disagree).
std::string stepDataCsv(const nlohmann::ordered_json& data);

} // namespace flashviz
