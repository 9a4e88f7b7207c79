// The reference tape: leaves, op application, reverse-mode accumulation with the one central
// un-broadcasting step, and read-out into HostTensors.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "tape.h"

namespace burnmark::ref {

// Elements a node buffer keeps between programs: 16,384 (256 KiB of values and bounds) covers a
// [16, 16, 16, 4] tensor; the generator's largest (FUZZ_MAX_DIM ** rank) are rare, and for those
// a fresh allocation costs little beside the program's own arithmetic.
constexpr std::int64_t kKeptElements = std::int64_t{1} << 14;
// ... and all of a tape's buffers together: 65,536 elements (1 MiB). Without a total, each node
// slot keeps the largest buffer any program had there, and as libFuzzer lengthens its inputs the
// arenas of the process's several references (the harness's, the known-bug filter's, the
// convention judge's) grew by tens of MB over a 30-minute run (a heap profile: 44 % of the
// growth). The first nodes, which every program uses, keep theirs.
constexpr std::int64_t kKeptTotal = std::int64_t{1} << 16;

void ReferenceFramework::release_large_buffers() {
  std::int64_t kept = 0;
  const auto keep_or_release = [&](Buf& b) {
    if (b.capacity() > kKeptElements || kept + b.capacity() > kKeptTotal)
      b.release_above(0);
    else
      kept += b.capacity();
  };
  for (Node& n : nodes_) {
    keep_or_release(n.value);
    keep_or_release(n.grad);
    keep_or_release(n.tan);
    keep_or_release(n.gtan);
  }
}

std::int64_t ReferenceFramework::kept_elements() const {
  std::int64_t kept = 0;
  for (const Node& n : nodes_)
    kept += n.value.capacity() + n.grad.capacity() + n.tan.capacity() + n.gtan.capacity();
  return kept;
}

namespace {

// The ftz-daz convention's one point (conventions.def; docs/conventions.md, "Flush to zero"):
// every value the tape finalises -- a leaf as read, an op's result, a gradient sum, a tangent --
// goes through here. On the reference's own side nothing changes; the point is reached where an
// element's interval reaches below the smallest normal and flushing would change it. On the other
// side a subnormal becomes 0 of its sign and a normal value whose interval reaches the subnormal
// range may become 0; either way the bound covers 0 and the IEEE value both, because XLA flushes
// in its arithmetic but not in what it simplifies away or only moves (x * 1, x + 0, neg,
// transpose and where keep a subnormal: probed on jax 0.10.2), so which one a program gets is
// not known from the op alone.
bool flush_changes(double v, double e, double below) {
  const double mag = std::fabs(v);
  return v != 0 && mag - e < below && (mag < below || e < mag); // false for NaN, inf and E = inf
}

void flush_subnormals(Buf& b) {
  const double below = storage.ftz_below;
  double* v = b.v();
  double* e = b.e();
  const std::int64_t n = b.size();
  std::int64_t i = 0;
  while (i < n && !flush_changes(v[i], e[i], below))
    ++i;
  if (i == n || !other_side(Convention::FtzDaz)) return;
  for (; i < n; ++i) {
    if (!flush_changes(v[i], e[i], below)) continue;
    const double mag = std::fabs(v[i]);
    if (mag < below) {
      e[i] += mag;
      v[i] = std::copysign(0.0, v[i]);
    } else {
      e[i] = std::max(e[i], mag);
    }
  }
}

} // namespace

Node& ReferenceFramework::fresh() {
  if (used_ == nodes_.size()) nodes_.emplace_back();
  Node& n = nodes_[used_++];
  n.in = {-1, -1, -1};
  n.attrs = {};
  n.is_leaf = false;
  n.requires_grad = false;
  n.has_grad = false;
  n.has_tan = false;
  n.tan_done = false;
  return n;
}

ReferenceFramework::Tensor ReferenceFramework::leaf(const Leaf& leaf, bool requires_grad) {
  Node& n = fresh();
  n.shape = leaf.shape;
  n.is_leaf = true;
  n.requires_grad = requires_grad;
  const std::int64_t size = leaf.shape.numel();
  n.value.resize(size);
  if (leaf.dtype == DType::I64)
    std::copy_n(leaf.indices.begin(), size, n.value.v()); // small integers, exact in double
  else
    std::copy_n(leaf.data.begin(), size, n.value.v());
  std::fill_n(n.value.e(), size, 0.0);                     // leaves are exact inputs
  if (leaf.dtype != DType::I64) flush_subnormals(n.value); // read as 0 (DAZ) on ftz-daz's side
  return {static_cast<int>(used_ - 1)};
}

ReferenceFramework::Tensor ReferenceFramework::apply(const Instr& instr,
                                                     std::span<const Tensor* const> operands,
                                                     const Shape& shape) {
  // fresh() may grow the arena, so operand nodes are looked up only afterwards.
  Node& out = fresh();
  const int id = static_cast<int>(used_ - 1);
  out.op = instr.op;
  out.attrs = instr.attrs;
  out.shape = shape;
  for (std::size_t k = 0; k < operands.size() && k < kMaxArity; ++k) {
    out.in[k] = operands[k]->node;
    out.requires_grad = out.requires_grad || node(operands[k]->node).requires_grad;
  }
  // A comparison's mask carries no gradient, whatever its operands do.
  if (result_dtype(instr.op) == DType::Bool) out.requires_grad = false;
  const Node* b = out.in[1] >= 0 ? &node(out.in[1]) : nullptr;
  const Node* c = out.in[2] >= 0 ? &node(out.in[2]) : nullptr;
  forward_rule(node(out.in[0]), b, c, out, scratch_);
  flush_subnormals(out.value);
  return {id};
}

void ReferenceFramework::accumulate_into(Buf& sum, bool& has, int& terms, const Shape& shape,
                                         InputGrad& g, int reordered_from) {
  Buf* src = &g.buf;
  if (!(g.shape == shape)) {
    sum_to(g.buf, g.shape, shape, summed_, scratch_);
    src = &summed_;
  }
  if (src->size() != shape.numel()) std::abort(); // a backward rule produced the wrong shape
  if (!has) {
    std::swap(sum, *src); // the scratch buffer inherits the old capacity
    has = true;
    terms = 1;
    flush_subnormals(sum);
    return;
  }
  const bool order_matters = terms++ >= reordered_from;
  double* tv = sum.v();
  double* te = sum.e();
  const double* sv = src->v();
  const double* se = src->e();
  for (std::int64_t i = 0; i < src->size(); ++i) {
    Approx r = add({tv[i], te[i]}, {sv[i], se[i]});
    if (order_matters && std::isfinite(r.v) && !indeterminate(r))
      r.e +=
          kExactUlps * (storage.u * (std::fabs(tv[i]) + std::fabs(sv[i])) + storage.underflow_step);
    tv[i] = r.v;
    te[i] = r.e;
  }
  flush_subnormals(sum);
}

void ReferenceFramework::accumulate(Node& target, InputGrad& g) {
  // a + b is the same in any order; (a + b) + c is not (c + a) + b: from the third term on, each
  // addition may round elsewhere in another order, even when every term is exact (found by the
  // bf16 campaign: scatter_reduce's gradient summed in-place and eager, an ulp apart).
  accumulate_into(target.grad, target.has_grad, target.grad_terms, target.shape, g, 2);
}

void ReferenceFramework::backward(const Tensor& root) {
  if (grads_of_ == root.node) return;
  grads_of_ = root.node;
  for (std::size_t i = 0; i < used_; ++i)
    nodes_[i].has_grad = false;
  Node& r = node(root.node);
  if (!r.requires_grad) return;
  r.grad.resize(r.shape.numel());
  std::fill_n(r.grad.v(), r.grad.size(), 1.0);
  std::fill_n(r.grad.e(), r.grad.size(), 0.0);
  r.has_grad = true;
  // Registers are in SSA order, so walking down from the root visits every consumer of a node
  // before the node itself: its gradient is complete when its rule runs.
  for (int i = root.node; i >= 0; --i) {
    const Node& n = node(i);
    if (!n.has_grad || n.is_leaf) continue;
    const Node& a = node(n.in[0]);
    const Node* b = n.in[1] >= 0 ? &node(n.in[1]) : nullptr;
    const Node* c = n.in[2] >= 0 ? &node(n.in[2]) : nullptr;
    dx_[0].wanted = a.requires_grad;
    dx_[1].wanted = b != nullptr && b->requires_grad;
    dx_[2].wanted = c != nullptr && c->requires_grad;
    backward_rule(n, a, b, c, dx_, scratch_);
    for (std::size_t k = 0; k < kMaxArity; ++k)
      if (dx_[k].wanted) accumulate(node(n.in[k]), dx_[k]);
  }
}

std::optional<HostTensor> ReferenceFramework::grad(const Tensor& t) {
  const Node& n = node(t.node);
  if (!n.is_leaf || !n.has_grad) return std::nullopt;
  return HostTensor{n.shape, n.grad.values(), n.grad.bounds()};
}

std::optional<std::vector<double>> ReferenceFramework::node_gradient(const Tensor& t) const {
  const Node& n = nodes_[static_cast<std::size_t>(t.node)];
  if (!n.has_grad) return std::nullopt;
  return n.grad.values();
}

ReferenceFramework::Tensor ReferenceFramework::dual(const Tensor& t, const HostTensor& tangent) {
  Node& n = node(t.node);
  n.tan.resize(n.shape.numel());
  std::copy_n(tangent.values.begin(), n.shape.numel(), n.tan.v());
  std::fill_n(n.tan.e(), n.shape.numel(), 0.0); // exact in every dtype (leaf_tangent)
  flush_subnormals(n.tan);
  n.has_tan = true;
  n.tan_done = true;
  return t;
}

void ReferenceFramework::propagate_tangents(int root) {
  // Only the nodes the root depends on: a dead branch's tangent is never read, and a contracted
  // rule (prod over 8,192 elements) can cost seconds.
  needed_.assign(static_cast<std::size_t>(root) + 1, 0);
  needed_[static_cast<std::size_t>(root)] = 1;
  for (int i = root; i >= 0; --i) {
    const Node& n = node(i);
    if (!needed_[static_cast<std::size_t>(i)] || n.is_leaf) continue;
    for (int in : n.in)
      if (in >= 0) needed_[static_cast<std::size_t>(in)] = 1;
  }
  for (int i = 0; i <= root; ++i) {
    Node& out = node(i);
    if (!needed_[static_cast<std::size_t>(i)] || out.is_leaf || out.tan_done) continue;
    out.tan_done = true;
    const Node* b = out.in[1] >= 0 ? &node(out.in[1]) : nullptr;
    const Node* c = out.in[2] >= 0 ? &node(out.in[2]) : nullptr;
    const Node& a = node(out.in[0]);
    if (!a.has_tan && !(b != nullptr && b->has_tan) && !(c != nullptr && c->has_tan)) continue;
    tangent_rule(out, a, b, c, tangent_scratch_, scratch_);
    if (out.has_tan) flush_subnormals(out.tan);
    grads_of_ = -1;
    // Where the value is NaN the derivative has no meaning and LibTorch's forward formulas
    // answer anything (0, 1, NaN): not judged (docs/conventions.md, "Forward mode").
    if (out.has_tan)
      for (std::int64_t k = 0; k < out.tan.size(); ++k)
        if (std::isnan(out.value.v()[k])) out.tan.e()[k] = kInf;
  }
}

HostTensor ReferenceFramework::tangent(const Tensor& t) {
  propagate_tangents(t.node);
  // LibTorch computes every statement's tangent, read or not, so a dead slogdet of a singular
  // matrix raises there too (found by the 2.15 forward-mode campaign): its rule runs here for
  // error_possible alone.
  for (std::size_t i = 0; i < used_; ++i)
    if (nodes_[i].op == Op::Slogdet && !nodes_[i].is_leaf && !nodes_[i].tan_done)
      propagate_tangents(static_cast<int>(i));
  const Node& n = node(t.node);
  if (!n.has_tan)
    return HostTensor{
        n.shape, std::vector<double>(static_cast<std::size_t>(n.shape.numel()), 0.0), {}};
  return HostTensor{n.shape, n.tan.values(), n.tan.bounds()};
}

namespace {

bool all_finite(const Buf& b) {
  for (std::int64_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(b.v()[i])) return false;
  return true;
}

} // namespace

bool ReferenceFramework::propagate_gradient_tangents(int root) {
  // Every node, not only those up to the root: a leaf after the root is read out too, and its
  // flag would otherwise be the previous program's (found by the first second-order campaign).
  for (std::size_t i = 0; i < used_; ++i)
    nodes_[i].has_gtan = false;
  bool finite = true;
  for (int i = root; i >= 0; --i) {
    Node& n = node(i);
    if (!n.has_grad) continue;
    finite = finite && all_finite(n.value) && all_finite(n.grad) &&
             (!n.has_tan || all_finite(n.tan)) && (!n.has_gtan || all_finite(n.gtan));
    if (n.is_leaf) continue;
    const Node& a = node(n.in[0]);
    const Node* b = n.in[1] >= 0 ? &node(n.in[1]) : nullptr;
    const Node* c = n.in[2] >= 0 ? &node(n.in[2]) : nullptr;
    const auto want = [&] {
      dx_[0].wanted = a.requires_grad;
      dx_[1].wanted = b != nullptr && b->requires_grad;
      dx_[2].wanted = c != nullptr && c->requires_grad;
    };
    const auto add_terms = [&] {
      for (std::size_t k = 0; k < kMaxArity; ++k) {
        if (!dx_[k].wanted) continue;
        Node& target = node(n.in[k]);
        // Reverse over reverse (LibTorch's double backward) adds the same terms in another
        // order, so every sum after the first term is reordered.
        accumulate_into(target.gtan, target.has_gtan, target.gtan_terms, target.shape, dx_[k], 1);
      }
    };
    if (n.has_gtan) { // the rule is linear in the gradient: seeded with its tangent
      std::swap(n.grad, n.gtan);
      want();
      backward_rule(n, a, b, c, dx_, scratch_);
      std::swap(n.grad, n.gtan);
      add_terms();
    }
    want();
    if (!second_order_rule(n, a, b, c, dx_, second_order_scratch_, scratch_))
      throw std::runtime_error(fmt::format("{} for {}", kNoSecondOrderRule, op_name(n.op)));
    add_terms();
  }
  return finite;
}

std::vector<std::optional<HostTensor>>
ReferenceFramework::hessian_vector(const Tensor& root, std::span<const Tensor> leaves,
                                   std::span<const HostTensor> directions) {
  // A library's double backward rounds every intermediate of its own chain to bf16 or f16,
  // where cancellations leave few correct bits; the second-order bounds model f32 and f64 only.
  if (storage.dtype == FloatDType::BF16 || storage.dtype == FloatDType::F16)
    throw std::runtime_error(fmt::format("{} in {} programs (its bounds model f32 and f64)",
                                         kNoSecondOrderRule, float_dtype_name(storage.dtype)));
  std::vector<std::optional<HostTensor>> out(leaves.size());
  for (std::size_t k = 0; k < leaves.size(); ++k)
    if (node(leaves[k].node).requires_grad) dual(leaves[k], directions[k]);
  // Tangents first: their rules may overwrite a node's grad, which backward() then refills.
  propagate_tangents(root.node);
  backward(root);
  if (!node(root.node).requires_grad) return out;
  // Where anything on the way is inf or NaN, forward over reverse and reverse over reverse meet
  // 0 * inf at different places (each multiplies by the other's intermediates), so neither
  // answer is wrong: such a program's H·v is not judged (docs/conventions.md, "Second order").
  const bool judged = propagate_gradient_tangents(root.node);
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const Node& l = node(leaves[k].node);
    if (!l.requires_grad) continue;
    const auto n = static_cast<std::size_t>(l.shape.numel());
    HostTensor h{l.shape, l.has_gtan ? l.gtan.values() : std::vector<double>(n, 0.0),
                 l.has_gtan ? l.gtan.bounds() : std::vector<double>(n, 0.0)};
    if (!judged) std::fill(h.error_bound.begin(), h.error_bound.end(), kInf);
    out[k] = std::move(h);
  }
  return out;
}

HostTensor ReferenceFramework::read(const Tensor& t) {
  const Node& n = node(t.node);
  return HostTensor{n.shape, n.value.values(), n.value.bounds()};
}

} // namespace burnmark::ref
