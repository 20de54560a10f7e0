// The project, zone and node body most in-process API tests use, shared so that the tests of one
// executable agree on them (and can be compiled together in one unity translation unit).
#pragma once

#include <string>

namespace tpuemu::testing {

inline constexpr char kZone[] = "us-central2-b";
inline const std::string kParentName = std::string("projects/proj/locations/") + kZone;
inline const std::string kParent = "/v2/" + kParentName;
inline const std::string kAlphaParent = "/v2alpha1/" + kParentName;
inline constexpr char kNodeBody[] =
    R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";

}  // namespace tpuemu::testing
