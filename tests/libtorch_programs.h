// A small builder of hand-written programs for the LibTorch backend's tests: shapes are
// inferred by the IR's own rules, so a test only states leaves, ops and attributes.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "burnmark/ir/program.h"
#include "burnmark/ir/shape_rules.h"

namespace burnmark::testing {

inline Attrs dim_keep(int dim, bool keepdim) {
  Attrs a;
  a.dim = dim;
  a.keepdim = keepdim;
  return a;
}
inline Attrs two_dims(int dim, int dim1) {
  Attrs a;
  a.dim = dim;
  a.dim1 = dim1;
  return a;
}
inline Attrs on_dim(int dim) {
  Attrs a;
  a.dim = dim;
  return a;
}
inline Attrs dim_times(int dim, int times) {
  Attrs a;
  a.dim = dim;
  a.times = times;
  return a;
}
inline Attrs exponent(double c) {
  Attrs a;
  a.exponent = c;
  return a;
}
inline Attrs bounds(double lo, double hi) {
  Attrs a;
  a.lo = lo;
  a.hi = hi;
  return a;
}

class ProgramBuilder {
public:
  Reg leaf(Shape shape, std::vector<float> data) {
    Stmt s;
    s.kind = StmtKind::Leaf;
    s.leaf = static_cast<int>(p_.leaves.size());
    s.shape = shape;
    p_.leaves.push_back(Leaf{shape, {data.begin(), data.end()}});
    return push(std::move(s));
  }
  // An i64 index leaf (never differentiated).
  Reg index_leaf(Shape shape, std::vector<std::int64_t> indices) {
    Stmt s;
    s.kind = StmtKind::Leaf;
    s.leaf = static_cast<int>(p_.leaves.size());
    s.shape = shape;
    s.dtype = DType::I64;
    p_.leaves.push_back(Leaf{shape, {}, DType::I64, std::move(indices)});
    return push(std::move(s));
  }
  Shape shape(Reg r) const { return p_.shape_of(r); }
  Reg alias(Reg source) {
    Stmt s;
    s.kind = StmtKind::Alias;
    s.source = source;
    s.shape = p_.shape_of(source);
    s.dtype = p_.dtype_of(source);
    return push(std::move(s));
  }
  Reg op(Op op, std::vector<Reg> operands, Attrs attrs = {}) {
    std::vector<Shape> shapes;
    for (Reg r : operands)
      shapes.push_back(p_.shape_of(r));
    const ShapeResult inferred = infer_shape(op, attrs, shapes);
    if (!inferred.ok()) throw std::invalid_argument("test program: " + inferred.error());
    Stmt s;
    s.kind = StmtKind::Op;
    s.instr = Instr{op, std::move(operands), attrs};
    s.shape = inferred.shape();
    s.dtype = result_dtype(op);
    return push(std::move(s));
  }
  Program finish(Reg root) {
    p_.root = root;
    if (const std::string err = validate(p_); !err.empty())
      throw std::invalid_argument("test program: " + err);
    return p_;
  }

private:
  Reg push(Stmt s) {
    p_.stmts.push_back(std::move(s));
    return static_cast<Reg>(p_.stmts.size() - 1);
  }
  Program p_;
};

} // namespace burnmark::testing
