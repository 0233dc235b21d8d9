#include "cluster/etcd_client.h"

#include <httplib.h>  // with CPPHTTPLIB_OPENSSL_SUPPORT (CMake): https to etcd
#include <openssl/evp.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "common/thread_name.h"

namespace tessera::cluster {
namespace {

using json = nlohmann::json;

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Unbase64(const std::string& text) {
  if (text.empty()) return {};
  std::string out(3 * text.size() / 4 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return {};
  size_t size = static_cast<size_t>(n);
  // EVP_DecodeBlock counts the padding's zero bytes; drop one per '='.
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;
  out.resize(size);
  return out;
}

// The gateway writes int64 fields as JSON strings and leaves zero fields out.
int64_t Int(const json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end()) return 0;
  if (it->is_string()) return std::stoll(it->get<std::string>());
  if (it->is_number_integer()) return it->get<int64_t>();
  return 0;
}

std::string Bytes(const json& j, const char* field) {
  auto it = j.find(field);
  return it == j.end() || !it->is_string() ? std::string() : Unbase64(it->get<std::string>());
}

EtcdKeyValue ParseKeyValue(const json& j) {
  EtcdKeyValue kv;
  kv.key = Bytes(j, "key");
  kv.value = Bytes(j, "value");
  kv.create_revision = Int(j, "create_revision");
  kv.mod_revision = Int(j, "mod_revision");
  kv.version = Int(j, "version");
  kv.lease = Int(j, "lease");
  return kv;
}

std::vector<EtcdKeyValue> ParseKvs(const json& j) {
  std::vector<EtcdKeyValue> kvs;
  if (auto it = j.find("kvs"); it != j.end() && it->is_array()) {
    for (const auto& kv : *it) kvs.push_back(ParseKeyValue(kv));
  }
  return kvs;
}

int64_t HeaderRevision(const json& j) {
  auto it = j.find("header");
  return it == j.end() ? 0 : Int(*it, "revision");
}

json RangeBody(const std::string& key, const std::string& range_end) {
  json body = {{"key", Base64(key)}};
  if (!range_end.empty()) body["range_end"] = Base64(range_end);
  return body;
}

json OpJson(const EtcdOp& op) {
  switch (op.type) {
    case EtcdOp::Type::kPut: {
      json put = {{"key", Base64(op.key)}, {"value", Base64(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return {{"request_put", put}};
    }
    case EtcdOp::Type::kDelete: return {{"request_delete_range", RangeBody(op.key, op.range_end)}};
    case EtcdOp::Type::kRange: return {{"request_range", RangeBody(op.key, op.range_end)}};
  }
  return {};
}

json CompareJson(const EtcdCompare& c) {
  static const char* kTargets[] = {"CREATE", "MOD", "VERSION", "VALUE"};
  static const char* kResults[] = {"EQUAL", "NOT_EQUAL", "GREATER", "LESS"};
  json j = {{"key", Base64(c.key)},
            {"target", kTargets[static_cast<int>(c.target)]},
            {"result", kResults[static_cast<int>(c.result)]}};
  switch (c.target) {
    case EtcdCompare::Target::kCreateRevision: j["create_revision"] = std::to_string(c.revision); break;
    case EtcdCompare::Target::kModRevision: j["mod_revision"] = std::to_string(c.revision); break;
    case EtcdCompare::Target::kVersion: j["version"] = std::to_string(c.revision); break;
    case EtcdCompare::Target::kValue: j["value"] = Base64(c.value); break;
  }
  return j;
}

Result<json> ParseBody(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("etcd answered with malformed JSON: " + body.substr(0, 200));
  return j;
}

}  // namespace

EtcdOp EtcdOp::Put(std::string key, std::string value, int64_t lease) {
  EtcdOp op;
  op.type = Type::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  op.lease = lease;
  return op;
}

EtcdOp EtcdOp::Delete(std::string key, std::string range_end) {
  EtcdOp op = Range(std::move(key), std::move(range_end));
  op.type = Type::kDelete;
  return op;
}

EtcdOp EtcdOp::Range(std::string key, std::string range_end) {
  EtcdOp op;
  op.type = Type::kRange;
  op.key = std::move(key);
  op.range_end = std::move(range_end);
  return op;
}

std::string EtcdPrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    unsigned char last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // etcd: "\0" as range_end means every key >= key
}

namespace {

// An HTTP(S) client of the endpoint, with its CA and client certificate.
std::unique_ptr<httplib::Client> HttpClientOf(const EtcdEndpoint& e) {
  auto client = e.certificate_file.empty()
                    ? std::make_unique<httplib::Client>(e.url)
                    : std::make_unique<httplib::Client>(e.url, e.certificate_file, e.private_key_file);
  if (!e.ca_file.empty()) {
    client->set_ca_cert_path(e.ca_file);
    client->enable_server_certificate_verification(true);
  }
  return client;
}

}  // namespace

EtcdClient::EtcdClient(EtcdEndpoint endpoint, int timeout_ms)
    : endpoint_(std::move(endpoint)), timeout_ms_(timeout_ms), http_(HttpClientOf(endpoint_)) {
  const auto timeout = std::chrono::milliseconds(timeout_ms_);
  http_->set_connection_timeout(timeout);
  http_->set_read_timeout(timeout);
  http_->set_write_timeout(timeout);
  http_->set_keep_alive(true);
}

EtcdClient::~EtcdClient() = default;

Result<std::string> EtcdClient::Post(const std::string& path, const std::string& body) {
  std::lock_guard<std::mutex> lock(mu_);
  auto res = http_->Post(path.c_str(), body, "application/json");
  if (!res) return Status::IOError("etcd at " + endpoint_.url + " unreachable (" + httplib::to_string(res.error()) + ")");
  if (res->status >= 500) return Status::IOError("etcd " + path + ": HTTP " + std::to_string(res->status) + " " + res->body);
  if (res->status >= 400) {
    return Status::InvalidArgument("etcd " + path + ": HTTP " + std::to_string(res->status) + " " + res->body);
  }
  return std::move(res->body);
}

Result<int64_t> EtcdClient::Put(const std::string& key, const std::string& value, int64_t lease) {
  json body = {{"key", Base64(key)}, {"value", Base64(value)}};
  if (lease != 0) body["lease"] = std::to_string(lease);
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/kv/put", body.dump()));
  TESSERA_ASSIGN_OR_RETURN(json j, ParseBody(text));
  return HeaderRevision(j);
}

Result<EtcdRangeResult> EtcdClient::Range(const std::string& key, const std::string& range_end) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/kv/range", RangeBody(key, range_end).dump()));
  TESSERA_ASSIGN_OR_RETURN(json j, ParseBody(text));
  EtcdRangeResult result;
  result.revision = HeaderRevision(j);
  result.kvs = ParseKvs(j);
  return result;
}

Result<int64_t> EtcdClient::Delete(const std::string& key, const std::string& range_end) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/kv/deleterange", RangeBody(key, range_end).dump()));
  TESSERA_ASSIGN_OR_RETURN(json j, ParseBody(text));
  return Int(j, "deleted");
}

Result<EtcdTxnResult> EtcdClient::Txn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
                                      const std::vector<EtcdOp>& failure) {
  json body = {{"compare", json::array()}, {"success", json::array()}, {"failure", json::array()}};
  for (const auto& c : compares) body["compare"].push_back(CompareJson(c));
  for (const auto& op : success) body["success"].push_back(OpJson(op));
  for (const auto& op : failure) body["failure"].push_back(OpJson(op));
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/kv/txn", body.dump()));
  TESSERA_ASSIGN_OR_RETURN(json j, ParseBody(text));
  EtcdTxnResult result;
  result.succeeded = j.value("succeeded", false);
  result.revision = HeaderRevision(j);
  if (auto it = j.find("responses"); it != j.end() && it->is_array()) {
    for (const auto& r : *it) {
      if (auto range = r.find("response_range"); range != r.end()) result.ranges.push_back(ParseKvs(*range));
    }
  }
  return result;
}

