#include "cluster/routing_tokens.h"

#include <algorithm>
#include <set>

#include "keys/storage_key.h"

namespace tessera::cluster {

int64_t LastTokenBefore(const std::string& end) {
  if (end.size() < 8) return kMaxToken;
  const Token token = DecodeToken(std::string_view(end).substr(0, 8));
  // Exactly a token: the tablet holds the tokens below it. Longer: a cut
  // between the partitions of `token`, whose first ones are in this tablet.
  if (end.size() == 8) return token == kMinToken ? kMinToken : token - 1;
  return token;
}

std::map<std::string, std::vector<int64_t>> RingOfPlacement(const std::vector<TabletReplicas>& placement,
                                                            const std::vector<std::string>& members) {
  std::map<std::string, std::vector<int64_t>> ring;
  const std::set<std::string> known(members.begin(), members.end());
  bool have_previous = false;
  int64_t previous = 0;
  for (const TabletReplicas& tablet : placement) {
    const int64_t last = LastTokenBefore(tablet.end);
    // A tablet inside one token (or before the first key token) adds no range of its own.
    if (last == kMinToken || (have_previous && last <= previous)) continue;
    have_previous = true;
    previous = last;
    if (tablet.replicas.empty() || !known.count(tablet.replicas.front())) continue;
    ring[tablet.replicas.front()].push_back(last);
  }
  int64_t empty_range = kMinToken;
  for (const std::string& host : members) {
    if (ring[host].empty()) ring[host].push_back(empty_range++);
  }
  return ring;
}

}  // namespace tessera::cluster
