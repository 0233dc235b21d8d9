#include "cluster/replication_strategy.h"

#include <charconv>

namespace tessera::cluster {
namespace {

Result<int> ParseFactor(const std::string& key, const std::string& text) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status::InvalidArgument("Replication factor must be non-negative; found " + text + " for " + key);
  }
  return value;
}

}  // namespace

Status UnavailableError(ConsistencyLevel level, int required, int alive) {
  Status::ReplicaShortfall f;
  f.consistency = static_cast<uint16_t>(level);
  f.first = required;
  f.second = alive;
  return Status::ConsistencyFailure(Status::Code::kUnavailable,
                                    std::string("Cannot achieve consistency level ") + ConsistencyLevelName(level),
                                    f);
}

int ReplicationFactors::Total() const {
  int total = simple_factor;
  for (const auto& [dc, n] : per_dc) total += n;
  return total;
}

Result<ReplicationFactors> ParseReplication(const std::map<std::string, std::string>& options) {
  ReplicationFactors f;
  auto cls = options.find("class");
  f.network_topology = cls != options.end() && cls->second.find("NetworkTopologyStrategy") != std::string::npos;
  for (const auto& [key, value] : options) {
    if (key == "class") continue;
    TESSERA_ASSIGN_OR_RETURN(int n, ParseFactor(key, value));
    if (!f.network_topology) {
      if (key == "replication_factor") f.simple_factor = n;
    } else if (key != "replication_factor") {
      f.per_dc[key] = n;
    }
  }
  return f;
}

Result<ConsistencyPlan> PlanConsistency(ConsistencyLevel level, const std::vector<ReplicaTarget>& replicas,
                                        const std::string& local_dc, bool write) {
  using L = ConsistencyLevel;
  if (!write && (level == L::kAny)) {
    return Status::InvalidArgument("ANY ConsistencyLevel is only supported for writes");
  }
  if (!write && level == L::kEachQuorum) {
    return Status::InvalidArgument("EACH_QUORUM ConsistencyLevel is only supported for writes");
  }
  if (write && (level == L::kSerial || level == L::kLocalSerial)) {
    return Status::InvalidArgument("You must use conditional updates for serializable writes");
  }
  ConsistencyPlan plan;
  const bool local_only = level == L::kLocalOne || level == L::kLocalQuorum || level == L::kLocalSerial;
  int counted = 0;
  std::map<std::string, int> per_dc;
  for (const auto& r : replicas) {
    const bool counts = !local_only || r.data_center == local_dc;
    plan.counts.push_back(counts);
    if (counts) ++counted;
    ++per_dc[r.data_center];
  }
  switch (level) {
    case L::kAny:
    case L::kOne:
    case L::kLocalOne: plan.block_for = 1; break;
    case L::kTwo: plan.block_for = 2; break;
    case L::kThree: plan.block_for = 3; break;
    case L::kQuorum:
    case L::kSerial:
    case L::kLocalQuorum:
    case L::kLocalSerial: plan.block_for = counted / 2 + 1; break;
    case L::kAll: plan.block_for = static_cast<int>(replicas.size()); break;
    case L::kEachQuorum:
      plan.block_for = 0;
      for (const auto& [dc, n] : per_dc) plan.block_for += n / 2 + 1;
      break;
  }
  return plan;
}

Status CheckAlive(ConsistencyLevel level, const ConsistencyPlan& plan, const std::vector<ReplicaTarget>& replicas) {
  if (level == ConsistencyLevel::kEachQuorum) {
    std::map<std::string, std::pair<int, int>> per_dc;  // replicas, alive
    for (const auto& r : replicas) {
      auto& [n, alive] = per_dc[r.data_center];
      ++n;
      if (r.alive) ++alive;
    }
    for (const auto& [dc, counts] : per_dc) {
      if (counts.second < counts.first / 2 + 1) return UnavailableError(level, counts.first / 2 + 1, counts.second);
    }
    return Status::OK();
  }
  int alive = 0;
  for (size_t i = 0; i < replicas.size(); ++i) alive += plan.counts[i] && replicas[i].alive;
  if (alive < plan.block_for) return UnavailableError(level, plan.block_for, alive);
  return Status::OK();
}

Status ConsistencyTimeout(Status::Code code, const RequestConsistency& consistency, int received, int block_for,
                          bool data_present) {
  const ConsistencyLevel level = consistency.level;
  Status::ReplicaShortfall f;
  f.consistency = static_cast<uint16_t>(level);
  f.first = received;
  f.second = block_for;
  f.write_type = WriteTypeName(consistency.write_type);
  f.data_present = data_present;
  const char* what = code == Status::Code::kWriteTimeout ? "write" : "read";
  return Status::ConsistencyFailure(code,
                                    std::string("Operation timed out - received only ") + std::to_string(received) +
                                        " responses of " + std::to_string(block_for) + " required for the " + what +
                                        " at " + ConsistencyLevelName(level),
                                    f);
}

}  // namespace tessera::cluster
