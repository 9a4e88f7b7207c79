// Structure-aware mutation and crossover of programs (mutate.h): each mutation edits the Program,
// re-runs shape inference (reinfer), and keeps the result only when validate() accepts it and
// encode() reaches it, so the bytes handed back to libFuzzer decode to exactly that program.
#include "burnmark/gen/mutate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "burnmark/ir/shape_rules.h"
#include "choices.h"

namespace burnmark {
namespace {

using namespace gen_detail;

// Sizes where vectorised kernels switch between body and tail (AVX2 f32 = 8 lanes, AVX-512 =
// 16), and small ones; the in-range ones are drawn for resized dims.
constexpr std::array<std::int64_t, 19> kBoundarySizes = {1,  2,  3,  4,  5,  7,  8,  9,  15, 16,
                                                         17, 23, 24, 25, 31, 32, 33, 47, 48};

struct Context {
  Knobs k;
  FloatDType dtype;
};

// ---- leaf seeds ----

// The shortest prefix of `data` (at most kMaxSeedLen long) that, cycled, gives `data`; the
// first kMaxSeedLen values when none does (the leaf then changes beyond the entry mutated).
template <class T> std::vector<T> seed_of(const std::vector<T>& data) {
  const std::size_t max_len = std::min<std::size_t>(data.size(), kMaxSeedLen);
  for (std::size_t len = 1; len <= max_len; ++len) {
    bool cycles = true;
    for (std::size_t i = len; i < data.size() && cycles; ++i)
      cycles = std::memcmp(&data[i], &data[i % len], sizeof(T)) == 0;
    if (cycles) return {data.begin(), data.begin() + static_cast<std::ptrdiff_t>(len)};
  }
  return {data.begin(), data.begin() + static_cast<std::ptrdiff_t>(max_len)};
}

template <class T>
void fill_cycling(std::vector<T>& data, const std::vector<T>& seed, std::int64_t numel) {
  data.resize(static_cast<std::size_t>(numel));
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = seed[i % seed.size()];
}

// The ops that take register r as an operand: their edge values are the leaf's boundaries.
std::vector<Op> consumers(const Program& p, Reg r) {
  std::vector<Op> out;
  for (const Stmt& s : p.stmts) {
    if (s.kind != StmtKind::Op) continue;
    if (std::find(s.instr.operands.begin(), s.instr.operands.end(), r) != s.instr.operands.end())
      out.push_back(s.instr.op);
  }
  return out;
}

double grid(const Context& c, MutationRng& rng) {
  return round_to(grid_value(static_cast<std::uint8_t>(rng.below(256))), c.dtype);
}

// A special value: the generator's table for the dtype, the dtype's own extremes, or an edge of
// an op the leaf feeds (a kink, an overflow threshold), sometimes one step off it.
double special(const Context& c, MutationRng& rng, const std::vector<Op>& feeds) {
  if (c.k.special_tags == 0) return grid(c, rng); // only grid values are encodable
  const std::uint32_t pick = rng.below(10);
  if (pick < 4 || feeds.empty()) {
    if (pick == 9) {
      const double extremes[] = {std::numeric_limits<float>::max(),
                                 -std::numeric_limits<float>::max(),
                                 std::numeric_limits<float>::denorm_min(),
                                 2.0,
                                 -2.0,
                                 0.5};
      return round_to(extremes[rng.below(std::size(extremes))], c.dtype);
    }
    return special_value(rng.below(special_table_size(c.dtype)), c.dtype);
  }
  const std::span<const float> edges = op_info(feeds[rng.below(feeds.size())]).edges;
  if (edges.empty()) return special_value(rng.below(special_table_size(c.dtype)), c.dtype);
  double v = round_to(edges[rng.below(edges.size())], c.dtype);
  if ((c.dtype == FloatDType::F32 || c.dtype == FloatDType::F64) && rng.chance(30)) {
    const double toward = rng.chance(50) ? INFINITY : -INFINITY;
    v = c.dtype == FloatDType::F32 ? std::nextafter(static_cast<float>(v), toward)
                                   : std::nextafter(v, toward);
  }
  return v;
}

// A leaf value: grid values, small integers, or a special value.
double value(const Context& c, MutationRng& rng, const std::vector<Op>& feeds) {
  const std::uint32_t pick = rng.below(100);
  if (pick < 45 || c.k.special_tags == 0) return grid(c, rng);
  if (pick < 65) return round_to(static_cast<double>(static_cast<int>(rng.below(9)) - 4), c.dtype);
  return special(c, rng, feeds);
}

// The float leaves' registers.
std::vector<Reg> float_leaf_registers(const Program& p) {
  std::vector<Reg> out;
  for (std::size_t i = 0; i < p.stmts.size(); ++i)
    if (p.stmts[i].kind == StmtKind::Leaf && p.stmts[i].dtype == DType::F32)
      out.push_back(static_cast<Reg>(i));
  return out;
}

bool mutate_values(Program& p, const Context& c, MutationRng& rng, bool one_special) {
  const std::vector<Reg> leaves = float_leaf_registers(p);
  if (leaves.empty()) return false;
  const Reg r = leaves[rng.below(leaves.size())];
  Leaf& leaf = p.leaves[static_cast<std::size_t>(p.stmts[static_cast<std::size_t>(r)].leaf)];
  const std::vector<Op> feeds = consumers(p, r);
  std::vector<double> seed = seed_of(leaf.data);
  const auto numel = static_cast<std::size_t>(leaf.shape.numel());
  if (one_special) {
    // Planted beside the other values: a longer seed when the leaf has room for one.
    if (seed.size() < std::min<std::size_t>(kMaxSeedLen, numel) && rng.chance(50))
      seed.push_back(seed.back());
    seed[rng.below(seed.size())] = special(c, rng, feeds);
  } else {
    switch (rng.below(4)) {
    case 0: { // a fresh seed
      seed.resize(1 +
                  rng.below(static_cast<std::uint32_t>(std::min<std::size_t>(kMaxSeedLen, numel))));
      for (double& v : seed)
        v = value(c, rng, feeds);
      break;
    }
    case 1: // one entry redrawn
      seed[rng.below(seed.size())] = value(c, rng, feeds);
      break;
    case 2: { // one entry nudged along the grid, or scaled by a power of two
      double& v = seed[rng.below(seed.size())];
      v = round_to(rng.chance(50) ? v + (rng.chance(50) ? 1.0 : -1.0) / 127.5
                                  : v * (rng.chance(50) ? 2.0 : 0.5),
                   c.dtype);
      break;
    }
    default: { // another leaf's seed
      const Reg from = leaves[rng.below(leaves.size())];
      seed = seed_of(
          p.leaves[static_cast<std::size_t>(p.stmts[static_cast<std::size_t>(from)].leaf)].data);
      if (seed.size() > numel) seed.resize(numel);
      break;
    }
    }
  }
  const Leaf before = leaf;
  fill_cycling(leaf.data, seed, leaf.shape.numel());
  return !(leaf == before);
}

// ---- ops and attributes ----

bool mutate_op(Program& p, const Context& c, MutationRng& rng) {
  std::vector<std::size_t> sites;
  for (std::size_t i = 0; i < p.stmts.size(); ++i)
    if (p.stmts[i].kind == StmtKind::Op) sites.push_back(i);
  if (sites.empty()) return false;
  Stmt& s = p.stmts[sites[rng.below(sites.size())]];
  const OpInfo& old = op_info(s.instr.op);
  std::vector<Op> alternatives;
  for (const OpInfo& info : kOpTable)
    if (info.op != old.op && info.family == old.family && info.arity == old.arity &&
        drawn(c.k, info.op, c.dtype))
      alternatives.push_back(info.op);
  if (alternatives.empty()) return false;
  const Op op = alternatives[rng.below(alternatives.size())];
  // The structural attributes carry over between ops of one attribute kind; the table ones are
  // drawn from the new op's table.
  Attrs attrs;
  if (op_info(op).attr_kind == old.attr_kind) {
    attrs.dim = s.instr.attrs.dim;
    attrs.dim1 = s.instr.attrs.dim1;
    attrs.keepdim = s.instr.attrs.keepdim;
    attrs.times = s.instr.attrs.times;
  }
  if (const std::span<const Attrs> table = op_info(op).params; !table.empty()) {
    Attrs entry = rounded_attrs(table[rng.below(table.size())], c.dtype);
    entry.dim = attrs.dim;
    entry.dim1 = attrs.dim1;
    entry.keepdim = attrs.keepdim;
    entry.times = attrs.times;
    attrs = entry;
  }
  const Shape before = s.shape;
  s.instr.op = op;
  s.instr.attrs = attrs;
  // Same result shape, so nothing downstream changes; reinfer checks it.
  if (!reinfer(p)) return false;
  return s.shape == before;
}

// Which structural attribute fields an attribute kind uses.
enum Field : unsigned { kDim = 1, kDim1 = 2, kKeep = 4, kTimes = 8, kStep = 16 };
unsigned structural_fields(AttrKind kind) {
  switch (kind) {
  case AttrKind::DimKeep:
  case AttrKind::DimKeepCorrection:
  case AttrKind::DimKeepOrd: return kDim | kKeep;
  case AttrKind::TwoDims:
  case AttrKind::DimIndex: return kDim | kDim1;
  case AttrKind::Dim:
  case AttrKind::PDim:
  case AttrKind::ScatterReduce:
  case AttrKind::DimFill: return kDim;
  case AttrKind::DimTimes:
  case AttrKind::Shift: return kDim | kTimes;
  case AttrKind::Diagonal:
  case AttrKind::DimSize:
  case AttrKind::Offset: return kTimes;
  case AttrKind::Narrow:
  case AttrKind::DiagonalDims:
  case AttrKind::Chunk: return kDim | kDim1 | kTimes;
  case AttrKind::Slice: return kDim | kDim1 | kTimes | kStep;
  default: return 0; // table parameters, reshape and permute are drawn whole
  }
}

int nudge(int v, MutationRng& rng, int lo, int hi) {
  const int deltas[] = {-2, -1, 1, 2};
  const int moved = rng.chance(30)
                        ? lo + static_cast<int>(rng.below(static_cast<std::uint32_t>(hi - lo + 1)))
                        : v + deltas[rng.below(4)];
  return std::clamp(moved, lo, hi);
}

bool mutate_attribute(Program& p, const Context& c, MutationRng& rng) {
  std::vector<std::size_t> sites;
  for (std::size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    if (s.kind != StmtKind::Op) continue;
    const OpInfo& info = op_info(s.instr.op);
    if (info.params.size() > 1 || structural_fields(info.attr_kind) != 0 ||
        info.attr_kind == AttrKind::Reshape || info.attr_kind == AttrKind::Permutation)
      sites.push_back(i);
  }
  if (sites.empty()) return false;
  Stmt& s = p.stmts[sites[rng.below(sites.size())]];
  const OpInfo& info = op_info(s.instr.op);
  Attrs& a = s.instr.attrs;
  const Attrs before = a;
  const Shape in = p.shape_of(s.instr.operands[0]);
  const unsigned fields = structural_fields(info.attr_kind);
  if (info.params.size() > 1 && (fields == 0 || rng.chance(50))) {
    Attrs entry = rounded_attrs(info.params[rng.below(info.params.size())], c.dtype);
    entry.dim = a.dim;
    entry.dim1 = a.dim1;
    entry.keepdim = a.keepdim;
    entry.times = a.times;
    a = entry;
  } else if (info.attr_kind == AttrKind::Reshape) {
    std::vector<Attrs> choices;
    reshape_choices(in, choices);
    if (choices.empty()) return false;
    a = choices[rng.below(choices.size())];
  } else if (info.attr_kind == AttrKind::Permutation) {
    if (in.rank() < 2) return false;
    a.times = nth_permutation_code(
        in.rank(),
        static_cast<int>(rng.below(static_cast<std::uint32_t>(permutation_count(in.rank())))));
  } else {
    std::vector<unsigned> present;
    for (unsigned f : {kDim, kDim1, kKeep, kTimes, kStep})
      if (fields & f) present.push_back(f);
    const int rank = std::max(in.rank(), 1);
    switch (present[rng.below(present.size())]) {
    case kDim: a.dim = nudge(a.dim, rng, 0, rank); break;
    case kDim1:
      a.dim1 = nudge(a.dim1, rng, 0, std::max<int>(rank, static_cast<int>(kMaxDim) - 1));
      break;
    case kKeep: a.keepdim = !a.keepdim; break;
    case kTimes:
      a.times = nudge(a.times, rng, -static_cast<int>(kMaxDim), static_cast<int>(kMaxDim));
      break;
    default: a.variant = 1 + static_cast<int>(rng.below(kMaxSliceStep)); break;
    }
  }
  if (a == before) return false;
  return reinfer(p);
}

// ---- dims ----

bool mutate_dims(Program& p, const Context& c, MutationRng& rng) {
  // A size that some float leaf has, and a new one: most often a boundary size in range.
  std::vector<std::int64_t> sizes;
  for (const Leaf& leaf : p.leaves)
    for (int d = 0; d < leaf.shape.rank(); ++d)
      if (leaf.dtype == DType::F32) sizes.push_back(leaf.shape[d]);
  if (sizes.empty()) return false;
  const std::int64_t from = sizes[rng.below(sizes.size())];
  std::vector<std::int64_t> targets;
  for (std::int64_t n : kBoundarySizes)
    if (n >= c.k.min_dim && n <= c.k.max_dim && n != from) targets.push_back(n);
  for (std::int64_t n : {from - 1, from + 1, from * 2, from / 2})
    if (n >= c.k.min_dim && n <= c.k.max_dim && n != from && rng.chance(25)) targets.push_back(n);
  if (targets.empty()) return false;
  const std::int64_t to = targets[rng.below(targets.size())];
  // Every occurrence (shapes that broadcast or match stay so), or just one dim of one leaf.
  const bool everywhere = rng.chance(60);
  std::vector<std::pair<std::size_t, int>> sites;
  for (std::size_t l = 0; l < p.leaves.size(); ++l)
    for (int d = 0; d < p.leaves[l].shape.rank(); ++d)
      if (p.leaves[l].shape[d] == from && (everywhere || p.leaves[l].dtype == DType::F32))
        sites.emplace_back(l, d);
  if (!everywhere) {
    const auto one = sites[rng.below(sites.size())];
    sites.assign(1, one);
  }
  for (const auto& [l, d] : sites) {
    Leaf& leaf = p.leaves[l];
    leaf.shape[d] = to;
    if (leaf.dtype == DType::F32)
      fill_cycling(leaf.data, seed_of(leaf.data), leaf.shape.numel());
    else
      fill_cycling(leaf.indices, seed_of(leaf.indices), leaf.shape.numel());
  }
  return reinfer(p);
}

// Size-dependent attributes brought back into range of the operand's (resized) shape.
void fit_attributes(Attrs& a, AttrKind kind, const Shape& in) {
  const auto size = [&](int d) { return d >= 0 && d < in.rank() ? static_cast<int>(in[d]) : 1; };
  switch (kind) {
  case AttrKind::Narrow: {
    const int n = size(a.dim);
    a.dim1 = std::clamp(a.dim1, 0, n - 1);
    a.times = std::clamp(a.times, 1, n - a.dim1);
    break;
  }
  case AttrKind::DimIndex: a.dim1 = std::clamp(a.dim1, 0, size(a.dim) - 1); break;
  case AttrKind::Shift: a.times = std::clamp(a.times, -size(a.dim), size(a.dim)); break;
  case AttrKind::Slice: {
    const int n = size(a.dim);
    a.dim1 = std::clamp(a.dim1, 0, n - 1);
    a.times = std::clamp(a.times, a.dim1 + 1, n);
    break;
  }
  case AttrKind::Chunk:
    if (a.times >= 1)
      a.dim1 = std::clamp(a.dim1, 0, static_cast<int>(chunk_count(size(a.dim), a.times)) - 1);
    break;
  case AttrKind::DiagonalDims: {
    const int rows = size(a.dim), cols = size(a.dim1);
    a.times = std::clamp(a.times, -(rows - 1), cols - 1);
    break;
  }
  default: break;
  }
}

// Program p's statements [0, cut) followed by q's statements from q_cut on, q's operands
// before q_cut mapped onto p's registers of the same shape and dtype.
std::optional<Program> splice(const Program& p, std::size_t cut, const Program& q,
                              std::size_t q_cut, MutationRng& rng) {
  Program out;
  out.float_dtype = p.float_dtype;
  out.stmts.assign(p.stmts.begin(), p.stmts.begin() + static_cast<std::ptrdiff_t>(cut));
  for (const Stmt& s : out.stmts)
    if (s.kind == StmtKind::Leaf) out.leaves.push_back(p.leaves[static_cast<std::size_t>(s.leaf)]);
  std::vector<Reg> mapped(q_cut, -1);
  const auto map = [&](Reg r) -> Reg {
    if (static_cast<std::size_t>(r) >= q_cut)
      return static_cast<Reg>(cut + (static_cast<std::size_t>(r) - q_cut));
    Reg& m = mapped[static_cast<std::size_t>(r)];
    if (m >= 0) return m;
    std::vector<Reg> same;
    for (std::size_t i = 0; i < cut; ++i)
      if (out.stmts[i].shape == q.shape_of(r) && out.stmts[i].dtype == q.dtype_of(r))
        same.push_back(static_cast<Reg>(i));
    if (same.empty()) return -1;
    return m = same[rng.below(same.size())];
  };
  for (std::size_t t = q_cut; t < q.stmts.size(); ++t) {
    Stmt s = q.stmts[t];
    if (s.kind == StmtKind::Leaf) {
      Leaf leaf = q.leaves[static_cast<std::size_t>(s.leaf)];
      for (double& v : leaf.data)
        v = round_to(v, out.float_dtype);
      s.leaf = static_cast<int>(out.leaves.size());
      out.leaves.push_back(std::move(leaf));
    } else if (s.kind == StmtKind::Alias) {
      if ((s.source = map(s.source)) < 0) return std::nullopt;
    } else {
      for (Reg& r : s.instr.operands)
        if ((r = map(r)) < 0) return std::nullopt;
      s.instr.attrs = rounded_attrs(s.instr.attrs, out.float_dtype);
    }
    out.stmts.push_back(std::move(s));
  }
  out.root = static_cast<Reg>(out.stmts.size() - 1);
  return out;
}

std::optional<Mutated> finish(Program p, const Program& original, const GeneratorOptions& options) {
  if (p == original || !validate(p).empty()) return std::nullopt;
  EncodeResult encoded = encode(p, options);
  if (!encoded.ok()) return std::nullopt;
  std::vector<std::uint8_t> bytes = encoded.bytes();
  return Mutated{std::move(p), std::move(bytes)};
}

} // namespace

std::string_view mutation_kind_name(MutationKind kind) {
  switch (kind) {
  case MutationKind::Values: return "values";
  case MutationKind::Special: return "special";
  case MutationKind::Op: return "op";
  case MutationKind::Attribute: return "attribute";
  case MutationKind::Resize: return "resize";
  }
  return "?";
}

std::uint64_t MutationRng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint32_t MutationRng::below(std::uint32_t n) {
  return n == 0 ? 0 : static_cast<std::uint32_t>(next() % n);
}

bool reinfer(Program& p) {
  for (std::size_t i = 0; i < p.stmts.size(); ++i) {
    Stmt& s = p.stmts[i];
    switch (s.kind) {
    case StmtKind::Leaf: s.shape = p.leaves[static_cast<std::size_t>(s.leaf)].shape; break;
    case StmtKind::Alias:
      s.shape = p.shape_of(s.source);
      s.dtype = p.dtype_of(s.source);
      break;
    case StmtKind::Op: {
      std::array<Shape, 3> operands;
      const std::size_t n = s.instr.operands.size();
      if (n > operands.size()) return false;
      for (std::size_t j = 0; j < n; ++j)
        operands[j] = p.shape_of(s.instr.operands[j]);
      fit_attributes(s.instr.attrs, op_info(s.instr.op).attr_kind, operands[0]);
      const std::span<const Shape> shapes(operands.data(), n);
      const ShapeResult result = infer_shape(s.instr.op, s.instr.attrs, shapes);
      if (!result.ok()) return false;
      s.shape = result.shape();
      if (const std::int64_t bound = index_bound(s.instr.op, s.instr.attrs, shapes); bound > 0) {
        const Stmt& index = p.stmts[static_cast<std::size_t>(s.instr.operands[1])];
        if (index.kind != StmtKind::Leaf) return false;
        for (std::int64_t& v : p.leaves[static_cast<std::size_t>(index.leaf)].indices)
          v = ((v % bound) + bound) % bound;
      }
      break;
    }
    }
  }
  return true;
}

std::optional<Mutated> mutate_as(const Program& program, MutationKind kind,
                                 const GeneratorOptions& options, MutationRng& rng) {
  if (program.stmts.empty()) return std::nullopt;
  const Context c{normalize(options), program.float_dtype};
  Program p = program;
  bool changed = false;
  switch (kind) {
  case MutationKind::Values: changed = mutate_values(p, c, rng, false); break;
  case MutationKind::Special: changed = mutate_values(p, c, rng, true); break;
  case MutationKind::Op: changed = mutate_op(p, c, rng); break;
  case MutationKind::Attribute: changed = mutate_attribute(p, c, rng); break;
  case MutationKind::Resize: changed = mutate_dims(p, c, rng); break;
  }
  if (!changed) return std::nullopt;
  return finish(std::move(p), program, options);
}

std::optional<Mutated> mutate_program(const Program& program, const GeneratorOptions& options,
                                      MutationRng& rng) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    // Half value-only (values 30 %, a planted special 20 %), then op 15 %, attribute 15 %,
    // resize 20 %.
    const std::uint32_t pick = rng.below(100);
    const MutationKind kind = pick < 30   ? MutationKind::Values
                              : pick < 50 ? MutationKind::Special
                              : pick < 65 ? MutationKind::Op
                              : pick < 80 ? MutationKind::Attribute
                                          : MutationKind::Resize;
    if (std::optional<Mutated> m = mutate_as(program, kind, options, rng)) return m;
  }
  return std::nullopt;
}

