// WorkerBox: one TPU VM worker as a Linux sandbox — its own user, mount, PID, UTS and IPC
// namespaces (the network is the host's: each worker listens on its own loopback address), its
// own writable files over the host's operating system, bounded by a cgroup. Root inside is root
// of the worker's user namespace only: an unprivileged id on the host (Support::id_first), with
// no capability over the host's namespaces (docs/sandbox.md has the table of what it may do).
//
// Files. Everything the worker writes lives under `BootSpec::dir` on the host, on the worker's
// own boot disk there when it has one (BootSpec::disk_bytes: writing past it is ENOSPC inside,
// `df /` inside shows it), and survives Stop/Boot and tpuemud restarts; Wipe() deletes it.
// Inside the worker:
//   /usr /etc /var /opt /srv        overlayfs: the host's /usr, or the mirror of what any host user
//                                   may read of /etc /var /opt /srv (base_tree.h), read-only and
//                                   idmapped beneath + the worker's upper
//   /bin /sbin /lib /lib64 ...      the host's symlinks into /usr (usrmerge), or overlays likewise
//   /root /home /tmp /mnt /media    the worker's own folders, empty at first
//   /proc (its PID namespace's), /sys (read-only), /dev (a minimal tmpfs: null, zero, full,
//   random, urandom, tty, a private devpts and /dev/shm), /run (tmpfs, with /run/sshd)
//   /sys/bus/pci/devices, /dev/accel* or /dev/vfio  the host's TPU chips as stand-ins
//   (BootSpec::tpu) BootSpec::binds                 host files or folders bound over the given
//   paths
// A host top-level folder that holds `dir` itself is not overlaid (it would overlap): the worker
// gets an empty folder of its own there. docs/sandbox.md walks through all of it.
//
// Processes. Boot makes the cgroups and starts `tpuemu-sandbox boot` (sandbox/helper_main.cpp),
// which unshares a PID namespace and forks the worker's init: PID 1 inside, which joins the
// cgroups (the helper stays out of them), unshares the others, builds the root,
// pivots into it, reaps orphans, and on SIGTERM sends SIGTERM to every process inside and exits
// once they are gone. The helper and init die with tpuemud: every boot helper holds the read end
// of one process-wide "lifeline" pipe whose write end only tpuemud holds, and kills the init when
// it reads EOF (the init has PR_SET_PDEATHSIG on the helper); when PID 1 of a PID namespace dies,
// the kernel kills everything in it, so no process outlives tpuemud, kill -9 included. Spawn runs
// a command inside through `tpuemu-sandbox enter` (setns into the worker's namespaces and cgroup,
// then fork and exec); the command dies (SIGKILL) with its enter process.
//
// Ownership: a WorkerBox owns its helper process; destroying it kills the worker (SIGKILL) and
// waits for it; the files stay. Threads: every method is safe to call from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "sandbox/support.h"
#include "sandbox/tpu_devices.h"

namespace tpuemu::sandbox {

struct Bind {
  std::string host_path;    // a file or folder on the host
  std::string inside_path;  // where it appears in the worker (made if missing)
  bool read_only = true;
};

struct BootSpec {
  std::string dir;       // the worker's own files on the host (created if missing)
  std::string hostname;  // "t1v-n-0f996b37-w-0"
  std::vector<Bind> binds;
  // Unique among live workers: names the worker's cgroup ("tpuemu/<cgroup_name>").
  std::string cgroup_name;
  int64_t memory_limit_bytes = 0;  // 0 = none (cgroup memory.limit_in_bytes / memory.max)
  int64_t pids_limit = 0;          // 0 = none (cgroup pids.max)
  // The boot disk (<dir>/disk.img, sparse ext4) that holds everything the worker writes; 0 or
  // without Support::disks: none, the files are on the host's file system under <dir>/fs.
  int64_t disk_bytes = 0;
  // Boot refuses (RESOURCE_EXHAUSTED) while the file system holding `dir` has less free space.
  int64_t host_free_floor_bytes = 0;
  // The worker's network: its own namespace always (lo); with `network_pid` (SliceNetwork::pid())
  // also eth0 at `address` ("10.0.2.2/8") on that slice's private network, through which it
  // reaches the metadata server's 169.254.169.254.
  pid_t network_pid = 0;
  std::string address;
  // The host's TPU chips as the worker's software finds them (tpu_devices.h); none by default.
  TpuDevices tpu;
};

// How a spawned command's standard streams are connected: a file descriptor of the caller's
// (duplicated into the child; the caller keeps and closes its own), or -1 for /dev/null.
struct SpawnIo {
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

class WorkerBox {
 public:
  // Starts the worker and returns once its init has built the root and waits (typically well
  // under a second), or the reason it could not (INTERNAL/UNAVAILABLE naming the failed step, from
  // the helper's stderr; RESOURCE_EXHAUSTED when the host's free space is below the spec's
  // floor). `support` must be ok.
  static Result<std::unique_ptr<WorkerBox>> Boot(const Support& support, const BootSpec& spec);
  ~WorkerBox();  // Kill() and reap
  WorkerBox(const WorkerBox&) = delete;
  WorkerBox& operator=(const WorkerBox&) = delete;

