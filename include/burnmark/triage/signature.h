// Signatures: a stable name for a bug, so that a pile of crash artifacts becomes one line per
// distinct bug and a known bug can be recognised again.
//
// The signature of a MINIMISED program is the canonical text
//   sig1|div=<sorted backend:kind classes>|graph=<canonical DAG>|special=<value classes>
// (with `dtype=bf16|` after `sig1|` in a program of a reduced dtype) and its id is the first 12 hex
// digits of the text's FNV-1a-64 hash.
//   - graph: a post-order walk from the root, each node numbered on first visit, written as
//     `label(args)`; operands of add and mul are ordered by a structural hash, so two programs
//     that differ only in register numbering, in the order of independent statements or in the
//     operand order of a commutative op get the same text. Leaves are `leaf` (their shapes and
//     values are left out: minimisation already chose the fewest elements that reproduce).
//   - special: the special-value classes present in the leaves (nan, inf, -inf, -0,
//     subnormal, huge); minimisation only keeps a special value when the bug needs it.
//
// The pre-signature is the cheap stand-in computed from an UNMINIMISED program (triage's
// grouping key, suppression's cache key):
//   pre1|<primary class>|<culprit label>(<operand labels>)|special=<classes in the culprit's cone>
// It needs analyse() (one or two checks per register) instead of a minimisation (hundreds).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/root_cause.h"
#include "burnmark/triage/runner.h"

namespace burnmark {

// One diverging backend's share of a signature, its backend named by its library (every
// LibTorch variant, in-process or in a child, is "libtorch"): the ids a campaign comparing only
// that library with the reference would have found for the same program.
struct BackendSignature {
  std::string backend;            // as the verdict names it
  std::string library;            // "libtorch", or the backend's own name
  std::vector<std::string> kinds; // "library:kind", sorted
  std::string id;
  // characterize fills these as for the whole signature (its f32_id, reverse_id, culprit_id).
  std::string f32_id;
  std::string reverse_id;
  std::string culprit_id;
};

struct Signature {
  std::string text;
  std::string id;                 // 12 hex digits of fnv1a64(text)
  std::vector<std::string> kinds; // "backend:kind", sorted
  std::vector<std::string> ops;   // op labels of the canonical walk, in order (leaves left out)
  std::vector<std::string> specials;
  // Verdict::regressions as "backend:kind<baseline" ("libtorch:forward<libtorch@1.13"), sorted:
  // where an older release agreed with the reference. Not part of the text (nor the id): a
  // known bug found again as a regression is the same bug.
  std::vector<std::string> regressions;
  // A reduced-dtype finding whose program diverges the same way (same kinds) in f32: the f32
  // signature's id, so a known f32 bug is recognised in bf16 too (characterize fills it; empty
  // otherwise). A bf16-only behaviour of the same graph keeps only its own id.
  std::string f32_id;
  // A forward-mode or second-order finding (tangents or H·v compared) that diverges the same way
  // without them, apart from its tangent and H·v: that reverse-mode signature's id, so a known
  // gradient bug is not found again through its tangent (an auto_element_wise tangent is the
  // gradient's formula). Empty for a divergence only forward mode shows.
  std::string reverse_id;
  // Both at once: a reduced-dtype forward-mode finding whose f32 program diverges the same way in
  // reverse mode alone (a bf16 tangent campaign reaching an f32 gradient bug).
  std::string f32_reverse_id;
  // The coarse identity of one fault reached through many graphs: the divergence classes and the
  // culprit op alone, `culprit1|<dtype>div=<kinds>|culprit=<label>` (characterize fills it). A
  // known-bug line naming it covers every graph that ends in that op with those kinds, so it is
  // for a fault of the op itself (maximum's forward formula), never a value-dependent one.
  std::string culprit_id;
  // With more than one diverging backend: each one's share (see BackendSignature). A finding is
  // known when every share is (suppress.h), so a 3-backend campaign recognises the lines a
  // ref,libtorch campaign wrote, and a variant that diverges its own way is still new.
  std::vector<BackendSignature> per_backend;
  // The faults behind the divergence, one per diverging library (root_cause.h; characterize
  // fills them): what a finding is recognised by across op graphs, dtypes, modes and releases.
  std::vector<RootCause> roots;
};

// The library a backend belongs to, for BackendSignature: "libtorch" for libtorch and every
// libtorch-* variant, also behind "child:" or "child[...]:" and in another release
// ("libtorch@1.13"); otherwise the name itself.
std::string backend_library(std::string_view backend);

Signature make_signature(const Program& minimized, const Verdict& verdict);
std::string pre_signature(const Program& program, const Finding& finding);
// Signature::culprit_id of a signature made from `minimized`, whose culprit op is `label`.
std::string culprit_signature_id(const Program& minimized, const Signature& signature,
                                 std::string_view label);
// The same for one backend's share.
std::string culprit_signature_id(const Program& minimized, const BackendSignature& share,
                                 std::string_view label);

std::uint64_t fnv1a64(std::string_view bytes);
std::string short_id(std::string_view text); // 12 hex digits of fnv1a64(text)

// "nan", "inf", "-inf", "-0", "subnormal" (nonzero, below f32's smallest normal, whatever the
// dtype, so that f32 programs keep their signatures), "huge" (finite, |x| >= 1e15), or "" for an
// ordinary finite value.
std::string_view special_class(double value);
// Sorted classes present in the leaves of `program` (all of them when `regs` is empty,
// otherwise only the leaves among `regs`).
std::vector<std::string> special_classes(const Program& program, const std::vector<Reg>& regs = {});

} // namespace burnmark
