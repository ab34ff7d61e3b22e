#include "digit_sum.h"
#include <catch2/catch.hpp>

TEST_CASE("zero") { REQUIRE(digit_sum::of(0) == 0); }

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("one digit") { REQUIRE(digit_sum::of(7) == 7); }

TEST_CASE("many digits") { REQUIRE(digit_sum::of(90817) == 25); }
#endif

#if defined(EXERCISM_INCLUDE_BENCHMARK)
TEST_CASE("benchmark") { REQUIRE(digit_sum::of(999999999) == 81); }
#endif