Result<int64_t> EtcdClient::LeaseGrant(int64_t ttl_seconds) {
  json body = {{"TTL", std::to_string(ttl_seconds)}};
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/lease/grant", body.dump()));
  TESSERA_ASSIGN_OR_RETURN(json j, ParseBody(text));
  const int64_t id = Int(j, "ID");
  if (id == 0) return Status::IOError("etcd granted no lease: " + text.substr(0, 200));
  return id;
}

Result<int64_t> EtcdClient::LeaseKeepAlive(int64_t lease) {
  json body = {{"ID", std::to_string(lease)}};
  TESSERA_ASSIGN_OR_RETURN(std::string text, Post("/v3/lease/keepalive", body.dump()));
  TESSERA_ASSIGN_OR_RETURN(json j, ParseBody(text));
  // The gateway streams keep-alive answers: {"result": {...}}; an expired
  // lease comes back without a TTL.
  const json& result = j.contains("result") ? j["result"] : j;
  const int64_t ttl = Int(result, "TTL");
  if (ttl <= 0) return Status::NotFound("etcd lease " + std::to_string(lease) + " expired");
  return ttl;
}

Status EtcdClient::LeaseRevoke(int64_t lease) {
  json body = {{"ID", std::to_string(lease)}};
  auto text = Post("/v3/lease/revoke", body.dump());
  return text.ok() ? Status::OK() : text.status();
}

