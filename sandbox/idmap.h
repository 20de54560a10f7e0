// User namespaces and idmapped mounts, as raw system calls (internal to sandbox/): shared by the
// tpuemu-sandbox helper (static, single-threaded) and Probe. Header-only, no allocation, so that
// both may call it between fork and exec.
//
// A worker's user namespace maps ids 0..count-1 to [first, first + count) on the host. An
// idmapped mount of a host folder with that namespace shows a file the host owns as uid u as
// owned by uid u inside (root's files are root's), while a worker's process, which is uid
// first + u on the host, creates files there owned by u on disk. Linux 5.12+ (5.19+ for an
// idmapped overlayfs layer).
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tpuemu::sandbox::internal {

// Writes `text` to `path`; false with errno on failure.
inline bool WriteProcFile(const char* path, const char* text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t len = static_cast<ssize_t>(strlen(text));
  const bool ok = write(fd, text, static_cast<size_t>(len)) == len;
  const int err = errno;
  close(fd);
  errno = err;
  return ok;
}

// A new user namespace mapping 0..count-1 to first..first+count-1 (uids and gids), as an open
// descriptor of /proc/<pid>/ns/user; -1 with errno on failure. The caller must be root on the
// host. A short-lived child, born in the namespace (clone(CLONE_NEWUSER): no fork-then-unshare,
// which fails in a child that a sanitizer's runtime made multithreaded), holds it while the
// parent writes its maps and opens it, and is reaped here. The child makes raw system calls only.
inline int MakeUserNamespace(uid_t first, uid_t count) {
  int go[2];  // the parent closes its end when the child may go
  if (pipe2(go, O_CLOEXEC) != 0) return -1;
  const long child = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, 0);
  if (child == 0) {
    syscall(SYS_close, go[1]);  // so that the parent's close is the end of file here
    char c;
    while (syscall(SYS_read, go[0], &c, 1) < 0 && errno == EINTR) {
    }
    syscall(SYS_exit_group, 0);
  }
  int err = errno;
  close(go[0]);
  int fd = -1;
  if (child > 0) {
    err = 0;
    char path[64];
    char map[64];
    snprintf(map, sizeof(map), "0 %u %u\n", static_cast<unsigned>(first),
             static_cast<unsigned>(count));
    snprintf(path, sizeof(path), "/proc/%ld/uid_map", child);
    if (!WriteProcFile(path, map)) err = errno;
    snprintf(path, sizeof(path), "/proc/%ld/gid_map", child);
    if (err == 0 && !WriteProcFile(path, map)) err = errno;
    snprintf(path, sizeof(path), "/proc/%ld/ns/user", child);
    if (err == 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) err = errno;
  }
  close(go[1]);
  if (child > 0) {
    int status = 0;
    while (waitpid(static_cast<pid_t>(child), &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (fd < 0) errno = err;
  return fd;
}

// A detached copy of the mount at `path` (its submounts too when `recursive`), idmapped with
// `userns_fd` and given the MOUNT_ATTR_* bits in `attrs`; attach it with AttachMount. -1 with
// errno on failure.
inline int IdmappedMount(const char* path, int userns_fd, uint64_t attrs, bool recursive) {
#if defined(SYS_open_tree) && defined(SYS_mount_setattr)
  const unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0);
  const int fd = static_cast<int>(syscall(SYS_open_tree, AT_FDCWD, path, flags));
  if (fd < 0) return -1;
  struct mount_attr attr {};
  attr.attr_set = MOUNT_ATTR_IDMAP | attrs;
  attr.userns_fd = static_cast<uint64_t>(userns_fd);
  if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
              sizeof(attr)) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
#else
  (void)path, (void)userns_fd, (void)attrs, (void)recursive;
  errno = ENOSYS;
  return -1;
#endif
}

// Attaches detached mount `mount_fd` at `target` and closes it; false with errno on failure.
inline bool AttachMount(int mount_fd, const char* target) {
#ifdef SYS_move_mount
  const bool ok =
      syscall(SYS_move_mount, mount_fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) == 0;
#else
  errno = ENOSYS;
  const bool ok = false;
#endif
  const int err = errno;
  close(mount_fd);
  errno = err;
  return ok;
}

}  // namespace tpuemu::sandbox::internal
