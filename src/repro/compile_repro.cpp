// The torch.compile reproducer (issue 32), in the shape PyTorch's issue template asks fuzzer
// reporters for: one standalone script running one function eagerly, through
// torch.compile(fullgraph=True) on CPU, and eagerly in float64 (the baseline), printing all three
// and exiting 1 while the compiled result is further from the baseline than eager's.
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/text.h"
#include "burnmark/repro/python_call.h"
#include "burnmark/repro/repro.h"
#include "literals.h"
#include "python_snippets.h"

namespace burnmark {
namespace {

using repro_detail::reg;

using namespace python_snippets;

std::string_view torch_dtype(FloatDType d) {
  switch (d) {
  case FloatDType::F32: return "float32";
  case FloatDType::BF16: return "bfloat16";
  case FloatDType::F16: return "float16";
  case FloatDType::F64: return "float64";
  }
  return "float32";
}

// "(2, 3)", "(4,)", "()": a shape or stride as Python prints a tuple.
std::string tuple_of(const std::vector<std::int64_t>& v) {
  if (v.size() == 1) return fmt::format("({},)", v[0]);
  return fmt::format("({})", fmt::join(v, ", "));
}

std::vector<std::int64_t> dims_of(const Shape& s) {
  return std::vector<std::int64_t>(s.data(), s.data() + s.rank());
}

std::vector<std::int64_t> strides_of(const Shape& s) {
  const auto all = s.strides();
  return std::vector<std::int64_t>(all.begin(), all.begin() + s.rank());
}

std::string reshape_of(const Shape& s) {
  return fmt::format(".reshape({})", tuple_of(dims_of(s)));
}

// A paragraph as comment lines of at most 100 columns.
std::string comment(const std::string& text) {
  std::string out, line = "#";
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (line.size() + 1 + w.size() > 100) {
      out += line + "\n";
      line = "#";
    }
    line += " " + w;
  }
  return out + line + "\n";
}

// Prints the three results side by side and counts where compiled is further from the baseline.
constexpr const char* kCompareHelpers = R"(
def distance(x, base):
    """How far x lies from the baseline's value: NaN only matches NaN, an infinity only itself."""
    if math.isnan(x) or math.isnan(base):
        return 0.0 if math.isnan(x) and math.isnan(base) else math.inf
    if math.isinf(x) or math.isinf(base):
        return 0.0 if x == base else math.inf
    return abs(x - base)


def further(compiled, eager, base):
    """Compiled further from the float64 baseline than eager, by more than TOLERANCE relative to
    the baseline (rounding differences between two float32 evaluations are not a finding)."""
    slack = TOLERANCE * abs(base) if math.isfinite(base) else 0.0
    return distance(compiled, base) > distance(eager, base) + slack


def compare(name, eager, compiled, baseline):
    """Prints eager, compiled and the float64 baseline (every element of small tensors, only the
    elements where compiled is further of large ones); returns how many such elements."""
    e, c, b = (t.detach().double().flatten().tolist() for t in (eager, compiled, baseline))
    if tuple(compiled.shape) != tuple(baseline.shape):
        print("%s: compiled shape %s, baseline %s  <-- COMPILED FURTHER"
              % (name, tuple(compiled.shape), tuple(baseline.shape)))
        return 1
    if tuple(eager.shape) != tuple(baseline.shape):
        print("%s: eager shape %s, baseline %s" % (name, tuple(eager.shape), tuple(baseline.shape)))
        return 0
    bad = 0
    for i, (ev, cv, bv) in enumerate(zip(e, c, b)):
        f = further(cv, ev, bv)
        bad += f
        if f or len(b) <= 64:
            print("%s[%d]  eager % .9g  compiled % .9g  float64 % .17g%s"
                  % (name, i, ev, cv, bv, "  <-- COMPILED FURTHER" if f else ""))
    print("%s: compiled further from float64 than eager at %d of %d elements" % (name, bad, len(b)))
    return bad


def versions():
    """What a report needs: the PyTorch release and the CPU kernel set it dispatched to."""
    cpu = getattr(torch.backends, "cpu", None)
    capability = cpu.get_cpu_capability() if cpu and hasattr(cpu, "get_cpu_capability") else "?"
    return "torch %s, CPU kernels %s" % (torch.__version__, capability)

)";

// Runs fn on fresh inputs: the root, then each float input's gradient, as the torch-compile
// backend runs it (runner_torch.py): every float leaf requires grad, backward seeded with ones.
constexpr const char* kRunHelper = R"(
def run(f, dtype):
    """f on fresh inputs in dtype: the root and, with GRADIENTS, each float input's gradient
    (zeros where nothing reached it)."""
    args = inputs(dtype)
    for a in args:
        if a.is_floating_point():
            a.requires_grad_(GRADIENTS)
    root = f(*args)
    results = [("root", root.detach())]
    if GRADIENTS:
        root.backward(torch.ones_like(root))
        for name, a in zip(NAMES, args):
            if a.is_floating_point():
                grad = a.grad if a.grad is not None else torch.zeros_like(a)
                results.append(("grad " + name, grad))
    return results

)";

} // namespace

