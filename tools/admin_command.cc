#include "tools/admin_command.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tools/repair_command.h"

namespace tessera {
namespace {

struct AdminFlags {
  std::string admin = "127.0.0.1:9180";
  std::string username, password;
  std::string keyspace, table;
  std::string start, from, to;  // admin move
  std::string node;             // admin decommission
  std::string probability;      // admin settraceprobability
  bool json = false;
};

// GETs or POSTs `path` on the node; prints why and returns nullopt (with
// *exit_code set) when there is no JSON answer or the node answered an
// error (a move that did not complete answers 500 with its report: printed,
// exit code 1).
std::optional<nlohmann::json> Request(const AdminFlags& f, bool post, const std::string& path, int* exit_code) {
  const auto colon = f.admin.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "admin: --admin must be HOST:PORT, got " << f.admin << "\n";
    *exit_code = 2;
    return std::nullopt;
  }
  httplib::Client http(f.admin.substr(0, colon), std::atoi(f.admin.substr(colon + 1).c_str()));
  http.set_read_timeout(post ? 3600 : 60, 0);  // a move streams a tablet
  if (!f.username.empty()) http.set_basic_auth(f.username, f.password);
  auto res = post ? http.Post(path) : http.Get(path);
  if (!res) {
    std::cerr << "admin: no answer from " << f.admin << ": " << httplib::to_string(res.error()) << "\n";
    *exit_code = 2;
    return std::nullopt;
  }
  auto body = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (post && res->status == 500 && !body.is_discarded() && (body.contains("completed") || body.contains("left"))) {
    *exit_code = 1;
    return body;
  }
  if (res->status != 200 || body.is_discarded()) {
    std::cerr << "admin: " << f.admin << " answered " << res->status << ": " << res->body;
    *exit_code = body.is_discarded() ? 2 : 1;
    return std::nullopt;
  }
  *exit_code = 0;
  return body;
}

std::optional<nlohmann::json> Get(const AdminFlags& f, const std::string& path, int* exit_code) {
  return Request(f, /*post=*/false, path, exit_code);
}

std::optional<nlohmann::json> Post(const AdminFlags& f, const std::string& path, int* exit_code) {
  return Request(f, /*post=*/true, path, exit_code);
}

std::string HumanBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.2f %s", bytes, kUnits[unit]);
  return text;
}

// nodetool status's layout: one block per data center.
void PrintStatus(const nlohmann::json& status) {
  std::string dc;
  for (const auto& n : status["nodes"]) {
    if (n["data_center"] != dc) {
      dc = n["data_center"].get<std::string>();
      std::printf("Datacenter: %s\n%s\nStatus=Up/Down\n", dc.c_str(), std::string(12 + dc.size(), '=').c_str());
      std::printf("%-3s %-15s %-12s %-8s %-7s %-9s %-9s %-36s %s\n", "--", "Address", "Load", "Tablets", "Owns",
                  "Reads/s", "Writes/s", "Host ID", "Rack");
    }
    const std::string load = n["load_bytes"].is_null() ? "?" : HumanBytes(n["load_bytes"].get<double>());
    char owns[16];
    std::snprintf(owns, sizeof(owns), "%.1f%%", 100 * n["owns"].get<double>());
    auto rate = [](const nlohmann::json& v) {
      char text[24];
      std::snprintf(text, sizeof(text), "%.0f", v.is_number() ? v.get<double>() : 0.0);
      return v.is_number() ? std::string(text) : std::string("?");
    };
    std::printf("%-3s %-15s %-12s %-8llu %-7s %-9s %-9s %-36s %s\n", n["state"] == "up" ? "UN" : "DN",
                n["address"].get<std::string>().c_str(), load.c_str(),
                static_cast<unsigned long long>(n["tablets"].get<uint64_t>()), owns,
                rate(n.value("reads_per_second", nlohmann::json())).c_str(),
                rate(n.value("writes_per_second", nlohmann::json())).c_str(), n["host_id"].get<std::string>().c_str(),
                n["rack"].get<std::string>().c_str());
  }
}

