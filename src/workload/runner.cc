#include "workload/runner.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "keys/token.h"
#include "workload/token_ring.h"

namespace tessera::workload {
namespace {

using Clock = std::chrono::steady_clock;

int64_t Micros(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

struct Pending {
  Op op;
  int64_t due_micros = 0;
  bool second_step = false;
};

// One worker's loop: its own connection to its home node, and with token
// routing one to every node, each request sent to the node owning its
// partition's token. `next` hands out operations (false: no more).
struct Worker {
  const Workload* workload;
  const RunOptions* options;
  std::vector<std::unique_ptr<client::CqlConnection>> conns;  // one per host (or just the home one)
  std::vector<std::vector<cql::DecodedPrepared>> prepared;    // per connection, per statement
  size_t home = 0;
  const TokenRing* ring = nullptr;                 // null: every request goes home
  std::map<std::string, size_t> conn_of_address;  // with `ring`
  std::map<std::string, OpStats> stats;
  std::string first_error;
  uint64_t sent_home = 0, sent_routed = 0;
  mutable size_t ties = 0;  // Route's turn among equally busy replicas

  // The connection for statement `statement` bound to `values`.
  size_t Route(size_t statement, const std::vector<cql::WireValue>& values) const {
    if (ring == nullptr || ring->empty()) return home;
    std::vector<std::string_view> key;
    for (uint16_t i : prepared[home][statement].partition_key_indexes) {
      if (i >= values.size() || values[i].kind != cql::WireValue::Kind::kBytes) return home;
      key.push_back(values[i].bytes);
    }
    if (key.empty()) return home;
    // The worker's home node when it holds a replica (its pipeline stays full: at RF = nodes this is
    // the plain spread over nodes, measured faster than spreading each worker over all of them);
    // else the replica with the fewest requests in flight, ties taken in turn.
    const auto replicas =
        ring->Replicas(TokenOfPartitionKey(key), std::max(1, workload->options().replication_factor));
    const size_t first = ties++;
    size_t best = conns.size();
    for (size_t i = 0; i < replicas.size(); ++i) {
      auto it = conn_of_address.find(replicas[(first + i) % replicas.size()]);
      if (it == conn_of_address.end()) continue;
      if (it->second == home) return home;
      if (best == conns.size() || conns[it->second]->in_flight() < conns[best]->in_flight()) best = it->second;
    }
    return best == conns.size() ? home : best;
  }

  // The connections with requests in flight.
  std::vector<client::CqlConnection*> Busy() const {
    std::vector<client::CqlConnection*> busy;
    for (const auto& c : conns) {
      if (c->in_flight() > 0) busy.push_back(c.get());
    }
    return busy;
  }

  Status Run(const std::function<bool(Op*)>& next, Clock::time_point deadline, double rate_per_connection) {
    std::map<std::pair<size_t, int16_t>, Pending> inflight;  // (connection, stream)
    const auto start = Clock::now();
    int64_t scheduled = 0;
    bool more = true;
    for (;;) {
      while (more && inflight.size() < static_cast<size_t>(options->inflight)) {
        int64_t due = Micros(Clock::now());
        if (rate_per_connection > 0) {
          const auto at = start + std::chrono::microseconds(static_cast<int64_t>(scheduled * 1e6 / rate_per_connection));
          if (const auto now = Clock::now(); at > now) {
            if (inflight.empty()) {
              std::this_thread::sleep_until(at);
            } else {
              // Take a response that comes before the next request is due,
              // but send that request on time: blocking in Receive() until a
              // response came delayed every send behind the slowest request
              // in flight, which the latency from the due time then counted.
              const int64_t wait = std::chrono::duration_cast<std::chrono::microseconds>(at - now).count();
              auto busy = Busy();
              TESSERA_ASSIGN_OR_RETURN(size_t ready, client::CqlConnection::WaitForAny(busy, wait));
              if (ready < busy.size()) break;
            }
          }
          due = Micros(at);
        }
        if (Clock::now() >= deadline) {
          more = false;
          break;
        }
        Op op;
        if (!next(&op)) {
          more = false;
          break;
        }
        ++scheduled;
        TESSERA_RETURN_IF_ERROR(Send(Pending{std::move(op), due, false}, &inflight));
      }
      if (inflight.empty()) {
        if (!more) return Status::OK();
        continue;
      }
      // One connection waiting (always, on one node): read it directly, as before routing, without a
      // poll first; Receive has the request time-out.
      size_t index = 0;
      if (conns.size() > 1) {
        auto busy = Busy();
        size_t ready = 0;
        if (busy.size() > 1) {
          TESSERA_ASSIGN_OR_RETURN(ready, client::CqlConnection::WaitForAny(
                                              busy, int64_t{options->client.request_timeout_ms} * 1000));
          if (ready == busy.size()) return Status::IOError("no response within the request time-out");
        }
        while (conns[index].get() != busy[ready]) ++index;
      }
      TESSERA_ASSIGN_OR_RETURN(auto r, conns[index]->Receive());
      auto it = inflight.find({index, r.stream});
      if (it == inflight.end()) continue;
      Pending p = std::move(it->second);
      inflight.erase(it);
      OpStats& s = stats[OpName(p.op.kind)];
      if (r.decoded.is_error()) {
        ++s.errors;
        if (first_error.empty()) first_error = client::ServerErrorStatus(r.decoded).ToString();
        continue;
      }
      if (p.op.kind == OpKind::kReadModifyWrite && !p.second_step) {
        p.second_step = true;
        TESSERA_RETURN_IF_ERROR(Send(std::move(p), &inflight));
        continue;
      }
      s.latency.Record(Micros(Clock::now()) - p.due_micros);
    }
  }

  Status Send(Pending p, std::map<std::pair<size_t, int16_t>, Pending>* inflight) {
    cql::QueryParameters params;
    const size_t statement = p.second_step ? p.op.then_statement : p.op.statement;
    params.values = p.second_step ? p.op.then_values : p.op.values;
    params.skip_metadata = true;
    params.consistency = options->consistency;
    const size_t c = Route(statement, params.values);
    ++(c == home ? sent_home : sent_routed);
    TESSERA_ASSIGN_OR_RETURN(int16_t stream,
                             conns[c]->Send(cql::ExecuteRequest{prepared[c][statement].id, std::move(params)}));
    inflight->emplace(std::make_pair(c, stream), std::move(p));
    return Status::OK();
  }
};

Result<std::unique_ptr<client::CqlConnection>> ConnectAndPrepare(const Workload& w, client::ClientOptions target,
                                                                 std::vector<cql::DecodedPrepared>* prepared) {
  TESSERA_ASSIGN_OR_RETURN(auto c, client::CqlConnection::Connect(target));
  for (const auto& cql : w.statements()) {
    TESSERA_ASSIGN_OR_RETURN(auto p, c->Prepare(cql));
    prepared->push_back(std::move(p));
  }
  return c;
}

Result<RunResult> Execute(const Workload& w, const RunOptions& o, const std::string& phase,
                          const std::function<std::function<bool(Op*)>(int worker)>& source) {
  // Token routing needs several nodes; the ring is read after the phase's DDL, once per phase.
  std::optional<TokenRing> ring;
  if (o.token_aware && o.hosts.size() > 1) {
    client::ClientOptions first = o.client;
    first.host = o.hosts[0];
    TESSERA_ASSIGN_OR_RETURN(auto c, client::CqlConnection::Connect(first));
    TESSERA_ASSIGN_OR_RETURN(ring, TokenRing::Read(*c, first.host));
  }
  std::vector<Worker> workers(static_cast<size_t>(std::max(1, o.connections)));
  for (size_t i = 0; i < workers.size(); ++i) {
    Worker& worker = workers[i];
    worker.workload = &w;
    worker.options = &o;
    std::vector<std::string> hosts = o.hosts.empty() ? std::vector<std::string>{o.client.host} : o.hosts;
    worker.home = i % hosts.size();
    if (!ring) hosts = {hosts[worker.home]};
    for (size_t h = 0; h < hosts.size(); ++h) {
      client::ClientOptions target = o.client;
      target.host = hosts[h];
      worker.prepared.emplace_back();
      TESSERA_ASSIGN_OR_RETURN(auto c, ConnectAndPrepare(w, target, &worker.prepared.back()));
      worker.conns.push_back(std::move(c));
      if (ring) worker.conn_of_address[hosts[h]] = h;
    }
    if (!ring) worker.home = 0;
    worker.ring = ring ? &*ring : nullptr;
  }
  const auto start = Clock::now();
  const auto deadline = o.operations > 0 || phase == "load"
                            ? Clock::time_point::max()
                            : start + std::chrono::microseconds(static_cast<int64_t>(o.seconds * 1e6));
  const double rate = o.target_ops_per_second > 0 ? o.target_ops_per_second / static_cast<double>(workers.size()) : 0;
  std::vector<std::thread> threads;
  std::vector<Status> statuses(workers.size());
  for (size_t i = 0; i < workers.size(); ++i) {
    threads.emplace_back([&, i] { statuses[i] = workers[i].Run(source(static_cast<int>(i)), deadline, rate); });
  }
  for (auto& t : threads) t.join();
  RunResult r;
  r.phase = phase;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  uint64_t routed = 0, total = 0;
  for (size_t i = 0; i < workers.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(statuses[i]);
    for (auto& [name, s] : workers[i].stats) {
      r.by_op[name].latency.Merge(s.latency);
      r.by_op[name].errors += s.errors;
      r.all.Merge(s.latency);
      r.errors += s.errors;
    }
    if (r.first_error.empty()) r.first_error = workers[i].first_error;
    routed += workers[i].sent_routed;
    total += workers[i].sent_routed + workers[i].sent_home;
  }
  r.operations = r.all.count();
  r.token_aware = ring.has_value();
  r.routed_share = total > 0 ? static_cast<double>(routed) / static_cast<double>(total) : 0;
  return r;
}

}  // namespace

Result<RunResult> LoadPhase(const Workload& w, const RunOptions& o) {
  TESSERA_ASSIGN_OR_RETURN(auto conn, client::CqlConnection::Connect(o.client));
  for (const auto& ddl : w.ddl()) TESSERA_RETURN_IF_ERROR(conn->Query(ddl).status());
  conn.reset();
  std::atomic<int64_t> next{0};
  const int64_t total = w.options().record_count;
  return Execute(w, o, "load", [&](int worker) {
    auto rng = std::make_shared<std::mt19937_64>(0x10AD + static_cast<uint64_t>(worker));
    return std::function<bool(Op*)>([&, rng](Op* op) {
      const int64_t n = next.fetch_add(1);
      if (n >= total) return false;
      *op = w.LoadOp(n, *rng);
      return true;
    });
  });
}

Result<RunResult> RunPhase(const Workload& w, const RunOptions& o) {
  TESSERA_ASSIGN_OR_RETURN(auto conn, client::CqlConnection::Connect(o.client));
  for (const auto& ddl : w.ddl()) TESSERA_RETURN_IF_ERROR(conn->Query(ddl).status());
  conn.reset();
  InsertCounter inserts(w.options().record_count);
  std::atomic<int64_t> issued{0};
  return Execute(w, o, "run", [&](int worker) {
    auto chooser = std::make_shared<Chooser>(w.NewChooser(0xBE7C + static_cast<uint64_t>(worker), &inserts));
    return std::function<bool(Op*)>([&, chooser](Op* op) {
      if (o.operations > 0 && issued.fetch_add(1) >= o.operations) return false;
      *op = w.NextOp(*chooser);
      return true;
    });
  });
}

std::string FormatText(const RunResult& r) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "[%s] %llu operations in %.2f s: %.0f ops/s, %llu errors\n", r.phase.c_str(),
                static_cast<unsigned long long>(r.operations), r.seconds, r.ops_per_second(),
                static_cast<unsigned long long>(r.errors));
  out += line;
  out += "  op                    count     ops/s   mean_us    p50_us    p95_us    p99_us  p99.9_us    max_us\n";
  for (const auto& [name, s] : r.by_op) {
    const auto& l = s.latency;
    std::snprintf(line, sizeof line, "  %-18s %9llu %9.0f %9.0f %9lld %9lld %9lld %9lld %9lld\n", name.c_str(),
                  static_cast<unsigned long long>(l.count()), r.seconds > 0 ? l.count() / r.seconds : 0.0, l.mean(),
                  static_cast<long long>(l.Percentile(50)), static_cast<long long>(l.Percentile(95)),
                  static_cast<long long>(l.Percentile(99)), static_cast<long long>(l.Percentile(99.9)),
                  static_cast<long long>(l.max()));
    out += line;
  }
  if (r.token_aware) {
    std::snprintf(line, sizeof line, "  routed by token: %.0f%% of requests went to a node other than their worker's home\n",
                  r.routed_share * 100);
    out += line;
  }
  if (!r.first_error.empty()) out += "  first error: " + r.first_error + "\n";
  return out;
}

