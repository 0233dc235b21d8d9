// LocalEtcd: a real etcd (Debian etcd-server) for a test suite, on free
// loopback ports, in its own directory, stopped by its pid (kill -9) and its
// directory removed. A port taken between choosing it and etcd binding it
// (tests run two at a time) fails a start: Start tries three times, each on
// new ports, and waits at most 10 s for each to answer.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace tessera::testing {

class LocalEtcd {
 public:
  // True once an etcd answers; `dir` is made and holds its data and log.
  bool Start(const std::filesystem::path& dir);
  void Stop();  // idempotent
  ~LocalEtcd() { Stop(); }
  const std::string& endpoint() const { return endpoint_; }  // "http://127.0.0.1:PORT"

 private:
  bool StartOnce();
  std::filesystem::path dir_;
  std::string endpoint_;
  pid_t pid_ = 0;
};

// Two distinct free loopback ports (both bound before either is closed).
std::pair<int, int> FreeLoopbackPorts();

}  // namespace tessera::testing
