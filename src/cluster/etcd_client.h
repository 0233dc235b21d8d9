// EtcdClient: the cluster's metadata store, spoken through etcd's v3 API over
// its JSON gateway (etcd's own grpc-gateway mapping of rpc.proto: POST
// /v3/kv/range, /v3/kv/put, /v3/kv/deleterange, /v3/kv/txn,
// /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke, /v3/watch), with
// cpp-httplib as the HTTP client. Keys and values are raw bytes here; the
// gateway's base64 and its int64-as-string numbers stay inside this file.
//
// Revisions are etcd's: the store's revision increases with every change;
// a key's create_revision is 0 when it does not exist, which is what a
// "create only if absent" transaction compares.
//
// TLS (issue 29): an https:// endpoint with a CA file verifies etcd's
// certificate (and its address); a certificate and key are presented as
// this client's (etcd's --client-cert-auth).
//
// Errors: IOError when etcd cannot be reached or answers 5xx;
// InvalidArgument for a 4xx answer (the gateway's message is kept);
// NotFound from LeaseKeepAlive when the lease has expired.
//
// Thread safety: EtcdClient is thread-safe (one HTTP connection under a
// mutex). EtcdWatch runs its own thread; Start and Stop from one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace httplib {
class Client;
}

namespace tessera::cluster {

// Where etcd is and how to speak to it. Converts from a plain URL.
struct EtcdEndpoint {
  std::string url;               // "http://host:port" or "https://host:port"
  std::string ca_file;           // PEM CA certificates etcd's certificate must chain to
  std::string certificate_file;  // PEM client certificate presented to etcd
  std::string private_key_file;  // its PEM private key
  EtcdEndpoint() = default;
  EtcdEndpoint(std::string u) : url(std::move(u)) {}  // NOLINT: a URL is an endpoint
  EtcdEndpoint(const char* u) : url(u) {}             // NOLINT
};

struct EtcdKeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;  // 0: not bound to a lease
};

struct EtcdRangeResult {
  int64_t revision = 0;  // the store's revision the range was read at
  std::vector<EtcdKeyValue> kvs;
};

// One condition of a transaction (etcd Compare): key's <target> <result> operand.
struct EtcdCompare {
  enum class Target { kCreateRevision, kModRevision, kVersion, kValue };
  enum class Result { kEqual, kNotEqual, kGreater, kLess };
  std::string key;
  Target target = Target::kModRevision;
  Result result = Result::kEqual;
  int64_t revision = 0;  // for the revision and version targets
  std::string value;     // for kValue
};

// One operation of a transaction branch.
struct EtcdOp {
  enum class Type { kPut, kDelete, kRange };
  Type type = Type::kPut;
  std::string key;
  std::string value;      // kPut
  std::string range_end;  // kDelete / kRange: empty for the single key
  int64_t lease = 0;      // kPut
  static EtcdOp Put(std::string key, std::string value, int64_t lease = 0);
  static EtcdOp Delete(std::string key, std::string range_end = {});
  static EtcdOp Range(std::string key, std::string range_end = {});
};

struct EtcdTxnResult {
  bool succeeded = false;
  int64_t revision = 0;
  // One entry per kRange operation of the branch that ran, in order.
  std::vector<std::vector<EtcdKeyValue>> ranges;
};

// The range_end that covers every key starting with `prefix` (etcd's
// "prefix + 1" rule).
std::string EtcdPrefixEnd(const std::string& prefix);

class EtcdClient {
 public:
  // endpoint: "http://host:port" (the client URL etcd advertises).
  // timeout_ms bounds connecting and every request.
  explicit EtcdClient(EtcdEndpoint endpoint, int timeout_ms = 3000);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  const std::string& endpoint() const { return endpoint_.url; }
  // Puts key = value (bound to `lease` when not 0); returns the new revision.
  Result<int64_t> Put(const std::string& key, const std::string& value, int64_t lease = 0);
  // Reads `key`, or [key, range_end) when range_end is not empty, in key order.
  Result<EtcdRangeResult> Range(const std::string& key, const std::string& range_end = {});
  // Deletes `key` or [key, range_end); returns how many keys went.
  Result<int64_t> Delete(const std::string& key, const std::string& range_end = {});
  // Runs `success` if every compare holds, else `failure`, atomically.
  Result<EtcdTxnResult> Txn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
                            const std::vector<EtcdOp>& failure = {});
  // Grants a lease of ttl_seconds; returns its id.
  Result<int64_t> LeaseGrant(int64_t ttl_seconds);
  // Renews the lease; returns its TTL in seconds. NotFound once it expired.
  Result<int64_t> LeaseKeepAlive(int64_t lease);
  // Revokes the lease, deleting every key bound to it.
  Status LeaseRevoke(int64_t lease);

 private:
  Result<std::string> Post(const std::string& path, const std::string& body);
  EtcdEndpoint endpoint_;
  int timeout_ms_;
  std::mutex mu_;
  std::unique_ptr<httplib::Client> http_;
};

struct EtcdWatchEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  EtcdKeyValue kv;  // for kDelete: key and mod_revision only
};

// A watch of [key, range_end) from start_revision, on a thread of its own:
// `on_events` gets every batch of changes in revision order. When the
// stream breaks (etcd restarted, connection lost) the watch reconnects from
// the revision after the last one it delivered, every 200 ms until Stop.
// If etcd has compacted that revision away, `on_compacted` is called with
// etcd's compact revision and the watch stops (the owner reloads and starts
// a new watch).
class EtcdWatch {
 public:
  using EventsCallback = std::function<void(const std::vector<EtcdWatchEvent>&, int64_t revision)>;
  EtcdWatch(EtcdEndpoint endpoint, std::string key, std::string range_end, int64_t start_revision,
            EventsCallback on_events, std::function<void(int64_t)> on_compacted = {});
  ~EtcdWatch();  // Stop()
  void Start();
  // Ends the stream and joins the thread; no callback runs after it returns.
  void Stop();

 private:
  void Run();
  bool Consume(const std::string& line);  // false: stop streaming
  EtcdEndpoint endpoint_;
  std::string key_, range_end_;
  std::atomic<int64_t> next_revision_;
  EventsCallback on_events_;
  std::function<void(int64_t)> on_compacted_;
  std::atomic<bool> stopping_{false};
  std::mutex client_mu_;
  httplib::Client* current_ = nullptr;  // the streaming client, for Stop
  std::thread thread_;
};

}  // namespace tessera::cluster
