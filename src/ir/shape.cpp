// Shape algebra: construction, element counts, the allocation cap and broadcasting.
#include "burnmark/ir/shape.h"

#include <algorithm>
#include <cassert>

namespace burnmark {

Shape::Shape(std::initializer_list<std::int64_t> dims) {
  assert(dims.size() <= kMaxRank);
  for (std::int64_t d : dims)
    push_back(d);
}

void Shape::push_back(std::int64_t d) {
  assert(rank_ < kMaxRank);
  dims_[static_cast<std::size_t>(rank_++)] = d;
}

std::int64_t Shape::numel() const {
  std::int64_t n = 1;
  for (int i = 0; i < rank_; ++i)
    n *= dims_[static_cast<std::size_t>(i)];
  return n;
}

bool Shape::within_cap() const {
  std::int64_t n = 1;
  for (int i = 0; i < rank_; ++i) {
    const std::int64_t d = (*this)[i];
    if (d < 1 || d > kMaxDim) return false;
    n *= d;
  }
  return n <= kMaxElements;
}

std::array<std::int64_t, kMaxRank> Shape::strides() const {
  std::array<std::int64_t, kMaxRank> s{};
  std::int64_t step = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = step;
    step *= (*this)[i];
  }
  return s;
}

std::string Shape::to_string() const {
  std::string out = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) out += ',';
    out += std::to_string((*this)[i]);
  }
  out += ']';
  return out;
}

bool Shape::operator==(const Shape& other) const {
  return rank_ == other.rank_ &&
         std::equal(dims_.begin(), dims_.begin() + rank_, other.dims_.begin());
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    // Align from the right: axis i of the result is axis i - (rank - r) of an operand of rank r.
    const int ia = i - (rank - a.rank());
    const int ib = i - (rank - b.rank());
    const std::int64_t da = ia >= 0 ? a[ia] : 1;
    const std::int64_t db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

} // namespace burnmark
