#include "cluster/node_record.h"

#include <nlohmann/json.hpp>

#include "keys/murmur3.h"

namespace tessera::cluster {

std::string EncodeNodeRecord(const NodeRecord& r) {
  nlohmann::json j = {{"host_id", UuidText(r.host_id)}, {"address", r.address},
                      {"cql_port", r.cql_port},         {"data_center", r.data_center},
                      {"rack", r.rack},                 {"release_version", r.release_version},
                      {"token", std::to_string(r.token)}};
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
    return r;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("node record: ") + e.what());
  }
}

std::string UuidText(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    const auto b = static_cast<unsigned char>(bytes[i]);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

Result<std::string> UuidFromText(const std::string& text) {
  if (text.size() != 36) return Status::InvalidArgument("not a uuid: " + text);
  std::string bytes;
  int high = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return Status::InvalidArgument("not a uuid: " + text);
      continue;
    }
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (v < 0) return Status::InvalidArgument("not a uuid: " + text);
    if (high < 0) {
      high = v;
    } else {
      bytes.push_back(static_cast<char>(high * 16 + v));
      high = -1;
    }
  }
  return bytes;
}

int64_t TokenOfHostId(const std::string& host_id) { return CassandraMurmur3(host_id).h1; }

}  // namespace tessera::cluster
