// The plugin's own backward of the reductions oneDNN computes forward (oneDNN has no reduction
// backward primitive): plain loops over the reduced rows, following PyTorch 1.13.1's
// derivatives.yaml as docs/conventions_reductions.md lists it. They read oneDNN's forward result
// where the formula does (amax's tie mask, a norm's division), so what oneDNN computed flows into
// the gradient; nothing here recomputes the forward.
#pragma once

#include <cstdint>

#include "burnmark/plugin/plugin.h"

namespace burnmark::onednn {

// A tensor seen as [outer, n, inner] with the reduced elements along n: element (o, j, i) is at
// (o * n + j) * inner + i, and the row's result (and its gradient) at o * inner + i, whatever
// keepdim says.
struct Rows {
  std::int64_t outer = 1, n = 1, inner = 1;
};
// All elements as one row (dim < 0), or the rows along dim.
Rows rows_of(const BurnmarkShape& in, int dim);

// amax, amin: scale_grad_by_count, (g / count) * (x == y), count the elements equal to y (none in
// a row whose y is NaN: then g / 0 * 0 is NaN everywhere).
void split_between_equal(const Rows& r, const float* x, const float* y, const float* g, float* dx);
// max, min over every element: evenly_distribute_backward, g / count on the elements equal to y,
// or on the NaNs when the input has any; exactly 0 elsewhere.
void distribute_evenly(const Rows& r, const float* x, const float* y, const float* g, float* dx);
// max_dim, min_dim: value_selecting_reduction_backward, all of g to the index torch.max (min)
// returns: the first NaN, else the first extreme element.
void select_first_extreme(const Rows& r, bool max, const float* x, const float* g, float* dx);
// prod, prod_dim: g times the product of the others, with the product's exponent tracked apart
// so that no partial product overflows or underflows (the mathematics D's result / x stands for).
void product_of_others(const Rows& r, const float* x, const float* g, float* dx);
// vector_norm, vector_norm_dim for finite p >= 1, y the norm: p = 1 sgn(x) g; p = 2
// g x / y; other p g sgn(x) (|x| / y)^(p - 1) (D's quantity, scaled); 0 where y = 0 (p > 1).
void norm_backward(const Rows& r, double p, const float* x, const float* y, const float* g,
                   float* dx);

} // namespace burnmark::onednn