std::optional<Mutated> mutate_values_only(const Program& program, const GeneratorOptions& options,
                                          MutationRng& rng) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    // The same 3:2 split of new values and planted specials as mutate_program's.
    const MutationKind kind = rng.below(5) < 3 ? MutationKind::Values : MutationKind::Special;
    if (std::optional<Mutated> m = mutate_as(program, kind, options, rng)) return m;
  }
  return std::nullopt;
}

std::optional<Mutated> cross_over(const Program& a, const Program& b,
                                  const GeneratorOptions& options, MutationRng& rng) {
  if (a.stmts.empty() || b.stmts.empty()) return std::nullopt;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::size_t cut = 1 + rng.below(static_cast<std::uint32_t>(a.stmts.size()));
    const std::size_t q_cut = rng.below(static_cast<std::uint32_t>(b.stmts.size()));
    std::optional<Program> spliced = splice(a, cut, b, q_cut, rng);
    if (!spliced || !reinfer(*spliced)) continue;
    if (std::optional<Mutated> m = finish(std::move(*spliced), a, options)) return m;
  }
  // a's structure, b's leaf seeds.
  const Context c{normalize(options), a.float_dtype};
  Program p = a;
  const std::vector<Reg> mine = float_leaf_registers(a), theirs = float_leaf_registers(b);
  if (mine.empty() || theirs.empty()) return std::nullopt;
  const std::uint32_t offset = rng.below(theirs.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (mine.size() > 1 && rng.chance(50)) continue;
    Leaf& leaf =
        p.leaves[static_cast<std::size_t>(p.stmts[static_cast<std::size_t>(mine[i])].leaf)];
    const Reg from = theirs[(i + offset) % theirs.size()];
    std::vector<double> seed = seed_of(
        b.leaves[static_cast<std::size_t>(b.stmts[static_cast<std::size_t>(from)].leaf)].data);
    if (seed.size() > static_cast<std::size_t>(leaf.shape.numel()))
      seed.resize(static_cast<std::size_t>(leaf.shape.numel()));
    for (double& v : seed)
      v = round_to(v, c.dtype);
    fill_cycling(leaf.data, seed, leaf.shape.numel());
  }
  return finish(std::move(p), a, options);
}

} // namespace burnmark
