// Program -> BurnmarkProgram: the host's half of the plugin ABI's program encoding.
#include "abi_program.h"

#include <cstddef>

namespace burnmark {

BurnmarkShape to_abi_shape(const Shape& shape) {
  BurnmarkShape s{};
  s.rank = shape.rank();
  for (int i = 0; i < shape.rank(); ++i)
    s.dims[i] = shape[i];
  return s;
}

const BurnmarkProgram& AbiProgram::build(const Program& program) {
  leaves_.clear();
  values_.clear();
  for (const Leaf& leaf : program.leaves)
    values_.insert(values_.end(), leaf.data.begin(), leaf.data.end());
  std::size_t offset = 0;
  for (const Leaf& leaf : program.leaves) {
    BurnmarkLeaf l{};
    l.shape = to_abi_shape(leaf.shape);
    l.numel = leaf.shape.numel();
    const bool index = leaf.dtype == DType::I64;
    l.dtype = index ? BURNMARK_DTYPE_I64 : BURNMARK_DTYPE_F32;
    l.data = index ? nullptr : values_.data() + offset;
    offset += leaf.data.size();
    l.indices = index ? leaf.indices.data() : nullptr;
    leaves_.push_back(l);
  }
  stmts_.clear();
  for (const Stmt& stmt : program.stmts) {
    BurnmarkStmt s{};
    s.leaf = -1;
    s.source = -1;
    for (std::int32_t& operand : s.operands)
      operand = -1;
    switch (stmt.dtype) {
    case DType::F32: s.dtype = BURNMARK_DTYPE_F32; break;
    case DType::Bool: s.dtype = BURNMARK_DTYPE_BOOL; break;
    case DType::I64: s.dtype = BURNMARK_DTYPE_I64; break;
    }
    s.attrs.times = 1;
    s.shape = to_abi_shape(stmt.shape);
    switch (stmt.kind) {
    case StmtKind::Leaf:
      s.kind = BURNMARK_STMT_LEAF;
      s.leaf = stmt.leaf;
      break;
    case StmtKind::Alias:
      s.kind = BURNMARK_STMT_ALIAS;
      s.source = stmt.source;
      break;
    case StmtKind::Op: {
      s.kind = BURNMARK_STMT_OP;
      s.op = op_info(stmt.instr.op).stable_id;
      s.num_operands = static_cast<std::int32_t>(stmt.instr.operands.size());
      for (std::size_t i = 0; i < stmt.instr.operands.size() && i < BURNMARK_MAX_OPERANDS; ++i)
        s.operands[i] = stmt.instr.operands[i];
      const Attrs& a = stmt.instr.attrs;
      s.attrs.dim = a.dim;
      s.attrs.dim1 = a.dim1;
      s.attrs.keepdim = a.keepdim ? 1 : 0;
      s.attrs.times = a.times;
      s.attrs.exponent = a.exponent;
      s.attrs.lo = a.lo;
      s.attrs.hi = a.hi;
      s.attrs.alpha = a.alpha;
      s.attrs.slope = a.slope;
      s.attrs.lambd = a.lambd;
      s.attrs.beta = a.beta;
      s.attrs.threshold = a.threshold;
      s.attrs.weight = a.weight;
      s.attrs.eps = a.eps;
      s.attrs.variant = a.variant;
      s.attrs.include_self = a.include_self ? 1 : 0;
      s.attrs.fill = a.fill;
      break;
    }
    }
    stmts_.push_back(s);
  }
  view_ = BurnmarkProgram{};
  view_.num_leaves = static_cast<std::int32_t>(leaves_.size());
  view_.num_stmts = static_cast<std::int32_t>(stmts_.size());
  view_.leaves = leaves_.data();
  view_.stmts = stmts_.data();
  view_.root = program.root;
  return view_;
}

} // namespace burnmark
