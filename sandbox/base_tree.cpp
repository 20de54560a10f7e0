#include "sandbox/base_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "sandbox/process.h"
#include "sandbox/worker_box.h"

namespace tpuemu::sandbox::internal {
namespace {

// A copy, when a hard link cannot be made, is skipped past this size (package caches and the
// like): the worker then simply does not see that file.
constexpr off_t kCopyLimitBytes = off_t{64} << 20;
// Accounts below this id are the system's (Debian's UID_MIN/GID_MIN).
constexpr long kFirstUserId = 1000;
constexpr long kNobodyId = 65534;

// Debian 12's default /etc/sudoers.
constexpr const char* kSudoers =
    "# /etc/sudoers of a tpuemu worker: Debian's default.\n"
    "Defaults\tenv_reset\n"
    "Defaults\tmail_badpass\n"
    "Defaults\tsecure_path=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n"
    "Defaults\tuse_pty\n"
    "root\tALL=(ALL:ALL) ALL\n"
    "%sudo\tALL=(ALL:ALL) ALL\n"
    "@includedir /etc/sudoers.d\n";

bool OthersMay(const struct stat& st, mode_t bits) { return (st.st_mode & bits) == bits; }

// Paths that are rewritten (BuildBaseTree's account files) or never shown (host secrets).
bool LeftOut(const std::string& host_path) {
  static const std::set<std::string> kRewritten = {"/etc/passwd", "/etc/group", "/etc/shadow",
                                                   "/etc/gshadow", "/etc/sudoers"};
  if (kRewritten.count(host_path) > 0) return true;
  if (host_path.rfind("/etc/ssh/ssh_host_", 0) == 0) return true;
  // Backups of the account files (passwd-, shadow-, ...), and the host users' id ranges.
  static const std::set<std::string> kBackups = {"/etc/passwd-",  "/etc/group-", "/etc/shadow-",
                                                 "/etc/gshadow-", "/etc/subuid", "/etc/subuid-",
                                                 "/etc/subgid",   "/etc/subgid-"};
  return kBackups.count(host_path) > 0;
}

Status CopyFile(const std::string& from, const std::string& to, const struct stat& st) {
  if (st.st_size > kCopyLimitBytes) return Status::Ok();
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return Status::Ok();  // gone or unreadable since the walk saw it: left out
  const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
  if (out < 0) {
    close(in);
    return Status::Internal("copy to " + to + ": " + ErrnoText(errno));
  }
  char buf[65536];
  ssize_t n;
  Status result = Status::Ok();
  while ((n = read(in, buf, sizeof(buf))) > 0) {
    if (write(out, buf, static_cast<size_t>(n)) != n) {
      result = Status::Internal("copy to " + to + ": " + ErrnoText(errno));
      break;
    }
  }
  close(in);
  if (fchown(out, st.st_uid, st.st_gid) != 0 || fchmod(out, st.st_mode & 07777) != 0) {
    result = Status::Internal("copy to " + to + ": " + ErrnoText(errno));
  }
  close(out);
  return result;
}

class Mirror {
 public:
  explicit Mirror(const std::vector<std::string>& exclude) : exclude_(exclude) {}

  // Mirrors host folder `from` (already stat'ed as `st`) into `to`.
  Status Folder(const std::string& from, const std::string& to, const struct stat& st) {
    if (mkdir(to.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::Internal("mkdir " + to + ": " + ErrnoText(errno));
    }
    if (lchown(to.c_str(), st.st_uid, st.st_gid) != 0 || chmod(to.c_str(), st.st_mode & 07777)) {
      return Status::Internal("own " + to + ": " + ErrnoText(errno));
    }
    if (!OthersMay(st, S_IROTH | S_IXOTH)) return Status::Ok();  // shown empty
    DIR* dir = opendir(from.c_str());
    if (dir == nullptr) return Status::Ok();
    Status result = Status::Ok();
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      result = Entry(from + "/" + name, to + "/" + name, st.st_dev);
      if (!result.ok()) break;
    }
    closedir(dir);
    return result;
  }

 private:
  Status Entry(const std::string& from, const std::string& to, dev_t parent_dev) {
    for (const std::string& x : exclude_) {
      if (from == x || from.rfind(x + "/", 0) == 0) return Status::Ok();
    }
    if (LeftOut(from)) return Status::Ok();
    struct stat st {};
    if (lstat(from.c_str(), &st) != 0) return Status::Ok();  // gone since readdir
    if (S_ISDIR(st.st_mode)) {
      // Another file system mounted below (a /var/lib/docker, a tmpfs): shown empty.
      if (st.st_dev != parent_dev) {
        struct stat empty = st;
        empty.st_mode &= ~static_cast<mode_t>(S_IROTH | S_IXOTH);
        return Folder(from, to, empty);
      }
      return Folder(from, to, st);
    }
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = readlink(from.c_str(), target, sizeof(target) - 1);
      if (n < 0) return Status::Ok();
      target[n] = '\0';
      if (symlink(target, to.c_str()) != 0 || lchown(to.c_str(), st.st_uid, st.st_gid) != 0) {
        return Status::Internal("symlink " + to + ": " + ErrnoText(errno));
      }
      return Status::Ok();
    }
    if (!S_ISREG(st.st_mode) || !OthersMay(st, S_IROTH)) return Status::Ok();
    if (!copy_only_ && link(from.c_str(), to.c_str()) == 0) return Status::Ok();
    if (errno == EXDEV) copy_only_ = true;  // every later file is on the other file system too
    return CopyFile(from, to, st);
  }

