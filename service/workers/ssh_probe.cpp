#include "service/workers/ssh_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tpuemu::service {

Result<std::string> ReadSshBanner(const std::string& ip, uint16_t port,
                                  std::chrono::milliseconds timeout) {
  const std::string where = ip + ":" + std::to_string(port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument("not an IPv4 address: " + ip);
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::Unavailable("socket: " + std::string(std::strerror(errno)));
  auto fail = [&](const std::string& what) {
    close(fd);
    return Status::Unavailable("SSH at " + where + ": " + what);
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto wait = [&](short events) -> bool {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    return poll(&p, 1, static_cast<int>(left.count())) == 1;
  };
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) return fail(std::strerror(errno));
    if (!wait(POLLOUT)) return fail("connect timed out");
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return fail(std::strerror(err));
  }
  std::string line;
  char buf[256];
  while (line.find('\n') == std::string::npos && line.size() < 1024) {
    if (!wait(POLLIN)) return fail("no identification line within the timeout");
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return fail("closed before its identification line");
    line.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  line = line.substr(0, line.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (!line.starts_with("SSH-"))
    return Status::Unavailable("SSH at " + where + ": got '" + line + "'");
  return line;
}

uint16_t ChooseSshPort(uint16_t wanted, std::string* note) {
  // An address no worker gets (the top of 127/8).
  auto try_bind = [](uint16_t port, uint16_t* bound, std::string* error) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.255.255.254", &addr.sin_addr);
    bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (!ok && error) *error = std::strerror(errno);
    if (ok) {
      socklen_t len = sizeof addr;
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
      *bound = ntohs(addr.sin_port);
    }
    close(fd);
    return ok;
  };
  uint16_t bound = 0;
  std::string error;
  if (try_bind(wanted, &bound, &error)) {
    if (note) *note = "workers answer SSH on port " + std::to_string(wanted);
    return wanted;
  }
  uint16_t fallback = 0;
  if (!try_bind(0, &fallback, nullptr)) fallback = 2222;
  if (note) {
    *note = "port " + std::to_string(wanted) + " cannot be had on loopback addresses (" + error +
            "): workers answer SSH on port " + std::to_string(fallback) +
            ", shown in networkEndpoints[].port";
  }
  return fallback;
}

int ClaimWorkerNetwork(int preferred) {
  mkdir("/run/tpuemu", 0755);
  for (int i = 0; i < 254; ++i) {
    const int n = (std::max(preferred, 1) - 1 + i) % 254 + 1;
    const std::string path = "/run/tpuemu/worker-net-" + std::to_string(n) + ".lock";
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return 0;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return n;  // fd stays open: the claim lasts
    close(fd);
  }
  return 0;
}

}  // namespace tpuemu::service
