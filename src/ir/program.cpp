// Program helpers and the well-formedness check shared by the parser, generator and tests.
#include "burnmark/ir/program.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"

namespace burnmark {

bool Leaf::operator==(const Leaf& other) const {
  // Bitwise, so that NaN payloads and -0 count: the text and byte encodings must keep them.
  return shape == other.shape && dtype == other.dtype && indices == other.indices &&
         layout == other.layout && data.size() == other.data.size() &&
         (data.empty() ||
          std::memcmp(data.data(), other.data.data(), data.size() * sizeof(double)) == 0);
}

namespace {

constexpr double Attrs::*kScalarAttrs[] = {&Attrs::exponent, &Attrs::lo,        &Attrs::hi,
                                           &Attrs::alpha,    &Attrs::slope,     &Attrs::lambd,
                                           &Attrs::beta,     &Attrs::threshold, &Attrs::weight,
                                           &Attrs::eps,      &Attrs::fill};

} // namespace

Attrs rounded_attrs(Attrs attrs, FloatDType dtype) {
  for (double Attrs::*field : kScalarAttrs)
    attrs.*field = round_to(attrs.*field, dtype);
  return attrs;
}

Program with_float_dtype(Program program, FloatDType dtype) {
  program.float_dtype = dtype;
  for (Leaf& leaf : program.leaves)
    for (double& v : leaf.data)
      v = round_to(v, dtype);
  for (Stmt& s : program.stmts)
    if (s.kind == StmtKind::Op) s.instr.attrs = rounded_attrs(s.instr.attrs, dtype);
  return program;
}

std::vector<Reg> Program::leaf_registers() const {
  std::vector<Reg> regs(leaves.size(), -1);
  for (std::size_t r = 0; r < stmts.size(); ++r)
    if (stmts[r].kind == StmtKind::Leaf)
      regs[static_cast<std::size_t>(stmts[r].leaf)] = static_cast<Reg>(r);
  return regs;
}

std::string validate(const Program& p) {
  int next_leaf = 0;
  for (std::size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    const std::string where = "%" + std::to_string(i) + ": ";
    const auto earlier = [&](Reg r) { return r >= 0 && static_cast<std::size_t>(r) < i; };
    switch (s.kind) {
    case StmtKind::Leaf: {
      if (s.leaf != next_leaf || static_cast<std::size_t>(next_leaf) >= p.leaves.size())
        return where + "leaves must be defined once each, in order";
      const Leaf& leaf = p.leaves[static_cast<std::size_t>(next_leaf++)];
      if (leaf.shape.rank() > kMaxLeafRank)
        return where + "leaf rank must be 0.." + std::to_string(kMaxLeafRank);
      if (!leaf.shape.within_cap()) return where + "leaf shape exceeds the allocation cap";
      if (leaf.dtype == DType::Bool) return where + "a leaf is f32 or i64, never a mask";
      const bool index = leaf.dtype == DType::I64;
      const std::size_t count = index ? leaf.indices.size() : leaf.data.size();
      if (static_cast<std::int64_t>(count) != leaf.shape.numel() ||
          (index ? !leaf.data.empty() : !leaf.indices.empty()))
        return where + "leaf has " + std::to_string(count) + " values for shape " +
               leaf.shape.to_string();
      if (!(s.shape == leaf.shape)) return where + "register shape differs from its leaf's";
      for (double v : leaf.data)
        if (!representable(v, p.float_dtype))
          return where + "leaf value " + double_literal(v, "nan", "inf") + " is not a " +
                 std::string(float_dtype_name(p.float_dtype)) + " value";
      if (s.dtype != leaf.dtype) return where + "register type differs from its leaf's";
      if (!leaf.layout.contiguous()) {
        if (index) return where + "an index leaf is contiguous";
        if (std::string why = check_layout(leaf.layout, leaf.shape); !why.empty())
          return where + why;
        // Bitwise: the buffer holds one value per expanded line, and every element reads it.
        const std::vector<double> expanded =
            expand_data(leaf.layout, leaf.shape, compact_data(leaf.layout, leaf.shape, leaf.data));
        if (std::memcmp(expanded.data(), leaf.data.data(), leaf.data.size() * sizeof(double)) != 0)
          return where + "an expanded leaf's values differ along an expanded dim";
      }
      break;
    }
    case StmtKind::Alias:
      if (!earlier(s.source)) return where + "alias of a register not yet defined";
      if (!(s.shape == p.shape_of(s.source))) return where + "alias shape differs from its source";
      if (s.dtype != p.dtype_of(s.source)) return where + "alias type differs from its source";
      break;
    case StmtKind::Op: {
      if (static_cast<int>(s.instr.operands.size()) != op_arity(s.instr.op))
        return where + std::string(op_name(s.instr.op)) + " needs " +
               std::to_string(op_arity(s.instr.op)) + " operands";
      std::vector<Shape> shapes;
      for (std::size_t k = 0; k < s.instr.operands.size(); ++k) {
        const Reg r = s.instr.operands[k];
        if (!earlier(r))
          return where + "operand %" + std::to_string(r) + " is not an earlier register";
        const DType wanted = operand_dtype(s.instr.op, static_cast<int>(k));
        if (p.dtype_of(r) != wanted)
          return where + "operand %" + std::to_string(r) + " is " +
                 std::string(dtype_name(p.dtype_of(r))) + " (" + std::string(op_name(s.instr.op)) +
                 " takes " + std::string(dtype_name(wanted)) + " there)";
        if (wanted == DType::I64 && p.stmts[static_cast<std::size_t>(r)].kind != StmtKind::Leaf)
          return where + "an index operand must be an i64 leaf";
        shapes.push_back(p.shape_of(r));
      }
      if (s.dtype != result_dtype(s.instr.op))
        return where + std::string(op_name(s.instr.op)) + " does not make a " +
               (s.dtype == DType::Bool ? "mask" : "f32 tensor");
      for (double Attrs::*field : kScalarAttrs)
        if (!representable(s.instr.attrs.*field, p.float_dtype))
          return where + "attribute " + double_literal(s.instr.attrs.*field, "nan", "inf") +
                 " is not a " + std::string(float_dtype_name(p.float_dtype)) + " value";
      const ShapeResult inferred = infer_shape(s.instr.op, s.instr.attrs, shapes);
      if (!inferred.ok()) return where + inferred.error();
      if (!(inferred.shape() == s.shape))
        return where + "shape " + s.shape.to_string() + " should be " +
               inferred.shape().to_string();
      if (const std::int64_t bound = index_bound(s.instr.op, s.instr.attrs, shapes); bound > 0) {
        const Stmt& index = p.stmts[static_cast<std::size_t>(s.instr.operands[1])];
        for (std::int64_t v : p.leaves[static_cast<std::size_t>(index.leaf)].indices)
          if (v < 0 || v >= bound)
            return where + "index value " + std::to_string(v) + " is outside 0.." +
                   std::to_string(bound - 1);
        if (index_values_distinct(s.instr.op, s.instr.attrs)) {
          std::vector<std::int64_t> seen = p.leaves[static_cast<std::size_t>(index.leaf)].indices;
          std::sort(seen.begin(), seen.end());
          if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
            return where + std::string(op_name(s.instr.op)) +
                   "'s index values must be distinct (PyTorch leaves a repeated target undefined)";
        }
      }
      break;
    }
    }
  }
  if (static_cast<std::size_t>(next_leaf) != p.leaves.size())
    return "leaves defined but never used";
  if (p.leaves.empty()) return "a program needs at least one leaf";
  if (p.root < 0 || static_cast<std::size_t>(p.root) >= p.stmts.size())
    return "root is not a defined register";
  if (p.dtype_of(p.root) != DType::F32)
    return "the root is " + std::string(dtype_name(p.dtype_of(p.root))) + "; it must be f32";
  return {};
}

} // namespace burnmark
