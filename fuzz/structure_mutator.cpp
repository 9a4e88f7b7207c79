// libFuzzer's custom mutator and crossover for both fuzz targets (issue 30): decode the input
// with the harness's generator options, mutate or splice the Program (burnmark/gen/mutate.h),
// hand back bytes that decode to the result. BURNMARK_MUTATOR picks structure, bytes or mixed.
//
// With both hooks defined, libFuzzer draws each mutation from {custom mutator, custom crossover}
// at random and retries when one returns 0. So: the mutator falls back to LLVMFuzzerMutate
// (libFuzzer's own byte mutations, its byte crossover among them) whenever the program-level
// mutation does not apply or the bytes exceed max_size; the crossover returns 0 in `bytes` mode
// and in half of its `mixed` calls, so that libFuzzer draws again. In `mixed` the mutator's share
// of structure mutations is a third: with the crossover's successful splices, about half of all
// mutations are structural (the counts are printed at exit).
//
// BURNMARK_VALUE_MUTATIONS (fuzz_common's value_mutation_percent(), 90 by default with a
// compiling backend) goes first, in structure and mixed modes: that share of the mutator's calls
// is a value-only mutation (new leaf data, same structure), and that share of the crossover's
// calls declines (libFuzzer then draws the mutator), so a compiled function is reused by most
// inputs instead of most inputs compiling a new one.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "burnmark/gen/mutate.h"
#include "fuzz_common.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

enum class Mutator { Structure, Bytes, Mixed };

struct Counts {
  unsigned long long values = 0, structure = 0, structure_failed = 0, bytes = 0, crossover = 0,
                     crossover_failed = 0;
};

Counts& counts() {
  static Counts c;
  return c;
}

void print_counts() {
  const Counts& c = counts();
  std::fprintf(stderr,
               "burnmark: mutator=%s value-only=%llu (share %d%%) structure=%llu (fell back to "
               "bytes: %llu) crossover=%llu (failed: %llu) bytes=%llu\n",
               burnmark::fuzz::mutator_knob().c_str(), c.values,
               burnmark::fuzz::value_mutation_percent(), c.structure, c.structure_failed,
               c.crossover, c.crossover_failed, c.bytes);
}

Mutator mutator() {
  static const Mutator m = [] {
    std::atexit(print_counts);
    const std::string& knob = burnmark::fuzz::mutator_knob();
    return knob == "structure" ? Mutator::Structure
           : knob == "bytes"   ? Mutator::Bytes
                               : Mutator::Mixed;
  }();
  return m;
}

std::size_t bytes_mutation(std::uint8_t* data, std::size_t size, std::size_t max_size) {
  ++counts().bytes;
  return LLVMFuzzerMutate(data, size, max_size);
}

// Whether this call is one of BURNMARK_VALUE_MUTATIONS' share (never in bytes mode).
bool value_only_turn(Mutator m, burnmark::MutationRng& rng) {
  static const int percent = burnmark::fuzz::value_mutation_percent();
  return m != Mutator::Bytes && percent > 0 && rng.below(100) < static_cast<unsigned>(percent);
}

std::size_t put(const std::vector<std::uint8_t>& bytes, std::uint8_t* out, std::size_t max_size) {
  if (bytes.empty() || bytes.size() > max_size) return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

} // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  const Mutator m = mutator();
  burnmark::MutationRng rng(seed);
  const burnmark::GeneratorOptions& options = burnmark::fuzz::generator_options();
  if (value_only_turn(m, rng)) {
    const burnmark::Program program = burnmark::generate({data, size}, options);
    if (const auto mutated = burnmark::mutate_values_only(program, options, rng))
      if (const std::size_t n = put(mutated->bytes, data, max_size)) {
        ++counts().values;
        return n;
      }
    // A program without float leaves has no value-only mutation: the usual draw below.
  }
  if (m == Mutator::Bytes || (m == Mutator::Mixed && rng.below(3) != 0))
    return bytes_mutation(data, size, max_size);
  const burnmark::Program program = burnmark::generate({data, size}, options);
  if (const auto mutated = burnmark::mutate_program(program, options, rng)) {
    if (const std::size_t n = put(mutated->bytes, data, max_size)) {
      ++counts().structure;
      return n;
    }
  }
  ++counts().structure_failed;
  return bytes_mutation(data, size, max_size);
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* data1, std::size_t size1,
                                                 const std::uint8_t* data2, std::size_t size2,
                                                 std::uint8_t* out, std::size_t max_out_size,
                                                 unsigned int seed) {
  const Mutator m = mutator();
  burnmark::MutationRng rng(seed);
  if (m == Mutator::Bytes || value_only_turn(m, rng) || (m == Mutator::Mixed && rng.below(2) != 0))
    return 0;
  const burnmark::GeneratorOptions& options = burnmark::fuzz::generator_options();
  const burnmark::Program a = burnmark::generate({data1, size1}, options);
  const burnmark::Program b = burnmark::generate({data2, size2}, options);
  if (const auto crossed = burnmark::cross_over(a, b, options, rng)) {
    if (const std::size_t n = put(crossed->bytes, out, max_out_size)) {
      ++counts().crossover;
      return n;
    }
  }
  ++counts().crossover_failed;
  return 0;
}
