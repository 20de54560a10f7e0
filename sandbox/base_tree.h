// The host's /etc, /var, /opt and /srv as a worker may see them: copies that hold only what an
// unprivileged user of the host could read anyway (internal to sandbox/).
//
// Root inside a worker is root over the host's files its overlays show (they are idmapped, so a
// host file owned by root is owned by root inside), so the worker must not be shown the host's
// protected files. BuildBaseTree mirrors each folder into `base_dir/<name>`: a folder others may
// read and enter is mirrored and descended into; one they may not is made empty (same mode and
// owner, so the layout packages expect is kept) and not descended into; a file others may read is
// hard-linked (copied when the link cannot be made: another file system, say); a symlink is made
// again; everything else (protected files, sockets, devices, FIFOs) is left out. Paths in
// `exclude` (the workers' own folder, tpuemud's data) are left out whole.
// Then the account files are written for a new machine, not copied: /etc/passwd and /etc/group
// keep the system accounts and groups (uid/gid below 1000, and nobody/nogroup), /etc/shadow and
// /etc/gshadow give each of them a locked password ('*'), and /etc/sudoers is Debian's default.
// The host's SSH host keys (public halves too) and sudoers.d are left out.
//
// The tree is built beside the old one and swapped in, so a crash leaves one whole tree. Returns
// INTERNAL naming the path that failed. Thread-compatible (one caller per base_dir).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace tpuemu::sandbox::internal {

// The host folders BuildBaseTree mirrors (each a top-level name: "etc", "var", "opt", "srv").
const std::vector<std::string>& BaseTreeFolders();

Status BuildBaseTree(const std::string& base_dir, const std::vector<std::string>& exclude);

}  // namespace tpuemu::sandbox::internal
