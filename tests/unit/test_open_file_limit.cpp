#include <sys/resource.h>

#include <catch2/catch.hpp>

#include "vcx/open_file_limit.h"

TEST_CASE("open-file limit: the soft limit is raised to the hard limit", "[core]") {
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
  // Start below the hard limit, as a login shell usually does.
  rlimit lowered = before;
  if (lowered.rlim_max > 64) lowered.rlim_cur = 64;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);

  CHECK_FALSE(vcx::raise_open_file_limit());
  rlimit after{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &after) == 0);
  CHECK(after.rlim_cur == before.rlim_max);
  CHECK(after.rlim_max == before.rlim_max);
  // Already at the hard limit: nothing to do, nothing wrong.
  CHECK_FALSE(vcx::raise_open_file_limit());

  REQUIRE(::setrlimit(RLIMIT_NOFILE, &before) == 0);
}
