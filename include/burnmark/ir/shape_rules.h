// The shape rule of every op: which operand shapes and attributes are legal, and the result.
#pragma once

#include <span>
#include <string>
#include <variant>

#include <array>
#include <optional>

#include "burnmark/ir/op.h"
#include "burnmark/ir/shape.h"

namespace burnmark {

// Either the result shape or a one-line reason the operands or attributes are illegal.
struct ShapeResult {
  std::variant<Shape, std::string> value;
  bool ok() const { return std::holds_alternative<Shape>(value); }
  const Shape& shape() const { return std::get<Shape>(value); }
  const std::string& error() const { return std::get<std::string>(value); }
};

// The result is also checked against the allocation cap (kMaxDim, kMaxElements).
ShapeResult infer_shape(Op op, const Attrs& attrs, std::span<const Shape> operands);

// For an op with an i64 index operand (operand 1), the exclusive upper bound of its values
// (0 for other ops): index values must lie in 0..bound-1, which validate() checks.
std::int64_t index_bound(Op op, const Attrs& attrs, std::span<const Shape> operands);
// Whether op's index values must be distinct (index_copy, index_put without accumulate:
// PyTorch leaves the result undefined when two source slices go to one target), which
// validate() checks and the generator keeps.
bool index_values_distinct(Op op, const Attrs& attrs);

// The axes of movedim(source, destination) in result order: axis j of the result is axis
// moved_axes(...)[j] of the operand.
std::array<int, kMaxRank> moved_axes(int rank, int source, int destination);
Shape moved_shape(const Shape& s, int source, int destination);
// Elements on the diagonal `offset` of a rows x cols matrix (0 when it misses the matrix).
std::int64_t diagonal_length(std::int64_t rows, std::int64_t cols, int offset);

// det, slogdet and inv take [..., n, n] with n up to this (the reference expands the determinant
// over the n! permutations).
inline constexpr std::int64_t kMaxSquareOrder = 4;
// s is [..., n, n] with 1 <= n <= kMaxSquareOrder.
bool small_square(const Shape& s);
// permute's dims in one int: a decimal digit dim + 1 per result axis, the first axis leading
// ([2, 0, 1] is 312, rank 0's empty permutation 0). Digits rather than a permutation index, so
// that the code names its own rank and a wrong-rank code is an error, not another permutation.
int permutation_code(std::span<const int> dims);
// The dims a code names for an operand of `rank`; nullopt unless a permutation of 0..rank-1.
std::optional<std::array<int, kMaxRank>> permutation_dims(int code, int rank);
// chunk(chunks) of a dim of size n, as LibTorch splits it: every chunk but the last has
// ceil(n / chunks) elements, so there may be fewer chunks than asked for (5 in 4 chunks: 2, 2, 1).
std::int64_t chunk_size(std::int64_t n, int chunks);
std::int64_t chunk_count(std::int64_t n, int chunks);

} // namespace burnmark
