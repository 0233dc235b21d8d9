// InMemoryNetwork: the internode network of several nodes in one process,
// for tests (issue 28 item 7): each node registers its ReplicaService
// (cluster/replica_service.h) under its internode endpoint ("address:port",
// as in its node record) and coordinates through the InternodeTransport
// (cluster/internode_transport.h) that Transport() gives it. Messages go
// through one delivery thread, in order of their due time, so a test can
// inject what a real network does to them, per direction of each link:
//   - delay_micros: every message (request or reply) on the link arrives
//     that much later;
//   - loss: the probability (0..1) that a message is lost;
//   - cut: every message is lost (a partition; Cut() cuts both ways).
// A lost request or reply is never answered: the caller's deadline ends the
// call with Busy ("timed out"), as with gRPC. A request delivered late is
// still served (a write may apply though its caller timed out), as on a
// real network. An endpoint nobody registered (a stopped node) answers
// IOError at once, as a refused connection does.
//
// Requests are served, and `done` callbacks run, on the delivery thread.
// Stop() (explicit; the destructor calls it) ends delivery: every call not
// yet answered gets IOError ("network stopped"), so each `done` runs
// exactly once. REQUIRES: transports and registered services are not used
// after Stop, and a service stays alive while registered.
//
// Thread safety: thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "cluster/internode_transport.h"

namespace tessera::cluster {

class ReplicaService;

class InMemoryNetwork {
 public:
  InMemoryNetwork();  // starts the delivery thread
  ~InMemoryNetwork();
  InMemoryNetwork(const InMemoryNetwork&) = delete;
  InMemoryNetwork& operator=(const InMemoryNetwork&) = delete;
  void Stop();

  void Register(const std::string& endpoint, ReplicaService* replica);
  // After it returns no request is being served by that endpoint's replica.
  void Unregister(const std::string& endpoint);

  struct Link {
    int64_t delay_micros = 0;
    double loss = 0;
    bool cut = false;
  };
  // What messages from `from` to `to` meet (one direction).
  void SetLink(const std::string& from, const std::string& to, Link link);
  // Cuts `a` and `b` apart, both ways.
  void Cut(const std::string& a, const std::string& b);
  // Every link back to a perfect one.
  void HealAll();
  // Messages lost so far (cut or by `loss`).
  uint64_t messages_lost() const;

  // The transport of the node at `self_endpoint`. REQUIRES: the network outlives it.
  std::unique_ptr<InternodeTransport> Transport(const std::string& self_endpoint);

  // Internal: a message from `from` to `to`; runs `deliver` on the delivery
  // thread when it arrives, or `lost` at `deadline_micros` when it does not
  // (cut, lost, or the target not registered: `unreachable` then, at once).
  void Send(const std::string& from, const std::string& to, int64_t deadline_micros,
            std::function<void(ReplicaService*)> deliver, std::function<void(Status)> failed);
  // Internal: a reply from `from` back to `to`: `arrive` when it gets there
  // by `deadline_micros`, else `failed` with Busy at the deadline.
  void Reply(const std::string& from, const std::string& to, int64_t deadline_micros, std::function<void()> arrive,
             std::function<void(Status)> failed);
  static int64_t NowMicros();

 private:
  // Whether a message on from -> to gets through, and its delay. REQUIRES: mu_ held.
  bool Passes(const std::string& from, const std::string& to, int64_t* delay_micros);
  // REQUIRES: mu_ held.
  void Schedule(int64_t due_micros, std::function<void()> run, std::function<void()> abort);
  // Under `lock` (of mu_): true while the network runs; else unlocks, fails the call and is false.
  bool Open(std::unique_lock<std::mutex>& lock, const std::function<void(Status)>& failed);
  // What a call's pending message does when Stop drops it.
  static std::function<void()> Aborter(std::function<void(Status)> failed);
  void Deliver();

  std::mutex serve_mu_;  // held while a request is served; before mu_
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, ReplicaService*> replicas_;         // by endpoint
  std::map<std::pair<std::string, std::string>, Link> links_;  // (from, to); absent: perfect
  std::mt19937_64 rng_{0x7e55e7a};
  uint64_t lost_ = 0;
  uint64_t seq_ = 0;
  struct Task {
    std::function<void()> run, abort;
  };
  std::map<std::pair<int64_t, uint64_t>, Task> queue_;  // by (due micros, sequence)
  std::thread thread_;
};

}  // namespace tessera::cluster
