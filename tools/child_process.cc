#include "tools/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <thread>

namespace tessera {

Result<pid_t> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path) {
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return Status::IOError("cannot open " + log_path);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    return Status::IOError("fork failed");
  }
  if (pid == 0) {
    ::setsid();
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(args[0], args.data());
    const std::string msg = std::string("exec ") + args[0] + " failed\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(log);
  return pid;
}

bool ProcessAlive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const auto paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] != 'Z';
}

bool ProcessIs(pid_t pid, const std::string& name) {
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string argv0;
  std::getline(cmdline, argv0, '\0');
  return argv0.substr(argv0.rfind('/') + 1).find(name) != std::string::npos;
}

bool SignalAndWait(pid_t pid, int signal, int timeout_ms) {
  if (!ProcessAlive(pid)) return true;
  ::kill(pid, signal);
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (!ProcessAlive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !ProcessAlive(pid);
}

bool WaitForPort(const std::string& address, int port, int timeout_ms, pid_t alive) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) return false;
  for (int waited = 0; waited <= timeout_ms; waited += 100) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (fd >= 0) ::close(fd);
    if (ok) return true;
    if (alive > 0 && !ProcessAlive(alive)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string TailOfFile(const std::string& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += "  " + l + "\n";
  return out;
}

}  // namespace tessera
