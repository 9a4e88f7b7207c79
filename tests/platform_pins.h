// Tests that pin a library's behaviour (a value, a divergence) pin it to the platform it was
// measured on (Backend::platform: the library's version, kernel set and CPU vendor). On another
// platform the library may round otherwise; such a test then still checks BurnMark: the
// oracle's verdict must fit the values this platform gave, and the test says what it saw.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

#include "burnmark/driver/outcome.h"
#include "burnmark/oracle/oracle.h"

namespace burnmark::testing {

// Whether any element of `got` lies outside the reference's bound, element by element with the
// oracle's rule (values_diverge with the reference's error bound, none if it sends none; an
// infinite bound is indeterminate).
inline bool tensor_leaves_bound(const HostTensor& ref, const HostTensor& got, double tolerance) {
  if (!(ref.shape == got.shape) || ref.values.size() != got.values.size()) return true;
  const bool bounded = ref.error_bound.size() == ref.values.size();
  for (std::size_t i = 0; i < ref.values.size(); ++i) {
    const std::optional<double> b =
        bounded ? std::optional<double>(ref.error_bound[i]) : std::nullopt;
    if (b && !(*b < std::numeric_limits<double>::infinity())) continue;
    if (values_diverge(ref.values[i], got.values[i], tolerance, b)) return true;
  }
  return false;
}

// The verdict on (ref, got) fits got's values: the root diverges exactly when one of its
// elements leaves the reference's bound, and so does each leaf's gradient.
inline ::testing::AssertionResult verdict_fits_values(const Outcome& ref, const Outcome& got,
                                                      const OracleOptions& options = {}) {
  const Verdict v = compare({ref, got}, options);
  const auto reported = [&](DivergenceKind kind, int leaf) {
    for (const Divergence& d : v.divergences)
      if ((d.kind == kind || d.kind == DivergenceKind::Shape) && d.leaf == leaf) return true;
    return false;
  };
  if (ref.status != Status::Ok || got.status != Status::Ok) {
    // An error, crash or skip: the oracle's rule for statuses (oracle.h) rather than values. Two
    // that ended alike, or a skip, are no divergence; two that differ are one, unless the
    // reference marked its error indeterminate (a correct library may raise there or not).
    const bool differ = ref.status != got.status && ref.status != Status::Unsupported &&
                        got.status != Status::Unsupported;
    if (!v.agree() && !differ)
      return ::testing::AssertionFailure() << "a divergence where both ended alike\n"
                                           << format_verdict(v);
    if (v.agree() && differ && v.indeterminate == 0)
      return ::testing::AssertionFailure()
             << "no divergence where one raised: " << ref.message << " / " << got.message;
    return ::testing::AssertionSuccess();
  }
  if (reported(DivergenceKind::Forward, -1) !=
      tensor_leaves_bound(ref.root, got.root, options.tolerance))
    return ::testing::AssertionFailure() << "the root's verdict does not fit its values\n"
                                         << format_verdict(v);
  if (options.gradients)
    for (std::size_t g = 0; g < ref.grads.size() && g < got.grads.size(); ++g)
      if (reported(DivergenceKind::Gradient, static_cast<int>(g)) !=
          tensor_leaves_bound(ref.grads[g], got.grads[g], options.tolerance))
        return ::testing::AssertionFailure()
               << "leaf " << g << "'s gradient verdict does not fit its values\n"
               << format_verdict(v);
  return ::testing::AssertionSuccess();
}

// Said on the test's output and in its XML record: what this platform gave instead of the
// pinned value, so that a new processor's facts are read, not lost.
inline void report_unpinned(const std::string& platform, std::string what) {
  for (std::size_t at = what.find('\n'); at != std::string::npos; at = what.find('\n', at))
    what.replace(at, 1, at + 1 == what.size() ? "" : "; ");
  std::printf("on %s, unlike where it was measured: %s\n", platform.c_str(), what.c_str());
  ::testing::Test::RecordProperty("unpinned", platform + ": " + what);
}

} // namespace burnmark::testing
