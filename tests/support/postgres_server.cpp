#include "tests/support/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace fs = std::filesystem;
namespace {

constexpr char kUser[] = "tpuemu";
// Bump when the initdb flags change, so servers stop starting from older templates.
constexpr char kTemplateVersion[] = "v1";
constexpr auto kReadyDeadline = std::chrono::seconds(30);

// The newest /usr/lib/postgresql/<major>/bin holding initdb and postgres.
std::optional<fs::path> FindBinDir() {
  std::optional<fs::path> best;
  int best_major = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    fs::path bin = entry.path() / "bin";
    if (::access((bin / "initdb").c_str(), X_OK) != 0) continue;
    if (::access((bin / "postgres").c_str(), X_OK) != 0) continue;
    int major = std::atoi(entry.path().filename().c_str());
    if (major > best_major) {
      best_major = major;
      best = bin;
    }
  }
  return best;
}

// The last `lines` lines of a log file, or a note that it is missing.
std::string Tail(const fs::path& file, size_t lines = 30) {
  std::ifstream in(file);
  if (!in) return "(no " + file.string() + ")\n";
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (last.size() > lines) last.pop_front();
  }
  std::string out = "--- last lines of " + file.string() + " ---\n";
  for (const std::string& line : last) out += line + "\n";
  return out;
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// Runs argv with stdin /dev/null and stdout+stderr appended to `log`, as uid/gid when this process
// is root. A nonzero `death_signal` reaches the child when the thread that spawned it ends; it is
// set only from the main thread, whose end is the process's.
Result<pid_t> Spawn(std::vector<std::string> argv, const fs::path& log, uid_t uid, gid_t gid,
                    int death_signal) {
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return Status::Internal("cannot open " + log.string());
  std::vector<char*> cargv;
  for (std::string& arg : argv) cargv.push_back(arg.data());
  cargv.push_back(nullptr);
  bool drop_privileges = ::geteuid() == 0;
  if (::gettid() != ::getpid()) death_signal = 0;
  pid_t parent = ::getpid();
  // Between fork and exec only async-signal-safe calls: everything is prepared above.
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    // The server must not keep this process's sockets (a test's listener) open.
    ::close_range(3, ~0U, 0);
    if (drop_privileges &&
        (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)) {
      static constexpr char kMessage[] = "postgres_server: cannot drop root privileges\n";
      (void)!::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
      ::_exit(126);
    }
    // After setuid, which clears the parent-death signal.
    if (death_signal != 0) {
      ::prctl(PR_SET_PDEATHSIG, death_signal);
      if (::getppid() != parent) ::_exit(1);  // the parent died before prctl
    }
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(out);
  if (pid < 0) return Status::Internal("fork failed for " + argv[0]);
  return pid;
}

// The exit status of a finished child: its exit code, or -signal.
int ExitCode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status); }

// Copies a tree with its modes; chowns every copy to uid/gid when this process is root.
void CopyTree(const fs::path& from, const fs::path& to, uid_t uid, gid_t gid) {
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  if (::geteuid() != 0) return;
  std::error_code ec;
  (void)!::lchown(to.c_str(), uid, gid);
  for (const auto& entry : fs::recursive_directory_iterator(to, ec)) {
    (void)!::lchown(entry.path().c_str(), uid, gid);
  }
}

// $TMPDIR/tpuemu-postgres-templates-<euid>/<major>-<kTemplateVersion>, or nullopt when that
// folder cannot be made ours alone (someone else created it first).
std::optional<fs::path> TemplatePath(const fs::path& bin_dir) {
  fs::path cache =
      fs::temp_directory_path() / ("tpuemu-postgres-templates-" + std::to_string(::geteuid()));
  ::mkdir(cache.c_str(), 0700);
  struct stat st {};
  if (::lstat(cache.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0) {
    return std::nullopt;
  }
  return cache / (bin_dir.parent_path().filename().string() + "-" + kTemplateVersion);
}

struct ConnDeleter {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};

}  // namespace

