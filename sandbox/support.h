// What this host lets tpuemud build worker sandboxes with, probed once at startup.
//
// A worker sandbox (worker_box.h) needs: root (mounts, namespaces, port 22), unshare(2) of the
// mount, PID, UTS and IPC namespaces, overlayfs with upper dirs on the workers' folder, a user
// namespace per worker with idmapped mounts (Linux 5.19+: root inside is an unprivileged id on
// the host, id_range.h), a network namespace per worker joined to its slice's private network
// by veth and bridge (iproute2's ip), OpenSSH's sshd and ssh-keygen, and the tpuemu-sandbox
// helper binary
// (sandbox/helper_main.cpp). cgroups are optional: without the memory or pids controller the
// limits are not enforced, and `limits_note` says so.
// Besides probing, Probe claims this process's range of host ids (id_range.h) and builds the
// folders a worker's /etc, /var, /opt and /srv are laid over (base_tree.h) in
// `<workers_dir>/.base`; it leaves nothing else behind (but the empty, shared tpuemu/ cgroup
// folders). Thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tpuemu::sandbox {

struct Support {
  bool ok = false;
  std::string reason;          // why not, one line, when !ok ("not root (uid 1000)", ...)
  std::string helper;          // absolute path of tpuemu-sandbox
  std::string sshd;            // absolute path of sshd ("/usr/sbin/sshd")
  std::string ssh_keygen;      // absolute path of ssh-keygen
  bool memory_limits = false;  // a cgroup memory controller is usable
  bool pids_limits = false;    // a cgroup pids controller is usable
  std::string limits_note;     // what is not enforced and why; empty when both are
  std::string ip;              // absolute path of iproute2's ip (the workers' networks)
  bool disks = false;          // boot disks: loop devices and mkfs.ext4 are there
  std::string mkfs;            // absolute path of mkfs.ext4 (Debian package e2fsprogs)
  std::string disk_note;       // why there are no boot disks; empty when there are
  uid_t id_first = 0;          // host id of root inside every worker (id_range.h)
  uid_t id_count = 0;          // ids mapped: 0..id_count-1 inside
  std::string base_dir;        // the mirrored /etc, /var, /opt, /srv (base_tree.h)
};

// Checks everything above. `workers_dir` is created if missing (overlay upper dirs live there);
// `helper` is the tpuemu-sandbox binary to use (empty = next to /proc/self/exe, then the build
// tree's, then $PATH). `hidden` are host paths no worker may see (tpuemud's data folder); the
// workers' folder is always hidden.
Support Probe(const std::string& workers_dir, const std::string& helper,
              const std::vector<std::string>& hidden = {});

}  // namespace tpuemu::sandbox
