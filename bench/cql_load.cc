// cql_load: a closed-loop load generator over the CQL native protocol v4.
//
// Opens --connections connections to a server, keeps --inflight prepared
// requests in flight on each (stream ids), and runs two phases of
// --seconds each: prepared single-row INSERTs of a --value-bytes value at
// random keys of --keys, then prepared point SELECTs of those keys. Prints
// ops/s and latency percentiles (microseconds) per phase. Results:
// bench/RESULTS.md; runner: bench/run_cql_bench.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/bytes.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/wire.h"

using namespace tessera;
using namespace tessera::cql;
using Clock = std::chrono::steady_clock;

namespace {

class Conn {
 public:
  bool Open(const std::string& host, int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    return connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Conn() { if (fd_ >= 0) close(fd_); }
  void Send(int16_t stream, Opcode op, const std::string& body) {
    std::string f;
    f.push_back(0x04);
    f.push_back(0);
    PutBigEndian16(&f, static_cast<uint16_t>(stream));
    f.push_back(static_cast<char>(op));
    PutBigEndian32(&f, static_cast<uint32_t>(body.size()));
    f += body;
    out_ += f;
  }
  bool Flush() {
    size_t off = 0;
    while (off < out_.size()) {
      ssize_t n = send(fd_, out_.data() + off, out_.size() - off, 0);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    out_.clear();
    return true;
  }
  // Reads one response frame; returns its stream (or INT32_MIN on error) and opcode.
  int Read(uint8_t* opcode, std::string* body) {
    while (true) {
      if (in_.size() >= 9) {
        uint32_t len = GetBigEndian32(in_.data() + 5);
        if (in_.size() >= 9 + len) {
          int stream = static_cast<int16_t>(GetBigEndian16(in_.data() + 2));
          *opcode = static_cast<uint8_t>(in_[4]);
          body->assign(in_, 9, len);
          in_.erase(0, 9 + len);
          return stream;
        }
      }
      char buf[65536];
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return INT32_MIN;
      in_.append(buf, static_cast<size_t>(n));
    }
  }
  // Sends one request and waits for its answer (setup only).
  bool Call(Opcode op, const std::string& body, std::string* reply) {
    Send(0, op, body);
    if (!Flush()) return false;
    uint8_t opc;
    if (Read(&opc, reply) == INT32_MIN) return false;
    if (opc == static_cast<uint8_t>(Opcode::kError)) {
      std::fprintf(stderr, "server error: %s\n", reply->substr(6).c_str());
      return false;
    }
    return true;
  }

 private:
  int fd_ = -1;
  std::string out_, in_;
};

std::string Startup() {
  WireWriter w;
  w.Short(1);
  w.String("CQL_VERSION");
  w.String("3.0.0");
  return w.Take();
}

std::string Query(const std::string& q) {
  WireWriter w;
  w.LongString(q);
  w.Short(1);
  w.Byte(0);
  return w.Take();
}

std::string Execute(const std::string& id, const std::vector<std::string>& values) {
  WireWriter w;
  w.ShortBytes(id);
  w.Short(1);  // ONE
  w.Byte(0x01);
  w.Short(static_cast<uint16_t>(values.size()));
  for (const auto& v : values) w.Bytes(v);
  return w.Take();
}

std::string PreparedIdOf(const std::string& result) {
  WireReader r(result);
  int32_t kind;
  std::string id;
  r.Int(&kind);
  r.ShortBytes(&id);
  return id;
}

std::string Bigint(int64_t v) {
  std::string b;
  PutBigEndian64(&b, static_cast<uint64_t>(v));
  return b;
}

struct Phase {
  std::vector<int64_t> latencies_us;
  uint64_t ops = 0, errors = 0;
  double seconds = 0;
};

void RunPhase(const std::string& host, int port, int connections, int inflight, double seconds, const std::string& id,
              bool insert, int64_t keys, const std::string& value, Phase* out) {
  std::vector<std::thread> threads;
  std::vector<Phase> per(static_cast<size_t>(connections));
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration<double>(seconds);
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      Conn conn;
      std::string reply;
      if (!conn.Open(host, port) || !conn.Call(Opcode::kStartup, Startup(), &reply)) {
        per[static_cast<size_t>(c)].errors++;
        return;
      }
      std::mt19937_64 rng(static_cast<uint64_t>(c) * 7919 + 1);
      std::vector<Clock::time_point> sent(static_cast<size_t>(inflight));
      auto issue = [&](int stream) {
        int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(keys));
        std::vector<std::string> vals = insert ? std::vector<std::string>{Bigint(k), value}
                                               : std::vector<std::string>{Bigint(k)};
        sent[static_cast<size_t>(stream)] = Clock::now();
        conn.Send(static_cast<int16_t>(stream), Opcode::kExecute, Execute(id, vals));
      };
      for (int s = 0; s < inflight; ++s) issue(s);
      conn.Flush();
      int outstanding = inflight;
      auto& mine = per[static_cast<size_t>(c)];
      while (outstanding > 0) {
        uint8_t opc;
        std::string body;
        int stream = conn.Read(&opc, &body);
        if (stream == INT32_MIN) {
          mine.errors++;
          return;
        }
        auto now = Clock::now();
        mine.latencies_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(now - sent[static_cast<size_t>(stream)]).count());
        if (opc == static_cast<uint8_t>(Opcode::kError)) mine.errors++;
        mine.ops++;
        if (now < deadline) {
          issue(stream);
          conn.Flush();
        } else {
          --outstanding;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  out->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& p : per) {
    out->ops += p.ops;
    out->errors += p.errors;
    out->latencies_us.insert(out->latencies_us.end(), p.latencies_us.begin(), p.latencies_us.end());
  }
}

void Report(const char* name, Phase& p) {
  std::sort(p.latencies_us.begin(), p.latencies_us.end());
  auto pct = [&](double q) {
    if (p.latencies_us.empty()) return int64_t{0};
    return p.latencies_us[std::min(p.latencies_us.size() - 1, static_cast<size_t>(q * static_cast<double>(p.latencies_us.size())))];
  };
  std::printf("%-6s ops=%llu errors=%llu ops/s=%.0f p50_us=%lld p95_us=%lld p99_us=%lld p999_us=%lld\n", name,
              static_cast<unsigned long long>(p.ops), static_cast<unsigned long long>(p.errors),
              static_cast<double>(p.ops) / p.seconds, static_cast<long long>(pct(0.50)), static_cast<long long>(pct(0.95)),
              static_cast<long long>(pct(0.99)), static_cast<long long>(pct(0.999)));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cql_load: prepared 1 KB INSERT / SELECT load over the CQL native protocol"};
  std::string host = "127.0.0.1";
  int port = 9042, connections = 4, inflight = 32, value_bytes = 1000;
  double seconds = 10;
  int64_t keys = 100000;
  app.add_option("--host", host);
  app.add_option("--port", port);
  app.add_option("--connections", connections);
  app.add_option("--inflight", inflight, "requests in flight per connection");
  app.add_option("--seconds", seconds, "per phase");
  app.add_option("--keys", keys);
  app.add_option("--value-bytes", value_bytes);
  CLI11_PARSE(app, argc, argv);

  Conn setup;
  std::string reply;
  if (!setup.Open(host, port) || !setup.Call(Opcode::kStartup, Startup(), &reply)) {
    std::fprintf(stderr, "cannot connect to %s:%d\n", host.c_str(), port);
    return 1;
  }
  setup.Call(Opcode::kQuery, Query("CREATE KEYSPACE IF NOT EXISTS bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"), &reply);
  setup.Call(Opcode::kQuery, Query("CREATE TABLE IF NOT EXISTS bench.kv (k bigint PRIMARY KEY, v blob)"), &reply);
  WireWriter p1, p2;
  p1.LongString("INSERT INTO bench.kv (k, v) VALUES (?, ?)");
  p2.LongString("SELECT v FROM bench.kv WHERE k = ?");
  if (!setup.Call(Opcode::kPrepare, p1.Take(), &reply)) return 1;
  std::string insert_id = PreparedIdOf(reply);
  if (!setup.Call(Opcode::kPrepare, p2.Take(), &reply)) return 1;
  std::string select_id = PreparedIdOf(reply);
  std::string value(static_cast<size_t>(value_bytes), 'x');

  Phase writes, reads;
  RunPhase(host, port, connections, inflight, seconds, insert_id, true, keys, value, &writes);
  Report("INSERT", writes);
  RunPhase(host, port, connections, inflight, seconds, select_id, false, keys, value, &reads);
  Report("SELECT", reads);
  return writes.errors + reads.errors > 0 ? 1 : 0;
}
