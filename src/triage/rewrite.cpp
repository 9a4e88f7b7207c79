// Structural program edits for the minimiser and the sweep (see burnmark/triage/rewrite.h).
#include "burnmark/triage/rewrite.h"

#include <cassert>

#include "burnmark/ir/shape_rules.h"

namespace burnmark {
namespace {

// Copies the statements with keep[r] set, in order, renaming every register read through
// `subst` first (subst[r] == r when r is not replaced). Leaves are renumbered in order.
Program copy_kept(const Program& p, const std::vector<bool>& keep, const std::vector<Reg>& subst) {
  Program out;
  out.float_dtype = p.float_dtype;
  std::vector<Reg> map(p.stmts.size(), -1);
  const auto rename = [&](Reg r) {
    return map[static_cast<std::size_t>(subst[static_cast<std::size_t>(r)])];
  };
  for (std::size_t r = 0; r < p.stmts.size(); ++r) {
    if (!keep[r]) continue;
    Stmt s = p.stmts[r];
    switch (s.kind) {
    case StmtKind::Leaf:
      out.leaves.push_back(p.leaves[static_cast<std::size_t>(s.leaf)]);
      s.leaf = static_cast<int>(out.leaves.size()) - 1;
      break;
    case StmtKind::Alias: s.source = rename(s.source); break;
    case StmtKind::Op:
      for (Reg& o : s.instr.operands)
        o = rename(o);
      break;
    }
    map[r] = static_cast<Reg>(out.stmts.size());
    out.stmts.push_back(std::move(s));
  }
  out.root = rename(p.root);
  return out;
}

std::vector<Reg> identity(std::size_t n) {
  std::vector<Reg> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<Reg>(i);
  return v;
}

} // namespace

std::optional<Program> reinfer(Program p) {
  for (std::size_t r = 0; r < p.stmts.size(); ++r) {
    Stmt& s = p.stmts[r];
    switch (s.kind) {
    case StmtKind::Leaf: s.shape = p.leaves[static_cast<std::size_t>(s.leaf)].shape; break;
    case StmtKind::Alias: s.shape = p.shape_of(s.source); break;
    case StmtKind::Op: {
      std::vector<Shape> in;
      for (Reg o : s.instr.operands)
        in.push_back(p.shape_of(o));
      const ShapeResult res = infer_shape(s.instr.op, s.instr.attrs, in);
      if (!res.ok()) return std::nullopt;
      s.shape = res.shape();
      break;
    }
    }
  }
  if (!validate(p).empty()) return std::nullopt;
  return p;
}

Program compact(const Program& p) {
  std::vector<bool> live(p.stmts.size(), false);
  live[static_cast<std::size_t>(p.root)] = true;
  for (std::size_t i = p.stmts.size(); i-- > 0;) {
    if (!live[i]) continue;
    const Stmt& s = p.stmts[i];
    switch (s.kind) {
    case StmtKind::Leaf: break;
    case StmtKind::Alias: live[static_cast<std::size_t>(s.source)] = true; break;
    case StmtKind::Op:
      for (Reg o : s.instr.operands)
        live[static_cast<std::size_t>(o)] = true;
      break;
    }
  }
  return copy_kept(p, live, identity(p.stmts.size()));
}

Program replace_register(const Program& p, Reg reg, Reg with) {
  assert(with < reg);
  std::vector<bool> keep(p.stmts.size(), true);
  keep[static_cast<std::size_t>(reg)] = false;
  std::vector<Reg> subst = identity(p.stmts.size());
  subst[static_cast<std::size_t>(reg)] = with;
  return copy_kept(p, keep, subst);
}

Program cut_to_leaf(const Program& p, Reg reg, std::vector<double> data) {
  Program out;
  out.float_dtype = p.float_dtype;
  for (std::size_t r = 0; r < p.stmts.size(); ++r) {
    Stmt s = p.stmts[r];
    if (static_cast<Reg>(r) == reg) {
      s = Stmt{};
      s.kind = StmtKind::Leaf;
      s.shape = p.stmts[r].shape;
      out.leaves.push_back(Leaf{s.shape, std::move(data)});
      s.leaf = static_cast<int>(out.leaves.size()) - 1;
    } else if (s.kind == StmtKind::Leaf) {
      out.leaves.push_back(p.leaves[static_cast<std::size_t>(s.leaf)]);
      s.leaf = static_cast<int>(out.leaves.size()) - 1;
    }
    out.stmts.push_back(std::move(s));
  }
  out.root = p.root;
  return out;
}

Program reroot(const Program& p, Reg root) {
  Program q = p;
  q.root = root;
  return compact(q);
}

Program weighted(Program program, std::vector<double> upstream) {
  for (double& u : upstream)
    u = round_to(u, program.float_dtype);
  const Shape shape = program.shape_of(program.root);
  program.leaves.push_back(Leaf{shape, std::move(upstream)});
  Stmt leaf;
  leaf.kind = StmtKind::Leaf;
  leaf.leaf = static_cast<int>(program.leaves.size()) - 1;
  leaf.shape = shape;
  program.stmts.push_back(leaf);
  Stmt mul;
  mul.kind = StmtKind::Op;
  mul.instr.op = Op::Mul;
  mul.instr.operands = {program.root, static_cast<Reg>(program.stmts.size()) - 1};
  mul.shape = shape;
  program.stmts.push_back(mul);
  program.root = static_cast<Reg>(program.stmts.size()) - 1;
  return program;
}

namespace {

// A leaf of `shape` whose element at each flat index is the old leaf's element at source(flat),
// for f32 data or index values alike (index values stay in range only where validate() says so).
template <class Source> Leaf remap(const Leaf& leaf, const Shape& shape, Source source) {
  Leaf out;
  out.shape = shape;
  out.dtype = leaf.dtype;
  const std::int64_t n = shape.numel();
  if (leaf.dtype == DType::I64)
    out.indices.resize(static_cast<std::size_t>(n));
  else
    out.data.resize(static_cast<std::size_t>(n));
  for (std::int64_t flat = 0; flat < n; ++flat) {
    const auto src = static_cast<std::size_t>(source(flat));
    if (leaf.dtype == DType::I64)
      out.indices[static_cast<std::size_t>(flat)] = leaf.indices[src];
    else
      out.data[static_cast<std::size_t>(flat)] = leaf.data[src];
  }
  return out;
}

// The old leaf's flat index of new multi-index `flat` (new shape `to`), with `axis` mapped by f.
template <class AxisMap>
std::int64_t old_offset(const Leaf& leaf, const Shape& to, int axis, std::int64_t flat, AxisMap f) {
  const auto old_strides = leaf.shape.strides();
  std::int64_t rest = flat, src = 0;
  for (int a = to.rank() - 1; a >= 0; --a) {
    std::int64_t i = rest % to[a];
    rest /= to[a];
    if (a == axis) i = f(i);
    src += i * old_strides[static_cast<std::size_t>(a)];
  }
  return src;
}

} // namespace

Leaf slice_axis(const Leaf& leaf, int axis, std::int64_t start, std::int64_t size) {
  Shape to = leaf.shape;
  to[axis] = size;
  return remap(leaf, to, [&](std::int64_t flat) {
    return old_offset(leaf, to, axis, flat, [&](std::int64_t i) { return i + start; });
  });
}

Leaf resize_axis(const Leaf& leaf, int axis, std::int64_t size) {
  Shape to = leaf.shape;
  to[axis] = size;
  // Growing tiles the axis, shrinking keeps its first elements.
  return remap(leaf, to, [&](std::int64_t flat) {
    return old_offset(leaf, to, axis, flat, [&](std::int64_t i) { return i % leaf.shape[axis]; });
  });
}

Leaf reshape_leaf(const Leaf& leaf, const Shape& shape) {
  return remap(leaf, shape, [](std::int64_t flat) { return flat; });
}

} // namespace burnmark
