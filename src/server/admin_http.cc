#include "server/admin_http.h"

// CPPHTTPLIB_OPENSSL_SUPPORT comes from CMake (every user of httplib.h: Debian's
// libcpp-httplib is built with OpenSSL, and the header must agree everywhere).
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "auth/auth_service.h"
#include "auth/basic_credentials.h"
#include "coordinator/coordinator.h"
#include "db/database.h"
#include "keyviz/keyviz_page.h"
#include "keyviz/sampler.h"
#include "server/metrics_text.h"
#include "tracing/trace_store.h"

namespace tessera::server {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void Reply(httplib::Response& res, int status, const std::string& json) {
  res.status = status;
  res.set_content(json + "\n", "application/json");
}

void ReplyError(httplib::Response& res, const Status& s) {
  Reply(res, s.IsNotFound() ? 404 : 400, "{\"error\": " + JsonString(s.ToString()) + "}");
}

// A decimal number as strtoull reads one; false when empty or followed by anything.
bool ParseUnsigned(const std::string& text, unsigned long long* v) {
  char* end = nullptr;
  *v = std::strtoull(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0';
}

// The table and tablet a split or merge request names.
Status Target(Database& db, const httplib::Request& req, std::shared_ptr<const TableSchema>* table, TabletId* id) {
  for (const char* p : {"keyspace", "table", "tablet"}) {
    if (!req.has_param(p)) return Status::InvalidArgument(std::string("missing parameter ") + p);
  }
  TESSERA_ASSIGN_OR_RETURN(*table, db.GetTable(req.get_param_value("keyspace"), req.get_param_value("table")));
  const std::string text = req.get_param_value("tablet");
  unsigned long long v = 0;
  if (!ParseUnsigned(text, &v)) return Status::InvalidArgument("tablet must be a tablet id, got " + text);
  *id = v;
  return Status::OK();
}

}  // namespace

struct AdminHttpServer::Impl {
  std::unique_ptr<httplib::Server> http;  // an httplib::SSLServer with a certificate
  std::thread thread;
  std::mutex hooks_mu;
  AdminClusterHooks hooks;  // guarded by hooks_mu
  std::vector<std::pair<std::string, std::string>> settings;  // guarded by hooks_mu
  std::function<std::string()> front_door_metrics;            // guarded by hooks_mu
  tracing::TraceStore* traces = nullptr;                      // guarded by hooks_mu

  tracing::TraceStore* Traces() {
    std::lock_guard<std::mutex> lock(hooks_mu);
    return traces;
  }

