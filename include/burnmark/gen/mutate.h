// Structure-aware mutation (issue 30): program-level mutations and crossover for the fuzz
// targets' LLVMFuzzerCustomMutator / LLVMFuzzerCustomCrossOver. A pure library: the fuzz targets
// decode libFuzzer's bytes with generate(), mutate the Program here, and hand back encode()'s
// bytes, so every mutation lands on a program the generator can reach.
//
// Contract: a returned Mutated passes validate() and its bytes decode, under the same options,
// to exactly its program (generate(bytes) == program, bit for bit). When the drawn mutation
// cannot make such a program (an attribute that no longer fits a resized dim, a splice with no
// register of the right shape, an op outside the generator's reach) the result is empty and the
// caller falls back to byte-level mutation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/program.h"

namespace burnmark {

// What a mutation changed. The first two keep the program's structure (ops, shapes,
// attributes) and change only leaf data, so a compiled backend's cache for the structure stays
// warm; mutate_program draws them half of the time.
enum class MutationKind : std::uint8_t {
  Values,    // one leaf's seed redrawn: grid values, small integers, special and edge values
  Special,   // one seed entry of one leaf set to a special value or an edge of an op it feeds
  Op,        // an op changed to another of its family with the same arity and result shape
  Attribute, // an op's table parameters or a structural attribute (dim, keepdim, offsets, ...)
  Resize,    // a leaf dim resized, favouring SIMD-width boundaries (7, 8, 9, 15, 16, 17, ...)
};
inline constexpr int kMutationKinds = 5;
std::string_view mutation_kind_name(MutationKind kind);

// A small deterministic generator (splitmix64), so that a libFuzzer seed gives one mutation.
class MutationRng {
public:
  explicit MutationRng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  std::uint32_t below(std::uint32_t n); // 0..n-1; 0 when n == 0
  bool chance(std::uint32_t percent) { return below(100) < percent; }

private:
  std::uint64_t state_;
};

struct Mutated {
  Program program;
  std::vector<std::uint8_t> bytes; // encode(program): generate(bytes, options) == program
};

// One mutation of `kind`, or nullopt when it cannot apply to this program.
std::optional<Mutated> mutate_as(const Program& program, MutationKind kind,
                                 const GeneratorOptions& options, MutationRng& rng);
// Draws a kind (value-only ones half of the time) and retries with other draws a few times.
std::optional<Mutated> mutate_program(const Program& program, const GeneratorOptions& options,
                                      MutationRng& rng);
// A value-only mutation (Values or Special, retried a few times): the same ops, attributes,
// shapes and dtype, new leaf data. What BURNMARK_VALUE_MUTATIONS asks of the fuzz targets'
// mutator, so that a compiling backend (torch-compile) reuses the functions it compiled.
std::optional<Mutated> mutate_values_only(const Program& program, const GeneratorOptions& options,
                                          MutationRng& rng);

// Crossover of two programs: a splice (a's first statements, then b's statements from a cut on,
// their operands before the cut mapped to a's registers of the same shape and dtype) or, when
// no splice fits, a's structure with leaf seeds taken from b's leaves.
std::optional<Mutated> cross_over(const Program& a, const Program& b,
                                  const GeneratorOptions& options, MutationRng& rng);

// Shape inference over the whole program after a change: every register's shape and the
// size-dependent attributes (narrow, select, slice, roll, chunk, diagonal offsets) brought back
// into range, index values reduced into their op's bound. False when some op no longer applies.
bool reinfer(Program& program);

} // namespace burnmark
