// The indexing ops of the reference: gather, index_select and take_along_dim (each a map from
// result elements to the input elements they copy), scatter_add and scatter_reduce (for every
// self element, the group of src elements the index sends to it), index_add, index_copy,
// index_fill and index_put (slices of self along dim, named by a 1-D index, updated),
// masked_fill and masked_scatter.
//
// Copies are exact. Where several elements meet (the gradient of a gather with repeated indices,
// a scatter group) the order LibTorch combines them in is its own, so sums and products carry
// the bounds of an accumulation in any order (approx_reduce.h). The backward follows the
// mathematics; at ties of amax / amin it splits the gradient evenly among the elements equal to
// the result, the subgradient LibTorch's formula picks (docs/conventions_indexing.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "approx_binary.h"
#include "approx_reduce.h"
#include "tape.h"

namespace burnmark::ref {

inline std::int64_t index_value(const Node& index, std::int64_t k) {
  return static_cast<std::int64_t>(index.value.at(k).v);
}

inline void next_index(std::array<std::int64_t, kMaxRank>& idx, const Shape& s) {
  for (int d = s.rank() - 1; d >= 0; --d) {
    if (++idx[static_cast<std::size_t>(d)] < s[d]) return;
    idx[static_cast<std::size_t>(d)] = 0;
  }
}

// gather, index_select, take_along_dim: src[p] = the input's flat index that result element p
// copies. The index element of p is p itself (gather), p's coordinate along dim (index_select)
// or p broadcast to the index's shape (take_along_dim); the input is broadcast off dim.
inline void take_map(Op op, int dim, const Shape& in, const Node& index, const Shape& out,
                     std::vector<std::int64_t>& src) {
  const Shape& is = index.shape;
  const auto in_strides = in.strides();
  const auto ix_strides = is.strides();
  src.resize(static_cast<std::size_t>(out.numel()));
  std::array<std::int64_t, kMaxRank> o{};
  for (std::int64_t p = 0; p < out.numel(); ++p) {
    std::int64_t k = 0;
    if (op == Op::IndexSelect)
      k = o[static_cast<std::size_t>(dim)];
    else
      for (int d = 0; d < is.rank(); ++d)
        k += (is[d] == 1 ? 0 : o[static_cast<std::size_t>(d)]) *
             ix_strides[static_cast<std::size_t>(d)];
    std::int64_t q = 0;
    for (int d = 0; d < in.rank(); ++d) {
      const std::int64_t c =
          d == dim ? index_value(index, k) : (in[d] == 1 ? 0 : o[static_cast<std::size_t>(d)]);
      q += c * in_strides[static_cast<std::size_t>(d)];
    }
    src[static_cast<std::size_t>(p)] = q;
    next_index(o, out);
  }
}

inline void take_forward(const Node& a, const Node& index, Node& out,
                         std::vector<std::int64_t>& src) {
  take_map(out.op, out.attrs.dim, a.shape, index, out.shape, src);
  out.value.resize(out.shape.numel());
  for (std::size_t p = 0; p < src.size(); ++p)
    out.value.set(static_cast<std::int64_t>(p), a.value.at(src[p]));
}

// The gradient of a take: each input element receives the sum of the gradients of the result
// elements that copied it (index_add / scatter_add of the gradient), in any order, each addition
// rounded to the dtype (SumAccumulator::value_added_in_place).
inline void take_backward(const Node& out, const Node& a, const Node& index,
                          std::array<InputGrad, 3>& dx, std::vector<std::int64_t>& src) {
  take_map(out.op, out.attrs.dim, a.shape, index, out.shape, src);
  std::vector<SumAccumulator> acc(static_cast<std::size_t>(a.shape.numel()));
  std::vector<double> count(acc.size(), 0.0);
  for (std::size_t p = 0; p < src.size(); ++p) {
    acc[static_cast<std::size_t>(src[p])].add(out.grad.at(static_cast<std::int64_t>(p)));
    count[static_cast<std::size_t>(src[p])] += 1;
  }
  dx[0].shape = a.shape;
  dx[0].buf.resize(a.shape.numel());
  for (std::size_t q = 0; q < acc.size(); ++q)
    dx[0].buf.set(static_cast<std::int64_t>(q),
                  count[q] == 0 ? Approx{0.0, 0.0} : acc[q].value_added_in_place(count[q]));
}

// scatter_add, scatter_reduce: for every element p of the index, the self element it targets
// (p with its coordinate along dim replaced by the index value) and the src element it sends
// (p's own coordinates in src), as (target, source) pairs sorted by target, index order kept.
inline void scatter_pairs(int dim, const Shape& self, const Node& index, const Shape& src,
                          std::vector<std::pair<std::int64_t, std::int64_t>>& pairs) {
  const Shape& is = index.shape;
  const auto self_strides = self.strides();
  const auto src_strides = src.strides();
  pairs.clear();
  std::array<std::int64_t, kMaxRank> o{};
  for (std::int64_t p = 0; p < is.numel(); ++p) {
    std::int64_t target = 0, from = 0;
    for (int d = 0; d < is.rank(); ++d) {
      const auto k = static_cast<std::size_t>(d);
      target += (d == dim ? index_value(index, p) : o[k]) * self_strides[k];
      from += o[k] * src_strides[k];
    }
    pairs.emplace_back(target, from);
    next_index(o, is);
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
}

inline ScatterReduction scatter_reduction(const Node& out) {
  return out.op == Op::ScatterAdd ? ScatterReduction::Sum
                                  : static_cast<ScatterReduction>(out.attrs.variant);
}
inline bool scatter_includes_self(const Node& out) {
  return out.op == Op::ScatterAdd || out.attrs.include_self;
}

// Walks the groups: f(target, first, last) over pairs[first, last) for every self element that
// receives at least one src element.
template <class F>
void for_each_group(const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs, F f) {
  for (std::size_t first = 0; first < pairs.size();) {
    std::size_t last = first + 1;
    while (last < pairs.size() && pairs[last].first == pairs[first].first)
      ++last;
    f(pairs[first].first, first, last);
    first = last;
  }
}

// With self included a group's float sum accumulates onto self's value, so a group of -0s sums
// to -0 in any order, as IEEE addition gives; without self it starts from +0 as a reduction's
// does (torch.sum of -0s is +0 too), and an exact zero from anything else is +0. Each addition
// is rounded to the dtype, as scatter_add_'s `self[index[i][j]][j] += src[i][j]` says
// (SumAccumulator::value_added_in_place).
inline Approx group_sum(Row terms, bool with_self) {
  const Approx s = sum_added_in_place(terms);
  if (!with_self) return s;
  const bool all_negative_zero = std::all_of(terms.begin(), terms.end(), [](const Approx& t) {
    return t.v == 0 && std::signbit(t.v) && t.e == 0;
  });
  return all_negative_zero ? Approx{-0.0, 0.0} : s;
}

// The reduction of one group: self's value first (when included), then the src elements.
inline Approx scatter_group_value(ScatterReduction r, Row terms, bool with_self) {
  switch (r) {
  case ScatterReduction::Sum: return group_sum(terms, with_self);
  case ScatterReduction::Prod: return product_of(terms, -1, static_cast<double>(terms.size()) - 1);
  case ScatterReduction::Mean:
    return div(group_sum(terms, with_self), Approx{static_cast<double>(terms.size()), 0.0});
  case ScatterReduction::Amax: return extreme_of(terms, true).value;
  case ScatterReduction::Amin: return extreme_of(terms, false).value;
  }
  return {};
}

// Gathers one group's terms: self's value first when included.
inline void group_terms(const Node& self, const Node& src, bool include_self, std::int64_t target,
                        const ReduceScratch& s, std::size_t first, std::size_t last,
                        std::vector<Approx>& terms) {
  terms.clear();
  if (include_self) terms.push_back(self.value.at(target));
  for (std::size_t k = first; k < last; ++k)
    terms.push_back(src.value.at(s.pairs[k].second));
}

inline void scatter_forward(const Node& self, const Node& index, const Node& src, Node& out,
                            ReduceScratch& g) {
  scatter_pairs(out.attrs.dim, self.shape, index, src.shape, g.pairs);
  out.value.assign(self.value); // elements no index reaches keep self's value, include_self or not
  const ScatterReduction r = scatter_reduction(out);
  const bool with_self = scatter_includes_self(out);
  for_each_group(g.pairs, [&](std::int64_t target, std::size_t first, std::size_t last) {
    group_terms(self, src, with_self, target, g, first, last, g.terms);
    out.value.set(target, scatter_group_value(r, g.terms, with_self));
  });
}

// d result / d term for every term of one group, given the result's gradient.
inline void scatter_group_grads(ScatterReduction r, Row terms, Approx grad,
                                std::vector<Approx>& d) {
  const std::size_t n = terms.size();
  d.resize(n);
  switch (r) {
  case ScatterReduction::Sum: std::fill(d.begin(), d.end(), grad); return;
  case ScatterReduction::Mean:
    std::fill(d.begin(), d.end(), div(grad, Approx{static_cast<double>(n), 0.0}));
    return;
  case ScatterReduction::Prod: {
    // The product of the other terms, as for prod; the bound allows a formula that divides the
    // group's product by the term (LibTorch's away from zeros).
    const double roundings = static_cast<double>(n) + 1;
    for (std::size_t j = 0; j < n; ++j)
      d[j] = mul(grad, product_of(terms, static_cast<std::int64_t>(j), roundings));
    return;
  }
  case ScatterReduction::Amax:
  case ScatterReduction::Amin:
    amax_backward(terms, grad, r == ScatterReduction::Amax, RowOut(d));
    return;
  }
}

// self's gradient: the result's where no index reaches (the identity there), the term's share
// where self is included, 0 where it is not (its value does not enter the result). src's: its
// term's share, 0 for src elements outside the index's extent.
inline void scatter_backward(const Node& out, const Node& self, const Node& index, const Node& src,
                             std::array<InputGrad, 3>& dx, ReduceScratch& g) {
  scatter_pairs(out.attrs.dim, self.shape, index, src.shape, g.pairs);
  const ScatterReduction r = scatter_reduction(out);
  const bool with_self = scatter_includes_self(out);
  dx[0].shape = self.shape;
  dx[0].buf.assign(out.grad);
  dx[2].shape = src.shape;
  dx[2].buf.resize(src.shape.numel());
  for (std::int64_t q = 0; q < src.shape.numel(); ++q)
    dx[2].buf.set(q, {0.0, 0.0});
  for_each_group(g.pairs, [&](std::int64_t target, std::size_t first, std::size_t last) {
    group_terms(self, src, with_self, target, g, first, last, g.terms);
    scatter_group_grads(r, g.terms, out.grad.at(target), g.dx);
    dx[0].buf.set(target, with_self ? g.dx[0] : Approx{0.0, 0.0});
    const std::size_t skip = with_self ? 1 : 0;
    for (std::size_t k = first; k < last; ++k)
      dx[2].buf.set(g.pairs[k].second, g.dx[k - first + skip]);
  });
}

// index_add, index_copy, index_fill: for every element p of the source (for index_fill, of
// self with dim's size replaced by the index's length), the self element it updates (p with its
// coordinate c along dim replaced by index[c]) and p itself, as (target, source) pairs sorted
// by target, index order kept (as scatter_pairs, so for_each_group walks index_add's groups).
inline void index_update_pairs(int dim, const Shape& self, const Node& index,
                               std::vector<std::pair<std::int64_t, std::int64_t>>& pairs) {
  Shape src = self;
  src[dim] = index.shape[0];
  const auto self_strides = self.strides();
  pairs.clear();
  std::array<std::int64_t, kMaxRank> o{};
  for (std::int64_t p = 0; p < src.numel(); ++p) {
    std::int64_t target = 0;
    for (int d = 0; d < src.rank(); ++d) {
      const auto k = static_cast<std::size_t>(d);
      target += (d == dim ? index_value(index, o[k]) : o[k]) * self_strides[k];
    }
    pairs.emplace_back(target, p);
    next_index(o, src);
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
}

// index_add: self plus every source slice sent to it, each addition rounded to the dtype in
// some order (index_add_'s `self[index[i]] += source[i]`), as scatter_add's groups with self.
// index_copy: the source element, exact (validate() keeps index_copy's targets distinct).
// index_fill: the value, exact (validate() checks it is representable in the dtype).
// index_put along dim 0 is index_add with accumulate, index_copy without (distinct targets).
inline bool index_update_adds(const Node& out) {
  return out.op == Op::IndexAdd || (out.op == Op::IndexPut && out.attrs.variant != 0);
}
inline void index_update_forward(const Node& self, const Node& index, const Node* src, Node& out,
                                 ReduceScratch& g) {
  index_update_pairs(out.attrs.dim, self.shape, index, g.pairs);
  out.value.assign(self.value);
  if (index_update_adds(out)) {
    for_each_group(g.pairs, [&](std::int64_t target, std::size_t first, std::size_t last) {
      group_terms(self, *src, true, target, g, first, last, g.terms);
      out.value.set(target, group_sum(g.terms, true));
    });
  } else if (out.op == Op::IndexCopy || out.op == Op::IndexPut) {
    for (const auto& [target, from] : g.pairs)
      out.value.set(target, src->value.at(from));
  } else { // index_fill
    for (const auto& [target, from] : g.pairs)
      out.value.set(target, Approx{out.attrs.fill, 0.0});
  }
}

// self's gradient: g (index_add, index_put accumulating), g with the updated slices zeroed
// (index_copy, index_fill, index_put: their values do not reach the result). source's: g at its
// target, g.index_select(dim, index).
inline void index_update_backward(const Node& out, const Node& self, const Node& index,
                                  const Node* src, std::array<InputGrad, 3>& dx, ReduceScratch& g) {
  index_update_pairs(out.attrs.dim, self.shape, index, g.pairs);
  dx[0].shape = self.shape;
  dx[0].buf.assign(out.grad);
  if (!index_update_adds(out))
    for (const auto& pair : g.pairs)
      dx[0].buf.set(pair.first, {0.0, 0.0});
  if (src == nullptr) return;
  dx[2].shape = src->shape;
  dx[2].buf.resize(src->shape.numel());
  for (const auto& [target, from] : g.pairs)
    dx[2].buf.set(from, out.grad.at(target));
}

// masked_fill: the value where the mask is set, x elsewhere (both broadcast to the result); the
// gradient passes to x where the mask is clear. An uncertain mask element (a comparison of
// operands whose bounds overlap) leaves the element indeterminate unless both sides agree, as
// for where.
inline Approx masked_fill_forward(Approx x, Approx mask, float value) {
  return binary_detail::choose(mask.v != 0, mask.e != 0, Approx{value, 0.0}, x);
}
inline Approx masked_fill_backward(Approx g, Approx mask) {
  return gate(g, mask.v == 0, mask.e != 0);
}

// masked_scatter: walking self in row-major order, the k-th element whose (broadcast) mask is
// set takes source's flat element k; the others keep self's. An uncertain mask element (a
// comparison whose operands' bounds overlap) may or may not take one, so it is indeterminate
// unless both sides agree, and every later element that may take one is indeterminate: which
// source element it takes is no longer known.
inline void masked_scatter_forward(const Node& self, const Node& mask, const Node& src, Node& out) {
  out.value.resize(self.shape.numel());
  std::int64_t k = 0; // source elements taken, while every mask element so far was certain
  bool lost = false;  // an uncertain mask element came before: k is no longer known
  walk(broadcast_walk(self.shape, self.shape, mask.shape),
       [&](std::int64_t i, std::int64_t at_self, std::int64_t at_mask) {
         const Approx x = self.value.at(at_self);
         const Approx m = mask.value.at(at_mask);
         const bool set = m.v != 0;
         const bool uncertain = m.e != 0;
         if (!set && !uncertain) return out.value.set(i, x);
         const Approx taken = src.value.at(k);
         if (lost) return out.value.set(i, Approx{taken.v, kInf});
         out.value.set(i, binary_detail::choose(set, uncertain, taken, x));
         if (uncertain)
           lost = true;
         else
           ++k;
       });
}

// masked_scatter's gradients (derivatives.yaml): self's is grad where the mask is clear, 0 where
// set (masked_fill's gate); source's is grad at the set elements in row-major order, in source's
// first k flat elements, 0 in the rest (masked_scatter_backward). After an uncertain mask element
// every source element from the k known so far on is indeterminate.
inline void masked_scatter_backward(const Node& out, const Node& self, const Node& mask,
                                    const Node& src, std::array<InputGrad, 3>& dx) {
  dx[0].shape = self.shape;
  dx[0].buf.resize(self.shape.numel());
  dx[2].shape = src.shape;
  const std::int64_t n_src = src.shape.numel();
  dx[2].buf.resize(n_src);
  for (std::int64_t j = 0; j < n_src; ++j)
    dx[2].buf.set(j, {0.0, 0.0});
  std::int64_t k = 0;
  bool lost = false;
  walk(broadcast_walk(self.shape, self.shape, mask.shape),
       [&](std::int64_t i, std::int64_t, std::int64_t at_mask) {
         const Approx g = out.grad.at(i);
         const Approx m = mask.value.at(at_mask);
         const bool set = m.v != 0;
         const bool uncertain = m.e != 0;
         dx[0].buf.set(i, gate(g, !set, uncertain));
         if ((!set && !uncertain) || lost) return;
         if (uncertain)
           lost = true;
         else
           dx[2].buf.set(k++, g);
       });
  if (lost)
    for (std::int64_t j = k; j < n_src; ++j)
      dx[2].buf.set(j, {0.0, kInf});
}

} // namespace burnmark::ref
