#include "tools/repair_command.h"

#include <iostream>
#include <memory>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace tessera {
namespace {

struct RepairFlags {
  std::string admin = "127.0.0.1:9180";
  std::string keyspace, table;
  std::string username, password;
  bool json = false;
};

std::string Short(const std::string& hex) { return hex.size() > 16 ? hex.substr(0, 16) + "..." : hex; }

void PrintReport(const nlohmann::json& report) {
  for (const auto& t : report["tablets"]) {
    std::cout << t["keyspace"].get<std::string>() << "." << t["table"].get<std::string>() << " ["
              << Short(t["start"].get<std::string>()) << ", "
              << (t["end"].get<std::string>().empty() ? std::string("end") : Short(t["end"].get<std::string>()))
              << ")";
    const auto& digests = t.contains("after") ? t["after"] : t["replicas"];
    for (const auto& r : digests) {
      std::cout << " " << r["host_id"].get<std::string>().substr(0, 8) << "=" << r["digest"].get<std::string>() << "/"
                << r["keys"].get<uint64_t>();
    }
    if (t.contains("error")) {
      std::cout << "  FAILED: " << t["error"].get<std::string>();
    } else if (t["repaired"].get<bool>()) {
      std::cout << "  repaired (" << t["keys_written"].get<uint64_t>() << " keys written)"
                << (t["consistent"].get<bool>() ? "" : ", still different");
    } else {
      std::cout << "  consistent";
    }
    std::cout << "\n";
  }
  std::cout << report["tablets"].size() << " tablets: " << report["consistent"].get<int>() << " consistent, "
            << report["repaired"].get<int>() << " repaired, " << report["failed"].get<int>() << " failed\n";
}

int RunRepair(const RepairFlags& f) {
  const auto colon = f.admin.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "repair: --admin must be HOST:PORT, got " << f.admin << "\n";
    return 2;
  }
  httplib::Client http(f.admin.substr(0, colon), std::atoi(f.admin.substr(colon + 1).c_str()));
  http.set_read_timeout(3600, 0);  // a repair reads every tablet that differs
  if (!f.username.empty()) http.set_basic_auth(f.username, f.password);
  httplib::Params params;
  if (!f.keyspace.empty()) params.emplace("keyspace", f.keyspace);
  if (!f.table.empty()) params.emplace("table", f.table);
  auto res = http.Post(httplib::append_query_params("/repair", params));
  if (!res) {
    std::cerr << "repair: no answer from " << f.admin << ": " << httplib::to_string(res.error()) << "\n";
    return 2;
  }
  auto body = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.contains("tablets")) {
    std::cerr << "repair: " << f.admin << " answered " << res->status << ": " << res->body << "\n";
    return 2;
  }
  if (f.json) {
    std::cout << body.dump(2) << "\n";
  } else {
    PrintReport(body);
  }
  return body["failed"].get<int>() == 0 && res->status == 200 ? 0 : 1;
}

}  // namespace

void AddRepairCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<RepairFlags>();
  auto* cmd = app.add_subcommand("repair", "compare the replicas of every tablet by digest and repair differences "
                                           "(nodetool repair), through a cluster node's admin port");
  cmd->add_option("--admin", flags->admin, "HOST:PORT of a node's admin port")->capture_default_str();
  cmd->add_option("--keyspace", flags->keyspace, "only this keyspace (default: every replicated keyspace)");
  cmd->add_option("--table", flags->table, "only this table (with --keyspace)")->needs("--keyspace");
  cmd->add_option("-u,--username", flags->username, "a superuser role, when the node has authentication on");
  cmd->add_option("-p,--password", flags->password, "its password");
  cmd->add_flag("--json", flags->json, "print the node's JSON report");
  cmd->callback([flags, exit_code] { *exit_code = RunRepair(*flags); });
}

}  // namespace tessera
