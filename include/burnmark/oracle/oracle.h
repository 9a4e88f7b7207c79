// The oracle: compares every backend's outcome with the first one's (the reference) and says
// where they disagree. Findings are data (a Verdict), never exceptions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "burnmark/driver/outcome.h"

namespace burnmark {

inline constexpr double kDefaultTolerance = 1e-4;

// The agreement rule for one element; a is the reference's value, b the backend's. NaN vs
// non-NaN diverges, two NaNs agree, infinities must match exactly (sign included). For finite
// values, with E = bound (the reference's propagated rounding-error bound for a; a backend under
// test never contributes one, its own estimate is only shown in the detail):
//   no bound (nullopt: a reference without bounds, e.g. LibTorch first in a release-vs-release
//   run, or a plugin that sends none):      diverge when |a - b| > tol * max(1, |a|, |b|)
//   E < |a| or E = 0 (the reference knows the value to within its bound: relative, no floor):
//                                            diverge when |a - b| > E + tol * max(|a|, |b|)
//   0 < E >= |a| (the interval [a - E, a + E] reaches zero: zero up to rounding, by
//   cancellation or underflow, relative error unknown):
//                                            diverge when |a - b| > E + tol * max(1, |a|, |b|)
// So below 1 a value the reference bounds tightly is compared relatively: 2e-5 for 1e-5 with
// E = 1e-12 diverges; absolute slack comes from the bound (docs/conventions.md, "Error bounds").
// An infinite bound is the caller's to handle (compare() counts the element as indeterminate).
bool values_diverge(double a, double b, double tolerance,
                    std::optional<double> bound = std::nullopt);

enum class DivergenceKind {
  Forward,  // the root's values differ
  Gradient, // a leaf's gradient differs
  Tangent,  // the root's forward-mode derivative J·u differs
  Hvp,      // a leaf's Hessian-vector product (second order) differs
  Error,    // the backend raised where the reference did not (or the reverse)
  Shape,    // shapes or element counts differ
  Crash,    // the backend's child process died on this program
  Hang,     // the backend's child process did not answer in time
  Oom,      // the backend's child process grew past its memory limit
};
// How many kinds there are (Oom is the last): the size of anything indexed by a kind.
inline constexpr std::size_t kDivergenceKinds = static_cast<std::size_t>(DivergenceKind::Oom) + 1;

struct Divergence {
  std::string backend; // the backend that disagrees with the reference
  DivergenceKind kind = DivergenceKind::Forward;
  int leaf = -1;         // for Gradient: which leaf (leaf order)
  std::size_t count = 0; // diverging elements
  std::size_t first_index = 0;
  double expected = 0.0; // the reference's value at first_index
  double actual = 0.0;   // the backend's value at first_index
  std::string detail;    // error message or shape text
};

// Elements left uncompared for one backend because their error bound is +inf: the reference's
// propagated rounding error says a kink or domain edge lies within reach in f32, so either
// answer is defensible. Counted so that a report shows how much went unchecked.
struct Indeterminate {
  std::string backend;
  std::size_t count = 0;
};

// A program where `baseline` (the same library, an older release: "libtorch@1.13") agrees with
// the reference and `backend` ("libtorch") does not: the class maintainers rank highest. One
// per distinct kind of the backend's divergences.
struct Regression {
  std::string backend;
  std::string baseline;
  DivergenceKind kind = DivergenceKind::Forward;
};

// Who is wrong when torch.compile and eager PyTorch disagree (issue 32): each side is within the
// reference's bound (no divergence of that backend in the verdict) or outside it, and `apart`
// says whether the two differ from each other by the same rule (the eager value in the
// reference's place, the reference's bound as the slack). PyTorch files a compile bug only when
// the compiled result is further from a float64 baseline than eager's; the reference is that
// baseline with a bound, so `compiled outside, eager within` is a torch.compile bug, `both
// outside, not apart` a fault compile shares with eager (an ATen kernel both call), and `both
// within, apart` two defensible answers. Judged when the compiled backend ran to a result or an
// error beside its eager counterpart (compile_pair() names them).
struct CompileVerdict {
  std::string compiled;        // "torch-compile"
  std::string eager;           // "torch-eager-py" when present, else "libtorch"
  bool compiled_within = true; // no divergence of `compiled` from the reference
  bool eager_within = true;    // no divergence of `eager` from the reference
  bool apart = false;          // compiled and eager differ from each other
};

// The verdict as one word, for root-cause keys and triage groups: compiled-outside (a
// torch.compile bug), eager-outside, both-outside-alike, both-outside-apart, both-within-apart,
// both-within.
std::string compile_class(const CompileVerdict& verdict);

struct Verdict {
  std::string reference;               // name of the first backend
  std::vector<Divergence> divergences; // every diverging backend, every diverging tensor
  std::vector<Regression> regressions; // judged over OracleOptions::baselines
  std::vector<std::string> skipped;    // backends that declared an op unsupported
  std::vector<Indeterminate> indeterminate_by_backend; // only backends with a nonzero count
  std::size_t indeterminate = 0;                       // sum over indeterminate_by_backend
  std::size_t compared = 0;              // backends other than the reference that ran to a result
  std::optional<CompileVerdict> compile; // when torch-compile and an eager torch both ran
  bool agree() const { return divergences.empty(); }
};

// `baseline` is the older release of `backend`'s library (backends are named by the registry's
// `NAME@RELEASE`; which side is older is the registry's to say, the oracle only compares).
struct Baseline {
  std::string backend;
  std::string baseline;
};

struct OracleOptions {
  double tolerance = kDefaultTolerance;
  bool gradients = true;
  bool tangents = false; // compare Outcome::tangent too
  bool hessian = false;  // compare Outcome::hvp too
  // Pairs judged for regressions: a pair whose two backends are not both compared is ignored.
  std::vector<Baseline> baselines;
};

// outcomes[0] is the reference. If the reference itself errored, every backend that did not
// error too is reported as kind Error (messages are not compared: frameworks word errors
// differently). If the reference is Unsupported there is nothing to compare against: it is
// listed in skipped and no backend is judged.
Verdict compare(const std::vector<Outcome>& outcomes, const OracleOptions& options);

std::string kind_name(DivergenceKind kind);
// Fixed-shape, line-oriented report a script can parse. Every line is a keyword followed by
// key=value fields in a fixed order; detail is last, double-quoted, on one line:
//   DIVERGENCE backend=B kind=forward|gradient|tangent|hvp|error|shape|
//   crash|hang leaf=L count=N
//   first_index=I expected=E actual=A detail="..." SKIPPED backend=B INDETERMINATE backend=B
//   count=N REGRESSION backend=B baseline=B2 kind=K VERDICT reference=R compared=N divergences=N
//   skipped=N indeterminate=N result=agree|diverge
//   COMPILE-VERDICT compiled=within|outside eager=within|outside apart=yes|no
//   compiled_backend=B eager_backend=B2 class=C   (only with Verdict::compile; C as compile_class)
// leaf is -1 unless kind=gradient (or a gradient's shape); expected/actual are "nan" when
// meaningless (error, shape). The VERDICT line is always last.
std::string format_verdict(const Verdict& verdict);

} // namespace burnmark
