// The value tables ops.def names: the attribute values the generator draws for each op and the
// edge inputs it mixes into the leaves that feed each op. Included by op.h only.
//
// Every number here is an f32 value (written as a float literal), so that the text form, which
// prints floats, reads it back bit for bit. Attribute tables list the values where kernels
// branch, not only the defaults; edge tables list the inputs where an op switches formula,
// overflows in f32, meets a pole or a domain edge, or rounds a half.
#pragma once

#include <array>
#include <limits>

namespace burnmark {

inline constexpr float kEdgeNan = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kEdgeInf = std::numeric_limits<float>::infinity();
inline constexpr float kEdgeDenorm = 1e-40f;
inline constexpr float kEdgeFltMin = std::numeric_limits<float>::min();
// f32 neighbours of 1 and of 0.5.
inline constexpr float kEdgeBelowOne = 0.99999994f;
inline constexpr float kEdgeAboveOne = 1.00000012f;

// ---- attribute tables ----

inline constexpr std::array<Attrs, 0> kNoParams = {};

// 0, ±0.5, ±1, 2, 3 and -2 each hit a distinct LibTorch fast path; the rest take the generic
// std::pow / Sleef pow: 1.5 and -1.5 non-integral (NaN for a negative base), 4 an even and -3 an
// odd negative integer (the sign of a negative base, -0 and -inf; docs/attribute-branches.md).
inline constexpr std::array<double, 12> kPowExponents = {0.0, 0.5,  -0.5, 1.0, -1.0, 2.0,
                                                         3.0, -2.0, 1.5,  4.0, -3.0, -1.5};
inline constexpr std::array<Attrs, kPowExponents.size()> kPowParams = [] {
  std::array<Attrs, kPowExponents.size()> t{};
  for (std::size_t i = 0; i < t.size(); ++i)
    t[i].exponent = kPowExponents[i];
  return t;
}();

struct ClampBounds {
  double lo;
  double hi;
};
// lo > hi on purpose (LibTorch documents that every element then becomes hi), and NaN bounds,
// where IEEE's min/max and a "propagate NaN" clamp part ways.
inline constexpr std::array<ClampBounds, 7> kClampBounds = {{{-1.0, 1.0},
                                                             {0.0, 1.0},
                                                             {-0.5, 0.25},
                                                             {-1e6, 1e6},
                                                             {0.5, -0.5},
                                                             {kEdgeNan, 1.0},
                                                             {-1.0, kEdgeNan}}};
inline constexpr std::array<Attrs, kClampBounds.size()> kClampParams = [] {
  std::array<Attrs, kClampBounds.size()> t{};
  for (std::size_t i = 0; i < t.size(); ++i) {
    t[i].lo = kClampBounds[i].lo;
    t[i].hi = kClampBounds[i].hi;
  }
  return t;
}();
inline constexpr std::array<Attrs, 4> kClampMinParams = {
    {{.lo = 0.0}, {.lo = -1.0}, {.lo = 0.5}, {.lo = kEdgeNan}}};
inline constexpr std::array<Attrs, 4> kClampMaxParams = {
    {{.hi = 0.0}, {.hi = 1.0}, {.hi = -0.5}, {.hi = kEdgeNan}}};
// Strictly min < max, as torch.nn.Hardtanh requires.
inline constexpr std::array<Attrs, 5> kHardtanhParams = {{{.lo = -1.0, .hi = 1.0},
                                                          {.lo = 0.0, .hi = 1.0},
                                                          {.lo = -0.5, .hi = 0.25},
                                                          {.lo = -2.0, .hi = 3.0},
                                                          {.lo = 0.0, .hi = 6.0}}};
// threshold is where the kernel switches to the identity (x * beta > threshold); 0 puts the
// switch at the origin, a negative beta flips the side. A threshold above ln(FLT_MAX) = 88.72
// leaves exp(x * beta) to overflow below the switch: with beta 100, grid inputs in (0.8872, 1].
inline constexpr std::array<Attrs, 7> kSoftplusParams = {{{.beta = 1.0, .threshold = 20.0},
                                                          {.beta = 1.0, .threshold = 0.0},
                                                          {.beta = 2.0, .threshold = 20.0},
                                                          {.beta = 0.5, .threshold = 1.0},
                                                          {.beta = 10.0, .threshold = 2.0},
                                                          {.beta = -1.0, .threshold = 20.0},
                                                          {.beta = 100.0, .threshold = 100.0}}};
inline constexpr std::array<Attrs, 2> kGeluParams = {{{.variant = 0}, {.variant = 1}}};
inline constexpr std::array<Attrs, 5> kEluParams = {
    {{.alpha = 1.0}, {.alpha = 0.5}, {.alpha = 2.0}, {.alpha = 0.0}, {.alpha = -0.5}}};
// celu divides by alpha, so no zero (LibTorch raises). A negative alpha makes exp(x / alpha)
// grow below 0: it overflows for x < 88.72 alpha.
inline constexpr std::array<Attrs, 5> kCeluParams = {
    {{.alpha = 1.0}, {.alpha = 0.5}, {.alpha = 2.0}, {.alpha = 0.1f}, {.alpha = -1.0}}};
inline constexpr std::array<Attrs, 6> kLeakyParams = {{{.slope = 0.01f},
                                                       {.slope = 0.0},
                                                       {.slope = 0.2f},
                                                       {.slope = 1.0},
                                                       {.slope = -0.5},
                                                       {.slope = 5.0}}};
// softshrink requires lambd >= 0.
inline constexpr std::array<Attrs, 4> kShrinkParams = {
    {{.lambd = 0.5}, {.lambd = 0.0}, {.lambd = 1.0}, {.lambd = 2.0}}};
// hardshrink does not: a negative lambd empties the band [-lambd, lambd], so both of the vector
// kernel's masks (x < -lambd, x > lambd) hold at once for x in (lambd, -lambd).
inline constexpr std::array<Attrs, 5> kHardshrinkParams = {
    {{.lambd = 0.5}, {.lambd = 0.0}, {.lambd = 1.0}, {.lambd = 2.0}, {.lambd = -0.5}}};
inline constexpr std::array<Attrs, 5> kLogitParams = {{{.variant = 0},
                                                       {.eps = 1e-6f, .variant = 1},
                                                       {.eps = 0.1f, .variant = 1},
                                                       {.eps = 0.0, .variant = 1},
                                                       {.eps = 0.5, .variant = 1}}};
inline constexpr std::array<Attrs, 2> kRoundingParams = {{{.variant = 0}, {.variant = 1}}};
// LibTorch switches formula at weight 0.5.
inline constexpr std::array<Attrs, 7> kLerpParams = {{{.weight = 0.5},
                                                      {.weight = 0.0},
                                                      {.weight = 1.0},
                                                      {.weight = 0.25},
                                                      {.weight = 0.75},
                                                      {.weight = 2.0},
                                                      {.weight = -1.0}}};

// var and std: the population (0) and the sample (1) variance; correction 1 of one element
// divides by zero.
inline constexpr std::array<Attrs, 2> kCorrectionParams = {{{.variant = 0}, {.variant = 1}}};
// vector_norm's ord: each of these takes its own kernel branch (0 counts nonzeros, ±inf are
// max/min of |x|, 1 and 2 have fast paths, 0.5 is below 1, where the gradient has a pole at 0).
inline constexpr std::array<double, 7> kOrds = {2.0, 1.0, 3.0, kEdgeInf, -kEdgeInf, 0.5, 0.0};
inline constexpr std::array<Attrs, kOrds.size()> kOrdParams = [] {
  std::array<Attrs, kOrds.size()> t{};
  for (std::size_t i = 0; i < t.size(); ++i)
    t[i].exponent = kOrds[i];
  return t;
}();
// normalize's p (torch.nn.functional.normalize divides by the p-norm clamped to eps = 1e-12).
inline constexpr std::array<Attrs, 4> kNormalizeParams = {
    {{.exponent = 2.0}, {.exponent = 1.0}, {.exponent = kEdgeInf}, {.exponent = 3.0}}};
// addmm's beta and alpha: 0 is where BLAS skips a term (documented for beta: input is ignored,
// NaN and inf included), 1 where LibTorch skips the scaling.
inline constexpr std::array<Attrs, 5> kAddmmParams = {{{.alpha = 1.0, .beta = 1.0},
                                                       {.alpha = 1.0, .beta = 0.0},
                                                       {.alpha = -2.0, .beta = 0.5},
                                                       {.alpha = 0.0, .beta = 1.0},
                                                       {.alpha = 0.5, .beta = -1.0}}};
// scatter_reduce: every reduction, with and without self's own values.
inline constexpr std::array<Attrs, 10> kScatterReduceParams = {{
    {.variant = 0, .include_self = true},
    {.variant = 0, .include_self = false},
    {.variant = 1, .include_self = true},
    {.variant = 1, .include_self = false},
    {.variant = 2, .include_self = true},
    {.variant = 2, .include_self = false},
    {.variant = 3, .include_self = true},
    {.variant = 3, .include_self = false},
    {.variant = 4, .include_self = true},
    {.variant = 4, .include_self = false},
}};
// index_put: accumulate false (distinct indices, a copy) and true (repeats add up).
inline constexpr std::array<Attrs, 2> kAccumulateParams = {{{.variant = 0}, {.variant = 1}}};
// masked_fill's value: the infinities and NaN that attention masks use, zeros of both signs, a
// large finite and an ordinary value.
inline constexpr std::array<Attrs, 7> kFillParams = {{{.fill = 0.0},
                                                      {.fill = -0.0},
                                                      {.fill = -kEdgeInf},
                                                      {.fill = kEdgeInf},
                                                      {.fill = kEdgeNan},
                                                      {.fill = -1e9},
                                                      {.fill = 0.5}}};

// ---- edge tables ----
inline constexpr std::array<float, 0> kNoEdges = {};
inline constexpr std::array<float, 9> kArithEdges = {0.0f,   -0.0f,       1.0f, -1.0f,        3e38f,
                                                     -3e38f, kEdgeDenorm, 0.5f, 1.8446744e19f};
inline constexpr std::array<float, 7> kSignEdges = {0.0f,     -0.0f, kEdgeDenorm, -kEdgeDenorm,
                                                    kEdgeNan, 1.0f,  -1.0f};
// ln(FLT_MAX) = 88.7228, ln(FLT_MIN) = -87.3365, ln(smallest subnormal) = -103.279.
inline constexpr std::array<float, 10> kExpEdges = {88.7228f, 88.7229f, 89.0f, -87.3365f, -88.0f,
                                                    -103.28f, -104.0f,  0.0f,  -0.0f,     1e-30f};
inline constexpr std::array<float, 10> kLogEdges = {0.0f,          -0.0f, 1.0f,     kEdgeDenorm,
                                                    kEdgeFltMin,   -1.0f, kEdgeInf, kEdgeBelowOne,
                                                    kEdgeAboveOne, 2.0f};
inline constexpr std::array<float, 11> kPowEdges = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, kEdgeInf, -kEdgeInf, kEdgeNan, kEdgeDenorm, 1e20f};
inline constexpr std::array<float, 10> kSigmoidEdges = {0.0f,   -0.0f,  15.0f,   -15.0f,  20.0f,
                                                        -20.0f, 88.72f, -88.72f, -103.9f, 1e-30f};
