// The LibTorch backend's tests' shared runner and check (tests/test_libtorch_*.cpp, the
// test_libtorch executable): one backend per process, and values compared with plain double
// arithmetic within a few f32 ulps.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"

namespace burnmark::libtorch_test {

// float32 kernels against exact double math: a few ulps of relative error at most.
inline constexpr double kTol = 1e-5;

inline Outcome run(const Program& p, bool gradients = true) {
  static const std::unique_ptr<Backend> backend = make_libtorch_backend(1);
  return backend->run(p, RunOptions{gradients});
}

inline void expect_values(const HostTensor& got, const Shape& shape,
                          const std::vector<double>& want, const char* what) {
  EXPECT_EQ(got.shape.to_string(), shape.to_string()) << what;
  ASSERT_EQ(got.values.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got.values[i])) << what << " [" << i << "]: " << got.values[i];
      continue;
    }
    EXPECT_NEAR(got.values[i], want[i], kTol * std::max(1.0, std::abs(want[i])))
        << what << " [" << i << "]";
  }
}

inline Outcome run_ok(const Program& p) {
  Outcome out = run(p);
  EXPECT_EQ(out.status, Status::Ok) << out.message << "\n" << to_text(p);
  return out;
}

inline const std::vector<float> kMixed = {0.5f, -1.25f, 2.0f, -0.3f, 1.7f, -2.2f};
inline const std::vector<float> kPositive = {0.5f, 1.25f, 2.0f, 0.3f, 1.7f, 2.2f};

} // namespace burnmark::libtorch_test
