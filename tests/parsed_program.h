// A program parsed from its text form inside a test: a parse error fails the test (with the
// error and the text) and yields an empty program, so the test goes on to report what else fails.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "burnmark/ir/text.h"

namespace burnmark::test_support {

inline Program parsed(const std::string& text) {
  const ParseResult r = parse_program(text);
  EXPECT_TRUE(r.ok()) << r.error() << "\n" << text;
  return r.ok() ? r.program() : Program{};
}

} // namespace burnmark::test_support
