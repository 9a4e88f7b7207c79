// Loops behind row_grads.h.
#include "row_grads.h"

#include <cmath>
#include <vector>

namespace burnmark::onednn {
namespace {

// Calls f(o, i) for every row, with at(j) the flat index of its j-th element and out the index
// of its result.
template <class F> void for_rows(const Rows& r, F&& f) {
  for (std::int64_t o = 0; o < r.outer; ++o)
    for (std::int64_t i = 0; i < r.inner; ++i) {
      const std::int64_t base = o * r.n * r.inner + i, out = o * r.inner + i;
      f([&](std::int64_t j) { return base + j * r.inner; }, out);
    }
}

float sgn(float x) {
  if (std::isnan(x)) return x;
  return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f;
}

// A product as mantissa * 2^exponent, renormalised after every factor (frexp keeps 0, inf and
// NaN as they are).
struct Wide {
  double m = 1.0;
  long e = 0;
  void mul(double x) {
    int k = 0;
    m = std::frexp(m * x, &k);
    e += k;
  }
  void mul(const Wide& w) {
    mul(w.m);
    e += w.e;
  }
};

} // namespace

Rows rows_of(const BurnmarkShape& in, int dim) {
  Rows r;
  if (dim < 0) {
    for (int k = 0; k < in.rank; ++k)
      r.n *= in.dims[k];
    return r;
  }
  for (int k = 0; k < dim; ++k)
    r.outer *= in.dims[k];
  r.n = in.dims[dim];
  for (int k = dim + 1; k < in.rank; ++k)
    r.inner *= in.dims[k];
  return r;
}

void split_between_equal(const Rows& r, const float* x, const float* y, const float* g, float* dx) {
  for_rows(r, [&](auto at, std::int64_t out) {
    std::int64_t count = 0;
    for (std::int64_t j = 0; j < r.n; ++j)
      count += x[at(j)] == y[out];
    const float share = g[out] / static_cast<float>(count);
    for (std::int64_t j = 0; j < r.n; ++j)
      dx[at(j)] = share * (x[at(j)] == y[out] ? 1.0f : 0.0f);
  });
}

void distribute_evenly(const Rows& r, const float* x, const float* y, const float* g, float* dx) {
  for_rows(r, [&](auto at, std::int64_t out) {
    bool any_nan = false;
    for (std::int64_t j = 0; j < r.n; ++j)
      any_nan = any_nan || std::isnan(x[at(j)]);
    const auto chosen = [&](std::int64_t j) {
      return any_nan ? std::isnan(x[at(j)]) : x[at(j)] == y[out];
    };
    std::int64_t count = 0;
    for (std::int64_t j = 0; j < r.n; ++j)
      count += chosen(j);
    const float share = g[out] / static_cast<float>(count);
    for (std::int64_t j = 0; j < r.n; ++j)
      dx[at(j)] = chosen(j) ? share : 0.0f;
  });
}

void select_first_extreme(const Rows& r, bool max, const float* x, const float* g, float* dx) {
  for_rows(r, [&](auto at, std::int64_t out) {
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < r.n && !std::isnan(x[at(best)]); ++j) {
      const float c = x[at(j)], b = x[at(best)];
      if (std::isnan(c) || (max ? c > b : c < b)) best = j;
    }
    dx[at(best)] = g[out];
  });
}

void product_of_others(const Rows& r, const float* x, const float* g, float* dx) {
  std::vector<Wide> suffix;
  for_rows(r, [&](auto at, std::int64_t out) {
    // suffix[j] = x[j + 1] * ... * x[n - 1]; the prefix runs along.
    suffix.assign(static_cast<std::size_t>(r.n), Wide{});
    for (std::int64_t j = r.n - 1; j-- > 0;) {
      suffix[static_cast<std::size_t>(j)] = suffix[static_cast<std::size_t>(j + 1)];
      suffix[static_cast<std::size_t>(j)].mul(x[at(j + 1)]);
    }
    Wide prefix;
    for (std::int64_t j = 0; j < r.n; ++j) {
      Wide others = prefix;
      others.mul(suffix[static_cast<std::size_t>(j)]);
      // |e| stays below 8192 * 150, far inside int; ldexp saturates to inf or 0 as it should.
      dx[at(j)] = static_cast<float>(
          std::ldexp(others.m * static_cast<double>(g[out]), static_cast<int>(others.e)));
      prefix.mul(x[at(j)]);
    }
  });
}

void norm_backward(const Rows& r, double p, const float* x, const float* y, const float* g,
                   float* dx) {
  for_rows(r, [&](auto at, std::int64_t out) {
    const double norm = y[out], grad = g[out];
    for (std::int64_t j = 0; j < r.n; ++j) {
      const float xj = x[at(j)];
      double d;
      if (p == 1.0)
        d = static_cast<double>(sgn(xj)) * grad; // self.sgn() * grad
      else if (norm == 0.0)
        d = 0.0; // masked_fill(norm == 0, 0)
      else if (p == 2.0)
        d = grad * (xj / norm);
      else
        d = grad * sgn(xj) * std::pow(std::fabs(xj) / norm, p - 1.0);
      dx[at(j)] = static_cast<float>(d);
    }
  });
}

} // namespace burnmark::onednn