std::string FormatJson(const std::vector<RunResult>& results, const std::string& description, const RunOptions& o) {
  nlohmann::json j;
  j["workload"] = description;
  j["connections"] = o.connections;
  j["inflight"] = o.inflight;
  j["consistency"] = cql::ConsistencyName(o.consistency);
  j["nodes"] = o.hosts.empty() ? 1 : o.hosts.size();
  j["token_aware"] = !results.empty() && results.back().token_aware;
  j["target_ops_per_second"] = o.target_ops_per_second;
  for (const auto& r : results) {
    nlohmann::json phase = {{"phase", r.phase},        {"seconds", r.seconds}, {"operations", r.operations},
                            {"ops_per_second", r.ops_per_second()}, {"errors", r.errors},
                            {"routed_share", r.routed_share}};
    auto stats = [](const LatencyRecorder& l) {
      return nlohmann::json{{"count", l.count()},           {"mean_us", l.mean()},
                            {"p50_us", l.Percentile(50)},   {"p95_us", l.Percentile(95)},
                            {"p99_us", l.Percentile(99)},   {"p999_us", l.Percentile(99.9)},
                            {"max_us", l.max()}};
    };
    phase["all"] = stats(r.all);
    for (const auto& [name, s] : r.by_op) {
      phase["operations_by_type"][name] = stats(s.latency);
      phase["operations_by_type"][name]["errors"] = s.errors;
    }
    j["phases"].push_back(phase);
  }
  return j.dump(2);
}

}  // namespace tessera::workload
