// Program -> BurnmarkProgram: the host's half of the plugin ABI's program encoding, including
// how leaves are presented: in their declared layout (strided_view) or a test's override
// (PluginLeafLayout).
#include "abi_program.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "burnmark/plugin/plugin_walk.h"

namespace burnmark {

namespace {

// A layout's step between neighbouring elements and offset of the first one; the gaps are
// filled with a value no correct plugin reads back unnoticed (NaN, an out-of-range index).
constexpr std::int64_t kStep = 2;
constexpr std::int64_t kOffset = 3;

void store(std::int32_t dtype, void* data, std::int64_t at, double v, std::int64_t index) {
  const auto k = static_cast<std::size_t>(at);
  switch (dtype) {
  case BURNMARK_DTYPE_F32: static_cast<float*>(data)[k] = static_cast<float>(v); break;
  case BURNMARK_DTYPE_F64: static_cast<double*>(data)[k] = v; break;
  case BURNMARK_DTYPE_BF16: static_cast<std::uint16_t*>(data)[k] = plugin::double_to_bf16(v); break;
  case BURNMARK_DTYPE_F16: static_cast<std::uint16_t*>(data)[k] = plugin::double_to_half(v); break;
  case BURNMARK_DTYPE_I64: static_cast<std::int64_t*>(data)[k] = index; break;
  default: break;
  }
}

// The strides, offset and buffer size a leaf is presented with: its declared layout, or a
// test's override (loader.h), which wins. Permuted stores the dims in reverse order (dim 0
// innermost: a transpose's layout); Stepped puts each element kStep apart from kOffset.
StridedView presented_view(const Leaf& leaf, PluginLeafLayout layout) {
  switch (layout) {
  case PluginLeafLayout::Declared: return strided_view(leaf.layout, leaf.shape);
  case PluginLeafLayout::Contiguous: return strided_view(LeafLayout{}, leaf.shape);
  case PluginLeafLayout::Permuted:
  case PluginLeafLayout::Stepped:
  case PluginLeafLayout::PermutedStepped: break;
  }
  const bool permuted =
      layout == PluginLeafLayout::Permuted || layout == PluginLeafLayout::PermutedStepped;
  const bool stepped =
      layout == PluginLeafLayout::Stepped || layout == PluginLeafLayout::PermutedStepped;
  StridedView v;
  const int rank = leaf.shape.rank();
  std::int64_t step = stepped ? kStep : 1;
  for (int k = 0; k < rank; ++k) {
    const int i = permuted ? k : rank - 1 - k;
    v.strides[static_cast<std::size_t>(i)] = step;
    step *= leaf.shape[i];
  }
  v.storage_offset = stepped ? kOffset : 0;
  v.storage_size = v.storage_offset + (stepped ? kStep : 1) * leaf.shape.numel();
  return v;
}

} // namespace

std::int32_t abi_dtype(FloatDType dtype) {
  switch (dtype) {
  case FloatDType::F32: return BURNMARK_DTYPE_F32;
  case FloatDType::F64: return BURNMARK_DTYPE_F64;
  case FloatDType::BF16: return BURNMARK_DTYPE_BF16;
  case FloatDType::F16: return BURNMARK_DTYPE_F16;
  }
  return BURNMARK_DTYPE_F32;
}

BurnmarkShape to_abi_shape(const Shape& shape) {
  BurnmarkShape s{};
  s.rank = shape.rank();
  for (int i = 0; i < shape.rank(); ++i)
    s.dims[i] = shape[i];
  return s;
}

void* AbiProgram::buffer(std::size_t bytes) {
  buffers_.emplace_back((bytes + 7) / 8 + 1);
  return buffers_.back().data();
}

BurnmarkLeaf AbiProgram::encode(const Leaf& leaf, const std::vector<double>* values,
                                FloatDType dtype, PluginLeafLayout layout) {
  BurnmarkLeaf l{};
  l.shape = to_abi_shape(leaf.shape);
  l.numel = leaf.shape.numel();
  const bool index = leaf.dtype == DType::I64;
  l.dtype = index ? BURNMARK_DTYPE_I64 : abi_dtype(dtype);
  const StridedView view = presented_view(leaf, layout);
  for (int i = 0; i < leaf.shape.rank(); ++i)
    l.strides[i] = view.strides[static_cast<std::size_t>(i)];
  l.storage_offset = view.storage_offset;
  void* data = buffer(static_cast<std::size_t>(view.storage_size) * plugin::dtype_size(l.dtype));
  // The elements no view reaches (a slice's gaps, the elements before an offset) hold NaN, or
  // an index no op accepts, so that a plugin reading past its view shows.
  if (view.storage_size > l.numel)
    for (std::int64_t i = 0; i < view.storage_size; ++i)
      store(l.dtype, data, i, std::numeric_limits<double>::quiet_NaN(), -1);
  // Along a stride-0 (expanded) dim every element lands on the same storage element; their
  // values are equal (validate), so the repeated stores agree.
  const auto shape = l.shape;
  plugin::for_each_strided(
      shape, l.strides, l.storage_offset, [&](std::int64_t o, std::int64_t at) {
        const auto k = static_cast<std::size_t>(o);
        store(l.dtype, data, at, index ? 0.0 : (*values)[k], index ? leaf.indices[k] : 0);
      });
  l.data = data;
  return l;
}

const BurnmarkProgram& AbiProgram::build(const Program& program, PluginLeafLayout layout) {
  leaves_.clear();
  buffers_.clear();
  for (const Leaf& leaf : program.leaves)
    leaves_.push_back(encode(leaf, &leaf.data, program.float_dtype, layout));
  const std::int32_t float_dtype = abi_dtype(program.float_dtype);
  stmts_.clear();
  for (const Stmt& stmt : program.stmts) {
    BurnmarkStmt s{};
    s.leaf = -1;
    s.source = -1;
    for (std::int32_t& operand : s.operands)
      operand = -1;
    switch (stmt.dtype) {
    case DType::F32: s.dtype = float_dtype; break;
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
  view_.float_dtype = float_dtype;
  return view_;
}

const BurnmarkLeaf* AbiProgram::directions(const Program& program,
                                           const std::vector<HostTensor>& values) {
  directions_.clear();
  for (std::size_t k = 0; k < program.leaves.size(); ++k) {
    const Leaf& leaf = program.leaves[k];
    if (leaf.dtype == DType::I64) {
      BurnmarkLeaf l{};
      l.shape = to_abi_shape(leaf.shape);
      l.numel = leaf.shape.numel();
      l.dtype = BURNMARK_DTYPE_I64;
      directions_.push_back(l);
      continue;
    }
    directions_.push_back(
        encode(leaf, &values[k].values, program.float_dtype, PluginLeafLayout::Contiguous));
  }
  return directions_.data();
}

} // namespace burnmark
