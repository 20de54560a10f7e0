// kSanitizedBuild: whether this binary runs under ASan or TSan (CMake's TPUEMU_SANITIZE; the CI
// pairs UBSan with ASan). Tests with figures scale them for such builds: kernels run 5-20x slower
// and syscalls go through interceptors.
#pragma once

namespace tpuemu::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

}  // namespace tpuemu::testing
