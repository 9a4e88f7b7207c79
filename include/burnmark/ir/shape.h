// Tensor shapes (rank 0 to 5), NumPy broadcasting and the allocation cap every tensor obeys.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace burnmark {

inline constexpr int kMaxRank = 5;
// Leaves have rank 0..5, like every other register.
inline constexpr int kMaxLeafRank = 5;
// The seed's cap: no dimension above 48, and a bounded element count, so that concat and
// repeat chains cannot grow a tensor without limit. The generator draws within a smaller cap by
// default (GeneratorOptions::max_elements); this one is what any program, a file's included, may
// reach: twice ATen's 32,768-element parallel grain.
inline constexpr std::int64_t kMaxDim = 48;
inline constexpr std::int64_t kMaxElements = 65536;

class Shape {
public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);

  static Shape scalar() { return Shape{}; }

  int rank() const { return rank_; }
  std::int64_t operator[](int axis) const { return dims_[static_cast<std::size_t>(axis)]; }
  std::int64_t& operator[](int axis) { return dims_[static_cast<std::size_t>(axis)]; }
  std::int64_t numel() const;
  const std::int64_t* data() const { return dims_.data(); }

  void push_back(std::int64_t d);
  // Every dimension in 1..kMaxDim and numel within kMaxElements.
  bool within_cap() const;

  // Row-major strides in elements.
  std::array<std::int64_t, kMaxRank> strides() const;

  std::string to_string() const; // "[2,3]", "[]" for a scalar

  bool operator==(const Shape& other) const;

private:
  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// NumPy broadcasting: align from the right; each pair equal or one of them 1.
std::optional<Shape> broadcast(const Shape& a, const Shape& b);
inline bool broadcast_compatible(const Shape& a, const Shape& b) {
  return broadcast(a, b).has_value();
}

} // namespace burnmark