EtcdWatch::EtcdWatch(EtcdEndpoint endpoint, std::string key, std::string range_end, int64_t start_revision,
                     EventsCallback on_events, std::function<void(int64_t)> on_compacted)
    : endpoint_(std::move(endpoint)),
      key_(std::move(key)),
      range_end_(std::move(range_end)),
      next_revision_(start_revision),
      on_events_(std::move(on_events)),
      on_compacted_(std::move(on_compacted)) {}

EtcdWatch::~EtcdWatch() { Stop(); }

void EtcdWatch::Start() {
  thread_ = std::thread([this] {
    SetCurrentThreadName("etcd-watch");
    Run();
  });
}

void EtcdWatch::Stop() {
  stopping_ = true;
  {
    std::lock_guard<std::mutex> lock(client_mu_);
    if (current_ != nullptr) current_->stop();
  }
  if (thread_.joinable()) thread_.join();
}

bool EtcdWatch::Consume(const std::string& line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return true;  // not a whole message; the stream goes on
  if (j.contains("error")) return false;                 // the gateway ended the stream; reconnect
  const json& result = j.contains("result") ? j["result"] : j;
  if (const int64_t compact = Int(result, "compact_revision"); compact > 0) {
    if (on_compacted_) on_compacted_(compact);
    stopping_ = true;
    return false;
  }
  auto events = result.find("events");
  if (events == result.end() || !events->is_array() || events->empty()) return true;
  std::vector<EtcdWatchEvent> batch;
  int64_t last = 0;
  for (const auto& e : *events) {
    EtcdWatchEvent event;
    event.type = e.value("type", std::string()) == "DELETE" ? EtcdWatchEvent::Type::kDelete : EtcdWatchEvent::Type::kPut;
    if (auto kv = e.find("kv"); kv != e.end()) event.kv = ParseKeyValue(*kv);
    last = std::max(last, event.kv.mod_revision);
    batch.push_back(std::move(event));
  }
  if (stopping_) return false;
  on_events_(batch, last);
  if (last >= next_revision_) next_revision_ = last + 1;
  return true;
}

void EtcdWatch::Run() {
  while (!stopping_) {
    auto owned = HttpClientOf(endpoint_);
    httplib::Client& client = *owned;
    client.set_connection_timeout(std::chrono::seconds(2));
    client.set_read_timeout(std::chrono::hours(24));  // a quiet watch is not a dead one; Stop ends it
    {
      std::lock_guard<std::mutex> lock(client_mu_);
      if (stopping_) break;
      current_ = &client;
    }
    json create = RangeBody(key_, range_end_);
    create["start_revision"] = std::to_string(next_revision_.load());
    httplib::Request req;
    req.method = "POST";
    req.path = "/v3/watch";
    req.body = json{{"create_request", create}}.dump();
    req.set_header("Content-Type", "application/json");
    std::string pending;
    req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
      pending.append(data, size);
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        if (!Consume(line)) return false;
      }
      // The gateway does not always end a message with a newline.
      if (!pending.empty() && json::accept(pending)) {
        std::string line;
        line.swap(pending);
        if (!Consume(line)) return false;
      }
      return !stopping_;
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    client.send(req, res, error);
    {
      std::lock_guard<std::mutex> lock(client_mu_);
      current_ = nullptr;
    }
    for (int i = 0; i < 4 && !stopping_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace tessera::cluster
