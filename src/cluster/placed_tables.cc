#include "cluster/placed_tables.h"

#include <map>

#include "cluster/etcd_client.h"
#include "cluster/membership.h"
#include "cluster/replicated_tablet.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {

Result<std::vector<PlacedTable>> ReadPlacedTables(const ReplicationServices& s) {
  std::map<std::string, std::shared_ptr<const TableSchema>> by_uuid;
  for (auto& t : s.db->catalog().AllTables()) by_uuid.emplace(UuidText(t->uuid), t);
  TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult range,
                           s.membership->etcd().Range(kTabletsPrefix, EtcdPrefixEnd(kTabletsPrefix)));
  std::vector<PlacedTable> out;
  for (const auto& kv : range.kvs) {
    auto table = by_uuid.find(kv.key.substr(sizeof(kTabletsPrefix) - 1));
    if (table == by_uuid.end()) continue;
    TESSERA_ASSIGN_OR_RETURN(auto placement, DecodePlacement(kv.value));
    out.push_back({table->second, std::move(placement)});
  }
  return out;
}

}  // namespace tessera::cluster
