// The oracle: the element-wise agreement rule and the walk that turns a set of outcomes into a
// Verdict. Nothing here throws or stops at the first mismatch: a report must name every
// backend that is wrong, since two backends wrong in different ways point at different bugs.
#include "burnmark/oracle/oracle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace burnmark {

bool values_diverge(double a, double b, double tolerance, std::optional<double> bound) {
  const bool a_nan = std::isnan(a);
  const bool b_nan = std::isnan(b);
  if (a_nan || b_nan) return a_nan != b_nan;
  // An infinity is a specific answer (overflow, log(0), 1/0): only the same infinity agrees,
  // however large the finite value on the other side.
  if (std::isinf(a) || std::isinf(b)) return a != b;
  const double diff = std::fabs(a - b);
  const double larger = std::max(std::fabs(a), std::fabs(b));
  // No bound: nothing says how far a correct f32 result may lie from a, so differences below
  // the tolerance are forgiven at every magnitude below 1 (the seed's rule).
  if (!bound) return diff > tolerance * std::max(1.0, larger);
  // A bound: it is the absolute slack (cancellation, subnormal steps, long chains), and the
  // tolerance is relative only, so a result wrong in every digit at 1e-5 is caught. Where the
  // reference's interval [a - E, a + E] reaches zero (E >= |a|, E > 0) the reference knows
  // neither the value's sign nor its magnitude: it is zero up to rounding, its relative error
  // unknown, and the seed's absolute floor applies as well.
  const double e = *bound;
  const bool zero_up_to_rounding = e > 0.0 && e >= std::fabs(a);
  const double scale = zero_up_to_rounding ? std::max(1.0, larger) : larger;
  return diff > e + tolerance * scale;
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The divergence kind of a child process's own failure, if the status is one.
std::optional<DivergenceKind> child_failure(Status status) {
  switch (status) {
  case Status::Crash: return DivergenceKind::Crash;
  case Status::Hang: return DivergenceKind::Hang;
  case Status::Oom: return DivergenceKind::Oom;
  case Status::Ok:
  case Status::Error:
  case Status::Unsupported: return std::nullopt;
  }
  return std::nullopt;
}

// A bound vector is used only when it has one entry per value; a malformed one (a plugin bug)
// must not index out of range, and is taken as no bound at all (the seed's rule).
std::optional<double> bound_at(const HostTensor& t, std::size_t i) {
  if (t.error_bound.size() != t.values.size()) return std::nullopt;
  return t.error_bound[i];
}

struct Judge {
  const OracleOptions& options;
  const std::string& backend;
  Verdict& verdict;
  std::size_t indeterminate = 0;

  Divergence make(DivergenceKind kind, int leaf) const {
    Divergence d;
    d.backend = backend;
    d.kind = kind;
    d.leaf = leaf;
    d.expected = kNaN;
    d.actual = kNaN;
    return d;
  }

  void tensor(const HostTensor& ref, const HostTensor& got, DivergenceKind kind, int leaf) {
    if (!(ref.shape == got.shape) || ref.values.size() != got.values.size()) {
      Divergence d = make(DivergenceKind::Shape, leaf);
      d.detail = fmt::format("{} {}: expected {} ({} values), got {} ({} values)", kind_name(kind),
                             leaf >= 0 ? fmt::format("leaf {}", leaf) : std::string("root"),
                             ref.shape.to_string(), ref.values.size(), got.shape.to_string(),
                             got.values.size());
      verdict.divergences.push_back(std::move(d));
      return;
    }
    std::size_t count = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < ref.values.size(); ++i) {
      // Only the trusted side's bound counts: a backend under test that bounds its own wrong
      // values (a plugin's self-reported error_bound) would otherwise excuse its own faults.
      // Its bound is shown in the report (own_bound), never used.
      const std::optional<double> bound = bound_at(ref, i);
      // +inf (or a NaN from inf - inf) means the reference cannot tell which side of a kink
      // f32 lands on; any answer there is defensible, so the element is counted, not judged.
      if (bound && !(*bound < std::numeric_limits<double>::infinity())) {
        ++indeterminate;
        continue;
      }
      if (values_diverge(ref.values[i], got.values[i], options.tolerance, bound)) {
        if (count == 0) first = i;
        ++count;
      }
    }
    if (count == 0) return;
    Divergence d = make(kind, leaf);
    d.count = count;
    d.first_index = first;
    d.expected = ref.values[first];
    d.actual = got.values[first];
    if (!got.error_bound.empty())
      d.detail = fmt::format("own bound {} (the backend's, shown, not used)",
                             bound_at(got, first).value_or(0.0));
    verdict.divergences.push_back(std::move(d));
  }

  void outcome(const Outcome& ref, const Outcome& got) {
    tensor(ref.root, got.root, DivergenceKind::Forward, -1);
    if (options.tangents) tensor(ref.tangent, got.tangent, DivergenceKind::Tangent, -1);
    if (!options.gradients) return;
    if (ref.grads.size() != got.grads.size()) {
      Divergence d = make(DivergenceKind::Shape, -1);
      d.detail =
          fmt::format("expected {} leaf gradients, got {}", ref.grads.size(), got.grads.size());
      verdict.divergences.push_back(std::move(d));
      return;
    }
    for (std::size_t leaf = 0; leaf < ref.grads.size(); ++leaf)
      tensor(ref.grads[leaf], got.grads[leaf], DivergenceKind::Gradient, static_cast<int>(leaf));
    if (!options.hessian) return;
    if (ref.hvp.size() != got.hvp.size()) {
      Divergence d = make(DivergenceKind::Shape, -1);
      d.detail = fmt::format("expected {} leaf Hessian-vector products, got {}", ref.hvp.size(),
                             got.hvp.size());
      verdict.divergences.push_back(std::move(d));
      return;
    }
    for (std::size_t leaf = 0; leaf < ref.hvp.size(); ++leaf)
      tensor(ref.hvp[leaf], got.hvp[leaf], DivergenceKind::Hvp, static_cast<int>(leaf));
  }
};

