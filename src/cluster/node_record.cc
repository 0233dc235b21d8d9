#include "cluster/node_record.h"

#include <nlohmann/json.hpp>

#include "keys/murmur3.h"

namespace tessera::cluster {

std::string EncodeNodeRecord(const NodeRecord& r) {
  nlohmann::json j = {{"host_id", UuidText(r.host_id)}, {"address", r.address},
                      {"cql_port", r.cql_port},         {"data_center", r.data_center},
                      {"rack", r.rack},                 {"release_version", r.release_version},
                      {"token", std::to_string(r.token)}, {"internode_port", r.internode_port}};
  return j.dump();
}

Result<NodeRecord> DecodeNodeRecord(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("host_id") || !j.contains("address")) {
    return Status::Corruption("not a node record: " + text.substr(0, 200));
  }
  try {
    NodeRecord r;
    auto id = UuidFromText(j.at("host_id").get<std::string>());
    if (!id.ok()) return Status::Corruption("node record with a bad host_id: " + text.substr(0, 200));
    r.host_id = *id;
    r.address = j.at("address").get<std::string>();
    r.cql_port = j.value("cql_port", 9042);
    r.data_center = j.value("data_center", std::string("datacenter1"));
    r.rack = j.value("rack", std::string("rack1"));
    r.release_version = j.value("release_version", std::string("4.0.11"));
    r.token = std::stoll(j.value("token", std::string("0")));
    r.internode_port = j.value("internode_port", 0);
    return r;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("node record: ") + e.what());
  }
}

int64_t TokenOfHostId(const std::string& host_id) { return CassandraMurmur3(host_id).h1; }

}  // namespace tessera::cluster
