// Root causes of divergences: the culprit op found by isolating each op with correct inputs (see
// burnmark/triage/root_cause.h).
#include "burnmark/triage/root_cause.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "burnmark/triage/rewrite.h"
#include "burnmark/triage/signature.h"

namespace burnmark {
namespace {

// Same order as primary_class's, except that a gradient outranks a tangent: a forward-mode
// campaign that reaches a known gradient bug names the gradient, as a reverse-mode one would.
int kind_order(DivergenceKind kind) {
  switch (kind) {
  case DivergenceKind::Crash:
  case DivergenceKind::Hang:
  case DivergenceKind::Oom:
  case DivergenceKind::Error: return 0;
  case DivergenceKind::Shape: return 1;
  case DivergenceKind::Forward: return 2;
  case DivergenceKind::Gradient: return 3;
  case DivergenceKind::Tangent: return 4;
  case DivergenceKind::Hvp: return 5;
  }
  return 6;
}

// `backend`'s first-ranked divergence in `verdict` (kind_order), ignoring a gradient of leaf
// `ignore_leaf` (the upstream-gradient leaf of a weighted program); nullptr if there is none.
const Divergence* primary_of(const Verdict& verdict, const std::string& backend,
                             int ignore_leaf = -1) {
  const Divergence* best = nullptr;
  for (const Divergence& d : verdict.divergences)
    if (d.backend == backend && !(d.kind == DivergenceKind::Gradient && d.leaf == ignore_leaf))
      if (!best || kind_order(d.kind) < kind_order(best->kind)) best = &d;
  return best;
}

bool shows_kind(const Verdict& verdict, const std::string& backend, DivergenceKind kind,
                int ignore_leaf) {
  for (const Divergence& d : verdict.divergences)
    if (d.backend == backend && d.kind == kind &&
        !(kind == DivergenceKind::Gradient && d.leaf == ignore_leaf))
      return true;
  return false;
}

bool is_error_kind(DivergenceKind kind) {
  return kind_order(kind) == 0;
}

struct Isolated {
  Program program;
  Reg op = -1; // the isolated op's register in `program`
  int ignore_leaf = -1;
  Divergence divergence; // the backend's first-ranked divergence there
};

// The op at `reg` alone, if `backend` diverges on it in any kind: first as it is (seeded with
// ones), then, for a gradient only the real upstream gradient brings out, weighted by it.
std::optional<Isolated> isolated_divergence(Runner& runner, const Program& program, Reg reg,
                                            const std::string& backend) {
  std::optional<Program> alone = isolate_op(runner, program, reg);
  if (!alone) return std::nullopt;
  Isolated out;
  out.program = std::move(*alone);
  out.op = out.program.root;
  if (!validate(out.program).empty()) return std::nullopt;
  const Verdict plain = runner.check(out.program);
  if (const Divergence* d = primary_of(plain, backend)) {
    out.divergence = *d;
    return out;
  }
  if (reg == program.root || !runner.options().gradients) return std::nullopt;
  const std::optional<std::vector<double>> upstream = runner.upstream_gradient(program, reg);
  if (!upstream) return std::nullopt;
  out.program = weighted(std::move(out.program), *upstream);
  out.ignore_leaf = static_cast<int>(out.program.leaves.size()) - 1;
  if (!validate(out.program).empty()) return std::nullopt;
  const Verdict v = runner.check(out.program);
  if (!shows_kind(v, backend, DivergenceKind::Gradient, out.ignore_leaf)) return std::nullopt;
  out.divergence = *primary_of(v, backend, out.ignore_leaf);
  return out;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  return fmt::format("{}", fmt::join(v, sep));
}

std::string attr_class(double v);

// Which pass raises an error (or crashes): "forward", "backward", "jvp" or "hvp", found by running
// `program` with one more mode at a time. One message ("The size of tensor a must match...")
// comes out of several derivative formulas of one op; the pass tells them apart.
std::string error_pass(Runner& runner, const Program& program, const std::string& backend,
                       DivergenceKind kind) {
  const OracleOptions all = runner.options();
  const struct {
    const char* name;
    bool gradients, tangents, hessian;
  } passes[] = {{"forward", false, false, false},
                {"backward", true, false, false},
                {"jvp", true, true, false},
                {"hvp", true, false, true}};
  for (const auto& pass : passes) {
    if ((pass.gradients && !all.gradients) || (pass.tangents && !all.tangents) ||
        (pass.hessian && !all.hessian))
      continue;
    OracleOptions options = all;
    options.gradients = pass.gradients;
    options.tangents = pass.tangents;
    options.hessian = pass.hessian;
    Runner partial(runner.backends(), options, runner.conventions());
    if (shows_kind(partial.check(program), backend, kind, -1)) return pass.name;
  }
  return "all";
}

// The culprit as a root names it: the op and the attributes that pick another code path (pow's
// exponent, gelu's approximation, a norm's order, scatter_reduce's reduction), with continuous
// parameters reduced to attr_class. An error is named by the op alone: the message says the rest.
std::string root_label(const Program& p, Reg reg, bool error) {
  const Stmt& s = p.stmts[static_cast<std::size_t>(reg)];
  if (s.kind != StmtKind::Op) return stmt_label(p, reg);
  const std::string name(op_name(s.instr.op));
  if (error) return name;
  const Attrs& a = s.instr.attrs;
  switch (op_info(s.instr.op).attr_kind) {
  case AttrKind::Bounds: return fmt::format("{}[{},{}]", name, attr_class(a.lo), attr_class(a.hi));
  case AttrKind::Min: return fmt::format("{}[{}]", name, attr_class(a.lo));
  case AttrKind::Max: return fmt::format("{}[{}]", name, attr_class(a.hi));
  case AttrKind::Alpha: return fmt::format("{}[{}]", name, attr_class(a.alpha));
  case AttrKind::Slope: return fmt::format("{}[{}]", name, attr_class(a.slope));
  case AttrKind::Lambd: return fmt::format("{}[{}]", name, attr_class(a.lambd));
  case AttrKind::Softplus:
    return fmt::format("{}[{},{}]", name, attr_class(a.beta), attr_class(a.threshold));
  case AttrKind::Weight: return fmt::format("{}[{}]", name, attr_class(a.weight));
  case AttrKind::Eps:
    return a.variant == 0 ? name + "[none]" : name + "[" + attr_class(a.eps) + "]";
  case AttrKind::BetaAlpha:
    return fmt::format("{}[{},{}]", name, attr_class(a.beta), attr_class(a.alpha));
  case AttrKind::Fill:
  case AttrKind::DimFill: return fmt::format("{}[{}]", name, attr_class(a.fill));
  // Structural: they follow the shapes, like dims.
  case AttrKind::Diagonal:
  case AttrKind::DiagonalDims:
  case AttrKind::Offset: return name;
  // Discrete choices of code path: as signatures label them.
  case AttrKind::Exponent:
  case AttrKind::Gelu:
  case AttrKind::Accumulate:
  case AttrKind::Rounding:
  case AttrKind::Correction:
  case AttrKind::DimKeepCorrection:
  case AttrKind::Ord:
  case AttrKind::DimKeepOrd:
  case AttrKind::PDim:
  case AttrKind::ScatterReduce:
  case AttrKind::Slice:
  case AttrKind::Layout:
  case AttrKind::Reshape:
  case AttrKind::Permutation:
  case AttrKind::Chunk:
  case AttrKind::Shift:
  case AttrKind::Narrow:
  case AttrKind::DimIndex:
  case AttrKind::DimSize:
  case AttrKind::None:
  case AttrKind::DimKeep:
  case AttrKind::TwoDims:
  case AttrKind::Dim:
  case AttrKind::DimTimes: break;
  }
  return stmt_label(p, reg);
}

// A trigger class of a value: special_class's (nan, inf, -inf, -0, subnormal, huge), or "0" for
// +0 (a pole or kink of many ops, but also the minimiser's filler, hence needed_classes' test);
// "" for an ordinary value. Signs stay apart: Eigen's trigamma is wrong at +inf and at -inf for
// two different reasons (bugs.md, eigen-trigamma-inf and eigen-trigamma-neg-inf).
std::string trigger_class(double v) {
  if (v == 0.0 && !std::signbit(v)) return "0";
  return std::string(special_class(v));
}

// A continuous attribute (softshrink's lambd, logit's eps, a clamp bound) in a root's label: only
// whether it is special, since one fault of softshrink at NaN shows for every lambd.
std::string attr_class(double v) {
  const std::string c = trigger_class(v);
  return c.empty() || c == "0" || c == "-0" ? "·" : c;
}

// The trigger classes among `program`'s float leaf values that a fault needs: a class is kept
// when replacing each of its values by 0.5 makes `shows` (the fault still shows) false.
template <class Shows>
std::vector<std::string> classes_needed_by(const Program& program, Shows shows) {
  std::vector<std::string> present;
  for (const Leaf& leaf : program.leaves)
    for (double v : leaf.data)
      if (std::string c = trigger_class(v); !c.empty()) present.push_back(std::move(c));
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  std::vector<std::string> needed;
  for (const std::string& c : present) {
    Program without = program;
    for (Leaf& leaf : without.leaves)
      for (double& v : leaf.data)
        if (trigger_class(v) == c) v = 0.5;
    if (!shows(without)) needed.push_back(c);
  }
  return needed;
}

// The classes `backend`'s divergence of `kind` needs.
std::vector<std::string> needed_classes(Runner& runner, const Program& program,
                                        const std::string& backend, DivergenceKind kind,
                                        int ignore_leaf) {
  return classes_needed_by(program, [&](const Program& p) {
    return shows_kind(runner.check(p), backend, kind, ignore_leaf);
  });
}

// Whether `backend` gives, somewhere in `program`'s root values, a zero of the other sign than
// the reference's. The oracle compares -0 and +0 as equal (IEEE 754 does), so an op that gets
// the sign of a zero wrong shows only downstream, where 1/x, atan2 or a floor division tells the
// signs apart.
bool zero_sign_differs(Runner& runner, const Program& program, const std::string& backend) {
  const std::vector<Backend*>& backends = runner.backends();
  const auto it = std::find_if(backends.begin(), backends.end(),
                               [&](const Backend* b) { return b->name() == backend; });
  if (backends.empty() || it == backends.end()) return false;
  const Outcome want = run_backend(*backends.front(), program, RunOptions{false});
  const Outcome got = run_backend(**it, program, RunOptions{false});
  if (want.status != Status::Ok || got.status != Status::Ok ||
      want.root.values.size() != got.root.values.size())
    return false;
  for (std::size_t i = 0; i < want.root.values.size(); ++i)
    if (want.root.values[i] == 0.0 && got.root.values[i] == 0.0 &&
        std::signbit(want.root.values[i]) != std::signbit(got.root.values[i]))
      return true;
  return false;
}

// needed_classes for a zero of the wrong sign: the classes without which the isolated op's zero
// sign agrees.
std::vector<std::string> zero_sign_classes(Runner& runner, const Program& isolated,
                                           const std::string& backend) {
  return classes_needed_by(isolated,
                           [&](const Program& p) { return zero_sign_differs(runner, p, backend); });
}

// Where no op diverges alone: the first op whose own result (operands from the reference) has a
// zero of the wrong sign, provided the divergence goes away once that result is replaced by the
// reference's values. Then the fault is that op's forward value, as for any culprit.
std::optional<Isolated> zero_sign_culprit(Runner& runner, const Program& program,
                                          const Divergence& primary) {
  for (Reg r = 0; r < static_cast<Reg>(program.stmts.size()); ++r) {
    if (program.stmts[static_cast<std::size_t>(r)].kind != StmtKind::Op) continue;
    std::optional<Program> alone = isolate_op(runner, program, r);
    if (!alone || !validate(*alone).empty() || !zero_sign_differs(runner, *alone, primary.backend))
      continue;
    const std::optional<std::vector<double>> right = runner.values(program, r);
    if (!right) continue;
    if (shows_kind(runner.check(cut_to_leaf(program, r, *right)), primary.backend, primary.kind,
                   -1))
      continue;
    Isolated out;
    out.program = std::move(*alone);
    out.op = out.program.root;
    out.divergence = primary;
    out.divergence.kind = DivergenceKind::Forward;
    return out;
  }
  return std::nullopt;
}

} // namespace

std::string normalize_error(std::string_view message) {
  message = message.substr(0, message.find('\n'));
  std::string out;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(message[i]))) {
      while (i + 1 < message.size() && std::isdigit(static_cast<unsigned char>(message[i + 1])))
        ++i;
      out += '#';
    } else {
      out += message[i];
    }
  }
  // A shape's rank varies with the program too: "[#, #, #]" is "[#]".
  for (std::size_t at; (at = out.find("#, #")) != std::string::npos;)
    out.replace(at, 4, "#");
  return out;
}

