// A resolved SSA tensor program: leaves with their float data, statements whose operands are
// earlier registers, and a root. Register i is defined by statement i.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "burnmark/ir/float_dtype.h"
#include "burnmark/ir/layout.h"
#include "burnmark/ir/op.h"
#include "burnmark/ir/shape.h"

namespace burnmark {

using Reg = int;

struct Leaf {
  Shape shape;
  // f32: row-major, shape.numel() values, each exactly representable in the program's float
  // dtype (double so that f64 programs reach f64-only values); i64: empty.
  std::vector<double> data;
  DType dtype = DType::F32;               // f32, or i64 for an index tensor (never a mask)
  std::vector<std::int64_t> indices = {}; // i64: row-major, shape.numel() values; f32: empty
  LeafLayout layout = {}; // f32 only: how backends that materialise layouts lay the values out
  bool operator==(const Leaf&) const;
};

struct Instr {
  Op op = Op::Add;
  std::vector<Reg> operands; // op_arity(op) earlier registers of the types operand_dtype names
  Attrs attrs;
  bool operator==(const Instr&) const = default;
};

enum class StmtKind : std::uint8_t {
  Leaf,  // a new input (gradient-tracked when f32); `leaf` indexes Program::leaves
  Alias, // the very same tensor as register `source` (same autograd node, not a copy)
  Op,    // the result of `instr`
};

struct Stmt {
  StmtKind kind = StmtKind::Op;
  int leaf = -1;
  Reg source = -1;
  Instr instr;
  Shape shape;              // the register's shape, as the shape rules infer it
  DType dtype = DType::F32; // f32, a comparison's mask (also through an alias of one), or an
                            // i64 index leaf
  bool operator==(const Stmt&) const = default;
};

struct Program {
  FloatDType float_dtype = FloatDType::F32; // of every float register ("f32" in Stmt::dtype)
  std::vector<Leaf> leaves;
  std::vector<Stmt> stmts;
  Reg root = -1;

  std::size_t num_registers() const { return stmts.size(); }
  const Shape& shape_of(Reg r) const { return stmts[static_cast<std::size_t>(r)].shape; }
  DType dtype_of(Reg r) const { return stmts[static_cast<std::size_t>(r)].dtype; }
  // Register that defines each leaf, in leaf order.
  std::vector<Reg> leaf_registers() const;
  bool operator==(const Program&) const = default;
};

// Empty when the program is well formed: operands refer to earlier registers, every leaf is
// defined exactly once in order, stored shapes equal what the shape rules infer, leaf data
// lengths match, every shape is within the cap, operands have the types their op takes (a mask
// or an index only where one is taken; an index operand is an i64 leaf whose values are in
// range for its op), the root exists and is f32, a leaf's layout is legal for its shape (f32
// leaves only; an expanded leaf's values identical along its expanded dims), and every leaf value
// and scalar attribute is representable in the program's float dtype.
std::string validate(const Program& program);

// The scalar attributes (clamp bounds, slopes, fill values, ...) rounded to a float dtype: the
// generator draws them from f32 tables, and a program holds only values its dtype represents,
// so no backend has to choose between the f32 value and the rounded one.
Attrs rounded_attrs(Attrs attrs, FloatDType dtype);
// The same program in another float dtype: leaf values and scalar attributes rounded to it.
Program with_float_dtype(Program program, FloatDType dtype);

} // namespace burnmark
