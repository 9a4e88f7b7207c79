// Telling a convention from a bug: a backend that disagrees with the reference but agrees with the
// reference switched to the other side of one registered convention (conventions.def) took that
// side. Its divergence is reported as a `convention` naming the entry: counted, shown, kept out
// of panic aborts and "new bug" status, never folded into agreement.
#pragma once

#include <memory>
#include <string>
#include <string_view>
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

// A documented behaviour of a backend under test that the reference does not model and cannot
// switch to, judged by a rule of its own instead of a switched reference (lowp_fusion.h's
// inductor-lowp-fusion). Not a conventions.def entry, which is a side the reference can take.
struct BackendConvention {
  std::string_view name;
  std::string_view description;
  std::string_view doc;   // the documentation that makes the behaviour intended
  std::string_view issue; // the maintainers saying so
};

// JAX raises no error under jit that depends on runtime values: its checkify guide says such
// checks must be added (checkify.check, index_checks, ...) to be raised at all. So where the
// reference raises on a legal program (inv of a singular matrix: no inverse exists) and JAX returns
// values, JAX follows its documented design; no value it returns can be judged right or wrong.
inline constexpr BackendConvention kJaxNoValueErrors{
    "jax-no-value-errors",
    "under jit JAX raises no error that depends on values: where the reference raises (a singular "
    "matrix's inverse) JAX returns values (inf, NaN), which no right answer exists to judge",
    "https://docs.jax.dev/en/latest/debugging/checkify_guide.html", "none"};

struct ConventionHit {
  std::string backend;
  Convention convention{};
  ConventionSide side = ConventionSide::Other;
  const BackendConvention* backend_convention = nullptr; // set: this explains it, not `convention`
};

struct ConventionJudgement {
  std::vector<ConventionHit> hits; // diverging backends explained by a convention
  Verdict residual;                // the verdict without the explained backends' divergences
};

// One "CONVENTION backend=B name=N side=other|reference doc=URL description=\"...\"" line per
// hit; a BackendConvention's line has "issue=URL" after doc.
std::string format_conventions(const std::vector<ConventionHit>& hits);

class ConventionJudge {
public:
  // The reference with each registered convention switched (make_convention_references()).
  // `all`, when given, is the reference with every convention switched at once, per library
  // (make_all_conventions_references(): the entry "" for libraries without conventions of their
  // own): a backend that agrees with no single switch but with all of its library's at once took
  // several sides in one program, and is reported with each convention whose switch changes the
  // reference's outcome there.
  // `reference`, when given, is the plain reference (make_reference_backend()): it gives the
  // float64 baseline of a bf16/f16 program on which torch-compile diverges (lowp_fusion.h).
  explicit ConventionJudge(std::vector<std::pair<Convention, std::unique_ptr<Backend>>> others,
                           std::vector<std::pair<std::string, std::unique_ptr<Backend>>> all = {},
                           std::unique_ptr<Backend> reference = nullptr)
      : others_(std::move(others)), all_(std::move(all)), reference_(std::move(reference)) {}

  // outcomes[0] must come from the built-in reference: only then are its convention points the
  // ones conventions.def describes. Each diverging backend is compared with every switched
  // reference whose convention's scope covers its library (backend_library()) in turn; the
  // first it agrees with explains it. Only conventions whose point
  // outcomes[0]'s run reached (Outcome::conventions_reached) are run: another one switched gives
  // that very run, which the backend already diverged from. Then, with a `reference`, a
  // torch-compile divergence in a bf16/f16 program that no registered convention explains is
  // judged by PyTorch's float64-baseline rule (judge_lowp_fusion): explained, it is a hit naming
  // inductor-lowp-fusion; not, its details say which side is closer to float64.
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
  std::vector<std::pair<std::string, std::unique_ptr<Backend>>> all_;
  std::unique_ptr<Backend> reference_;

  // The registered conventions' part of judge(), on j.residual.
  void registered(const Program& program, const RunOptions& run,
                  const std::vector<Outcome>& outcomes, const OracleOptions& oracle,
                  ConventionJudgement& j);
};

} // namespace burnmark