std::optional<Program> isolate_op(Runner& runner, const Program& program, Reg reg) {
  Program q = reroot(program, reg);
  const Stmt& top = q.stmts[static_cast<std::size_t>(q.root)];
  if (top.kind != StmtKind::Op || top.dtype != DType::F32) return std::nullopt;
  std::vector<Reg> stack = top.instr.operands;
  std::vector<bool> seen(q.stmts.size(), false);
  std::vector<Reg> to_cut;
  while (!stack.empty()) {
    const Reg r = stack.back();
    stack.pop_back();
    if (seen[static_cast<std::size_t>(r)]) continue;
    seen[static_cast<std::size_t>(r)] = true;
    const Stmt& s = q.stmts[static_cast<std::size_t>(r)];
    if (s.kind == StmtKind::Leaf) continue;
    if (s.dtype == DType::F32) {
      to_cut.push_back(r);
    } else if (s.kind == StmtKind::Alias) {
      stack.push_back(s.source);
    } else {
      stack.insert(stack.end(), s.instr.operands.begin(), s.instr.operands.end());
    }
  }
  for (Reg r : to_cut) {
    std::optional<std::vector<double>> values = runner.values(q, r);
    if (!values) return std::nullopt;
    for (double& v : *values)
      v = round_to(v, q.float_dtype);
    q = cut_to_leaf(q, r, std::move(*values));
  }
  return compact(q);
}

