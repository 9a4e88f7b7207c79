// Telling a convention from a bug: a backend that disagrees with the reference but agrees with the
// reference switched to the other side of one registered convention (conventions.def) took that
// side. Its divergence is reported as a `convention` naming the entry: counted, shown, kept out
// of panic aborts and "new bug" status, never folded into agreement.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "burnmark/backends/conventions.h"
#include "burnmark/driver/driver.h"
#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"

namespace burnmark {

// Which side of a convention a backend took: the other side (it diverges from the reference,
// which the hit explains) or the reference's own (it agrees, on a program that reaches the
// convention's point, so the choice is shown although nothing diverges).
enum class ConventionSide { Other, Reference };

struct ConventionHit {
  std::string backend;
  Convention convention;
  ConventionSide side = ConventionSide::Other;
};

struct ConventionJudgement {
  std::vector<ConventionHit> hits; // diverging backends explained by a convention
  Verdict residual;                // the verdict without the explained backends' divergences
};

// One "CONVENTION backend=B name=N side=other|reference doc=URL description=\"...\"" line per
// hit.
std::string format_conventions(const std::vector<ConventionHit>& hits);

class ConventionJudge {
public:
  // The reference with each registered convention switched (make_convention_references()).
  // `all`, when given, is the reference with every convention switched at once: a backend
  // that agrees with no single switch but with all of them took several sides in one program,
  // and is reported with each convention whose switch changes the reference's outcome there.
  explicit ConventionJudge(std::vector<std::pair<Convention, std::unique_ptr<Backend>>> others,
                           std::unique_ptr<Backend> all = nullptr)
      : others_(std::move(others)), all_(std::move(all)) {}

  // outcomes[0] must come from the built-in reference: only then are its convention points the
  // ones conventions.def describes. Each diverging backend is compared with every switched
  // reference whose convention's scope covers its library (backend_library()) in turn; the
  // first it agrees with explains it. Only conventions whose point
  // outcomes[0]'s run reached (Outcome::conventions_reached) are run: another one switched gives
  // that very run, which the backend already diverged from.
  ConventionJudgement judge(const Program& program, const RunOptions& run,
                            const std::vector<Outcome>& outcomes, const Verdict& verdict,
                            const OracleOptions& oracle);

  // Backends that agree with the reference on a program where some switched reference's outcome
  // differs from the reference's: each took the reference's own side of that convention. Runs
  // every switched reference whose point the run reached once, so it is for commands on one program
  // (`burnmark run`), not for the fuzz loop.
  std::vector<ConventionHit> reference_sides(const Program& program, const RunOptions& run,
                                             const std::vector<Outcome>& outcomes,
                                             const Verdict& verdict, const OracleOptions& oracle);

private:
  std::vector<std::pair<Convention, std::unique_ptr<Backend>>> others_;
  std::unique_ptr<Backend> all_;
};

} // namespace burnmark
