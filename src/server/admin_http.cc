#include "server/admin_http.h"

#include <httplib.h>

#include <thread>

#include "db/database.h"
#include "keyviz/keyviz_page.h"
#include "keyviz/sampler.h"
#include "server/metrics_text.h"

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
  httplib::Server http;
  std::thread thread;
};

AdminHttpServer::AdminHttpServer(Database* db, keyviz::KeyVizSampler* keyviz) : impl_(std::make_unique<Impl>()) {
  auto& http = impl_->http;
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
  http.Get("/metrics", [db](const httplib::Request&, httplib::Response& res) {
    res.set_content(RenderMetrics(*db), "text/plain; version=0.0.4");
  });
  http.Post("/tablets/split", [db](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const TableSchema> table;
    TabletId id = 0;
    if (Status s = Target(*db, req, &table, &id); !s.ok()) return ReplyError(res, s);
    auto ids = db->SplitTablet(*table, id, std::nullopt, "manual (admin API)");
    if (!ids.ok()) return ReplyError(res, ids.status());
    Reply(res, 200, "{\"split\": " + std::to_string(id) + ", \"into\": [" + std::to_string(ids->first) + ", " +
                        std::to_string(ids->second) + "]}");
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
  auto& http = impl_->http;
  int bound = port == 0 ? http.bind_to_any_port(address) : (http.bind_to_port(address, port) ? port : -1);
  if (bound <= 0) return Status::IOError("admin HTTP: cannot bind " + address + ":" + std::to_string(port));
  port_ = static_cast<uint16_t>(bound);
  impl_->thread = std::thread([this] { impl_->http.listen_after_bind(); });
  return Status::OK();
}

void AdminHttpServer::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->http.stop();
  impl_->thread.join();
}

}  // namespace tessera::server
