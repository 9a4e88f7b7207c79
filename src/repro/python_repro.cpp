// The Python reproducer: one PyTorch call per SSA instruction, named like the registers, then
// the checks against the expected values.
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/text.h"
#include "literals.h"

namespace burnmark {
namespace {

std::string reg(Reg r) {
  return fmt::format("r{}", r);
}

std::string dbl(double v) {
  return repro_detail::double_literal(v, "nan", "inf");
}

std::string py_bool(bool b) {
  return b ? "True" : "False";
}

std::string int_list(const Shape& s) {
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The same overloads as the C++ reproducer and the BurnMark backend (a Python float exponent
// reaches pow's Scalar overload and its fast paths).
std::string call(const Program& p, const Instr& in) {
  const std::string x = reg(in.operands[0]);
  const std::string y = in.operands.size() > 1 ? reg(in.operands[1]) : "";
  const Attrs& a = in.attrs;
  switch (in.op) {
  case Op::Add: return fmt::format("torch.add({}, {})", x, y);
  case Op::Sub: return fmt::format("torch.sub({}, {})", x, y);
  case Op::Mul: return fmt::format("torch.mul({}, {})", x, y);
  case Op::Div: return fmt::format("torch.div({}, {})", x, y);
  case Op::Neg: return fmt::format("torch.neg({})", x);
  case Op::Abs: return fmt::format("torch.abs({})", x);
  case Op::Exp: return fmt::format("torch.exp({})", x);
  case Op::Log: return fmt::format("torch.log({})", x);
  case Op::Sqrt: return fmt::format("torch.sqrt({})", x);
  case Op::Pow: return fmt::format("torch.pow({}, {})", x, dbl(a.exponent));
  case Op::Relu: return fmt::format("torch.relu({})", x);
  case Op::Sigmoid: return fmt::format("torch.sigmoid({})", x);
  case Op::Tanh: return fmt::format("torch.tanh({})", x);
  case Op::SumAll: return fmt::format("torch.sum({})", x);
  case Op::MeanAll: return fmt::format("torch.mean({})", x);
  case Op::SumDim:
    return fmt::format("torch.sum({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::MeanDim:
    return fmt::format("torch.mean({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::Transpose: return fmt::format("torch.transpose({}, {}, {})", x, a.dim, a.dim1);
  case Op::Concat: return fmt::format("torch.cat([{}, {}], dim={})", x, y, a.dim);
  case Op::Repeat: {
    std::string reps;
    for (int i = 0; i < p.shape_of(in.operands[0]).rank(); ++i)
      reps += fmt::format("{}{}", i ? ", " : "", i == a.dim ? a.times : 1);
    return fmt::format("{}.repeat({})", x, reps);
  }
  case Op::Matmul: return fmt::format("torch.matmul({}, {})", x, y);
  case Op::Clamp: return fmt::format("torch.clamp({}, min={}, max={})", x, dbl(a.lo), dbl(a.hi));
  }
  return "";
}

std::string expected_list(const std::vector<double>& values) {
  std::vector<std::string> items;
  for (double v : values)
    items.push_back(dbl(v));
  return repro_detail::join_wrapped(items, 6, "        ");
}

constexpr const char* kImports = R"(
import math
import struct
import sys

import torch
)";

constexpr const char* kHelpers = R"(
nan = float("nan")
inf = float("inf")


def leaf(shape, requires_grad, bits):
    """A float32 leaf from exact bit patterns, so that NaN payloads, -0 and subnormals survive."""
    raw = bytearray(struct.pack("=%dI" % len(bits), *bits))
    t = torch.frombuffer(raw, dtype=torch.float32).clone().reshape(shape)
    return t.requires_grad_(requires_grad)


def diverges(a, b):
    """NaN vs non-NaN diverges, two NaNs agree, infinities must match exactly (sign included),
    finite values diverge when |a - b| > TOLERANCE * max(1, |a|, |b|)."""
    if math.isnan(a) or math.isnan(b):
        return not (math.isnan(a) and math.isnan(b))
    if math.isinf(a) or math.isinf(b):
        return a != b
    return abs(a - b) > TOLERANCE * max(1.0, abs(a), abs(b))


def check(name, got, expected):
    """Prints PyTorch's values beside the expected ones (every element of small tensors, only
    the diverging ones of large tensors) and returns how many diverge."""
    values = got.detach().double().flatten().tolist()
    if len(values) != len(expected):
        print("%s: torch has %d elements, expected %d  <-- DIVERGES" % (name, len(values), len(expected)))
        return 1
    bad = 0
    for i, (v, e) in enumerate(zip(values, expected)):
        d = diverges(v, e)
        bad += d
        if d or len(values) <= 64:
            print("%s[%d]  torch % .9g  expected % .17g%s" % (name, i, v, e, "  <-- DIVERGES" if d else ""))
    print("%s: %d of %d elements diverge" % (name, bad, len(values)))
    return bad


def grad_of(t):
    """A leaf the root does not depend on has no gradient; it is zero."""
    return t.grad if t.grad is not None else torch.zeros_like(t)

)";

} // namespace

std::string emit_python_repro(const ReproCase& repro) {
  repro_detail::check_case(repro);
  const Program& p = repro.program;
  std::string out = "#!/usr/bin/env python3\n";
  out += "# " + repro.title + "\n#\n";
  out +=
      "# Reproducer generated by BurnMark. It runs this program with PyTorch eager (CPU, float32,\n"
      "# one intra-op thread) and compares the root";
  out += repro.check_gradients ? " and every leaf's gradient (backward seeded with ones)" : "";
  out +=
      "\n# with the expected values. Exit status 0: PyTorch agrees; 1: some element diverges.\n#\n";
  std::istringstream lines(to_text(p));
  for (std::string line; std::getline(lines, line);)
    out += "#   " + line + "\n";
  out += kImports;
  out += "\nTOLERANCE = " + dbl(repro.tolerance) + "\n";
  out += kHelpers;
  out += "\ndef main():\n    torch.set_num_threads(1)\n";
  for (std::size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    const Reg r = static_cast<Reg>(i);
    switch (s.kind) {
    case StmtKind::Leaf: {
      const Leaf& leaf = p.leaves[static_cast<std::size_t>(s.leaf)];
      std::vector<std::string> bits;
      for (float v : leaf.data)
        bits.push_back(repro_detail::float_bits(v));
      out += fmt::format("    # %{} = leaf f32{}\n", r, s.shape.to_string());
      out += fmt::format("    {} = leaf({}, {}, [{}])\n", reg(r), int_list(s.shape),
                         py_bool(repro.check_gradients),
                         repro_detail::join_wrapped(bits, 8, "        "));
      break;
    }
    case StmtKind::Alias:
      out +=
          fmt::format("    {} = {}  # alias: the same tensor, not a copy\n", reg(r), reg(s.source));
      break;
    case StmtKind::Op:
      out += fmt::format("    {} = {}  # {}\n", reg(r), call(p, s.instr), stmt_to_text(p, r));
      break;
    }
  }
  out += fmt::format("    root = {}\n", reg(p.root));
  if (repro.check_gradients) out += "    root.backward(torch.ones_like(root))\n";
  out += "\n    bad = 0\n";
  out += fmt::format("    bad += check(\"root %{}\", root, [{}])\n", p.root,
                     expected_list(repro.expected_root));
  if (repro.check_gradients) {
    const std::vector<Reg> leaf_regs = p.leaf_registers();
    for (std::size_t i = 0; i < leaf_regs.size(); ++i)
      out += fmt::format("    bad += check(\"grad %{}\", grad_of({}), [{}])\n", leaf_regs[i],
                         reg(leaf_regs[i]), expected_list(repro.expected_grads[i]));
  }
  out += "    print(\"DIVERGES: %d element(s)\" % bad if bad else \"AGREES (0 diverging "
         "elements)\")\n";
  out += "    return 1 if bad else 0\n\n\nif __name__ == \"__main__\":\n    sys.exit(main())\n";
  return out;
}

} // namespace burnmark
