// Semantic coverage for the fuzz targets: what a generated program means for the library under
// test (which op meets which ranks, which op feeds which, which special values reach it, which
// vector body/tail split its sizes take, which results overflowed or became NaN), hashed into a
// fixed table that the harness exposes to libFuzzer as extra counters (issue 30).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "burnmark/driver/outcome.h"
#include "burnmark/ir/program.h"

namespace burnmark::fuzz {

// Bytes in libFuzzer's extra-counters table; every feature index is below it. A power of two.
inline constexpr std::size_t kSemanticTableSize = std::size_t{1} << 16;

// What a feature says; part of its hash, so features of different kinds never share a tuple.
enum class FeatureKind : std::uint8_t {
  OpOperands, // (op, operand rank classes + broadcast and same-tensor bits, float dtype)
  OpPair,     // (producer op, its family with family pairs, or kLeafProducer; consumer op; slot)
  OpSpecial,  // (op, value class among the leaves reaching it, 1 when a direct leaf operand)
  OpInner,    // (op, innermost size of operand 0 mod 8, 1 when there is a full 8-wide body)
  OpNumel,    // (op, numel of operand 0 mod 16, 1 when there is a full 16-wide body)
  OpFanOut,   // (op, uses of its result capped at 3)
  RootValue,  // (root op, value class in the root, 1 when no leaf reaching the root had it, slot)
  GradValue,  // (root op, value class in some leaf gradient, slot)
  Status,     // (root op, Status, slot) for a backend that did not return Ok
};

// Value classes, as bits of a mask; "huge" is a finite |x| at or above the square root of the
// dtype's largest finite value (its square overflows), "subnormal" is nonzero below its smallest
// normal. A feature's class field holds one of these bits.
enum ValueClass : unsigned {
  kNaN = 1u << 0,
  kInf = 1u << 1,
  kNegZero = 1u << 2,
  kSubnormal = 1u << 3,
  kHuge = 1u << 4,
};
inline constexpr int kValueClasses = 5;

// The producer recorded for an operand that is a leaf (through aliases); past every op id.
inline constexpr std::uint32_t kLeafProducer = 0xffff;
// Added to an OpFamily to make a family-pairs producer: never an op id nor kLeafProducer.
inline constexpr std::uint32_t kFamilyProducer = 0x10000;
// Outcome slots above this share it (the reference is slot 0).
inline constexpr std::uint32_t kMaxSlot = 3;

// The classes present among values of a program of dtype `dtype`.
unsigned value_classes(std::span<const double> values, FloatDType dtype);

// The table index of one feature tuple, fields as FeatureKind lists them (an op is
// static_cast<std::uint32_t>(Op), a value class one ValueClass bit, a status
// static_cast<std::uint32_t>(Status)); fields that a kind does not use are 0.
std::uint32_t feature_index(FeatureKind kind, std::uint32_t a, std::uint32_t b = 0,
                            std::uint32_t c = 0, std::uint32_t d = 0);

// Every feature of a well-formed program and, when given, of the backends' outcomes on it (in
// BACKENDS order: slot = position, capped at kMaxSlot), sorted and without duplicates, each
// below kSemanticTableSize. `out` is cleared first; its storage is reused across calls.
// With `family_pairs`, an op pair's producer is its op family (OpFamily, ops.def) rather than its
// op: about 18 producers instead of 151, so the pair features a corpus can collect are ~8k, not
// ~69k, and the corpus stops growing sooner (BURNMARK_SEMANTIC_FEATURES=2; docs/throughput.md).
void semantic_features(const Program& program, std::span<const Outcome> outcomes,
                       std::vector<std::uint32_t>& out, bool family_pairs = false);

// Sets one byte per feature in `counters` (kSemanticTableSize bytes); libFuzzer zeroes them
// before each input and reads every nonzero byte as a feature after it.
void mark_features(std::span<const std::uint32_t> features, std::span<std::uint8_t> counters);

} // namespace burnmark::fuzz