// A backend that ran to a result or an error and was judged (the reference is not: it cannot
// diverge, so it is nobody's regression and nobody's baseline).
bool judged(const std::vector<Outcome>& outcomes, const std::string& backend) {
  for (std::size_t b = 1; b < outcomes.size(); ++b)
    if (outcomes[b].backend == backend) return outcomes[b].status != Status::Unsupported;
  return false;
}

void judge_regressions(const std::vector<Outcome>& outcomes, const std::vector<Baseline>& baselines,
                       Verdict& verdict) {
  const auto diverges = [&](const std::string& backend) {
    return std::any_of(verdict.divergences.begin(), verdict.divergences.end(),
                       [&](const Divergence& d) { return d.backend == backend; });
  };
  for (const Baseline& pair : baselines) {
    if (!judged(outcomes, pair.backend) || !judged(outcomes, pair.baseline)) continue;
    if (diverges(pair.baseline)) continue;
    for (const Divergence& d : verdict.divergences) {
      if (d.backend != pair.backend) continue;
      const bool seen = std::any_of(
          verdict.regressions.begin(), verdict.regressions.end(), [&](const Regression& r) {
            return r.backend == pair.backend && r.baseline == pair.baseline && r.kind == d.kind;
          });
      if (!seen) verdict.regressions.push_back({pair.backend, pair.baseline, d.kind});
    }
  }
}

// Whether two backends' tensors differ by the oracle's rule, the first in the reference's place
// and the reference's bound (when it has one for the element) as the slack; elements the
// reference leaves indeterminate are not judged.
bool tensors_apart(const HostTensor& ref, const HostTensor& a, const HostTensor& b,
                   double tolerance) {
  if (!(a.shape == b.shape) || a.values.size() != b.values.size()) return true;
  const bool bounded = ref.values.size() == a.values.size();
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const std::optional<double> bound = bounded ? bound_at(ref, i) : std::nullopt;
    if (bound && !(*bound < std::numeric_limits<double>::infinity())) continue;
    if (values_diverge(a.values[i], b.values[i], tolerance, bound)) return true;
  }
  return false;
}