namespace {

// Each library's primary divergence (kind_order, then backend name).
std::vector<const Divergence*> library_primaries(const Verdict& verdict) {
  std::vector<const Divergence*> primaries;
  for (const Divergence& d : verdict.divergences) {
    const std::string lib = backend_library(d.backend);
    auto it = std::find_if(primaries.begin(), primaries.end(),
                           [&](const Divergence* p) { return backend_library(p->backend) == lib; });
    if (it == primaries.end()) {
      primaries.push_back(&d);
    } else if (kind_order(d.kind) < kind_order((*it)->kind) ||
               (kind_order(d.kind) == kind_order((*it)->kind) && d.backend < (*it)->backend)) {
      *it = &d;
    }
  }
  return primaries;
}

// The root of `primary`, shown by `program`: by the op that shows it alone (`alone`, marked
// zero-sign when that is how it was found), else by the graph.
RootCause make_root(Runner& runner, const Program& program, const Verdict& verdict,
                    const Divergence& primary, const std::optional<Isolated>& alone, bool zero_sign,
                    const std::string& prefix_culprit, const std::string& signature_id) {
  RootCause root;
  root.library = backend_library(primary.backend);
  root.backend = primary.backend;
  root.zero_sign = zero_sign;
  const Divergence& shown = alone ? alone->divergence : primary;
  const Program& shown_by = alone ? alone->program : program;
  const int ignore = alone ? alone->ignore_leaf : -1;
  root.isolated = alone.has_value();
  root.kind = kind_name(shown.kind);
  root.culprit =
      alone ? root_label(alone->program, alone->op, is_error_kind(shown.kind)) : prefix_culprit;
  // A graph-identified root's trigger is only words (its id is the graph's): the classes the
  // minimised program holds, without the runs that would test which ones it needs.
  if (is_error_kind(shown.kind))
    root.error = error_pass(runner, shown_by, primary.backend, shown.kind) + ": " +
                 normalize_error(shown.detail);
  else if (root.zero_sign)
    root.trigger = zero_sign_classes(runner, shown_by, primary.backend);
  else if (alone)
    root.trigger = needed_classes(runner, shown_by, primary.backend, shown.kind, ignore);
  else
    root.trigger = special_classes(program);
  // In f32 as well? Then the dtype is a detail of the finding, not of the fault.
  if (program.float_dtype != FloatDType::F32) {
    const Program in_f32 = with_float_dtype(shown_by, FloatDType::F32);
    const bool in_f32_too =
        root.zero_sign ? zero_sign_differs(runner, in_f32, primary.backend)
                       : shows_kind(runner.check(in_f32), primary.backend, shown.kind, ignore);
    if (!in_f32_too) root.dtype = std::string(float_dtype_name(program.float_dtype));
  }
  const std::string dtype_part = root.dtype.empty() ? "" : "dtype=" + root.dtype + "|";
  const std::string detail =
      is_error_kind(shown.kind) ? "error=" + root.error : "trigger=" + join(root.trigger, ",");
  // A divergence no single op shows needs its ops together: then the graph is the identity
  // (the signature's), never a guess that would join two faults of a common op.
  root.text = alone
                  ? fmt::format("root1|{}{}:{}|culprit={}|{}{}", dtype_part, root.library,
                                root.kind, root.culprit, detail, root.zero_sign ? "|zero-sign" : "")
                  : fmt::format("root1|{}{}:{}|graph={}", dtype_part, root.library, root.kind,
                                signature_id);
  // Who is wrong, eager or compiled, is part of a compile fault's identity (issue 32).
  if (verdict.compile && primary.backend == verdict.compile->compiled) {
    root.compile = compile_class(*verdict.compile);
    root.text += "|compile=" + root.compile;
  }
  root.id = short_id(root.text);
  return root;
}

void sort_by_library(std::vector<RootCause>& roots) {
  std::sort(roots.begin(), roots.end(),
            [](const RootCause& a, const RootCause& b) { return a.library < b.library; });
}

} // namespace

