// The per-input logic both libFuzzer targets share: configuration and backends built once,
// then generate -> run every backend -> compare -> report, with nothing else per input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "burnmark/gen/generator.h"

namespace burnmark::fuzz {

// Reads the knobs and builds the backends; a bad knob or backend prints one line and exits 2.
// gradients: compare leaf gradients as well as the root (fuzz_autograd) or the root only.
void initialize(const char* target_name, bool gradients);

// Always returns 0. On a divergence it prints the program, each backend's values and the
// verdict to stderr; in MODE=panic it then aborts, which makes libFuzzer write crash-<sha1>.
int test_one_input(const std::uint8_t* data, std::size_t size);

// After initialize: the generator options inputs are decoded with, and BURNMARK_MUTATOR
// (structure, bytes or mixed), for the custom mutator (structure_mutator.cpp).
const GeneratorOptions& generator_options();
const std::string& mutator_knob();
// BURNMARK_VALUE_MUTATIONS resolved: its percent, or for -1 (auto) 90 when BACKENDS names a
// compiling Python backend (torch-compile, jax: a compile per structure) and 0 otherwise.
int value_mutation_percent();

} // namespace burnmark::fuzz