inline constexpr std::array<float, 9> kClampEdges = {-1.0f, 1.0f,  0.0f, -0.0f,   0.5f,
                                                     -0.5f, 0.25f, 6.0f, kEdgeNan};
// pi/2, pi, 3pi/2 rounded to f32, and arguments where range reduction gets hard.
inline constexpr std::array<float, 11> kTrigEdges = {
    0.0f, -0.0f,     1.57079637f, -1.57079637f, 3.14159274f, 4.71238899f,
    1e4f, 823549.6f, 8388608.0f,  1e30f,        3e38f};
inline constexpr std::array<float, 11> kUnitEdges = {
    1.0f, -1.0f, kEdgeBelowOne, -kEdgeBelowOne, kEdgeAboveOne, -kEdgeAboveOne,
    0.0f, -0.0f, 0.5f,          -0.5f,          1e-30f};
// Beyond 2^64 a naive x * x overflows although the result is modest.
inline constexpr std::array<float, 9> kHugeEdges = {1e30f, -1e30f, 3e38f, -3e38f,     1e19f,
                                                    2e19f, 0.0f,   -0.0f, kEdgeDenorm};
// sinh and cosh overflow f32 just above 89.4159.
inline constexpr std::array<float, 9> kHyperbolicEdges = {89.4159f, 89.416f, -89.416f, 88.72f, 0.0f,
                                                          -0.0f,    1e-30f,  9.0f,     -9.0f};
