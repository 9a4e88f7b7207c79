// Parameter sweep: given a minimised repro, vary one thing at a time and report which
// conditions the bug needs — the characterisation a maintainer asks for first ("needs NaN",
// "needs n > 8", "needs n mod 4 != 0", "needs 2 chained relu").
//
// Parameters swept:
//   size <v>    every leaf axis of size v resized together (so broadcast and matmul partners
//               stay legal) to 1..kMaxDim; new rows repeat the old ones cyclically
//   L<i>[<j>]   each special element replaced by every other special class and by 0 and 1
//   L<i> sign   all of a leaf's finite values made non-negative, then non-positive
//   chain <op>  a chain of the same unary op (length k) rebuilt with lengths 1..k+2
// "Reproduces" is the minimiser's predicate: the primary class still diverges and the culprit
// op is still there.
#pragma once

#include <string>
#include <vector>

#include "burnmark/ir/program.h"
#include "burnmark/triage/runner.h"

namespace burnmark {

struct SweepRow {
  std::string parameter; // "size 9", "L0[3]", "L0 sign", "chain relu"
  std::string tried;     // compact list of the values tried, e.g. "1-48"
  std::string hits;      // the values that reproduced
  std::string condition; // "needs n > 8", "needs nan", "any" (not load-bearing), ...
};

struct SweepResult {
  std::vector<SweepRow> rows;
  // The load-bearing conditions in row order, each as "<parameter>: <condition>".
  std::vector<std::string> conditions;
};

// `repro` must diverge on the runner's backends; otherwise the result has no rows.
SweepResult sweep(Runner& runner, const Program& repro);

// A fixed-width table, one row per parameter, then "needs: ..." with the conditions.
std::string format_sweep(const SweepResult& result);

// Describes a set of integers in 1..max where a bug reproduced: "any", "none", "needs n > k",
// "needs n < k", "needs n mod m != 0", "needs n mod m == 0", or an explicit set.
std::string describe_hits(const std::vector<int>& tried, const std::vector<int>& hits);

} // namespace burnmark
