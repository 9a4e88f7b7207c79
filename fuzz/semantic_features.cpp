// Semantic features of a program and its outcomes (see semantic_features.h). A pure function of
// its inputs: linear in the statements and the leaf, root and gradient values, no allocation
// beyond the reused output and one mask per register.
#include "semantic_features.h"

#include <algorithm>
#include <cmath>

namespace burnmark::fuzz {

namespace {

// splitmix64's finaliser: every input bit moves about half the output bits, so nearby tuples
// (op 7 and op 8, slot 0 and slot 1) land far apart in the table.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint32_t op_code(Op op) {
  return static_cast<std::uint32_t>(op);
}

// 0, 1, 2, and 3 for rank 3 and above: the ranks at which kernels change strategy (scalar,
// vector, matrix, batched).
std::uint32_t rank_class(const Shape& s) {
  return static_cast<std::uint32_t>(std::min(s.rank(), 3));
}

// The register an alias chain ends at: the tensor itself.
Reg resolve(const Program& p, Reg r) {
  while (p.stmts[static_cast<std::size_t>(r)].kind == StmtKind::Alias)
    r = p.stmts[static_cast<std::size_t>(r)].source;
  return r;
}

void add_classes(std::vector<std::uint32_t>& out, unsigned mask, FeatureKind kind, std::uint32_t a,
                 std::uint32_t c, std::uint32_t d) {
  for (int bit = 0; bit < kValueClasses; ++bit)
    if ((mask & (1u << bit)) != 0) out.push_back(feature_index(kind, a, 1u << bit, c, d));
}

} // namespace

unsigned value_classes(std::span<const double> values, FloatDType dtype) {
  const FloatFormat f = float_format(dtype);
  const double smallest_normal = std::ldexp(1.0, f.min_exponent);
  const double huge = std::sqrt(f.max_finite);
  unsigned mask = 0;
  for (double v : values) {
    if (std::isnan(v)) {
      mask |= kNaN;
    } else if (std::isinf(v)) {
      mask |= kInf;
    } else if (v == 0) {
      if (std::signbit(v)) mask |= kNegZero;
    } else {
      const double a = std::fabs(v);
      if (a < smallest_normal) mask |= kSubnormal;
      if (a >= huge) mask |= kHuge;
    }
  }
  return mask;
}

std::uint32_t feature_index(FeatureKind kind, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                            std::uint32_t d) {
  // Fields are small (op codes below 2^16, classes and slots below 2^8, packed operand bits
  // below 2^16): packed without overlap, then hashed.
  const std::uint64_t packed = (static_cast<std::uint64_t>(kind) << 56) |
                               (static_cast<std::uint64_t>(a & 0xffff) << 40) |
                               (static_cast<std::uint64_t>(b & 0xffff) << 24) |
                               (static_cast<std::uint64_t>(c & 0xffff) << 8) | (d & 0xff);
  return static_cast<std::uint32_t>(mix(packed) & (kSemanticTableSize - 1));
}