inline constexpr std::array<float, 7> kAcoshEdges = {1.0f,  kEdgeBelowOne, kEdgeAboveOne, 1e30f,
                                                     3e38f, 2e19f,         0.0f};
// erfc underflows f32 near 10.05; glibc and Sleef switch polynomials near 0.84, 1.25, 2.86.
inline constexpr std::array<float, 12> kErfEdges = {
    0.0f, -0.0f, 3.9f, -3.9f, 4.0f, 10.0f, 10.06f, -10.0f, 0.84375f, 1.25f, 2.857143f, 1e-30f};
inline constexpr std::array<float, 10> kLog1pEdges = {
    -1.0f, -kEdgeBelowOne, -kEdgeAboveOne, 0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, kEdgeInf, 3e38f};
inline constexpr std::array<float, 8> kExp2Edges = {128.0f,  127.99999f, -126.0f, -149.0f,
                                                    -150.0f, 0.0f,       -0.0f,   0.5f};
// Below 2^-128 the reciprocal overflows; above 2^126 it is subnormal.
inline constexpr std::array<float, 8> kReciprocalEdges = {
    0.0f, -0.0f, kEdgeDenorm, -kEdgeDenorm, 2.9e-39f, 3e38f, kEdgeInf, -kEdgeInf};
// Squares overflow f32 from 1.8446743e19 and underflow below 1e-23.
inline constexpr std::array<float, 7> kSquareEdges = {
    1.8446743e19f, 1.8446744e19f, -1.9e19f, 1e-23f, 1.0842022e-19f, 0.0f, -0.0f};