  const std::vector<std::string>& exclude_;
  bool copy_only_ = false;
};

std::vector<std::vector<std::string>> ReadColonFile(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ':')) fields.push_back(f);
    if (!line.empty() && line.back() == ':') fields.emplace_back();
    rows.push_back(std::move(fields));
  }
  return rows;
}

bool SystemId(const std::string& text) {
  char* end = nullptr;
  const long id = strtol(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' && id >= 0 && (id < kFirstUserId || id == kNobodyId);
}

Status WriteOwned(const std::string& path, const std::string& content, mode_t mode, gid_t gid) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << content;
  out.close();
  if (!out || chown(path.c_str(), 0, gid) != 0 || chmod(path.c_str(), mode) != 0) {
    return Status::Internal("write " + path + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

gid_t GroupId(const std::vector<std::vector<std::string>>& groups, const std::string& name) {
  for (const auto& g : groups) {
    if (g.size() >= 3 && g[0] == name) return static_cast<gid_t>(strtol(g[2].c_str(), nullptr, 10));
  }
  return 0;
}

// passwd, group, shadow, gshadow and sudoers of a new machine, from the host's system accounts.
Status WriteAccounts(const std::string& etc) {
  std::string passwd, shadow, group, gshadow;
  std::set<std::string> users;
  for (const auto& u : ReadColonFile("/etc/passwd")) {
    if (u.size() < 7 || !SystemId(u[2])) continue;
    users.insert(u[0]);
    passwd += u[0] + ":x:" + u[2] + ":" + u[3] + ":" + u[4] + ":" + u[5] + ":" + u[6] + "\n";
    shadow += u[0] + ":*:19000:0:99999:7:::\n";
  }
  const auto groups = ReadColonFile("/etc/group");
  for (const auto& g : groups) {
    if (g.size() < 3 || !SystemId(g[2])) continue;
    std::string members;
    std::stringstream ss(g.size() > 3 ? g[3] : "");
    std::string m;
    while (std::getline(ss, m, ',')) {
      if (users.count(m) == 0) continue;
      members += (members.empty() ? "" : ",") + m;
    }
    group += g[0] + ":x:" + g[2] + ":" + members + "\n";
    gshadow += g[0] + ":*::" + members + "\n";
  }
  const gid_t shadow_gid = GroupId(groups, "shadow");
  TPUEMU_RETURN_IF_ERROR(WriteOwned(etc + "/passwd", passwd, 0644, 0));
  TPUEMU_RETURN_IF_ERROR(WriteOwned(etc + "/group", group, 0644, 0));
  TPUEMU_RETURN_IF_ERROR(WriteOwned(etc + "/shadow", shadow, 0640, shadow_gid));
  TPUEMU_RETURN_IF_ERROR(WriteOwned(etc + "/gshadow", gshadow, 0640, shadow_gid));
  return WriteOwned(etc + "/sudoers", kSudoers, 0440, 0);
}

}  // namespace

const std::vector<std::string>& BaseTreeFolders() {
  static const std::vector<std::string> kFolders = {"etc", "var", "opt", "srv"};
  return kFolders;
}

Status BuildBaseTree(const std::string& base_dir, const std::vector<std::string>& exclude) {
  const std::string fresh = base_dir + ".new";
  const std::string old = base_dir + ".old";
  TPUEMU_RETURN_IF_ERROR(Wipe(fresh));
  TPUEMU_RETURN_IF_ERROR(Wipe(old));
  if (mkdir(fresh.c_str(), 0755) != 0) {
    return Status::Internal("mkdir " + fresh + ": " + ErrnoText(errno));
  }
  Mirror mirror(exclude);
  for (const std::string& name : BaseTreeFolders()) {
    struct stat st {};
    const std::string host = "/" + name;
    const std::string to = fresh + "/" + name;
    if (lstat(host.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      st.st_mode = S_IFDIR | 0755;
      st.st_uid = 0;
      st.st_gid = 0;
      if (mkdir(to.c_str(), 0755) != 0) return Status::Internal("mkdir " + to);
      continue;
    }
    TPUEMU_RETURN_IF_ERROR(mirror.Folder(host, to, st));
  }
  TPUEMU_RETURN_IF_ERROR(WriteAccounts(fresh + "/etc"));
  if (rename(base_dir.c_str(), old.c_str()) != 0 && errno != ENOENT) {
    return Status::Internal("rename " + base_dir + ": " + ErrnoText(errno));
  }
  if (rename(fresh.c_str(), base_dir.c_str()) != 0) {
    return Status::Internal("rename " + fresh + ": " + ErrnoText(errno));
  }
  return Wipe(old);
}

}  // namespace tpuemu::sandbox::internal
