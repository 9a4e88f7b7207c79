// Program helpers and the well-formedness check shared by the parser, generator and tests.
#include "burnmark/ir/program.h"

#include <cstring>
#include <vector>

#include "burnmark/ir/shape_rules.h"

namespace burnmark {

bool Leaf::operator==(const Leaf& other) const {
  // Bitwise, so that NaN payloads and -0 count: the text and byte encodings must keep them.
  return shape == other.shape && data.size() == other.data.size() &&
         (data.empty() ||
          std::memcmp(data.data(), other.data.data(), data.size() * sizeof(float)) == 0);
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
      if (leaf.shape.rank() < 1 || leaf.shape.rank() > kMaxLeafRank)
        return where + "leaf rank must be 1..4";
      if (!leaf.shape.within_cap()) return where + "leaf shape exceeds the allocation cap";
      if (static_cast<std::int64_t>(leaf.data.size()) != leaf.shape.numel())
        return where + "leaf has " + std::to_string(leaf.data.size()) + " values for shape " +
               leaf.shape.to_string();
      if (!(s.shape == leaf.shape)) return where + "register shape differs from its leaf's";
      if (s.dtype != DType::F32) return where + "leaves are f32";
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
        if (p.dtype_of(r) != operand_dtype(s.instr.op, static_cast<int>(k)))
          return where + "operand %" + std::to_string(r) +
                 (p.dtype_of(r) == DType::Bool ? " is a mask" : " is not a mask") + " (" +
                 std::string(op_name(s.instr.op)) + " takes " +
                 (operand_dtype(s.instr.op, static_cast<int>(k)) == DType::Bool ? "a mask"
                                                                                : "f32") +
                 " there)";
        shapes.push_back(p.shape_of(r));
      }
      if (s.dtype != result_dtype(s.instr.op))
        return where + std::string(op_name(s.instr.op)) + " does not make a " +
               (s.dtype == DType::Bool ? "mask" : "f32 tensor");
      const ShapeResult inferred = infer_shape(s.instr.op, s.instr.attrs, shapes);
      if (!inferred.ok()) return where + inferred.error();
      if (!(inferred.shape() == s.shape))
        return where + "shape " + s.shape.to_string() + " should be " +
               inferred.shape().to_string();
      break;
    }
    }
  }
  if (static_cast<std::size_t>(next_leaf) != p.leaves.size())
    return "leaves defined but never used";
  if (p.leaves.empty()) return "a program needs at least one leaf";
  if (p.root < 0 || static_cast<std::size_t>(p.root) >= p.stmts.size())
    return "root is not a defined register";
  if (p.dtype_of(p.root) != DType::F32) return "the root is a mask; it must be f32";
  return {};
}

} // namespace burnmark