std::string emit_compile_repro(const ReproCase& repro) {
  repro_detail::check_case(repro);
  if (repro.check_tangent || repro.check_hvp)
    throw std::invalid_argument("torch.compile has no forward-mode or second-order reproducer");
  const Program& p = repro.program;
  const std::string dtype(torch_dtype(p.float_dtype));
  const std::string dynamic = repro.compile_dynamic ? "True" : "False";
  std::string head = "#!/usr/bin/env python3\n# " + repro.title + "\n#\n";
  head += comment(fmt::format(
      "Reproducer generated by BurnMark for torch.compile (Inductor, CPU, fullgraph=True, "
      "dynamic={}, {}). It runs fn three ways on the same inputs: PyTorch eager in {}, "
      "torch.compile(fn, fullgraph=True) in {}, and eager in float64 (the baseline: the same "
      "inputs converted exactly), and prints the root{} of each.",
      dynamic, repro_detail::threads_phrase(repro.intra_op_threads), dtype, dtype,
      repro.check_gradients ? " and every input's gradient (backward seeded with ones)" : ""));
  head += comment("Exit status 1 while the compiled result is further from the float64 baseline "
                  "than eager's (by more than TOLERANCE relative to it), 0 otherwise.");
  if (!repro.why.empty()) head += comment("Why here: " + repro.why);
  head += "#\n";
  std::istringstream lines(to_text(p));
  for (std::string line; std::getline(lines, line);)
    head += "#   " + line + "\n";

  bool uses_bits = false;
  std::vector<std::string> params, names;
  std::string body, made;
  for (std::size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    const Reg r = static_cast<Reg>(i);
    switch (s.kind) {
    case StmtKind::Leaf: {
      params.push_back(reg(r));
      names.push_back(fmt::format("\"%{}\"", r));
      const Leaf& leaf = p.leaves[static_cast<std::size_t>(s.leaf)];
      const std::string layout = fmt::format("shape {}, stride {}", tuple_of(dims_of(s.shape)),
                                             tuple_of(strides_of(s.shape)));
      if (leaf.dtype == DType::I64) {
        std::vector<std::string> values;
        for (std::int64_t v : leaf.indices)
          values.push_back(std::to_string(v));
        made += fmt::format("    # %{}: {}, dtype int64 (indices)\n", r, layout);
        made +=
            fmt::format("    {} = torch.tensor([{}], dtype=torch.int64){}\n", reg(r),
                        repro_detail::join_wrapped(values, 16, "        "), reshape_of(s.shape));
        break;
      }
      // Decimal literals where every value has an exact one in the dtype; bit patterns otherwise.
      std::vector<std::string> decimals, bits;
      for (double v : leaf.data) {
        if (const auto d = repro_detail::exact_decimal(v, p.float_dtype)) decimals.push_back(*d);
        bits.push_back(repro_detail::value_bits(v, p.float_dtype));
      }
      const bool decimal = decimals.size() == leaf.data.size();
      uses_bits = uses_bits || !decimal;
      made += fmt::format("    # %{}: {}, dtype {} (float64 in the baseline)\n", r, layout, dtype);
      made += decimal
                  ? fmt::format("    {} = torch.tensor([{}], dtype=DTYPE){}.to(dtype)\n", reg(r),
                                repro_detail::join_wrapped(decimals, 8, "        "),
                                reshape_of(s.shape))
                  : fmt::format("    {} = leaf({}, False, [{}]).to(dtype)\n", reg(r),
                                "[" + fmt::format("{}", fmt::join(dims_of(s.shape), ", ")) + "]",
                                repro_detail::join_wrapped(bits, 8, "        "));
      break;
    }
    case StmtKind::Alias:
      body +=
          fmt::format("    {} = {}  # alias: the same tensor, not a copy\n", reg(r), reg(s.source));
      break;
    case StmtKind::Op:
      body += fmt::format("    {} = {}  # {}\n", reg(r), torch_python_call(p, s.instr, false),
                          stmt_to_text(p, r));
      break;
    }
  }
  const std::string args = fmt::format("{}", fmt::join(params, ", "));
  std::string out;
  out += fmt::format("\n\ndef fn({}):\n{}    return {}\n", args, body, reg(p.root));
  out += "\n\ndef inputs(dtype):\n"
         "    \"\"\"fn's inputs, made in DTYPE (every value below is exact in it), then converted "
         "to\n    dtype: DTYPE for eager and compiled, float64 (exactly) for the baseline.\"\"\"\n";
  out += made + fmt::format("    return [{}]\n\n", args);
  out += fmt::format(
      "\ndef main():\n"
      "    print(versions())\n"
      "    torch.set_num_threads({})\n"
      "    for name, t in zip(NAMES, inputs(DTYPE)):\n"
      "        print(\"input %s: shape %s stride %s dtype %s\" % (name, tuple(t.shape), "
      "t.stride(), t.dtype))\n"
      "    eager = run(fn, DTYPE)\n"
      "    compiled = run(torch.compile(fn, fullgraph=True, dynamic={}), DTYPE)\n"
      "    baseline = run(fn, torch.float64)\n"
      "    bad = 0\n"
      "    for (name, e), (_, c), (_, b) in zip(eager, compiled, baseline):\n"
      "        bad += compare(name, e, c, b)\n"
      "    print(\"COMPILED FURTHER from float64 than eager: %d element(s)\" % bad if bad\n"
      "          else \"compiled no further from float64 than eager\")\n"
      "    return 1 if bad else 0\n\n",
      repro.intra_op_threads, dynamic);

  std::string script = head;
  script += imports(uses_bits, out.find("F.") != std::string::npos, false);
  script += kConstants;
  script += "TOLERANCE = " + double_literal(repro.tolerance, "nan", "inf") + "\n";
  script += fmt::format("DTYPE = torch.{}\n", dtype);
  script += fmt::format("GRADIENTS = {}\n", repro.check_gradients ? "True" : "False");
  script += fmt::format("NAMES = [{}]\n", fmt::join(names, ", "));
  script += out;
  script += kRunHelper;
  if (uses_bits) script += kBitsHelper;
  script += kCompareHelpers;
  script += "\nif __name__ == \"__main__\":\n    sys.exit(main())\n";
  return script;
}

} // namespace burnmark