// Halves (round half to even), the last f32 with a fraction (8388607.5) and the first integers
// above 2^23 and 2^24.
inline constexpr std::array<float, 16> kRoundingEdges = {
    0.5f,       -0.5f,      1.5f,        -1.5f, 2.5f, -2.5f, 0.49999997f, -0.49999997f,
    8388607.5f, 8388608.0f, 16777216.0f, 1e30f, 0.0f, -0.0f, kEdgeInf,    kEdgeNan};
// Poles at 0 and the negative integers, the zeros of lgamma at 1 and 2, digamma's root at
// 1.4616, lgamma's overflow near 4.085e36.
inline constexpr std::array<float, 15> kGammaEdges = {
    0.0f,        -0.0f,      1.0f,       2.0f,  -1.0f,  -2.0f,    -0.5f, -2.5f,
    kEdgeDenorm, 1.4616321f, 4.0850e36f, 1e30f, -1e30f, kEdgeInf, 0.5f};
inline constexpr std::array<float, 11> kSoftplusEdges = {
    20.0f, 20.000002f, 19.999998f, 0.0f, -0.0f, 10.0f, 1.0f, 0.2f, 88.72f, -88.72f, -103.9f};
inline constexpr std::array<float, 10> kGeluEdges = {0.0f,   -0.0f, -kEdgeInf, kEdgeInf, -5.0f,
                                                     -10.0f, 3.0f,  -3.0f,     1e-30f,   -1e-30f};
