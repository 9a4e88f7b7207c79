// Turns fuzzer bytes into a legal program (a total function: every byte string decodes), and
// back: the encoder finds bytes that decode to a given program, so text programs become seeds.
//
// Decoding is a state machine read from the front of the bytes: a first leaf, then up to
// max_steps steps, each a new leaf (30% of steps; an alias of an existing register once
// max_leaves leaves exist) or an op whose operands and attributes are chosen only among legal
// alternatives for the shapes built so far. A choice among n alternatives reads one byte modulo n
// (two little-endian bytes when n > 256, nothing when n == 1); past the end every byte reads 0,
// and a zero always selects an op step and a unary op, so min_ops is reached on any input.
//
// Edge leaves: when edge_rate > 0, each op whose ops.def entry has edge values reads a tag byte
// t before it is pushed; t >= 256 - E (E = round(256 * edge_rate), 1..255) pushes a new leaf
// with the shape of the op's first operand (if a leaf fits under max_leaves and that operand has
// rank >= 1), whose seed entries are each one of the op's edge values or, for the last
// alternative, an ordinary seed entry; the op then takes that leaf as its first operand.
//
// Layouts: when layout_rate > 0, a leaf made by a leaf step (the first leaf included) reads a
// tag byte t after its shape; t >= 256 - L (L = round(256 * layout_rate), 1..255) gives it a
// non-contiguous layout: a choice among the kinds its rank allows (layout_kinds), then the
// kind's parameters (layout.h). An expanded leaf's seed is cycled over its compact shape (the
// expanded dims 1) and broadcast, so its values are identical along those dims. Edge, matrix
// and index leaves stay contiguous. The view op relayout (ops.def) lays a register out the same
// ways mid-program (expanded only along its dims of size 1); with layout_rate 0 it is not drawn
// (its view step falls back, as a step that cannot apply does).
//
// Dtype: with several dtypes in the options, a choice among them comes first. Leaf values, edge
// values and attributes are then rounded to the program's dtype as they are drawn, and in f16
// programs the special values are f16's own (see kSpecialValuesF16); f64 programs draw from
// the f32 table and then kSpecialValuesF64 (f64's extremes and subnormals, values past f32's
// range, exp/cosh overflow edges), and their escape reads eight bytes of raw f64 bits.
//
// Leaf values: a seed of 1..16 entries is cycled over the leaf's elements. With special_rate 0
// an entry is one byte b giving b / 127.5f - 1.0f (single precision, so -1 and 1 are exact).
// Otherwise an entry starts with a tag byte t; t < 256 - T (T = round(256 * special_rate), at
// least 1) is followed by the regular byte b, and t >= 256 - T picks one of NaN, +inf, -inf, +0,
// -0, 1e-40 (subnormal), FLT_MIN, 1, -1, ±1e30, ±3e38, 1e-30, or an escape followed by four
// bytes of raw f32 bits (NaNs are made quiet, keeping their sign). On uniform bytes a share
// special_rate of the seed entries is special, and the escape makes every float encodable.
//
// Op restriction (GeneratorOptions::ops not empty): only the listed ops are drawn; leaves,
// index leaves, matrix leaves, edge leaves and aliases are structural and stay. The op step's
// family wheel keeps only the families with a listed op in the program's dtype (where and
// masked_fill also need a listed comparison, which makes their mask), in the wheel's order and
// weights. A step whose family cannot apply to the chosen register (a transpose of a vector)
// takes the first of unary, activation, binary, reduce-all that has a listed op, each of which
// applies to any register, or adds nothing when none has: decoding stays a total function of
// the bytes and the op set, with at most max_steps steps, whatever the set.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "burnmark/ir/program.h"

