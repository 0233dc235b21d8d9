// The tablet migrations this node drives right now, by tablet. A transition
// in etcd naming this node as its driver but not in hand here was left by
// an earlier life of the process (kill -9, crash): cluster/migration_resumer.h
// takes it over.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <mutex>
#include <set>
#include <string>

namespace tessera::cluster {

class MigrationsInHand {
 public:
  // key: MigrationKey(table uuid, start). False when it is already in hand.
  bool Take(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_.insert(key).second;
  }
  void Release(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    keys_.erase(key);
  }
  bool Holds(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_.count(key) > 0;
  }
  std::set<std::string> Keys() const {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> keys_;
};

// `table_uuid` (16 bytes) and the placement tablet's start, joined.
inline std::string MigrationKey(const std::string& table_uuid, const std::string& start) {
  return table_uuid + "/" + start;
}

}  // namespace tessera::cluster
