// The floating-point dtype of a program: every float tensor in it (leaves, results, gradients)
// has this one dtype, f32 unless the program says otherwise. Leaf data (double) and scalar
// attributes hold values that the dtype represents exactly, so a program means the same in every
// backend whatever its dtype.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

namespace burnmark {

// F64 leaves may hold any double; scalar attributes stay f32 values (they come from f32 tables).
enum class FloatDType : unsigned char { F32, BF16, F16, F64 };
inline constexpr FloatDType kFloatDTypes[] = {FloatDType::F32, FloatDType::BF16, FloatDType::F16,
                                              FloatDType::F64};

// The dtype's spelling in the text form and in BURNMARK_DTYPES.
constexpr std::string_view float_dtype_name(FloatDType d) {
  switch (d) {
  case FloatDType::F32: return "f32";
  case FloatDType::BF16: return "bf16";
  case FloatDType::F16: return "f16";
  case FloatDType::F64: return "f64";
  }
  return "?";
}
inline std::optional<FloatDType> float_dtype_from_name(std::string_view name) {
  for (FloatDType d : kFloatDTypes)
    if (float_dtype_name(d) == name) return d;
  return std::nullopt;
}

// An IEEE 754 binary format with gradual underflow: `digits` significand bits (the hidden one
// included), smallest normal 2^min_exponent, largest finite `max_finite`.
struct FloatFormat {
  int digits;
  int min_exponent;
  double max_finite;
  // Unit roundoff: half an ulp, relative.
  double unit_roundoff() const { return std::ldexp(1.0, -digits); }
  // Half the subnormal step: what one rounding may cost in absolute terms near zero (for f64,
  // which double cannot go below, the whole step).
  double half_subnormal_step() const {
    return std::max(std::ldexp(1.0, min_exponent - digits),
                    std::numeric_limits<double>::denorm_min());
  }
  // Exact results of at least this magnitude round to infinity (max finite plus half an ulp;
  // infinity for f64, whose exact results a double cannot hold).
  double overflow_threshold() const {
    return max_finite + std::ldexp(1.0, std::ilogb(max_finite) - digits);
  }
};

constexpr FloatFormat float_format(FloatDType d) {
  switch (d) {
  case FloatDType::F32: return {24, -126, 0x1.fffffep127};
  case FloatDType::BF16: return {8, -126, 0x1.fep127};
  case FloatDType::F16: return {11, -14, 65504.0};
  case FloatDType::F64: return {53, -1022, std::numeric_limits<double>::max()};
  }
  return {24, -126, 0x1.fffffep127};
}

// x rounded to the nearest value of the format (ties to even, overflow to infinity), directly
// from double: rounding through f32 first would round twice.
inline double round_to_format(double x, const FloatFormat& f) {
  if (!std::isfinite(x) || x == 0) return x;
  const int quantum = std::max(std::ilogb(x) + 1 - f.digits, f.min_exponent + 1 - f.digits);
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  return std::fabs(r) > f.max_finite ? std::copysign(std::numeric_limits<double>::infinity(), x)
                                     : r;
}
inline double round_to(double x, FloatDType d) {
  if (d == FloatDType::F32) return static_cast<double>(static_cast<float>(x));
  if (d == FloatDType::F64) return x;
  return round_to_format(x, float_format(d));
}
// NaN is representable in every format (its payload is not part of a program).
inline bool representable(double x, FloatDType d) {
  return std::isnan(x) || round_to(x, d) == x;
}

} // namespace burnmark
