// IR-level delta debugging: shrinks a diverging program to the few statements, elements and
// values that the divergence needs, while a caller-supplied predicate keeps saying "same bug".
//
// Candidates, tried in this order and repeated until nothing changes (or the run budget ends):
//   1. drop what the root does not read (dead code past or beside the root, unused leaves);
//   2. re-root at the earliest register that still reproduces;
//   3. replace a statement by one of its operands or by an earlier leaf (aliases included), with
//      every downstream shape re-inferred — a candidate that makes some op illegal is dropped;
//   4. cut an intermediate into a fresh leaf holding the reference's values (needs `evaluate`);
//   5. shrink leaf shapes: squeeze unit axes, flatten to rank 1, then per axis to 1, a quarter,
//      half, three quarters, minus one (keeping the leading rows, else the trailing ones) —
//      per leaf, then jointly over every leaf axis of one size (broadcast partners);
//   6. simplify leaf data towards 0, then 1, -1, then the value rounded to an integer, in
//      halving chunks, only ever moving an element to a strictly simpler value. NaN and
//      infinities rank as the least simple, so one survives only when replacing it breaks the
//      bug.
// Deterministic: the same program and predicate always give the same result.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "burnmark/ir/program.h"

namespace burnmark {

// True when the candidate (always a valid program) still shows the bug being minimised.
using Predicate = std::function<bool(const Program&)>;
// Values of a register as the reference computes them; nullopt disables the cut for it.
using Evaluator = std::function<std::optional<std::vector<double>>(const Program&, Reg)>;

struct MinimizeOptions {
  std::size_t max_checks = 4000; // predicate calls before giving up and returning the best so far
  Evaluator evaluate;            // optional: enables candidate 4
};

struct MinimizeResult {
  Program program;
  std::size_t checks = 0; // predicate calls spent
  bool exhausted = false; // the budget ran out before a fixpoint
};

// `program` must satisfy `predicate`; if it does not, it is returned unchanged.
MinimizeResult minimize(const Program& program, const Predicate& predicate,
                        const MinimizeOptions& options = {});

// The element simplicity order candidate 6 uses: 0 < 1 < -1 < other small integers < other
// finite values < -0 / tiny (below f32's smallest normal) / huge < ±inf < NaN. -0 ranks above 0 so
// that it survives only when the sign of zero matters.
int value_complexity(double value);

} // namespace burnmark