bool outcomes_apart(const Outcome& ref, const Outcome& a, const Outcome& b,
                    const OracleOptions& options) {
  if (a.status != Status::Ok || b.status != Status::Ok) return a.status != b.status;
  const auto apart = [&](const HostTensor& r, const HostTensor& x, const HostTensor& y) {
    return tensors_apart(r, x, y, options.tolerance);
  };
  const HostTensor none;
  const auto at = [&](const std::vector<HostTensor>& v, std::size_t i) -> const HostTensor& {
    return ref.status == Status::Ok && i < v.size() ? v[i] : none;
  };
  if (apart(ref.status == Status::Ok ? ref.root : none, a.root, b.root)) return true;
  if (options.tangents &&
      apart(ref.status == Status::Ok ? ref.tangent : none, a.tangent, b.tangent))
    return true;
  if (options.gradients) {
    if (a.grads.size() != b.grads.size()) return true;
    for (std::size_t i = 0; i < a.grads.size(); ++i)
      if (apart(at(ref.grads, i), a.grads[i], b.grads[i])) return true;
  }
  if (options.hessian) {
    if (a.hvp.size() != b.hvp.size()) return true;
    for (std::size_t i = 0; i < a.hvp.size(); ++i)
      if (apart(at(ref.hvp, i), a.hvp[i], b.hvp[i])) return true;
  }
  return false;
}

// torch-compile and the eager PyTorch beside it, each judged (not the reference, not
// unsupported): nullptr pair otherwise. libtorch first, as the campaign BACKENDS of issue 32
// name it; torch-eager-py (bit for bit the same release from Python) when libtorch is absent.
// In a 1.13 build `libtorch` is 1.13, an older eager than the venv's compile: the verdict
// still says who is within the reference's bound.
std::pair<const Outcome*, const Outcome*> compile_pair(const std::vector<Outcome>& outcomes) {
  const auto find = [&](std::string_view name) -> const Outcome* {
    for (std::size_t b = 1; b < outcomes.size(); ++b)
      if (outcomes[b].backend == name && outcomes[b].status != Status::Unsupported)
        return &outcomes[b];
    return nullptr;
  };
  const Outcome* compiled = find("torch-compile");
  const Outcome* eager = find("libtorch");
  if (!eager) eager = find("torch-eager-py");
  if (!compiled || !eager) return {nullptr, nullptr};
  return {compiled, eager};
}

void judge_compile(const std::vector<Outcome>& outcomes, const OracleOptions& options,
                   Verdict& verdict) {
  const auto [compiled, eager] = compile_pair(outcomes);
  if (!compiled) return;
  const auto within = [&](const std::string& backend) {
    return std::none_of(verdict.divergences.begin(), verdict.divergences.end(),
                        [&](const Divergence& d) { return d.backend == backend; });
  };
  CompileVerdict c;
  c.compiled = compiled->backend;
  c.eager = eager->backend;
  c.compiled_within = within(c.compiled);
  c.eager_within = within(c.eager);
  c.apart = outcomes_apart(outcomes.front(), *eager, *compiled, options);
  verdict.compile = std::move(c);
}

} // namespace

std::string compile_class(const CompileVerdict& v) {
  if (!v.compiled_within && v.eager_within) return "compiled-outside";
  if (v.compiled_within && !v.eager_within) return "eager-outside";
  if (!v.compiled_within) return v.apart ? "both-outside-apart" : "both-outside-alike";
  return v.apart ? "both-within-apart" : "both-within";
}

