// Exact number spellings and the consistency check of a ReproCase.
#include "literals.h"

#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace burnmark::repro_detail {

std::string reg(Reg r) {
  return fmt::format("r{}", r);
}

std::string literal(double v) {
  return double_literal(v, "nan", "inf");
}

std::string py_bool(bool b) {
  return b ? "True" : "False";
}

std::string float_bits(float value) {
  return fmt::format("0x{:08x}", std::bit_cast<std::uint32_t>(value));
}

std::string value_bits(double value, FloatDType dtype) {
  if (dtype != FloatDType::F64) return float_bits(static_cast<float>(value));
  return fmt::format("0x{:016x}", std::bit_cast<std::uint64_t>(value));
}

std::optional<std::string> exact_decimal(double value, FloatDType dtype) {
  if (std::isnan(value)) {
    const bool canonical =
        dtype == FloatDType::F64
            ? std::bit_cast<std::uint64_t>(value) == 0x7ff8000000000000ull
            : std::bit_cast<std::uint32_t>(static_cast<float>(value)) == 0x7fc00000u;
    return canonical ? std::optional<std::string>("nan") : std::nullopt;
  }
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Both ways a library may take from the double d to the dtype must land on the value.
  const auto lands = [&](double d) {
    if (dtype == FloatDType::F64) return d == value;
    return round_to(d, dtype) == value &&
           round_to(static_cast<double>(static_cast<float>(d)), dtype) == value;
  };
  for (int digits = 1; digits <= 17; ++digits) {
    std::string s = fmt::format("{:.{}g}", value, digits);
    if (!lands(std::strtod(s.c_str(), nullptr))) continue;
    // A Python float literal needs a '.' or an exponent to stay a float ("2" is an int).
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  return std::nullopt;
}

std::string join_wrapped(const std::vector<std::string>& items, std::size_t per_line,
                         const std::string& indent) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += (i % per_line == 0) ? ",\n" + indent : ", ";
    out += items[i];
  }
  return out;
}

const std::vector<double>& bounds_of(const ReproCase& repro, std::size_t leaf) {
  static const std::vector<double> none;
  return leaf < repro.grad_bounds.size() ? repro.grad_bounds[leaf] : none;
}

std::string threads_phrase(int threads) {
  return threads == 1 ? "one intra-op thread" : fmt::format("{} intra-op threads", threads);
}

void check_case(const ReproCase& repro) {
  if (repro.intra_op_threads < 1)
    throw std::invalid_argument("a reproducer runs on at least one intra-op thread");
  const Program& p = repro.program;
  if (const std::string err = validate(p); !err.empty())
    throw std::invalid_argument("repro: invalid program: " + err);
  const auto root_numel = static_cast<std::size_t>(p.shape_of(p.root).numel());
  if (repro.expected_root.size() != root_numel)
    throw std::invalid_argument(fmt::format("repro: {} expected root values for {} elements",
                                            repro.expected_root.size(), root_numel));
  if (!repro.root_bound.empty() && repro.root_bound.size() != root_numel)
    throw std::invalid_argument(
        fmt::format("repro: {} root bounds for {} elements", repro.root_bound.size(), root_numel));
  if (repro.check_tangent &&
      (repro.expected_tangent.size() != root_numel ||
       (!repro.tangent_bound.empty() && repro.tangent_bound.size() != root_numel)))
    throw std::invalid_argument(fmt::format("repro: {} expected tangent values for {} elements",
                                            repro.expected_tangent.size(), root_numel));
  if (repro.check_hvp && !repro.check_gradients)
    throw std::invalid_argument("repro: second order needs the gradients checked too");
  if (repro.check_hvp) {
    if (repro.expected_hvps.size() != p.leaves.size() ||
        (!repro.hvp_bounds.empty() && repro.hvp_bounds.size() != p.leaves.size()))
      throw std::invalid_argument(fmt::format("repro: {} expected H·v for {} leaves",
                                              repro.expected_hvps.size(), p.leaves.size()));
    for (std::size_t i = 0; i < p.leaves.size(); ++i)
      if (static_cast<std::int64_t>(repro.expected_hvps[i].size()) != p.leaves[i].shape.numel())
        throw std::invalid_argument(
            fmt::format("repro: H·v of leaf {} has {} values for {} elements", i,
                        repro.expected_hvps[i].size(), p.leaves[i].shape.numel()));
  }
  if (!repro.check_gradients) return;
  if (repro.expected_grads.size() != p.leaves.size())
    throw std::invalid_argument(fmt::format("repro: {} expected gradients for {} leaves",
                                            repro.expected_grads.size(), p.leaves.size()));
  for (std::size_t i = 0; i < p.leaves.size(); ++i)
    if (static_cast<std::int64_t>(repro.expected_grads[i].size()) != p.leaves[i].shape.numel())
      throw std::invalid_argument(
          fmt::format("repro: gradient of leaf {} has {} values for {} elements", i,
                      repro.expected_grads[i].size(), p.leaves[i].shape.numel()));
  for (std::size_t i = 0; i < repro.grad_bounds.size(); ++i)
    if (!repro.grad_bounds[i].empty() &&
        repro.grad_bounds[i].size() != repro.expected_grads[i].size())
      throw std::invalid_argument(
          fmt::format("repro: gradient of leaf {} has {} bounds", i, repro.grad_bounds[i].size()));
}

Shape result_shape(const Program& p, const Instr& in) {
  std::vector<Shape> shapes;
  for (Reg r : in.operands)
    shapes.push_back(p.shape_of(r));
  return infer_shape(in.op, in.attrs, shapes).shape();
}

std::string permutation_items(const Program& p, const Instr& in) {
  const int rank = p.shape_of(in.operands[0]).rank();
  const auto dims = *permutation_dims(in.attrs.times, rank);
  std::string out;
  for (int i = 0; i < rank; ++i)
    out += (i ? ", " : "") + std::to_string(dims[static_cast<std::size_t>(i)]);
  return out;
}

} // namespace burnmark::repro_detail
