// Forward of every op, one case each: LibTorch's semantics (broadcasting, layout, reductions,
// matmul) over the scalar formulas of approx.h.
#include "tape.h"

namespace burnmark::ref {
namespace {

template <class F> void elementwise(const Node& a, const Node& b, Node& out, F f) {
  map_binary(out.shape, a.shape, a.value, b.shape, b.value, out.value, f);
}

// Sum (then, for a mean, the division LibTorch applies to the rounded sum) over a walk.
void reduction(const Node& a, const Walk& w, bool mean, Node& out, ReduceScratch& s) {
  reduce(a.value, w, out.shape.numel(), out.value, s);
  if (!mean) return;
  const Approx n{static_cast<double>(w.numel() / out.shape.numel()), 0.0};
  for (std::int64_t i = 0; i < out.value.size(); ++i)
    out.value.set(i, div(out.value.at(i), n));
}

} // namespace

void forward_rule(const Node& a, const Node* b, Node& out, ReduceScratch& s) {
  const Attrs& at = out.attrs;
  Buf& o = out.value;
  switch (out.op) {
  case Op::Add: return elementwise(a, *b, out, [](Approx x, Approx y) { return add(x, y); });
  case Op::Sub: return elementwise(a, *b, out, [](Approx x, Approx y) { return sub(x, y); });
  case Op::Mul: return elementwise(a, *b, out, [](Approx x, Approx y) { return mul(x, y); });
  case Op::Div: return elementwise(a, *b, out, [](Approx x, Approx y) { return div(x, y); });
  case Op::Neg: return map_unary(a.value, o, [](Approx x) { return neg(x); });
  case Op::Abs: return map_unary(a.value, o, [](Approx x) { return abs(x); });
  case Op::Exp: return map_unary(a.value, o, [](Approx x) { return exp(x); });
  case Op::Log: return map_unary(a.value, o, [](Approx x) { return log(x); });
  case Op::Sqrt: return map_unary(a.value, o, [](Approx x) { return sqrt(x); });
  case Op::Pow: return map_unary(a.value, o, [c = at.exponent](Approx x) { return pow(x, c); });
  case Op::Relu: return map_unary(a.value, o, [](Approx x) { return relu(x); });
  case Op::Sigmoid: return map_unary(a.value, o, [](Approx x) { return sigmoid(x); });
  case Op::Tanh: return map_unary(a.value, o, [](Approx x) { return tanh(x); });
  case Op::Clamp:
    // The bounds are f32 scalars on the LibTorch side.
    return map_unary(a.value, o, [lo = to_f32(at.lo), hi = to_f32(at.hi)](Approx x) {
      return clamp(x, lo, hi);
    });
  case Op::SumAll: return reduction(a, plain_walk(a.shape), false, out, s);
  case Op::MeanAll: return reduction(a, plain_walk(a.shape), true, out, s);
  case Op::SumDim: return reduction(a, reduce_dim_walk(a.shape, at.dim), false, out, s);
  case Op::MeanDim: return reduction(a, reduce_dim_walk(a.shape, at.dim), true, out, s);
  case Op::Transpose: return gather(a.value, transpose_walk(a.shape, at.dim, at.dim1), o);
  case Op::Concat:
    o.resize(out.shape.numel());
    scatter(a.value, concat_part_walk(a.shape, b->shape, at.dim, 0), o);
    scatter(b->value, concat_part_walk(a.shape, b->shape, at.dim, 1), o);
    return;
  case Op::Repeat: return gather(a.value, repeat_walk(a.shape, at.dim, at.times), o);
  case Op::Matmul: return matmul(a.shape, a.value, b->shape, b->value, out.shape, o);
  }
}

} // namespace burnmark::ref
