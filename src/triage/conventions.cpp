// ConventionJudge: re-runs the program on the reference with one convention switched at a time,
// only for backends that diverged, so agreeing inputs cost nothing.
#include "burnmark/triage/conventions.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>

namespace burnmark {

std::string format_conventions(const std::vector<ConventionHit>& hits) {
  std::string out;
  for (const ConventionHit& h : hits) {
    const ConventionInfo& c = convention_info(h.convention);
    out += fmt::format("CONVENTION backend={} name={} description=\"{}\"\n", h.backend, c.name,
                       c.description);
  }
  return out;
}

ConventionJudgement ConventionJudge::judge(const Program& program, const RunOptions& run,
                                           const std::vector<Outcome>& outcomes,
                                           const Verdict& verdict, const OracleOptions& oracle) {
  ConventionJudgement j;
  j.residual = verdict;
  if (verdict.agree() || outcomes.empty()) return j;
  std::vector<Outcome> alternatives;  // one run per convention, made on first need
  std::optional<Outcome> all_outcome; // every convention switched, made on first need
  alternatives.reserve(others_.size());
  for (std::size_t b = 1; b < outcomes.size(); ++b) {
    const std::string& name = outcomes[b].backend;
    const bool diverged = std::any_of(verdict.divergences.begin(), verdict.divergences.end(),
                                      [&](const Divergence& d) { return d.backend == name; });
    if (!diverged) continue;
    bool explained = false;
    for (std::size_t c = 0; c < others_.size(); ++c) {
      if (alternatives.size() <= c)
        alternatives.push_back(run_backend(*others_[c].second, program, run));
      const Verdict v = compare({alternatives[c], outcomes[b]}, oracle);
      if (!v.agree() || v.compared == 0) continue;
      j.hits.push_back({name, others_[c].first});
      explained = true;
      break;
    }
    if (!explained && all_) {
      if (!all_outcome) all_outcome = run_backend(*all_, program, run);
      const Verdict v = compare({*all_outcome, outcomes[b]}, oracle);
      if (v.agree() && v.compared > 0) {
        // Every convention whose switch alone moves the reference here took part.
        for (std::size_t c = 0; c < others_.size(); ++c)
          if (!compare({outcomes[0], alternatives[c]}, oracle).agree())
            j.hits.push_back({name, others_[c].first});
        explained = true;
      }
    }
    if (explained)
      std::erase_if(j.residual.divergences, [&](const Divergence& d) { return d.backend == name; });
  }
  return j;
}

} // namespace burnmark
