#include <gtest/gtest.h>
TEST(Eigen, Placeholder) {}