  // The init's PID as the host sees it (0 once it is gone).
  pid_t init_pid() const;
  // Whether the init still runs (it exits on Stop/Kill, or when something killed it).
  bool Alive() const;
  // SIGTERM to every process inside; waits up to `grace` for them to exit, then SIGKILL to
  // whatever is left. Returns when the worker is gone. Idempotent.
  void Stop(std::chrono::milliseconds grace);
  // SIGKILL to everything inside at once. Idempotent.
  void Kill();
  // Sends `signo` to every process inside except the init (kill(-1, signo) from a short-lived
  // `enter` inside). OK when the worker is gone (nothing to signal).
  Status SignalAll(int signo);
  // Runs argv (argv[0] an absolute path inside the worker) inside the worker as root, with
  // working directory / and environment `env` ("KEY=value"; PATH is set when absent). Returns the
  // host PID of the `tpuemu-sandbox enter` process, which exits with the command's exit status
  // (or 128 + signal); the caller reaps it (waitpid, or Reactor::WatchExit). SIGTERM, SIGINT,
  // SIGHUP, SIGQUIT, SIGUSR1/2 sent to that PID are forwarded to the command, SIGALRM as SIGKILL:
  // use SIGALRM, not SIGKILL, to end a command for sure (a SIGKILLed enter process also takes its
  // command down, but leaves it a zombie for the host's init to reap, and the worker's Stop waits
  // for that). The enter process is in a session of its own. FAILED_PRECONDITION when the worker
  // is not running, INVALID_ARGUMENT when argv is empty or argv[0] is not absolute.
  Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const SpawnIo& io) const;
  // Spawn, then wait for it with a deadline (SIGKILL past it); returns the exit status (0..255)
  // and whatever it printed on stdout and stderr together (at most 64 KiB kept). For short
  // commands (user accounts, key files). DEADLINE_EXCEEDED when it ran past `deadline` (it was
  // killed).
  Result<std::pair<int, std::string>> Run(const std::vector<std::string>& argv,
                                          const std::string& stdin_data,
                                          std::chrono::milliseconds deadline) const;
  // Memory (bytes) and processes counted by the worker's cgroup now; -1 when not measured.
  int64_t MemoryBytes() const;
  int64_t ProcessCount() const;

 private:
  WorkerBox() = default;
  bool AliveLocked() const;                              // mu_ held
  void End(int signo, std::chrono::milliseconds grace);  // Stop and Kill
  std::vector<std::string> Cgroups() const;              // mu_ held (or not yet shared)

  std::mutex end_mu_;  // serialises Stop/Kill (held while waiting; never while mu_ is wanted)
  mutable std::mutex mu_;
  pid_t helper_pid_ = 0;  // the boot helper, a child of tpuemud; guarded by mu_; reaped only by End
  pid_t init_pid_ = 0;    // guarded by mu_
  int init_pidfd_ = -1;   // pidfd of the init (-1 without pidfd_open); guarded by mu_
  Support support_;       // immutable after Boot
  BootSpec spec_;         // immutable after Boot (dir made absolute)
  // cgroup folders ("" when not used, and once removed; the same folder on v2); guarded by mu_
  std::string memory_cgroup_;
  std::string pids_cgroup_;
};

// Deletes a worker's files (call after its WorkerBox is destroyed). OK when `dir` is gone.
Status Wipe(const std::string& dir);

// Makes an ed25519 host key at `path` (and `path`.pub) with ssh-keygen unless one is there;
// returns the public key line ("ssh-ed25519 AAAA… comment" without the comment).
Result<std::string> EnsureHostKey(const Support& support, const std::string& path);

}  // namespace tpuemu::sandbox
