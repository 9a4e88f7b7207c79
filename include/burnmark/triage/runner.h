// Running one program through a fixed set of backends and the oracle, and the facts triage
// derives from that: which (backend, kind) classes diverge, the primary one, and the culprit —
// the earliest register whose prefix program already shows the primary divergence.
//
// These are the only places triage executes anything; the minimiser, signatures, suppression
// and the sweep all see backends through a Runner, so tests can substitute a planted-bug backend
// without touching them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "burnmark/driver/driver.h"
#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/conventions.h"

namespace burnmark {

// How much Runner::memoise keeps of each kind of answer.
struct MemoCapacity {
  std::size_t entries = 0;
  std::size_t bytes = 0;
};

class Runner {
public:
  // backends[0] is the reference; the Runner does not own them. With `conventions` (not owned
  // either), check() returns the verdict without the divergences a registered convention
  // explains, so that the minimiser, signatures and suppression never keep a program for a
  // convention (BURNMARK_CONVENTION_FINDINGS=0, the default); null judges none.
  Runner(std::vector<Backend*> backends, OracleOptions options,
         ConventionJudge* conventions = nullptr);

  Verdict check(const Program& program);
  // The reference's values of register `reg` (forward only); nullopt if it errors or yields no
  // values of the register's shape. Used to cut an intermediate into a leaf.
  std::optional<std::vector<double>> values(const Program& program, Reg reg);
  // The reference's gradient of sum(root) with respect to leaf number `leaf` (leaf order);
  // nullopt if it errors. Used to weight an isolated culprit by its upstream gradient.
  std::optional<std::vector<double>> leaf_gradient(const Program& program, int leaf);
  // The reference's gradient of sum(root) with respect to register `reg`, what weighted()
  // multiplies a prefix ending at `reg` by: for an op, read from one backward pass of the whole
  // program that gives every register's (Backend::register_gradients, one reference run per
  // program); otherwise, or where that pass gives none, `reg` cut into a leaf holding its values,
  // then that leaf's gradient (two reference-only runs). nullopt if the reference cannot say.
  std::optional<std::vector<double>> upstream_gradient(const Program& program, Reg reg);

  // Remember the answers of check() and upstream_gradient() for up to `capacity.entries`
  // programs and about `capacity.bytes` of programs and answers each (0 entries, the default:
  // none), keyed on the whole program: leaf values bit for bit, attributes,
  // shapes, dtypes (and upstream_gradient's register). A program met again (analyse() re-checks the
  // same prefixes for every input that shares them) gets the answer its first run gave, which is
  // what a rerun gives: the backends and the oracle are deterministic on a program. A different
  // program, however close, never gets another's answer. Verdicts holding a crash, hang or OOM (a
  // child process's fate, not the program's) are not kept. When full, the memo starts over.
  void memoise(MemoCapacity capacity);
  // The memo's size now, both kinds together: what memory it holds (about).
  std::size_t memo_bytes() const { return checks_.bytes + upstream_.bytes; }

  // Programs executed so far (each runs every backend once, or the reference alone); answers
  // taken from the memo are not executions.
  std::size_t runs() const { return runs_; }
  // Calls of check() and upstream_gradient() answered by the memo (0 without memoise()).
  std::size_t memo_hits() const { return memo_hits_; }
  const OracleOptions& options() const { return options_; }
  const std::vector<Backend*>& backends() const { return backends_; }
  ConventionJudge* conventions() const { return conventions_; }

private:
  std::vector<Backend*> backends_;
  OracleOptions options_;
  ConventionJudge* conventions_;
  std::size_t runs_ = 0;

  template <class Answer> struct Memo {
    struct Entry {
      Program program;
      Reg reg; // upstream_gradient's register; -1 for check()
      Answer answer;
    };
    // hash -> the entries with that hash (a hash never decides alone: the program is compared
    // in full).
    std::unordered_map<std::uint64_t, std::vector<Entry>> entries;
    std::size_t size = 0;
    std::size_t bytes = 0; // about: see approx_bytes in runner.cpp
  };
  MemoCapacity memo_capacity_;
  std::size_t memo_hits_ = 0;
  Memo<Verdict> checks_;
  Memo<std::optional<std::vector<double>>> upstream_;
  // The reference's register_gradients() of the last program asked about: analyse() asks for
  // one register's upstream gradient after another of one program.
  Program gradients_of_;
  bool have_gradients_ = false;
  std::vector<std::optional<std::vector<double>>> register_gradients_;
  Verdict run_check(const Program& program, bool& keep);
  std::optional<std::vector<double>> run_upstream_gradient(const Program& program, Reg reg);
};

// A hash of everything operator== compares in a program (leaf values bit for bit).
std::uint64_t program_hash(const Program& program);

// "backend:kind", e.g. "libtorch:gradient": the unit a signature and the minimiser reason about.
std::string divergence_class(const Divergence& divergence);
// Sorted, without duplicates.
std::vector<std::string> divergence_classes(const Verdict& verdict);
// The class a minimiser must keep: errors first, then shape, forward, gradient (a forward
// divergence usually drags gradient divergences behind it, never the reverse), then by backend
// name. Empty when the verdict agrees.
std::string primary_class(const Verdict& verdict);
// With `ignore_leaf`, a gradient divergence of that leaf (a weighted program's upstream-gradient
// leaf) does not count.
bool has_class(const Verdict& verdict, const std::string& cls, int ignore_leaf = -1);

// What an op-producing statement is, for signatures: the op name, plus the attributes that pick
// a different code path whatever the shapes (pow's exponent, clamp's bounds). Dims are left out
// on purpose: they follow the shapes, which minimisation changes.
std::string stmt_label(const Program& program, Reg reg);
// True when some statement of the program has this label.
bool has_label(const Program& program, const std::string& label);

// One diverging program, analysed: its verdict, primary class and culprit.
struct Finding {
  Verdict verdict;
  std::string primary; // primary_class(verdict)
  Reg culprit = -1;    // earliest register whose prefix (re-rooted there) shows `primary`
  std::string culprit_label;
};

// nullopt when the backends agree on the program. The culprit is the earliest register whose
// prefix shows the primary class: re-rooted there (the backward pass seeded with ones) or, for a
// gradient class, also weighted() by the reference's upstream gradient at that register, whose
// own gradient is not judged. A wrong permutation in a view's backward (flip, permute, repeat)
// maps ones to ones, so only the weighted prefix shows it at the view rather than at the op
// downstream. Costs at most one check per register, two for a gradient class (plus two
// reference-only runs for the upstream gradient, skipped where it is all ones).
std::optional<Finding> analyse(Runner& runner, const Program& program);
// The same, given the program's verdict (runner.check(program), or the same backends' and
// options' verdict made elsewhere).
std::optional<Finding> analyse(Runner& runner, const Program& program, const Verdict& verdict);

// Whether a candidate still shows the same bug: the primary class still diverges and the
// culprit's op is still in the program. Cheap: one run.
bool reproduces(Runner& runner, const Program& candidate, const Finding& finding);

} // namespace burnmark