  AdminClusterHooks Hooks() {
    std::lock_guard<std::mutex> lock(hooks_mu);
    return hooks;
  }
};

void AdminHttpServer::SetFrontDoorMetrics(std::function<std::string()> render) {
  std::lock_guard<std::mutex> lock(impl_->hooks_mu);
  impl_->front_door_metrics = std::move(render);
}

void AdminHttpServer::SetTraceStore(tracing::TraceStore* traces) {
  std::lock_guard<std::mutex> lock(impl_->hooks_mu);
  impl_->traces = traces;
}

void AdminHttpServer::SetClusterHooks(AdminClusterHooks hooks) {
  std::lock_guard<std::mutex> lock(impl_->hooks_mu);
  impl_->hooks = std::move(hooks);
}

void AdminHttpServer::SetSettings(std::vector<std::pair<std::string, std::string>> settings) {
  std::lock_guard<std::mutex> lock(impl_->hooks_mu);
  impl_->settings = std::move(settings);
}

namespace {

// With authentication on: every route but an open /metrics needs a
// superuser's HTTP Basic credentials (401 without or with wrong ones, 403
// for a role that is no superuser).
httplib::Server::HandlerResponse CheckCredentials(const AdminSecurity& security, const httplib::Request& req,
                                                  httplib::Response& res) {
  using R = httplib::Server::HandlerResponse;
  if (!security.auth || !security.auth->authentication_required()) return R::Unhandled;
  if (req.path == "/metrics" && !security.metrics_require_auth) return R::Unhandled;
  auto credentials = auth::ParseBasicAuthorization(req.get_header_value("Authorization"));
  Result<std::string> role = credentials.status();
  if (credentials.ok()) role = security.auth->Login(credentials->first, credentials->second, req.remote_addr);
  if (!role.ok()) {
    res.set_header("WWW-Authenticate", "Basic realm=\"tessera\", charset=\"UTF-8\"");
    Reply(res, 401, "{\"error\": " + JsonString(role.status().message()) + "}");
    return R::Handled;
  }
  if (!security.auth->IsSuperuser(*role)) {
    Reply(res, 403, "{\"error\": " + JsonString("role " + *role + " is not a superuser") + "}");
    return R::Handled;
  }
  return R::Unhandled;
}

}  // namespace

AdminHttpServer::AdminHttpServer(Coordinator* coordinator, keyviz::KeyVizSampler* keyviz, AdminSecurity security)
    : impl_(std::make_unique<Impl>()), security_(std::move(security)) {
  Database* db = &coordinator->database();
  if (!security_.certificate_file.empty()) {
    impl_->http = std::make_unique<httplib::SSLServer>(security_.certificate_file.c_str(),
                                                       security_.private_key_file.c_str());
  } else {
    impl_->http = std::make_unique<httplib::Server>();
  }
  auto& http = *impl_->http;
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return CheckCredentials(security_, req, res);
  });
  http.Get("/keyvisualizer", [keyviz](const httplib::Request&, httplib::Response& res) {
    if (!keyviz) return Reply(res, 404, "{\"error\": \"this server runs no Key Visualizer\"}");
    res.set_content(keyviz::KeyVizPageHtml(), "text/html; charset=utf-8");
  });
  http.Get("/keyvisualizer/data.json", [keyviz](const httplib::Request& req, httplib::Response& res) {
    if (!keyviz) return Reply(res, 404, "{\"error\": \"this server runs no Key Visualizer\"}");
    unsigned long long columns = 0;
    if (req.has_param("columns") && !ParseUnsigned(req.get_param_value("columns"), &columns)) {
      return ReplyError(res, Status::InvalidArgument("columns must be a number, got " + req.get_param_value("columns")));
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(keyviz->Json(req.get_param_value("table"), columns), "application/json");
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  http.Get("/metrics", [db, impl = impl_.get()](const httplib::Request&, httplib::Response& res) {
    std::string text = RenderMetrics(*db);
    std::function<std::string()> front_door;
    {
      std::lock_guard<std::mutex> lock(impl->hooks_mu);
      front_door = impl->front_door_metrics;
    }
    if (front_door) text += front_door();
    if (auto metrics = impl->Hooks().metrics) text += metrics();
    res.set_content(text, "text/plain; version=0.0.4");
  });
  http.Get("/settings", [impl = impl_.get()](const httplib::Request&, httplib::Response& res) {
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    {
      std::lock_guard<std::mutex> lock(impl->hooks_mu);
      for (const auto& [name, value] : impl->settings) settings[name] = value;
    }
    Reply(res, 200, settings.dump());
  });
  http.Post("/repair", [impl = impl_.get()](const httplib::Request& req, httplib::Response& res) {
    auto repair = impl->Hooks().repair;
    if (!repair) return Reply(res, 404, "{\"error\": \"this node is not part of a cluster: nothing to repair\"}");
    auto report = repair(req.get_param_value("keyspace"), req.get_param_value("table"));
    if (!report.ok()) return ReplyError(res, report.status());
    Reply(res, report->first ? 200 : 500, report->second);
  });
  http.Get("/cluster/status", [impl = impl_.get()](const httplib::Request&, httplib::Response& res) {
    auto status = impl->Hooks().status;
    if (!status) return Reply(res, 404, "{\"error\": \"this node is not part of a cluster\"}");
    auto json = status();
    if (!json.ok()) return Reply(res, 500, "{\"error\": " + JsonString(json.status().ToString()) + "}");
    Reply(res, 200, *json);
  });
  http.Get("/cluster/tablets", [impl = impl_.get()](const httplib::Request& req, httplib::Response& res) {
    auto tablets = impl->Hooks().tablets;
    if (!tablets) return Reply(res, 404, "{\"error\": \"this node is not part of a cluster\"}");
    if (req.has_param("table") && !req.has_param("keyspace")) {
      return ReplyError(res, Status::InvalidArgument("table needs keyspace"));
    }
    auto json = tablets(req.get_param_value("keyspace"), req.get_param_value("table"));
    if (!json.ok() && !json.status().IsNotFound() && !json.status().IsInvalidArgument()) {
      return Reply(res, 500, "{\"error\": " + JsonString(json.status().ToString()) + "}");
    }
    if (!json.ok()) return ReplyError(res, json.status());
    Reply(res, 200, *json);
  });
  http.Post("/tablets/move", [impl = impl_.get()](const httplib::Request& req, httplib::Response& res) {
    auto move = impl->Hooks().move;
    if (!move) return Reply(res, 404, "{\"error\": \"this node is not part of a cluster: nothing to move\"}");
    for (const char* p : {"keyspace", "table", "start", "from", "to"}) {
      if (!req.has_param(p)) return ReplyError(res, Status::InvalidArgument(std::string("missing parameter ") + p));
    }
    auto report = move(req.get_param_value("keyspace"), req.get_param_value("table"), req.get_param_value("start"),
                       req.get_param_value("from"), req.get_param_value("to"));
    if (!report.ok()) return ReplyError(res, report.status());
    Reply(res, report->first ? 200 : 500, report->second);
  });
  for (const char* path : {"/nodes/decommission", "/nodes/remove"}) {
    const bool remove = std::string(path) == "/nodes/remove";
    http.Post(path, [impl = impl_.get(), remove](const httplib::Request& req, httplib::Response& res) {
      auto hooks = impl->Hooks();
      auto leave = remove ? hooks.removenode : hooks.decommission;
      if (!leave) return Reply(res, 404, "{\"error\": \"this node is not part of a cluster\"}");
      if (!req.has_param("node")) return ReplyError(res, Status::InvalidArgument("missing parameter node"));
      auto report = leave(req.get_param_value("node"));
      if (!report.ok()) return ReplyError(res, report.status());
      Reply(res, report->first ? 200 : 500, report->second);
    });
  }
  http.Post("/failpoints", [impl = impl_.get()](const httplib::Request& req, httplib::Response& res) {
    auto failpoint = impl->Hooks().failpoint;
    if (!failpoint) return Reply(res, 404, "{\"error\": \"this node is not part of a cluster\"}");
    Status st = failpoint(req.get_param_value("name"), req.get_param_value("action"));
    if (!st.ok()) return ReplyError(res, st);
    Reply(res, 200, "{}");
  });
  http.Post("/tracing/probability", [impl = impl_.get()](const httplib::Request& req, httplib::Response& res) {
    tracing::TraceStore* traces = impl->Traces();
    if (!traces) return Reply(res, 404, "{\"error\": \"this server traces no requests\"}");
    const std::string text = req.get_param_value("value");
    char* end = nullptr;
    const double p = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      return ReplyError(res, Status::InvalidArgument("value must be a number between 0 and 1, got '" + text + "'"));
    }
    if (Status st = traces->set_probability(p); !st.ok()) return ReplyError(res, st);
    Reply(res, 200, nlohmann::json{{"probability", traces->probability()}}.dump());
  });
  http.Get("/tracing/probability", [impl = impl_.get()](const httplib::Request&, httplib::Response& res) {
    tracing::TraceStore* traces = impl->Traces();
    if (!traces) return Reply(res, 404, "{\"error\": \"this server traces no requests\"}");
    Reply(res, 200, nlohmann::json{{"probability", traces->probability()}}.dump());
  });
  http.Get("/failpoints", [impl = impl_.get()](const httplib::Request&, httplib::Response& res) {
    auto paused = impl->Hooks().paused_failpoints;
    if (!paused) return Reply(res, 404, "{\"error\": \"this node is not part of a cluster\"}");
    Reply(res, 200, nlohmann::json{{"paused", paused()}}.dump());
  });
  http.Post("/tablets/split", [db, coordinator](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const TableSchema> table;
    TabletId id = 0;
    if (Status s = Target(*db, req, &table, &id); !s.ok()) return ReplyError(res, s);
    auto ids = coordinator->SplitTablet(*table, id, std::nullopt, "manual (admin API)");
    if (!ids.ok()) return ReplyError(res, ids.status());
    Reply(res, 200, "{\"split\": " + std::to_string(id) + ", \"into\": [" + std::to_string(ids->first) + ", " +
                        std::to_string(ids->second) + "]}");
  });
  // nodetool compact: flush, then a full compaction (the only one that may purge partition and
  // range tombstones; storage/compaction_filter.h). Blocks until done.
  http.Post("/compact", [db](const httplib::Request&, httplib::Response& res) {
    if (Status s = db->Compact(); !s.ok()) return ReplyError(res, s);
    Reply(res, 200, "{\"compacted\": true}");
  });
  http.Post("/tablets/merge", [db](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const TableSchema> table;
    TabletId id = 0;
    if (Status s = Target(*db, req, &table, &id); !s.ok()) return ReplyError(res, s);
    auto merged = db->MergeTablets(*table, id, "manual (admin API)");
    if (!merged.ok()) return ReplyError(res, merged.status());
    Reply(res, 200, "{\"merged\": " + std::to_string(id) + ", \"into\": " + std::to_string(*merged) + "}");
  });
}

AdminHttpServer::~AdminHttpServer() { Stop(); }

Status AdminHttpServer::Start(const std::string& address, uint16_t port) {
  auto& http = *impl_->http;
  if (!http.is_valid()) return Status::InvalidArgument("admin HTTP: cannot load the TLS certificate or key");
  int bound = port == 0 ? http.bind_to_any_port(address) : (http.bind_to_port(address, port) ? port : -1);
  if (bound <= 0) return Status::IOError("admin HTTP: cannot bind " + address + ":" + std::to_string(port));
  port_ = static_cast<uint16_t>(bound);
  impl_->thread = std::thread([this] { impl_->http->listen_after_bind(); });
  return Status::OK();
}

void AdminHttpServer::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->http->stop();
  impl_->thread.join();
}

}  // namespace tessera::server