void semantic_features(const Program& p, std::span<const Outcome> outcomes,
                       std::vector<std::uint32_t>& out, bool family_pairs) {
  out.clear();
  const std::size_t n = p.stmts.size();
  const std::uint32_t dtype = static_cast<std::uint32_t>(p.float_dtype);
  // Per register: the value classes of the leaves that reach it, and how often it is used.
  std::vector<unsigned> reach(n, 0);
  std::vector<std::uint32_t> uses(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const Stmt& st = p.stmts[r];
    if (st.kind == StmtKind::Leaf) {
      const Leaf& leaf = p.leaves[static_cast<std::size_t>(st.leaf)];
      if (leaf.dtype == DType::F32) reach[r] = value_classes(leaf.data, p.float_dtype);
      continue;
    }
    if (st.kind == StmtKind::Alias) {
      reach[r] = reach[static_cast<std::size_t>(st.source)];
      continue;
    }
    const Instr& in = st.instr;
    const std::uint32_t op = op_code(in.op);
    // Operand ranks (2 bits each), whether each operand broadcasts or reduces to the result's
    // shape (1 bit each), and whether two operands are the very same tensor (add(x, x): its
    // gradient accumulates twice into one node).
    std::uint32_t operand_bits = rank_class(st.shape);
    unsigned direct = 0;
    for (std::size_t i = 0; i < in.operands.size(); ++i) {
      const Reg src = in.operands[i];
      const Reg tensor = resolve(p, src);
      const Stmt& producer = p.stmts[static_cast<std::size_t>(tensor)];
      const Shape& shape = p.shape_of(src);
      operand_bits |= rank_class(shape) << (2 + 3 * i);
      if (!(shape == st.shape)) operand_bits |= 1u << (4 + 3 * i);
      for (std::size_t j = 0; j < i; ++j)
        if (resolve(p, in.operands[j]) == tensor) operand_bits |= 1u << 13;
      ++uses[static_cast<std::size_t>(tensor)];
      reach[r] |= reach[static_cast<std::size_t>(src)];
      const bool is_leaf = producer.kind == StmtKind::Leaf;
      if (is_leaf) direct |= reach[static_cast<std::size_t>(src)];
      const std::uint32_t from =
          is_leaf ? kLeafProducer
          : family_pairs
              ? kFamilyProducer + static_cast<std::uint32_t>(op_info(producer.instr.op).family)
              : op_code(producer.instr.op);
      out.push_back(feature_index(FeatureKind::OpPair, from, op, static_cast<std::uint32_t>(i)));
    }
    out.push_back(feature_index(FeatureKind::OpOperands, op, operand_bits, dtype));
    add_classes(out, reach[r] & ~direct, FeatureKind::OpSpecial, op, 0, 0);
    add_classes(out, direct, FeatureKind::OpSpecial, op, 1, 0);
    // The vector body and tail of the op's main input: AVX2 holds 8 f32, AVX-512 16.
    if (!in.operands.empty()) {
      const Shape& s = p.shape_of(in.operands[0]);
      const std::int64_t inner = s.rank() == 0 ? 1 : s[s.rank() - 1];
      const std::int64_t numel = s.numel();
      out.push_back(feature_index(FeatureKind::OpInner, op, static_cast<std::uint32_t>(inner % 8),
                                  inner >= 8 ? 1 : 0));
      out.push_back(feature_index(FeatureKind::OpNumel, op, static_cast<std::uint32_t>(numel % 16),
                                  numel >= 16 ? 1 : 0));
    }
  }
  for (std::size_t r = 0; r < n; ++r)
    if (p.stmts[r].kind == StmtKind::Op)
      out.push_back(feature_index(FeatureKind::OpFanOut, op_code(p.stmts[r].instr.op),
                                  std::min<std::uint32_t>(uses[r], 3)));

  if (p.root >= 0 && static_cast<std::size_t>(p.root) < n) {
    const Reg root = resolve(p, p.root);
    const Stmt& rs = p.stmts[static_cast<std::size_t>(root)];
    const std::uint32_t root_op = rs.kind == StmtKind::Op ? op_code(rs.instr.op) : kLeafProducer;
    const unsigned from_leaves = reach[static_cast<std::size_t>(root)];
    for (std::size_t slot = 0; slot < outcomes.size(); ++slot) {
      const Outcome& o = outcomes[slot];
      const std::uint32_t s = static_cast<std::uint32_t>(std::min<std::size_t>(slot, kMaxSlot));
      if (o.status != Status::Ok) {
        out.push_back(
            feature_index(FeatureKind::Status, root_op, static_cast<std::uint32_t>(o.status), s));
        continue;
      }
      const unsigned classes = value_classes(o.root.values, p.float_dtype);
      add_classes(out, classes & from_leaves, FeatureKind::RootValue, root_op, 0, s);
      add_classes(out, classes & ~from_leaves, FeatureKind::RootValue, root_op, 1, s);
      unsigned grads = 0;
      for (const HostTensor& g : o.grads)
        grads |= value_classes(g.values, p.float_dtype);
      add_classes(out, grads, FeatureKind::GradValue, root_op, s, 0);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void mark_features(std::span<const std::uint32_t> features, std::span<std::uint8_t> counters) {
  for (std::uint32_t f : features)
    if (f < counters.size()) counters[f] = 1;
}

} // namespace burnmark::fuzz
