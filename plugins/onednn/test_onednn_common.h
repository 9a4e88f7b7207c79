// The harness shared by the onednn plugin's test files: the reference and the plugin loaded
// through the real loader, agreement under the oracle, and single values of both for the pinned
// differences.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/plugin/loader.h"
#include "burnmark/plugin/plugin.h"
#include "platform_pins.h"

namespace burnmark::onednn_test {

using namespace burnmark;

inline Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) ADD_FAILURE() << r.error() << "\n" << text;
  return r.ok() ? r.program() : Program{};
}

// The reference and the plugin, made once per test.
struct Backends {
  std::unique_ptr<Backend> ref = make_reference_backend();
  std::unique_ptr<Backend> dnn;
  Backends() {
    PluginLoadResult r = load_plugin_backend("onednn");
    if (r.ok())
      dnn = r.take();
    else
      ADD_FAILURE() << r.error();
  }

  // Runs `text` through both, with and without gradients, and expects the oracle to find no
  // divergence, with the plugin compared (not skipped).
  void expect_agree(const std::string& text) {
    ASSERT_TRUE(dnn);
    const Program p = parse(text);
    for (bool gradients : {true, false}) {
      const RunOptions o{.gradients = gradients};
      const Outcome want = ref->run(p, o);
      const Outcome got = dnn->run(p, o);
      ASSERT_EQ(want.status, Status::Ok) << want.message << "\n" << text;
      ASSERT_EQ(got.status, Status::Ok) << got.message << "\n" << text;
      EXPECT_EQ(got.grads.size(), gradients ? want.grads.size() : 0u);
      const Verdict v = compare({want, got}, OracleOptions{.gradients = gradients});
      EXPECT_EQ(v.compared, 1u);
      EXPECT_TRUE(v.agree()) << format_verdict(v) << "\n" << text;
    }
  }

  Outcome run(const std::string& text) {
    if (!dnn) return Outcome{};
    return dnn->run(parse(text), RunOptions{});
  }
  Outcome run_ref(const std::string& text) { return ref->run(parse(text), RunOptions{}); }
};

// The plugin's and the reference's value at one index of the root or of leaf 0's gradient.
struct Pair {
  double dnn, ref;
};
inline Pair at(Backends& b, const std::string& text, bool gradient, std::size_t i) {
  const Outcome d = b.run(text), r = b.run_ref(text);
  EXPECT_EQ(d.status, Status::Ok) << d.message;
  EXPECT_EQ(r.status, Status::Ok) << r.message;
  const HostTensor& td = gradient ? d.grads.at(0) : d.root;
  const HostTensor& tr = gradient ? r.grads.at(0) : r.root;
  return {td.values.at(i), tr.values.at(i)};
}

// Where the OnednnKnownDifference tests' values were measured: the plugin's platform line
// there. oneDNN's JIT writes other kernels for other ISAs (ONEDNN_MAX_CPU_ISA caps it), and
// those may treat NaN, infinities, signed zeros and the last bits otherwise (softmax does).
inline const std::string kOnednnMeasuredOn = "oneDNN 2.6 avx512_core_amx on GenuineIntel";

// The same double, NaN matching any NaN and a zero's sign included.
inline bool identical(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

inline std::string shown(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.9g", v);
  return s;
}

// oneDNN's value at index i of `text`'s root (or leaf 0's gradient) has the property `holds`
// (`pinned` says which, in words), as on kOnednnMeasuredOn. On another platform a value without
// it is a fact to report, and the verdict on the program must fit it (platform_pins.h). Returns
// both values, for the checks of the reference's side.
template <class Holds>
Pair expect_pinned(Backends& b, const std::string& text, bool gradient, std::size_t i,
                   const std::string& pinned, Holds holds) {
  const Pair p = at(b, text, gradient, i);
  if (holds(p.dnn) || !b.dnn) return p;
  const std::string what = std::string(gradient ? "gradient" : "value") + " [" + std::to_string(i) +
                           "] of " + text.substr(0, text.find_last_not_of('\n') + 1) + " is " +
                           shown(p.dnn) + ", measured " + pinned;
  if (b.dnn->platform() == kOnednnMeasuredOn) {
    ADD_FAILURE() << what;
  } else {
    burnmark::testing::report_unpinned(b.dnn->platform(), what);
    const Program program = parse(text);
    EXPECT_TRUE(burnmark::testing::verdict_fits_values(b.ref->run(program, RunOptions{}),
                                                       b.dnn->run(program, RunOptions{})))
        << text;
  }
  return p;
}

// The value is `measured`: identical (NaN matches any NaN, a zero's sign counts), or within
// `within` when that is > 0.
inline Pair expect_pinned(Backends& b, const std::string& text, bool gradient, std::size_t i,
                          double measured, double within = 0) {
  return expect_pinned(
      b, text, gradient, i, shown(measured) + (within > 0 ? " within " + shown(within) : ""),
      [&](double v) {
        return within > 0 ? std::fabs(v - measured) <= within : identical(v, measured);
      });
}

} // namespace burnmark::onednn_test
