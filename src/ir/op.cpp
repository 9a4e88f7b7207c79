// Lookups from the op table by text name and by stable ABI id, and attribute equality.
#include "burnmark/ir/op.h"

#include <bit>
#include <cstdint>

namespace burnmark {

namespace {
bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
} // namespace

bool Attrs::operator==(const Attrs& o) const {
  return dim == o.dim && dim1 == o.dim1 && keepdim == o.keepdim && times == o.times &&
         same_bits(exponent, o.exponent) && same_bits(lo, o.lo) && same_bits(hi, o.hi) &&
         same_bits(alpha, o.alpha) && same_bits(slope, o.slope) && same_bits(lambd, o.lambd) &&
         same_bits(beta, o.beta) && same_bits(threshold, o.threshold) &&
         same_bits(weight, o.weight) && same_bits(eps, o.eps) && same_bits(fill, o.fill) &&
         variant == o.variant && include_self == o.include_self;
}

std::optional<Op> op_from_name(std::string_view name) {
  for (const OpInfo& info : kOpTable)
    if (info.name == name) return info.op;
  return std::nullopt;
}

std::optional<Op> op_from_stable_id(std::uint32_t id) {
  for (const OpInfo& info : kOpTable)
    if (info.stable_id == id) return info.op;
  return std::nullopt;
}

} // namespace burnmark
