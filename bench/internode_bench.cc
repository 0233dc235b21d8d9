// What one internode round trip costs on this machine (a benchmark, not a
// test; bench/RESULTS.md "What an internode round trip costs"): the
// node's own gRPC transport (cluster::InternodeClient -> InternodeServer,
// the callback API on both sides, as between two nodes) against the
// smallest asio TCP exchange of the same shape, both on loopback inside
// this one process, so that the CPU and context switches counted
// (getrusage of the process: user + system time, voluntary + involuntary
// switches) are both sides' of every call.
//
// Each transport keeps `--inflight` calls outstanding on one connection for
// `--seconds`: a call's answer sends the next. gRPC: the heartbeat RPC
// (Ping: a 16-byte host id, an empty answer; it is not coalesced into
// Batch messages). asio: 4-byte length + 16-byte body, echoed back; the
// server and the client each run an io_context on 2 threads, as the CQL
// server does on a 2-core node.
//
// Usage: internode_bench [--seconds N (5)] [--inflight N (8)]
// Prints one Markdown table row per transport.
#include <sys/resource.h>

#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/internode_client.h"
#include "cluster/internode_service.h"
#include "cluster/replica_service.h"
#include "db/database.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Usage {
  double cpu_seconds = 0;
  long switches = 0;
  static Usage Now() {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    Usage u;
    u.cpu_seconds = static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
                    static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
    u.switches = r.ru_nvcsw + r.ru_nivcsw;
    return u;
  }
};

// Keeps `inflight` calls going until the deadline; `start_call(done)` starts
// one call that runs `done` when it is answered (on any thread).
struct Loop {
  std::atomic<uint64_t> completed{0};
  std::atomic<int> outstanding{0};
  Clock::time_point deadline;
  std::mutex mu;
  std::condition_variable idle;
  std::function<void(std::function<void()>)> start_call;

  void Next() {
    start_call([this] {
      completed.fetch_add(1, std::memory_order_relaxed);
      if (Clock::now() < deadline) return Next();
      if (outstanding.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mu);
        idle.notify_all();
      }
    });
  }

  // Runs for `seconds` with `inflight` calls outstanding; prints a row.
  void Run(const char* name, double seconds, int inflight) {
    const Usage before = Usage::Now();
    const auto started = Clock::now();
    deadline = started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    outstanding = inflight;
    for (int i = 0; i < inflight; ++i) Next();
    {
      std::unique_lock<std::mutex> lock(mu);
      idle.wait(lock, [this] { return outstanding.load() == 0; });
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    const Usage after = Usage::Now();
    const double n = static_cast<double>(completed.load());
    std::printf("| %s | %d | %.0f | %.1f us | %.2f |\n", name, inflight, n / elapsed,
                (after.cpu_seconds - before.cpu_seconds) * 1e6 / n, static_cast<double>(after.switches - before.switches) / n);
    std::fflush(stdout);
  }
};

// The node's gRPC transport: Ping from an InternodeClient to an InternodeServer.
int RunGrpc(double seconds, int inflight) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_internode_bench." + std::to_string(getpid()));
  tessera::DatabaseOptions options;
  options.data_dir = dir.string();
  auto db = tessera::Database::Open(options);
  if (!db.ok()) {
    std::fprintf(stderr, "internode_bench: %s\n", db.status().ToString().c_str());
    return 1;
  }
  {
    tessera::cluster::ReplicaService replica(db->get());
    tessera::cluster::InternodeServer server(&replica);
    if (auto s = server.Start("127.0.0.1", 0); !s.ok()) {
      std::fprintf(stderr, "internode_bench: %s\n", s.ToString().c_str());
      return 1;
    }
    tessera::cluster::InternodeClient client;
    const std::string target = "127.0.0.1:" + std::to_string(server.port());
    const std::string host_id(16, 'h');
    std::atomic<uint64_t> failed{0};
    Loop loop;
    loop.start_call = [&](std::function<void()> done) {
      client.Ping(target, host_id, 5'000'000, [&failed, done = std::move(done)](tessera::Status s) {
        if (!s.ok()) failed.fetch_add(1);
        done();
      });
    };
    Loop warm;  // connects the channel first
    warm.start_call = loop.start_call;
    warm.deadline = Clock::now();
    warm.outstanding = 1;
    warm.Next();
    {
      std::unique_lock<std::mutex> lock(warm.mu);
      warm.idle.wait(lock, [&] { return warm.outstanding.load() == 0; });
    }
    loop.Run("gRPC callback API (the node's InternodeClient / InternodeServer, Ping)", seconds, inflight);
    server.Stop();
    if (failed.load() > 0) std::fprintf(stderr, "internode_bench: %llu failed calls\n", (unsigned long long)failed.load());
  }
  db->reset();
  std::filesystem::remove_all(dir);
  return 0;
}