std::string PostgresServer::UnavailableReason() {
  if (!FindBinDir()) {
    return "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (Debian package "
           "postgresql; scripts/setup installs it)";
  }
  if (::geteuid() == 0 && ::getpwnam("nobody") == nullptr) {
    return "running as root, and PostgreSQL refuses to: the server would run as user nobody, "
           "which does not exist here";
  }
  return "";
}

PostgresServer& PostgresServer::Shared() {
  // Started on first use; the destructor stops it at exit.
  static PostgresServer server;
  static const bool started = [] {
    auto start = std::chrono::steady_clock::now();
    Status status = server.Start();
    if (!status.ok()) {
      // The temp dir stays for a look: abort runs no destructor.
      std::fprintf(stderr, "postgres_server: cannot start PostgreSQL in %s: %s\n",
                   server.dir_.c_str(), status.message().c_str());
      std::abort();
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    std::fprintf(stderr, "postgres_server: PostgreSQL (%s) on 127.0.0.1:%d, %s, ready in %lld ms\n",
                 server.bin_dir_.c_str(), server.port_, server.dir_.c_str(),
                 static_cast<long long>(ms));
    return true;
  }();
  (void)started;
  return server;
}

Status PostgresServer::Start() {
  owner_pid_ = ::getpid();
  if (std::string why = UnavailableReason(); !why.empty()) return Status::FailedPrecondition(why);
  bin_dir_ = *FindBinDir();
  uid_ = ::geteuid();
  gid_ = ::getegid();
  if (uid_ == 0) {
    const passwd* nobody = ::getpwnam("nobody");
    uid_ = nobody->pw_uid;
    gid_ = nobody->pw_gid;
  }
  std::string pattern = (fs::temp_directory_path() / "tpuemu-postgres-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::Internal("cannot create a temp dir like " + pattern);
  }
  dir_ = pattern;
  if (::geteuid() == 0 && ::chown(dir_.c_str(), uid_, gid_) != 0) {
    return Status::Internal("cannot chown " + dir_.string() + " to nobody");
  }

  // Retries a port someone else took between FreePort and the server's bind, and a damaged
  // template (e.g. thinned out by a /tmp cleaner) with initdb's output instead.
  bool from_template = false;
  Status status = PrepareDataDir(&from_template);
  for (int attempt = 0; status.ok() && attempt < 4; ++attempt) {
    status = Launch();
    if (status.ok()) return status;
    if (status.message().find("Address already in use") != std::string::npos) continue;
    if (!from_template) return status;
    std::error_code ec;
    if (std::optional<fs::path> tmpl = TemplatePath(bin_dir_)) fs::remove_all(*tmpl, ec);
    fs::remove_all(dir_ / "data", ec);
    status = PrepareDataDir(&from_template);
  }
  return status;
}

// dir_/data: a copy of the cached template, or initdb's output (then cached as the template).
Status PostgresServer::PrepareDataDir(bool* from_template) {
  *from_template = false;
  fs::path data = dir_ / "data";
  std::optional<fs::path> tmpl = TemplatePath(bin_dir_);
  std::error_code ec;
  if (tmpl && fs::is_directory(*tmpl, ec)) {
    try {
      CopyTree(*tmpl, data, uid_, gid_);
      *from_template = true;
      return Status::Ok();
    } catch (const fs::filesystem_error&) {
      fs::remove_all(data, ec);  // fall back to initdb
    }
  }

  fs::path log = dir_ / "initdb.log";
  Result<pid_t> pid =
      Spawn({(bin_dir_ / "initdb").string(), "--pgdata=" + data.string(), "--auth=trust",
             std::string("--username=") + kUser, "--encoding=UTF8", "--locale=C", "--no-sync"},
            log, uid_, gid_, SIGTERM);
  if (!pid.ok()) return pid.status();
  int wait_status = 0;
  ::waitpid(*pid, &wait_status, 0);
  if (int code = ExitCode(wait_status); code != 0) {
    return Status::Internal("initdb exited with " + std::to_string(code) + "\n" + Tail(log));
  }
  if (tmpl) {
    // Another process may be caching the same template: copy aside, then rename atomically; the
    // loser's rename fails on the non-empty target and it drops its copy.
    fs::path aside = tmpl->string() + ".tmp-" + std::to_string(::getpid());
    try {
      CopyTree(data, aside, ::geteuid(), ::getegid());
      fs::rename(aside, *tmpl, ec);
    } catch (const fs::filesystem_error&) {
    }
    fs::remove_all(aside, ec);
  }
  return Status::Ok();
}

// Starts the postmaster on a free port and waits until it accepts connections.
Status PostgresServer::Launch() {
  port_ = FreePort();
  if (port_ == 0) return Status::Internal("no free port on 127.0.0.1");
  fs::path log = dir_ / "server.log";
  std::vector<std::string> argv = {(bin_dir_ / "postgres").string(),
                                   "-D",
                                   (dir_ / "data").string(),
                                   "-c",
                                   "listen_addresses=127.0.0.1",
                                   "-c",
                                   "port=" + std::to_string(port_),
                                   "-c",
                                   "unix_socket_directories=" + dir_.string()};
  // Benchmarks (bench/stores) measure PostgreSQL as deployed: every commit flushed to disk.
  const char* durable = std::getenv("TPUEMU_POSTGRES_DURABLE");
  if (durable == nullptr || std::string(durable) != "1") {
    argv.insert(argv.end(),
                {"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"});
  }
  Result<pid_t> pid = Spawn(argv, log, uid_, gid_, SIGQUIT);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;

  std::string conninfo = Conninfo("postgres");
  bool exited = false;
  int wait_status = 0;
  bool ready = WaitFor(
      [&] {
        if (::waitpid(pid_, &wait_status, WNOHANG) == pid_) return exited = true;
        return PQping(conninfo.c_str()) == PQPING_OK;
      },
      kReadyDeadline);
  if (exited) {
    pid_ = -1;
    return Status::Unavailable("the server exited with " + std::to_string(ExitCode(wait_status)) +
                               "\n" + Tail(log));
  }
  if (!ready) {
    Stop();
    return Status::DeadlineExceeded("the server did not accept connections on 127.0.0.1:" +
                                    std::to_string(port_) + " within 30 s\n" + Tail(log));
  }
  return Status::Ok();
}

void PostgresServer::Stop() {
  if (pid_ <= 0) return;
  // SIGQUIT is pg_ctl stop -m immediate: the data is thrown away anyway.
  ::kill(pid_, SIGQUIT);
  int wait_status = 0;
  if (!WaitFor([&] { return ::waitpid(pid_, &wait_status, WNOHANG) == pid_; },
               std::chrono::seconds(10))) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &wait_status, 0);
  }
  pid_ = -1;
}