std::vector<RootCause> root_causes(Runner& runner, const Program& minimized, const Verdict& verdict,
                                   const std::string& prefix_culprit,
                                   const std::string& signature_id) {
  std::vector<RootCause> roots;
  for (const Divergence* primary : library_primaries(verdict)) {
    // The first op that diverges alone is the culprit, in whatever kind it shows there: a wrong
    // forward value that the program only exposes through a gradient downstream is a forward
    // fault of that op.
    std::optional<Isolated> alone;
    // Every op, dead ones too: LibTorch runs a statement whose result nothing reads, and it can
    // raise there.
    for (Reg r = 0; r < static_cast<Reg>(minimized.stmts.size()) && !alone; ++r)
      if (minimized.stmts[static_cast<std::size_t>(r)].kind == StmtKind::Op)
        alone = isolated_divergence(runner, minimized, r, primary->backend);
    // Errors are not a value of the wrong sign.
    bool zero_sign = false;
    if (!alone && !is_error_kind(primary->kind)) {
      alone = zero_sign_culprit(runner, minimized, *primary);
      zero_sign = alone.has_value();
    }
    roots.push_back(make_root(runner, minimized, verdict, *primary, alone, zero_sign,
                              prefix_culprit, signature_id));
  }
  sort_by_library(roots);
  return roots;
}

