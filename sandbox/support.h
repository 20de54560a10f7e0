// What this host lets tpuemud build worker sandboxes with, probed once at startup.
//
// A worker sandbox (worker_box.h) needs: root (mounts, namespaces, port 22), unshare(2) of the
// mount, PID, UTS and IPC namespaces, overlayfs with upper dirs on the workers' folder, OpenSSH's
// sshd and ssh-keygen, and the tpuemu-sandbox helper binary (sandbox/helper_main.cpp). cgroups are
// optional: without the memory or pids controller the limits are not enforced, and `limits_note`
// says so. Pure probing: nothing is left behind (but the empty, shared tpuemu/ cgroup folders).
// Thread-safe.
#pragma once

#include <string>

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
};

// Checks everything above. `workers_dir` is created if missing (overlay upper dirs live there);
// `helper` is the tpuemu-sandbox binary to use (empty = next to /proc/self/exe, then the build
// tree's, then $PATH).
Support Probe(const std::string& workers_dir, const std::string& helper);

}  // namespace tpuemu::sandbox