std::string Short(const std::string& hex, const char* empty) {
  if (hex.empty()) return empty;
  return hex.size() > 16 ? hex.substr(0, 16) + ".." : hex;
}

void PrintTablets(const nlohmann::json& tablets) {
  std::printf("%-16s %-20s %-18s %-18s %-32s %s\n", "Keyspace", "Table", "Start", "End", "Replicas", "Migration");
  for (const auto& t : tablets["tablets"]) {
    std::string replicas;
    for (const auto& r : t["replicas"]) {
      replicas += (replicas.empty() ? "" : ", ") + r["address"].get<std::string>();
    }
    std::string migration;
    if (!t["transition"].is_null()) {
      const auto& tr = t["transition"];
      migration = tr["stage"].get<std::string>() + " " + tr["leaving"].get<std::string>() + " -> " +
                  tr["pending"].get<std::string>();
    }
    std::printf("%-16s %-20s %-18s %-18s %-32s %s\n", t["keyspace"].get<std::string>().c_str(),
                t["table"].get<std::string>().c_str(), Short(t["start"].get<std::string>(), "start").c_str(),
                Short(t["end"].get<std::string>(), "end").c_str(), replicas.c_str(), migration.c_str());
  }
  std::printf("%zu tablets\n", tablets["tablets"].size());
}

// What a decommission or removenode did: each move, then whether the node left.
void PrintLeave(const AdminFlags& f, const nlohmann::json& body) {
  if (f.json) {
    std::cout << body.dump(2) << "\n";
    return;
  }
  for (const auto& m : body["moves"]) {
    const auto& r = m["report"];
    std::printf("%s.%s %-18s -> %-15s %s (%llu keys)\n", m["keyspace"].get<std::string>().c_str(),
                m["table"].get<std::string>().c_str(), Short(m["start"].get<std::string>(), "start").c_str(),
                m["to"].get<std::string>().c_str(), r["completed"].get<bool>() ? "moved" : "NOT moved",
                static_cast<unsigned long long>(r["streamed_keys"].get<uint64_t>()));
  }
  std::printf("%s\n", body["left"].get<bool>() ? "the node left the cluster"
                                                : ("stopped: " + body["error"].get<std::string>()).c_str());
}

void AddConnectionFlags(CLI::App* cmd, AdminFlags* f) {
  cmd->add_option("--admin", f->admin, "HOST:PORT of a cluster node's admin port")->capture_default_str();
  cmd->add_option("-u,--username", f->username, "a superuser role, when the node has authentication on");
  cmd->add_option("-p,--password", f->password, "its password");
  cmd->add_flag("--json", f->json, "print the node's JSON answer");
}

}  // namespace

void AddAdminCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("admin", "nodetool-like commands through a cluster node's admin port");
  cmd->require_subcommand(1);
  auto flags = std::make_shared<AdminFlags>();

  auto* status = cmd->add_subcommand("status", "every node: state, load, tablet replicas (nodetool status)");
  AddConnectionFlags(status, flags.get());
  status->callback([flags, exit_code] {
    auto body = Get(*flags, "/cluster/status", exit_code);
    if (!body) return;
    if (flags->json) {
      std::cout << body->dump(2) << "\n";
    } else {
      PrintStatus(*body);
    }
  });

  auto* tablets = cmd->add_subcommand("tablets", "every placed tablet and its replicas");
  AddConnectionFlags(tablets, flags.get());
  tablets->add_option("--keyspace", flags->keyspace, "only this keyspace");
  tablets->add_option("--table", flags->table, "only this table (with --keyspace)")->needs("--keyspace");
  tablets->callback([flags, exit_code] {
    httplib::Params params;
    if (!flags->keyspace.empty()) params.emplace("keyspace", flags->keyspace);
    if (!flags->table.empty()) params.emplace("table", flags->table);
    auto body = Get(*flags, httplib::append_query_params("/cluster/tablets", params), exit_code);
    if (!body) return;
    if (flags->json) {
      std::cout << body->dump(2) << "\n";
    } else {
      PrintTablets(*body);
    }
  });

  auto* move = cmd->add_subcommand("move", "move one replica of a tablet to another node, online (tablet migration)");
  AddConnectionFlags(move, flags.get());
  move->add_option("--keyspace", flags->keyspace, "the table's keyspace")->required();
  move->add_option("--table", flags->table, "the table")->required();
  move->add_option("--start", flags->start, "the tablet's start as `admin tablets` prints it in full (--json); "
                                            "empty for the first tablet")->required();
  move->add_option("--from", flags->from, "the node giving up its replica (address or host id)")->required();
  move->add_option("--to", flags->to, "the node receiving it (address or host id)")->required();
  move->callback([flags, exit_code] {
    httplib::Params params{{"keyspace", flags->keyspace}, {"table", flags->table}, {"start", flags->start},
                           {"from", flags->from}, {"to", flags->to}};
    auto body = Post(*flags, httplib::append_query_params("/tablets/move", params), exit_code);
    if (!body) return;
    if (flags->json) {
      std::cout << body->dump(2) << "\n";
      return;
    }
    for (const auto& st : (*body)["stages"]) {
      std::printf("%-26s revision %-8lld barrier %.1f ms\n", st["stage"].get<std::string>().c_str(),
                  static_cast<long long>(st["revision"].get<int64_t>()), st["barrier_micros"].get<double>() / 1000);
    }
    std::printf("streamed %llu keys, %s in %.2f s\n",
                static_cast<unsigned long long>((*body)["streamed_keys"].get<uint64_t>()),
                HumanBytes((*body)["streamed_bytes"].get<double>()).c_str(),
                (*body)["streaming_micros"].get<double>() / 1e6);
    std::printf("%s\n", (*body)["completed"].get<bool>() ? "moved" : ("NOT moved: " + (*body)["error"].get<std::string>()).c_str());
  });

  struct Leaving {
    const char* name;
    const char* help;
    const char* path;
  };
  for (const Leaving& l : {Leaving{"decommission",
                                   "move every tablet replica a live node holds to the others, then remove it from "
                                   "the cluster (nodetool decommission)",
                                   "/nodes/decommission"},
                           Leaving{"removenode",
                                   "rebuild every tablet replica a dead node held on the others from the surviving "
                                   "replicas, then remove it from the cluster (nodetool removenode)",
                                   "/nodes/remove"}}) {
    auto* sub = cmd->add_subcommand(l.name, l.help);
    AddConnectionFlags(sub, flags.get());
    sub->add_option("--node", flags->node, "the node leaving (address or host id)")->required();
    sub->callback([flags, exit_code, path = std::string(l.path)] {
      auto body = Post(*flags, httplib::append_query_params(path, {{"node", flags->node}}), exit_code);
      if (body) PrintLeave(*flags, *body);
    });
  }

  auto* set_trace = cmd->add_subcommand("settraceprobability",
                                        "trace this share of the node's requests, 0 to 1 (nodetool "
                                        "settraceprobability); system_traces shows them");
  AddConnectionFlags(set_trace, flags.get());
  set_trace->add_option("probability", flags->probability, "0 (none, the default) to 1 (every request)")->required();
  set_trace->callback([flags, exit_code] {
    auto body = Post(*flags, httplib::append_query_params("/tracing/probability", {{"value", flags->probability}}),
                     exit_code);
    if (body && flags->json) std::cout << body->dump(2) << "\n";
  });
  auto* get_trace = cmd->add_subcommand("gettraceprobability", "the node's trace probability (nodetool "
                                                               "gettraceprobability)");
  AddConnectionFlags(get_trace, flags.get());
  get_trace->callback([flags, exit_code] {
    auto body = Get(*flags, "/tracing/probability", exit_code);
    if (!body) return;
    if (flags->json) {
      std::cout << body->dump(2) << "\n";
    } else {
      std::cout << "Current trace probability: " << (*body)["probability"].get<double>() << "\n";
    }
  });

  AddRepairCommand(*cmd, exit_code);
}

}  // namespace tessera
