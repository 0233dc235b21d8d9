#include "cluster/tablet_transition.h"

#include <algorithm>

namespace tessera::cluster {
namespace {

constexpr MigrationStage kStages[] = {MigrationStage::kAllowWriteBothReadOld, MigrationStage::kWriteBothReadOld,
                                      MigrationStage::kStreaming,            MigrationStage::kWriteBothReadNew,
                                      MigrationStage::kUseNew,               MigrationStage::kCleanup};

}  // namespace

const char* MigrationStageName(MigrationStage stage) {
  switch (stage) {
    case MigrationStage::kAllowWriteBothReadOld: return "allow_write_both_read_old";
    case MigrationStage::kWriteBothReadOld: return "write_both_read_old";
    case MigrationStage::kStreaming: return "streaming";
    case MigrationStage::kWriteBothReadNew: return "write_both_read_new";
    case MigrationStage::kUseNew: return "use_new";
    case MigrationStage::kCleanup: return "cleanup";
  }
  return "?";
}

Result<MigrationStage> MigrationStageFromName(const std::string& name) {
  for (MigrationStage s : kStages) {
    if (name == MigrationStageName(s)) return s;
  }
  return Status::InvalidArgument("unknown tablet migration stage '" + name + "'");
}

std::optional<MigrationStage> NextMigrationStage(MigrationStage stage) {
  auto* at = std::find(std::begin(kStages), std::end(kStages), stage);
  if (at == std::end(kStages) || std::next(at) == std::end(kStages)) return std::nullopt;
  return *std::next(at);
}

std::vector<std::string> NewReplicas(const std::vector<std::string>& old, const TabletTransition& t) {
  std::vector<std::string> out = old;
  if (t.leaving.empty()) {
    out.push_back(t.pending);
  } else if (t.pending.empty()) {
    out.erase(std::remove(out.begin(), out.end(), t.leaving), out.end());
  } else {
    std::replace(out.begin(), out.end(), t.leaving, t.pending);
  }
  return out;
}

WriteReplicaSet WriteReplicas(const std::vector<std::string>& old, const std::optional<TabletTransition>& t) {
  if (!t || t->stage == MigrationStage::kAllowWriteBothReadOld) return {old, {}};
  if (t->stage == MigrationStage::kUseNew || t->stage == MigrationStage::kCleanup) return {NewReplicas(old, *t), {}};
  if (t->pending.empty()) return {old, {}};
  return {old, {t->pending}};
}

std::vector<std::string> ReadReplicas(const std::vector<std::string>& old, const std::optional<TabletTransition>& t) {
  if (!t || t->stage < MigrationStage::kWriteBothReadNew) return old;
  return NewReplicas(old, *t);
}

}  // namespace tessera::cluster