namespace burnmark {

// Out-of-range knobs are clamped (max_leaves to 1..8, dims to 1..kMaxDim with
// max_dim >= min_dim, max_elements to kDefaultMaxElements..kMaxElements, max_steps to 0..1024,
// min_ops to 0..max_steps, special_rate to 0..1), the same way by generate() and encode(). The
// generator's default element cap per tensor, the seed's: small tensors keep a program fast.
// Raising it (BURNMARK_MAX_ELEMENTS, up to the IR's kMaxElements) reaches ATen's parallel split,
// whose grain is 32,768 elements.
inline constexpr std::int64_t kDefaultMaxElements = 8192;

struct GeneratorOptions {
  int max_leaves = 4; // MAX_LEAVES, 1..8: new-leaf steps past this alias a register
  int min_ops = 0;    // MIN_OPS: op steps forced before the bytes may end the program
  int min_dim = 1;    // FUZZ_MIN_DIM: smallest leaf dimension
  int max_dim = 16;   // FUZZ_MAX_DIM (at most kMaxDim): largest leaf dimension
  // BURNMARK_MAX_ELEMENTS (kDefaultMaxElements..kMaxElements): no generated tensor, leaf or
  // result, has more elements.
  std::int64_t max_elements = kDefaultMaxElements;
  int max_steps = 48;         // leaf + op steps after the first leaf
  double special_rate = 0.05; // share of leaf seed entries drawn from the special values
  double edge_rate = 0.15;    // share of op steps whose operand 0 is a fresh leaf of edge values
  double layout_rate = 0.25;  // share of leaf steps' leaves with a non-contiguous layout
  // BURNMARK_DTYPES: the float dtypes programs are drawn from (duplicates ignored, empty = f32).
  // With more than one, the program's first byte picks it.
  std::vector<FloatDType> dtypes = {FloatDType::F32};
  // BURNMARK_TANGENTS: programs are run in forward mode too, so ops LibTorch has no forward-mode
  // derivative for are left out (op_generated_in_forward_mode).
  bool forward_mode = false;
  // BURNMARK_HVP: programs are run to second order too, so ops the reference has no
  // second-order rule for are left out (op_generated_in_second_order).
  bool second_order = false;
  // BURNMARK_OPS, or the ops every plugin under test lists: when not empty, the only ops drawn
  // (see "Op restriction" above). Empty: every op, the decoding unchanged.
  std::vector<Op> ops;
};

// Whether the generator draws `op` in programs of `dtype`. Every op is drawn in f32; in bf16 and
// f16 the ops LibTorch 1.13.1 has no CPU kernel for (forward or backward) are not, so campaigns
// are not flooded with `error` outcomes. A program that has one anyway (from a file) still runs,
// and LibTorch's error shows. The table is measured: a test runs one program per op in each
// dtype and checks that LibTorch fails exactly on the ops listed.
bool op_generated_at(Op op, FloatDType dtype);
// Whether the generator draws `op` when programs run in forward mode: not the ops LibTorch
// 1.13.1 has no forward-mode derivative for ("Trying to use forward AD with ... that does not
// support it"), measured the same way.
bool op_generated_in_forward_mode(Op op);
// Whether the generator draws `op` when programs run to second order: the ops the reference has
// a second-order rule for (src/backends/reference/second_order.cpp) and LibTorch 1.13.1 a
// double backward for ("derivative for aten::hardsigmoid_backward is not implemented"). Tests
// check both halves against the backends.
bool op_generated_in_second_order(Op op);
// The second half alone: ops whose double backward LibTorch 1.13.1 lacks.
bool libtorch_lacks_second_order(Op op);

// Every result passes validate(); the root is the last register.
Program generate(std::span<const std::uint8_t> bytes, const GeneratorOptions& options);

struct EncodeResult {
  std::variant<std::vector<std::uint8_t>, std::string> value; // bytes, or why it cannot be encoded
  bool ok() const { return std::holds_alternative<std::vector<std::uint8_t>>(value); }
  const std::vector<std::uint8_t>& bytes() const {
    return std::get<std::vector<std::uint8_t>>(value);
  }
  const std::string& error() const { return std::get<std::string>(value); }
};

// generate(encode(p).bytes(), options) == p whenever encoding succeeds. Fails, naming the
// statement, for programs the decoder cannot produce with these options: a root other than the
// last register, more than max_steps steps or max_leaves leaves, an alias before max_leaves
// leaves exist, leaf dims outside min_dim..max_dim, leaf data that is not a cycle of at most 16
// values, values other than b / 127.5 - 1 when special_rate is 0, NaNs with a payload, pow
// exponents or clamp bounds outside kPowExponents / kClampBounds, or fewer than min_ops ops.
EncodeResult encode(const Program& program, const GeneratorOptions& options);

} // namespace burnmark
