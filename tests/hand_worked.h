// Hand-worked programs checked everywhere: the reference and LibTorch (eager, in-place,
// TorchScript) must each give exactly the values and gradients a test worked out by hand (sums of
// small integers, exact in f32 in any order). Shared by the indexing tests (test_index_update,
// test_index_put).
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"

namespace burnmark::test_support {

// The backends every hand-worked program runs through: the reference first.
inline const std::vector<std::unique_ptr<Backend>>& hand_worked_backends() {
  static const std::vector<std::unique_ptr<Backend>> all = [] {
    std::vector<std::unique_ptr<Backend>> b;
    b.push_back(make_reference_backend());
    b.push_back(make_libtorch_backend(1));
    b.push_back(make_libtorch_inplace_backend());
    b.push_back(make_libtorch_jit_backend(false));
    return b;
  }();
  return all;
}

// Bitwise equal but for NaN's payload: -0 is not 0, NaN is NaN.
inline bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

inline void expect_values(const HostTensor& got, const std::vector<double>& want,
                          const std::string& what) {
  ASSERT_EQ(got.values.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(same(got.values[i], want[i]))
        << what << " element " << i << ": got " << got.values[i] << ", want " << want[i];
}

struct Expected {
  std::vector<double> root;
  // Per float leaf, by leaf number (index leaves and compared leaves have none to check).
  std::vector<std::pair<std::size_t, std::vector<double>>> grads;
};

// Every backend gives exactly the hand-worked values.
// `except`: backends left out, each for a recorded bug that another test pins.
inline void expect_everywhere(const Program& p, const Expected& e,
                              const std::vector<std::string>& except = {}) {
  for (const auto& backend : hand_worked_backends()) {
    if (std::find(except.begin(), except.end(), backend->name()) != except.end()) continue;
    const Outcome o = backend->run(p, RunOptions{true});
    ASSERT_EQ(o.status, Status::Ok) << backend->name() << ": " << o.message << "\n" << to_text(p);
    expect_values(o.root, e.root, backend->name() + " root");
    for (const auto& [leaf, want] : e.grads)
      expect_values(o.grads.at(leaf), want,
                    backend->name() + " grad of leaf " + std::to_string(leaf));
  }
}

// 1, 2, ..., n.
inline std::vector<float> one_to(int n) {
  std::vector<float> v;
  for (int i = 1; i <= n; ++i)
    v.push_back(static_cast<float>(i));
  return v;
}

} // namespace burnmark::test_support
