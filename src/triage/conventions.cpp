// ConventionJudge: re-runs the program on the reference with one convention switched at a time,
// only for backends that diverged and only conventions whose point the reference's run reached,
// so agreeing inputs and programs far from every convention cost nothing; reference_sides, for one
// program on request, shows the conventions whose reference side agreeing backends took.
#include "burnmark/triage/conventions.h"
#include "burnmark/triage/signature.h"

#include "burnmark/triage/lowp_fusion.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>

namespace burnmark {

std::string format_conventions(const std::vector<ConventionHit>& hits) {
  std::string out;
  for (const ConventionHit& h : hits) {
    if (const BackendConvention* b = h.backend_convention) {
      out += fmt::format(
          "CONVENTION backend={} name={} side={} doc={} issue={} description=\"{}\"\n", h.backend,
          b->name, h.side == ConventionSide::Reference ? "reference" : "other", b->doc, b->issue,
          b->description);
      continue;
    }
    const ConventionInfo& c = convention_info(h.convention);
    out += fmt::format(
        "CONVENTION backend={} name={} side={} doc={} description=\"{}\"\n", h.backend, c.name,
        h.side == ConventionSide::Reference ? "reference" : "other", c.doc, c.description);
  }
  return out;
}

namespace {

// True when `narrower` (a backend's divergences from a switched reference) is strictly less than
// `backend`'s part of `wider` (from the reference): no output diverges there that did not before,
// none in more elements, and fewer elements in all.
bool narrows(const std::vector<Divergence>& wider, const std::vector<Divergence>& narrower,
             const std::string& backend) {
  std::size_t before = 0, after = 0;
  for (const Divergence& d : wider)
    if (d.backend == backend) before += d.count;
  for (const Divergence& n : narrower) {
    const auto same = std::find_if(wider.begin(), wider.end(), [&](const Divergence& w) {
      return w.backend == backend && w.kind == n.kind && w.leaf == n.leaf;
    });
    if (same == wider.end() || n.count > same->count) return false;
    after += n.count;
  }
  return after < before;
}

} // namespace

ConventionJudgement ConventionJudge::judge(const Program& program, const RunOptions& run,
                                           const std::vector<Outcome>& outcomes,
                                           const Verdict& verdict, const OracleOptions& oracle) {
  ConventionJudgement j;
  j.residual = verdict;
  if (verdict.agree() || outcomes.empty()) return j;
  registered(program, run, outcomes, oracle, j);
  // JAX returning values where the reference raised: its documented design (kJaxNoValueErrors).
  if (outcomes[0].status == Status::Error)
    for (std::size_t b = 1; b < outcomes.size(); ++b) {
      const std::string& name = outcomes[b].backend;
      if (outcomes[b].status != Status::Ok || backend_library(name) != "jax") continue;
      if (std::erase_if(j.residual.divergences, [&](const Divergence& d) {
            return d.backend == name && d.kind == DivergenceKind::Error;
          }) > 0)
        j.hits.push_back({name, Convention{}, ConventionSide::Other, &kJaxNoValueErrors});
    }
  // Inductor's low-precision fusion: PyTorch's own rule, after the registered conventions (a
  // compile divergence one of them explains is named by it).
  if (reference_ && lowp_fusion_applies(program, j.residual)) {
    const Outcome f64 = run_backend(*reference_, with_float_dtype(program, FloatDType::F64), run);
    if (judge_lowp_fusion(outcomes, j.residual, f64)) {
      const std::string& compiled = j.residual.compile->compiled;
      j.hits.push_back({compiled, Convention{}, ConventionSide::Other, &kInductorLowpFusion});
      std::erase_if(j.residual.divergences,
                    [&](const Divergence& d) { return d.backend == compiled; });
    }
  }
  return j;
}

void ConventionJudge::registered(const Program& program, const RunOptions& run,
                                 const std::vector<Outcome>& outcomes, const OracleOptions& oracle,
                                 ConventionJudgement& j) {
  const Verdict& verdict = j.residual;
  // A convention whose point the reference's run never reached gives that very run when
  // switched: it cannot explain anything, and is not run. Most programs reach none.
  const ConventionSet reached = ConventionSet::from_bits(outcomes[0].conventions_reached);
  if (reached.empty()) return;
  // One run per reached convention, made on first need.
  std::vector<std::optional<Outcome>> alternatives(others_.size());
  const auto alternative = [&](std::size_t c) -> const Outcome* {
    if (!reached.has(others_[c].first)) return nullptr;
    if (!alternatives[c]) alternatives[c] = run_backend(*others_[c].second, program, run);
    return &*alternatives[c];
  };
  // Per entry of all_, the reference with every convention of its library switched, made on
  // first need.
  std::vector<std::optional<Outcome>> all_outcomes(all_.size());
  const auto all_at_once = [&](const std::string& library) -> const Outcome* {
    if (all_.empty()) return nullptr;
    std::size_t e = 0; // "": the "any" conventions only
    for (std::size_t i = 0; i < all_.size(); ++i)
      if (all_[i].first == library) e = i;
    if (!all_outcomes[e]) all_outcomes[e] = run_backend(*all_[e].second, program, run);
    return &*all_outcomes[e];
  };
  for (std::size_t b = 1; b < outcomes.size(); ++b) {
    const std::string& name = outcomes[b].backend;
    const bool diverged = std::any_of(verdict.divergences.begin(), verdict.divergences.end(),
                                      [&](const Divergence& d) { return d.backend == name; });
    if (!diverged) continue;
    // Only the conventions this backend's library documents (or every library's) explain it.
    const std::string library = backend_library(name);
    const auto in_scope = [&](std::size_t c) {
      return convention_applies_to(convention_info(others_[c].first), library);
    };
    bool explained = false;
    for (std::size_t c = 0; c < others_.size(); ++c) {
      if (!in_scope(c)) continue;
      const Outcome* other = alternative(c);
      if (other == nullptr) continue;
      const Verdict v = compare({*other, outcomes[b]}, oracle);
      if (!v.agree() || v.compared == 0) continue;
      j.hits.push_back({name, others_[c].first});
      explained = true;
      break;
    }
    if (const Outcome* all = explained ? nullptr : all_at_once(library)) {
      const Verdict v = compare({*all, outcomes[b]}, oracle);
      if (v.agree() && v.compared > 0) {
        // Every convention whose switch alone moves the reference here took part.
        for (std::size_t c = 0; c < others_.size(); ++c)
          if (const Outcome* other = in_scope(c) ? alternative(c) : nullptr;
              other != nullptr && !compare({outcomes[0], *other}, oracle).agree())
            j.hits.push_back({name, others_[c].first});
        explained = true;
      }
    }
    if (explained) {
      std::erase_if(j.residual.divergences, [&](const Divergence& d) { return d.backend == name; });
      continue;
    }
    // A convention scoped to this backend's library is a mode the library documents for every
    // op (JAX's flush to zero), so that side is this backend's baseline: when measuring from it
    // leaves less, what is left is the backend's own divergence, and it alone is signed and
    // triaged. Otherwise a program meeting the mode and an unrelated bug is one mixed signature
    // that neither the convention nor the bug's known root explains.
    for (std::size_t c = 0; c < others_.size(); ++c) {
      if (convention_info(others_[c].first).scope == "any" || !in_scope(c)) continue;
      const Outcome* other = alternative(c);
      if (other == nullptr) continue;
      Verdict from_mode = compare({*other, outcomes[b]}, oracle);
      if (from_mode.compared == 0 || !narrows(j.residual.divergences, from_mode.divergences, name))
        continue;
      j.hits.push_back({name, others_[c].first});
      std::erase_if(j.residual.divergences, [&](const Divergence& d) { return d.backend == name; });
      for (Divergence& d : from_mode.divergences)
        j.residual.divergences.push_back(std::move(d));
      break;
    }
  }
}

std::vector<ConventionHit> ConventionJudge::reference_sides(const Program& program,
                                                            const RunOptions& run,
                                                            const std::vector<Outcome>& outcomes,
                                                            const Verdict& verdict,
                                                            const OracleOptions& oracle) {
  std::vector<ConventionHit> hits;
  if (outcomes.size() < 2 || outcomes[0].status != Status::Ok) return hits;
  const auto agreed = [&](const Outcome& o) {
    return o.status == Status::Ok &&
           std::none_of(verdict.divergences.begin(), verdict.divergences.end(),
                        [&](const Divergence& d) { return d.backend == o.backend; });
  };
  const ConventionSet reached = ConventionSet::from_bits(outcomes[0].conventions_reached);
  for (const auto& [convention, backend] : others_) {
    if (!reached.has(convention)) continue; // switched, the very same run
    const auto in_scope = [&, c = convention](const Outcome& o) {
      return convention_applies_to(convention_info(c), backend_library(o.backend));
    };
    if (std::none_of(outcomes.begin() + 1, outcomes.end(), in_scope)) continue;
    const Outcome other = run_backend(*backend, program, run);
    // The program does not reach this convention's point: both sides compute the same.
    if (compare({outcomes[0], other}, oracle).agree()) continue;
    for (std::size_t b = 1; b < outcomes.size(); ++b)
      if (agreed(outcomes[b]) && in_scope(outcomes[b]))
        hits.push_back({outcomes[b].backend, convention, ConventionSide::Reference});
  }
  return hits;
}

} // namespace burnmark