inline constexpr std::array<float, 9> kEluEdges = {
    0.0f, -0.0f, -1e-30f, -kEdgeInf, -88.72f, -104.0f, kEdgeDenorm, 1.0f, -1.0f};
inline constexpr std::array<float, 6> kRelu6Edges = {0.0f,       -0.0f,      6.0f,
                                                     6.0000005f, 5.9999995f, kEdgeNan};
inline constexpr std::array<float, 7> kHardEdges = {3.0f, -3.0f, 2.9999998f, -2.9999998f,
                                                    0.0f, -0.0f, kEdgeNan};
inline constexpr std::array<float, 10> kShrinkEdges = {0.5f,  -0.5f, 1.0f,  -1.0f,       2.0f,
                                                       -2.0f, 0.0f,  -0.0f, 0.50000006f, kEdgeNan};
inline constexpr std::array<float, 11> kLogitEdges = {
    0.0f, 1.0f, 0.5f, -0.0f, 1e-6f, 0.999999f, 0.1f, 0.9f, -0.1f, 1.1f, kEdgeDenorm};
inline constexpr std::array<float, 7> kMinMaxEdges = {0.0f,      -0.0f, kEdgeNan, kEdgeInf,
                                                      -kEdgeInf, 1.0f,  -1.0f};
inline constexpr std::array<float, 8> kAtan2Edges = {0.0f, -0.0f, kEdgeInf,    -kEdgeInf,
                                                     1.0f, -1.0f, kEdgeDenorm, 3e38f};
// Huge quotients (1e30 / 3), zero and infinite divisors, and an integer past 2^24.
inline constexpr std::array<float, 11> kModEdges = {
    0.0f, -0.0f, 1e30f, -1e30f, 3.0f, -3.0f, 0.1f, kEdgeInf, -kEdgeInf, 16777216.0f, 7.0f};
inline constexpr std::array<float, 9> kHypotEdges = {3e38f, -3e38f, 2e19f,    kEdgeDenorm, 1e-30f,
                                                     0.0f,  -0.0f,  kEdgeInf, kEdgeNan};

// Products: zeros (one zero, two zeros), and magnitudes whose products overflow or underflow f32
// while the exact product, or the product of the others, stays in range.
inline constexpr std::array<float, 9> kProdEdges = {0.0f,   -0.0f, 1e-30f,   1e30f,   1e20f,
                                                    1e-20f, 2.0f,  kEdgeInf, kEdgeNan};
// Variance: a huge common offset (cancellation), squares that overflow, equal elements.
inline constexpr std::array<float, 8> kSpreadEdges = {1e20f, 1e19f, 2e19f, 1e-30f,
                                                      0.0f,  1e7f,  3e38f, kEdgeInf};
// Norms: squares that overflow (1e20) or underflow (1e-25), zeros (a pole of the gradient).
inline constexpr std::array<float, 8> kNormEdges = {0.0f,   -0.0f,       1e20f, -1e20f,
                                                    1e-25f, kEdgeDenorm, 3e38f, kEdgeInf};
// log-sum-exp and softmax: infinities (the max subtracted is infinite), exp's overflow edge.
inline constexpr std::array<float, 8> kLogSumExpEdges = {-kEdgeInf, kEdgeInf, 88.7229f, 89.0f,
                                                         -104.0f,   0.0f,     1e30f,    kEdgeNan};
// addmm's input: what beta = 0 must ignore.
inline constexpr std::array<float, 7> kAddmmEdges = {kEdgeNan, kEdgeInf, -kEdgeInf, 0.0f,
                                                     -0.0f,    3e38f,    1.0f};

} // namespace burnmark