// The asio echo: one connection, requests pipelined on it, answers in order.
class EchoClient {
 public:
  EchoClient(asio::io_context& io, uint16_t port) : socket_(io), strand_(asio::make_strand(io)) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
    socket_.set_option(asio::ip::tcp::no_delay(true));
  }
  // Sends one request; `done` runs when its answer is read.
  void Call(std::function<void()> done) {
    asio::dispatch(strand_, [this, done = std::move(done)]() mutable {
      waiting_.push_back(std::move(done));
      std::string frame(4 + 16, 'h');
      const uint32_t n = 16;
      std::memcpy(frame.data(), &n, 4);
      out_ += frame;
      if (!writing_) Write();
      if (!reading_) Read();
    });
  }
  void Close() {
    std::error_code ec;
    socket_.close(ec);
  }

 private:
  void Write() {
    writing_ = true;
    sending_ = std::move(out_);
    out_.clear();
    asio::async_write(socket_, asio::buffer(sending_), asio::bind_executor(strand_, [this](std::error_code ec, size_t) {
      writing_ = false;
      if (!ec && !out_.empty()) Write();
    }));
  }
  void Read() {
    reading_ = true;
    asio::async_read(socket_, asio::buffer(answer_), asio::bind_executor(strand_, [this](std::error_code ec, size_t) {
      reading_ = false;
      if (ec || waiting_.empty()) return;
      auto done = std::move(waiting_.front());
      waiting_.pop_front();
      if (!waiting_.empty()) Read();
      done();
    }));
  }

  asio::ip::tcp::socket socket_;
  asio::strand<asio::io_context::executor_type> strand_;
  std::deque<std::function<void()>> waiting_;
  std::string out_, sending_;
  std::array<char, 20> answer_{};
  bool writing_ = false, reading_ = false;
};

// Echoes each length-prefixed request back as soon as it is read.
class EchoSession : public std::enable_shared_from_this<EchoSession> {
 public:
  explicit EchoSession(asio::ip::tcp::socket socket) : socket_(std::move(socket)) {}
  void Start() { ReadHeader(); }

 private:
  void ReadHeader() {
    asio::async_read(socket_, asio::buffer(frame_, 4), [self = shared_from_this()](std::error_code ec, size_t) {
      if (ec) return;
      uint32_t n = 0;
      std::memcpy(&n, self->frame_.data(), 4);
      if (n > 16) return;
      asio::async_read(self->socket_, asio::buffer(self->frame_.data() + 4, n), [self](std::error_code ec, size_t n) {
        if (ec) return;
        std::error_code ignored;
        asio::write(self->socket_, asio::buffer(self->frame_.data(), 4 + n), ignored);
        self->ReadHeader();
      });
    });
  }
  asio::ip::tcp::socket socket_;
  std::array<char, 20> frame_{};
};

int RunAsio(double seconds, int inflight) {
  asio::io_context server_io, client_io;
  asio::ip::tcp::acceptor acceptor(server_io, {asio::ip::make_address("127.0.0.1"), 0});
  acceptor.async_accept([&](std::error_code ec, asio::ip::tcp::socket socket) {
    if (ec) return;
    socket.set_option(asio::ip::tcp::no_delay(true));
    std::make_shared<EchoSession>(std::move(socket))->Start();
  });
  auto server_work = asio::make_work_guard(server_io);
  auto client_work = asio::make_work_guard(client_io);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] { server_io.run(); });
    threads.emplace_back([&] { client_io.run(); });
  }
  {
    EchoClient client(client_io, acceptor.local_endpoint().port());
    Loop loop;
    loop.start_call = [&](std::function<void()> done) { client.Call(std::move(done)); };
    loop.Run("asio TCP, 4-byte length + 16 bytes echoed (2 threads a side)", seconds, inflight);
    client.Close();
  }
  server_io.stop();
  client_io.stop();
  for (auto& t : threads) t.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int inflight = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--inflight") == 0) inflight = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: internode_bench [--seconds N] [--inflight N]\n");
      return 2;
    }
  }
  if (seconds <= 0 || inflight < 1) {
    std::fprintf(stderr, "usage: internode_bench [--seconds N > 0] [--inflight N >= 1]\n");
    return 2;
  }
  std::printf("| transport | in flight | round trips/s | CPU per round trip (both sides) | context switches per round trip |\n");
  std::printf("|---|---|---|---|---|\n");
  if (int rc = RunGrpc(seconds, inflight); rc != 0) return rc;
  return RunAsio(seconds, inflight);
}
