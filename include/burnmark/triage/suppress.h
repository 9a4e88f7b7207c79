// Known-bug suppression: corpus/known_bugs.txt lists bugs already triaged, so a campaign keeps
// finding new bugs instead of re-reporting one that saturates the channel.
//
// File format, one bug per line, '#' starts a comment:
//   <signature-id> <bugs.md anchor> <one-line description>
//   3f9a0c2e11d4 sigmoid-tail    sigmoid wrong past the 8th element
//
// Design of the hot-path check (KnownBugFilter). The file names FULL signatures, which need a
// minimised program, and minimising on every divergence (hundreds of runs) would stall a
// campaign that hits one bug every few executions. So the filter keys a cache on the
// pre-signature (one analyse(): one or two checks per register, no minimisation) and only
// minimises the first time it meets a pre-signature; later divergences with that pre-signature
// cost one analyse() and a hash lookup. Before minimising, the filter isolates analyse()'s
// culprit (culprit_roots(), a few runs of one-op programs): when each library's divergence shows
// there on its own with a root the list names, that is the answer, and most first-met
// pre-signatures of a campaign (known faults reached through new graphs) need no minimisation.
// Entries in the file stay exact signatures, so the file is written from `burnmark triage` output
// and needs no second id per bug. The price: two different bugs sharing a pre-signature (same
// primary class, culprit op, its operands and the special values upstream of it) inherit the first
// one's answer within a process.
//
// analyse() itself checks every prefix of the program (one or two runs per register), and
// libFuzzer's inputs share prefixes: most of those checks re-run a program the filter already
// ran. So the filter's Runner memoises (Runner::memoise), keyed on the whole program, leaf
// values included. That is exact: a repeated program gets the verdict its own run gave, and a
// program that differs in anything (a new bug in the same shape of program included) is run.
// A key on the program's structure alone would not be: the culprit analyse() finds depends on
// the leaf values, so a new bug upstream of a known one would inherit the known one's answer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/minimize.h"
#include "burnmark/triage/runner.h"
#include "burnmark/triage/signature.h"

namespace burnmark {

struct KnownBug {
  std::string id;
  std::string anchor;
  std::string description;
};

class Suppressions {
public:
  // A missing file is an error (the caller decides whether that matters); so is a malformed
  // line, reported as "PATH:LINE: why". `error` is cleared on success.
  static Suppressions load(const std::string& path, std::string& error);
  static Suppressions parse(std::string_view text, std::string& error);

  bool empty() const { return bugs_.empty(); }
  std::size_t size() const { return bugs_.size(); }
  const std::vector<KnownBug>& bugs() const { return bugs_; }
  // The entry for this signature id, or nullptr.
  const KnownBug* find(std::string_view id) const;
  // The entry for the signature's own id, else for its f32, reverse-mode or culprit id, else
  // (find_root) the entry of its root cause when every root is listed.
  const KnownBug* find(const Signature& signature) const;
  // By the signature's graph-level ids alone (its own, f32, reverse-mode, culprit, per backend).
  const KnownBug* find_graph(const Signature& signature) const;
  // By root causes alone: the first root's entry when every root of `roots` is listed (roots of
  // several libraries may be listed under different anchors); nullptr for none or an unlisted one.
  const KnownBug* find_root(const std::vector<std::string>& root_ids) const;
  bool matches(const Signature& signature) const { return find(signature) != nullptr; }

private:
  std::vector<KnownBug> bugs_;
};

// The per-divergence check for fuzz targets. Holds the suppression list, a Runner over the same
// backends the target compares, and the pre-signature cache described above.
class KnownBugFilter {
public:
  KnownBugFilter(Suppressions suppressions, Runner runner, MinimizeOptions options = {});

  // The known bug `program` shows, or nullptr (also when the backends agree). Free when the
  // list is empty.
  const KnownBug* match(const Program& program);
  // The same, for a program whose verdict the caller already has: a run of every backend and the
  // oracle, over the same backends and options as this filter's Runner (the fuzz targets' own
  // verdict, after the convention judge); one run of the whole program fewer.
  const KnownBug* match(const Program& program, const Verdict& verdict);
  bool is_known(const Program& program) { return match(program) != nullptr; }
  bool is_known(const Program& program, const Verdict& verdict) {
    return match(program, verdict) != nullptr;
  }

  std::size_t minimisations() const { return minimisations_; }
  // First-met pre-signatures answered by culprit_roots() (a known root at analyse()'s culprit)
  // without minimising.
  std::size_t root_answers() const { return root_answers_; }
  // What the filter costs, beside the fuzzing itself: programs it ran (each through every
  // backend, or the reference alone), and runs its memo answered instead.
  std::size_t runs() const { return runner_.runs(); }
  std::size_t memo_hits() const { return runner_.memo_hits(); }

  // Programs (of each kind: verdicts, upstream gradients) the memo holds before it starts over,
  // and the memory they may take: most of the hits come from the short prefixes many inputs
  // share, and a run's programs grow as libFuzzer lengthens its inputs, so the byte bound is the
  // one that holds memory flat over a long campaign.
  static constexpr MemoCapacity kMemoCapacity{1024, 4u << 20};
  std::size_t memo_bytes() const { return runner_.memo_bytes(); }

private:
  Suppressions suppressions_;
  Runner runner_;
  MinimizeOptions options_;
  // pre-signature -> the known bug its first program's signature matched, or nullptr: the answer
  // alone, so that memory grows by a short string per pre-signature over a long campaign
  std::unordered_map<std::string, const KnownBug*> known_of_pre_;
  std::size_t minimisations_ = 0;
  std::size_t root_answers_ = 0;
};

} // namespace burnmark