PostgresServer::~PostgresServer() {
  // A forked child (death tests, crash tests) exiting normally must not stop its parent's server.
  if (owner_pid_ != ::getpid()) return;
  Stop();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string PostgresServer::CreateDatabase() {
  std::string name = "test_" + std::to_string(next_database_++);
  std::unique_ptr<PGconn, ConnDeleter> conn(PQconnectdb(Conninfo("postgres").c_str()));
  std::string error;
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    error = PQerrorMessage(conn.get());
  } else {
    std::unique_ptr<PGresult, ResultDeleter> result(
        PQexec(conn.get(), ("CREATE DATABASE " + name).c_str()));
    if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) error = PQerrorMessage(conn.get());
  }
  if (!error.empty()) {
    std::fprintf(stderr, "postgres_server: CREATE DATABASE %s failed: %s\n%s", name.c_str(),
                 error.c_str(), Tail(dir_ / "server.log").c_str());
    std::abort();
  }
  return Url(name);
}

std::string PostgresServer::Url(const std::string& database) const {
  return std::string("postgresql://") + kUser + "@127.0.0.1:" + std::to_string(port_) + "/" +
         database;
}

std::string PostgresServer::Conninfo(const std::string& database) const {
  // The server has no TLS or GSSAPI: skip libpq's attempts at both.
  return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=" + database + " user=" + kUser +
         " connect_timeout=5 sslmode=disable gssencmode=disable";
}

}  // namespace tpuemu::testing
