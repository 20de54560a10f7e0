// The host user and group ids a tpuemud's workers run as (internal to sandbox/).
//
// Every worker has its own user namespace in which ids 0..65535 (root included) map to
// [first, first + 65536) on the host: root inside is an unprivileged id outside. Each tpuemud
// claims one such range for its life, an flock on /run/tpuemu/worker-ids-<n>.lock (held until
// the process ends), so two tpuemud processes on a host never share one. Ranges start at 2^30 and
// skip any that overlaps a host account (/etc/passwd, /etc/group) or a range handed to host users
// in /etc/subuid or /etc/subgid. The search starts at range `preferred` (a hash of the workers'
// folder, so that a restart gets the same range back where it can; a worker whose files were made
// under another range has them moved to this one at boot). The first claim in a process is kept
// and returned again.
// Thread-safe.
#pragma once

#include <sys/types.h>

#include "base/status.h"

namespace tpuemu::sandbox::internal {

constexpr uid_t kWorkerIdCount = 65536;

// The first host id of this process's range; UNAVAILABLE when every range is claimed or taken.
Result<uid_t> ClaimIdRange(unsigned preferred);

// Whether no other live process holds the range starting at `first` (this process's own range,
// or one whose owner is gone): what a dead tpuemud left of it may be removed.
bool IdRangeUnowned(uid_t first);

}  // namespace tpuemu::sandbox::internal
