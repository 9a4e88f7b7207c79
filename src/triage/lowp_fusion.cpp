// Inductor's low-precision fusion judged by PyTorch's float64-baseline rule (lowp_fusion.h).
#include "burnmark/triage/lowp_fusion.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace burnmark {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// How far x is from the f64 baseline f: a NaN or an infinity is at distance 0 from itself and
// infinitely far from anything else.
double distance(double x, double f) {
  if (std::isnan(f) || std::isnan(x)) return std::isnan(f) && std::isnan(x) ? 0.0 : kInf;
  if (x == f) return 0.0;
  if (std::isinf(x) || std::isinf(f)) return kInf;
  return std::fabs(x - f);
}

const Outcome* outcome_of(const std::vector<Outcome>& outcomes, const std::string& backend) {
  for (const Outcome& o : outcomes)
    if (o.backend == backend) return &o;
  return nullptr;
}

// The tensor a divergence is about, or nullptr (a kind without values, a leaf out of range).
const HostTensor* tensor_of(const Outcome& o, const Divergence& d) {
  const auto at = [&](const std::vector<HostTensor>& v) -> const HostTensor* {
    return d.leaf >= 0 && static_cast<std::size_t>(d.leaf) < v.size() ? &v[d.leaf] : nullptr;
  };
  switch (d.kind) {
  case DivergenceKind::Forward: return &o.root;
  case DivergenceKind::Tangent: return &o.tangent;
  case DivergenceKind::Gradient: return at(o.grads);
  case DivergenceKind::Hvp: return at(o.hvp);
  case DivergenceKind::Error:
  case DivergenceKind::Shape:
  case DivergenceKind::Crash:
  case DivergenceKind::Hang:
  case DivergenceKind::Oom: return nullptr;
  }
  return nullptr;
}

// One diverging tensor against the f64 baseline: how many elements compiled is further at, the
// first of them.
struct Closeness {
  bool comparable = false;
  std::size_t further = 0;
  std::size_t first = 0;
};

Closeness closeness(const HostTensor* compiled, const HostTensor* eager, const HostTensor* f64) {
  Closeness c;
  if (!compiled || !eager || !f64) return c;
  const std::size_t n = compiled->values.size();
  if (eager->values.size() != n || f64->values.size() != n) return c;
  c.comparable = true;
  for (std::size_t i = 0; i < n; ++i) {
    const double f = f64->values[i];
    if (distance(compiled->values[i], f) > distance(eager->values[i], f)) {
      if (c.further == 0) c.first = i;
      ++c.further;
    }
  }
  return c;
}

} // namespace

bool lowp_fusion_applies(const Program& program, const Verdict& verdict) {
  if (program.float_dtype != FloatDType::BF16 && program.float_dtype != FloatDType::F16)
    return false;
  if (!verdict.compile) return false;
  for (const Divergence& d : verdict.divergences)
    if (d.backend == verdict.compile->compiled) return true;
  return false;
}

bool judge_lowp_fusion(const std::vector<Outcome>& outcomes, Verdict& verdict, const Outcome& f64) {
  if (!verdict.compile) return false;
  const Outcome* compiled = outcome_of(outcomes, verdict.compile->compiled);
  const Outcome* eager = outcome_of(outcomes, verdict.compile->eager);
  if (!compiled || !eager || compiled->status != Status::Ok || eager->status != Status::Ok ||
      f64.status != Status::Ok)
    return false;
  bool explained = true;
  for (const Divergence& d : verdict.divergences) {
    if (d.backend != compiled->backend) continue;
    const HostTensor* c = tensor_of(*compiled, d);
    const Closeness k = closeness(c, tensor_of(*eager, d), tensor_of(f64, d));
    if (!k.comparable || k.further > 0) explained = false;
  }
  if (explained) return true;
  // Not explained: each value divergence of compiled says which side the f64 baseline favours.
  for (Divergence& d : verdict.divergences) {
    if (d.backend != compiled->backend) continue;
    const HostTensor* c = tensor_of(*compiled, d);
    const HostTensor* e = tensor_of(*eager, d);
    const HostTensor* f = tensor_of(f64, d);
    const Closeness k = closeness(c, e, f);
    if (!k.comparable) continue;
    const std::string note =
        k.further == 0
            ? fmt::format("f64 baseline: compiled no further than {} here", eager->backend)
            : fmt::format("f64 baseline: {} closer at {} of {} elements (first index {}: f64 {} "
                          "{} {} compiled {})",
                          eager->backend, k.further, c->values.size(), k.first, f->values[k.first],
                          eager->backend, e->values[k.first], c->values[k.first]);
    d.detail = d.detail.empty() ? note : d.detail + "; " + note;
  }
  return false;
}

} // namespace burnmark