Verdict compare(const std::vector<Outcome>& outcomes, const OracleOptions& options) {
  Verdict verdict;
  if (outcomes.empty()) return verdict;
  const Outcome& ref = outcomes.front();
  verdict.reference = ref.backend;
  if (ref.status == Status::Unsupported) {
    verdict.skipped.push_back(ref.backend);
    return verdict;
  }
  for (std::size_t b = 1; b < outcomes.size(); ++b) {
    const Outcome& got = outcomes[b];
    if (got.status == Status::Unsupported) {
      verdict.skipped.push_back(got.backend);
      continue;
    }
    ++verdict.compared;
    Judge judge{options, got.backend, verdict};
    // A crash, a hang or runaway memory is the backend's own failure whatever the reference did.
    if (const std::optional<DivergenceKind> failure = child_failure(got.status)) {
      Divergence d = judge.make(*failure, -1);
      d.detail = got.message;
      verdict.divergences.push_back(std::move(d));
      continue;
    }
    if (child_failure(ref.status)) {
      Divergence d = judge.make(DivergenceKind::Error, -1);
      d.detail = "the reference " + ref.message + "; backend returned values";
      verdict.divergences.push_back(std::move(d));
      continue;
    }
    if (ref.status == Status::Error || got.status == Status::Error) {
      if (ref.status == got.status) continue; // both raised: agreement
      // One raised where the other knows a correct implementation may: indeterminate.
      if ((ref.status == Status::Error && got.error_possible) ||
          (got.status == Status::Error && ref.error_possible)) {
        verdict.indeterminate_by_backend.push_back({got.backend, 1});
        verdict.indeterminate += 1;
        continue;
      }
      Divergence d = judge.make(DivergenceKind::Error, -1);
      d.detail = ref.status == Status::Error
                     ? "reference raised: " + ref.message + "; backend returned values"
                     : got.message;
      verdict.divergences.push_back(std::move(d));
      continue;
    }
    judge.outcome(ref, got);
    if (judge.indeterminate > 0) {
      verdict.indeterminate_by_backend.push_back({got.backend, judge.indeterminate});
      verdict.indeterminate += judge.indeterminate;
    }
  }
  judge_regressions(outcomes, options.baselines, verdict);
  judge_compile(outcomes, options, verdict);
  return verdict;
}

std::string kind_name(DivergenceKind kind) {
  switch (kind) {
  case DivergenceKind::Forward: return "forward";
  case DivergenceKind::Gradient: return "gradient";
  case DivergenceKind::Tangent: return "tangent";
  case DivergenceKind::Hvp: return "hvp";
  case DivergenceKind::Error: return "error";
  case DivergenceKind::Shape: return "shape";
  case DivergenceKind::Crash: return "crash";
  case DivergenceKind::Hang: return "hang";
  case DivergenceKind::Oom: return "oom";
  }
  return "unknown";
}

namespace {

// Keeps a report line one line with one quoted field: multi-line framework errors are cut at
// the first newline and inner quotes become single quotes.
std::string one_line(std::string_view text) {
  std::string out(text.substr(0, text.find('\n')));
  std::replace(out.begin(), out.end(), '"', '\'');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return out;
}

} // namespace

std::string format_verdict(const Verdict& verdict) {
  std::string out;
  for (const Divergence& d : verdict.divergences) {
    fmt::format_to(std::back_inserter(out),
                   "DIVERGENCE backend={} kind={} leaf={} count={} first_index={} expected={} "
                   "actual={} detail=\"{}\"\n",
                   d.backend, kind_name(d.kind), d.leaf, d.count, d.first_index, d.expected,
                   d.actual, one_line(d.detail));
  }
  for (const Regression& r : verdict.regressions)
    fmt::format_to(std::back_inserter(out), "REGRESSION backend={} baseline={} kind={}\n",
                   r.backend, r.baseline, kind_name(r.kind));
  for (const std::string& s : verdict.skipped)
    fmt::format_to(std::back_inserter(out), "SKIPPED backend={}\n", s);
  for (const Indeterminate& i : verdict.indeterminate_by_backend)
    fmt::format_to(std::back_inserter(out), "INDETERMINATE backend={} count={}\n", i.backend,
                   i.count);
  if (const std::optional<CompileVerdict>& c = verdict.compile)
    fmt::format_to(std::back_inserter(out),
                   "COMPILE-VERDICT compiled={} eager={} apart={} compiled_backend={} "
                   "eager_backend={} class={}\n",
                   c->compiled_within ? "within" : "outside",
                   c->eager_within ? "within" : "outside", c->apart ? "yes" : "no", c->compiled,
                   c->eager, compile_class(*c));
  fmt::format_to(
      std::back_inserter(out),
      "VERDICT reference={} compared={} divergences={} skipped={} indeterminate={} result={}\n",
      verdict.reference, verdict.compared, verdict.divergences.size(), verdict.skipped.size(),
      verdict.indeterminate, verdict.agree() ? "agree" : "diverge");
  return out;
}

} // namespace burnmark
