// Root causes: the identity of a bug as the op that goes wrong, not the op graph that reached it.
//
// A signature (signature.h) names a minimised op graph, so one faulty kernel reached through
// `softshrink -> log`, through `softshrink -> exp` and in bf16 is three signatures. A root cause
// names the fault itself:
//   root1|<dtype=bf16|>library:kind|culprit=<op label>|trigger=<value classes>
//   root1|library:error|culprit=<op>|error=<pass>: <message, numbers removed>
// where
//   - the culprit is the first op (in program order) that shows the divergence ON ITS OWN: its
//     operands replaced by leaves holding the reference's values and, for a gradient, its output
//     weighted by the reference's upstream gradient. An op that only carries damage from an
//     earlier one agrees when fed correct inputs, so it is never the culprit. The root's kind is
//     the culprit's own (a wrong value exposed only through a gradient downstream is forward).
//   - the culprit's label is its op with the attributes that choose a code path (pow's exponent,
//     gelu's approximation, scatter_reduce's reduction); continuous ones (softshrink's lambd,
//     logit's eps, clamp's bounds) only say whether they are NaN, infinite or huge. An error's
//     culprit is the op alone; the rest is the pass that raises it (forward, backward, jvp, hvp:
//     one message can come out of several derivative formulas of one op) and its message with
//     numbers and shape lists collapsed.
//   - the trigger is the set of value classes among the isolated culprit's inputs (its operands
//     and, for a gradient, the upstream gradient) that the divergence needs: nan, inf, -inf, -0,
//     0, subnormal, huge, each kept only when replacing its values by 0.5 makes the divergence
//     go away (the minimiser fills unneeded values with zeros). Signs stay apart: one op's
//     fault at +inf and its fault at -inf are often two bugs.
//   - where no op shows the divergence alone (it needs two ops' errors together, or an error
//     amplified downstream within each op's bound), the root is the minimised graph itself:
//     `root1|library:kind|graph=<signature id>`, with `isolated` false. Joining such findings by
//     a common downstream op (reciprocal, mul) would join different faults.
//   - zero-sign: where no op diverges alone, the culprit may be the first op whose own result
//     holds a zero of the wrong sign (the oracle compares -0 and +0 as equal; 1/x downstream
//     does not), provided that replacing its result by the reference's values makes the
//     divergence go away. The root is then that op's forward fault, marked `|zero-sign`:
//       root1|libtorch:forward|culprit=frac|trigger=-0|zero-sign
//   - the dtype is part of the identity only when the isolated culprit does not diverge the same
//     way in f32: a NaN-handling fault is one fault in every dtype, a bf16-only kernel is its own.
//   - the compiled backend's root (torch-compile) ends with the compile verdict of the program
//     (oracle.h, compile_class): `|compile=compiled-outside` is a torch.compile bug (eager within
//     the reference's bound), `|compile=both-outside-alike` a fault compile shares with eager (the
//     known-bug list knows it when it knows eager's root), `|compile=both-outside-apart` both
//     wrong, each its own way. One Inductor fault is then never grouped with the eager fault it
//     happens to reproduce.
//   - the library is backend_library() without a release: libtorch, its variants and an older
//     LibTorch in a child (libtorch@1.13) share roots, so a 1.13 row still live in 2.15 is
//     recognised there.
// A program where several libraries diverge has one root per library.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/runner.h"

namespace burnmark {

struct RootCause {
  std::string library; // "libtorch", "onednn", ...
  std::string backend; // the backend whose divergence was isolated, as verdicts name it
  std::string kind;    // kind_name of the library's primary divergence
  std::string culprit; // stmt_label of the culprit op
  std::vector<std::string> trigger; // sorted special-value classes of the culprit's inputs
  std::string error;                // errors: the normalised message
  std::string dtype;                // "" when the fault shows in f32 too, else the dtype's name
  bool isolated = false;            // false: no op showed it alone (the graph is the identity)
  bool zero_sign = false; // the culprit's result has a zero of the wrong sign (see zero-sign)
  std::string compile;    // the compiled backend's root: compile_class of the verdict; else ""
  std::string text;
  std::string id; // short_id(text)
};

// One root per diverging library of `verdict` (the verdict of `minimized`), ordered by library.
// `prefix_culprit` is analyse()'s culprit label, shown when no op diverges alone, and
// `signature_id` the minimised program's signature, the identity then. Costs a few runs per op
// of the minimised program up to the culprit.
std::vector<RootCause> root_causes(Runner& runner, const Program& minimized, const Verdict& verdict,
                                   const std::string& prefix_culprit,
                                   const std::string& signature_id);

// For the known-bug filter, before it minimises a program whose pre-signature it meets first: the
// roots of the unminimised program, when analyse()'s `culprit` shows each library's primary
// divergence on its own (isolated as root_causes() isolates, named and triggered the same way);
// nullopt when it does not for some library. A few runs of one-op programs instead of a
// minimisation, and the very root root_causes() gives whenever the minimised program's first op
// that diverges alone is that culprit. It names the culprit where an op upstream of it diverges
// alone in a kind the program's primary divergence outranks (a wrong gradient feeding a wrong
// forward value), which root_causes() would name instead.
std::optional<std::vector<RootCause>> culprit_roots(Runner& runner, const Program& program,
                                                    const Verdict& verdict, Reg culprit);

// One root in words: "libtorch:forward culprit=softshrink[0.5] trigger=nan dtype=any".
std::string root_words(const RootCause& root);

// The ids a known-bug list must name for a finding with these roots to be known: every one but
// a compiled root that reproduces eager's fault (compile=both-outside-alike beside eager's own
// root), which is known when eager's is.
std::vector<std::string> listed_root_ids(const std::vector<RootCause>& roots);

// The ids of `roots` joined by '+': the key that groups findings by root cause.
std::string root_key(const std::vector<RootCause>& roots);

// An error message as part of an identity: its first line, every run of digits replaced by '#'
// (sizes and indices vary with the program, the defect does not).
std::string normalize_error(std::string_view message);

// The op at register `reg` alone: its float operands become leaves holding the reference's values
// (comparisons feeding it are kept, with their float operands cut likewise, since a leaf is never
// a mask). nullopt when the reference cannot evaluate an operand.
std::optional<Program> isolate_op(Runner& runner, const Program& program, Reg reg);

} // namespace burnmark
