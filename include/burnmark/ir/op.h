// The op enum, its attributes and the static facts about each op (name, arity, stable id),
// all generated from ops.def so that they cannot drift apart.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace burnmark {

enum class Op : std::uint8_t {
#define BURNMARK_OP(Enum, name, id, arity, attrs) Enum,
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
};

inline constexpr std::size_t kOpCount = 0
#define BURNMARK_OP(Enum, name, id, arity, attrs) +1
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
    ;

// Which attributes an op carries; decides the op's text form and which Attrs fields matter.
enum class AttrKind : std::uint8_t {
  None,     // no attributes
  Exponent, // pow: exponent (drawn from kPowExponents)
  DimKeep,  // reductions along a dimension: dim, keepdim
  TwoDims,  // transpose: dim, dim1
  Dim,      // concat: dim
  DimTimes, // repeat: dim, times
  Bounds,   // clamp: lo, hi (drawn from kClampBounds)
};

// Attributes of one instruction. Only the fields named by the op's AttrKind are meaningful;
// the others stay at their defaults so that equality and text round trips are exact.
struct Attrs {
  int dim = 0;
  int dim1 = 0;
  bool keepdim = false;
  int times = 1;
  double exponent = 0.0;
  double lo = 0.0;
  double hi = 0.0;
  bool operator==(const Attrs&) const = default;
};

struct OpInfo {
  Op op;
  std::string_view name;
  std::uint32_t stable_id;
  int arity;
  AttrKind attr_kind;
};

inline constexpr std::array<OpInfo, kOpCount> kOpTable = {{
#define BURNMARK_OP(Enum, name, id, arity, attrs) {Op::Enum, name, id, arity, AttrKind::attrs},
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
}};

constexpr const OpInfo& op_info(Op op) {
  return kOpTable[static_cast<std::size_t>(op)];
}
constexpr std::string_view op_name(Op op) {
  return op_info(op).name;
}
constexpr int op_arity(Op op) {
  return op_info(op).arity;
}

std::optional<Op> op_from_name(std::string_view name);
std::optional<Op> op_from_stable_id(std::uint32_t id);

// Exponents pow may take. 0, ±0.5, ±1, 2, 3 and -2 each hit a distinct LibTorch fast path.
inline constexpr std::array<double, 9> kPowExponents = {0.0, 0.5, -0.5, 1.0, -1.0,
                                                        2.0, 3.0, -2.0, 1.5};

struct ClampBounds {
  double lo;
  double hi;
};
// Bounds clamp may take. The last pair has lo > hi on purpose: LibTorch then returns hi
// everywhere with a zero gradient, a convention worth exercising.
inline constexpr std::array<ClampBounds, 5> kClampBounds = {
    {{-1.0, 1.0}, {0.0, 1.0}, {-0.5, 0.25}, {-1e6, 1e6}, {0.5, -0.5}}};

// Repeat counts allowed by the generator (the shape cap may forbid the larger ones).
inline constexpr int kMaxRepeat = 4;

} // namespace burnmark