std::optional<std::vector<RootCause>> culprit_roots(Runner& runner, const Program& program,
                                                    const Verdict& verdict, Reg culprit) {
  if (culprit < 0 || program.stmts[static_cast<std::size_t>(culprit)].kind != StmtKind::Op)
    return std::nullopt;
  std::vector<RootCause> roots;
  for (const Divergence* primary : library_primaries(verdict)) {
    const std::optional<Isolated> alone =
        isolated_divergence(runner, program, culprit, primary->backend);
    if (!alone) return std::nullopt;
    roots.push_back(make_root(runner, program, verdict, *primary, alone, false, "", ""));
  }
  sort_by_library(roots);
  return roots;
}

std::string root_words(const RootCause& r) {
  std::string out = fmt::format("{}:{} culprit={}", r.library, r.kind, r.culprit);
  if (!r.error.empty())
    out += fmt::format(" error=\"{}\"", r.error);
  else
    out += " trigger=" + (r.trigger.empty() ? std::string("-") : join(r.trigger, ","));
  out += " dtype=" + (r.dtype.empty() ? std::string("any") : r.dtype);
  if (!r.compile.empty()) out += " compile=" + r.compile;
  if (r.zero_sign) out += " (a zero of the wrong sign, shown downstream)";
  if (!r.isolated) out += " (no op diverges alone: identified by its graph)";
  return out;
}

std::vector<std::string> listed_root_ids(const std::vector<RootCause>& roots) {
  std::vector<std::string> ids;
  for (const RootCause& r : roots)
    if (r.compile != "both-outside-alike" || roots.size() == 1) ids.push_back(r.id);
  return ids;
}

std::string root_key(const std::vector<RootCause>& roots) {
  std::vector<std::string> ids;
  for (const RootCause& r : roots)
    ids.push_back(r.id);
  return join(ids, "+");
}

} // namespace burnmark
