#include "db/sequences.h"

#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "storage/storage_engine.h"

namespace tessera {
namespace {

using json = nlohmann::json;

constexpr std::string_view kPrefix = "sequence/";

// "sequence/" | u32 BE length of the keyspace | keyspace | name: unambiguous for any names.
std::string SequenceKey(const std::string& keyspace, const std::string& name) {
  std::string k(kPrefix);
  PutBigEndian32(&k, static_cast<uint32_t>(keyspace.size()));
  return k + keyspace + name;
}

Status Validate(const SequenceOptions& o) {
  if (o.kind != "bit_reversed_positive") {
    return Status::InvalidArgument("Unsupported sequence kind '" + o.kind + "' (expected 'bit_reversed_positive')");
  }
  if (o.start_with_counter < 1) return Status::InvalidArgument("start_with_counter must be at least 1");
  if (o.skip_range_min <= o.skip_range_max && o.skip_range_min < 0) {
    return Status::InvalidArgument("skip_range_min must not be negative (the values are positive)");
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<Sequences>> Sequences::Open(StorageEngine* engine) {
  std::unique_ptr<Sequences> out(new Sequences(engine));
  TESSERA_ASSIGN_OR_RETURN(auto stored, engine->MetaScan(kPrefix));
  for (const auto& [key, value] : stored) {
    try {
      json j = json::parse(value);
      if (j.at("format").get<int>() != 1) return Status::Corruption("unsupported sequence format");
      auto s = std::make_shared<Sequence>();
      s->options.kind = j.at("kind").get<std::string>();
      s->options.skip_range_min = j.at("skip_range_min").get<int64_t>();
      s->options.skip_range_max = j.at("skip_range_max").get<int64_t>();
      s->options.start_with_counter = j.at("start_with_counter").get<int64_t>();
      // Every counter below `reserved` may have been handed out before the restart.
      s->next = s->reserved = j.at("reserved").get<int64_t>();
      out->sequences_[{j.at("keyspace").get<std::string>(), j.at("name").get<std::string>()}] = std::move(s);
    } catch (const json::exception& e) {
      return Status::Corruption(std::string("sequence document: ") + e.what());
    }
  }
  return out;
}

Status Sequences::Persist(const std::string& keyspace, const std::string& name, const SequenceOptions& options,
                          int64_t reserved) {
  json j = {{"format", 1},
            {"keyspace", keyspace},
            {"name", name},
            {"kind", options.kind},
            {"skip_range_min", options.skip_range_min},
            {"skip_range_max", options.skip_range_max},
            {"start_with_counter", options.start_with_counter},
            {"reserved", reserved}};
  return engine_->MetaPut(SequenceKey(keyspace, name), j.dump());
}

std::shared_ptr<Sequences::Sequence> Sequences::Find(const std::string& keyspace, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sequences_.find({keyspace, name});
  return it == sequences_.end() ? nullptr : it->second;
}

Status Sequences::Create(const std::string& keyspace, const std::string& name, const SequenceOptions& options,
                         bool if_not_exists) {
  TESSERA_RETURN_IF_ERROR(Validate(options));
  std::lock_guard<std::mutex> lock(mu_);
  if (sequences_.count({keyspace, name})) {
    if (if_not_exists) return Status::OK();
    return Status::AlreadyExists("Sequence " + keyspace + "." + name + " already exists");
  }
  auto s = std::make_shared<Sequence>();
  s->options = options;
  s->next = s->reserved = options.start_with_counter;
  TESSERA_RETURN_IF_ERROR(Persist(keyspace, name, s->options, s->reserved));
  sequences_[{keyspace, name}] = std::move(s);
  return Status::OK();
}

Status Sequences::Drop(const std::string& keyspace, const std::string& name, bool if_exists) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sequences_.count({keyspace, name})) {
    if (if_exists) return Status::OK();
    return Status::NotFound("Sequence " + keyspace + "." + name + " doesn't exist");
  }
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(SequenceKey(keyspace, name)));
  sequences_.erase({keyspace, name});
  return Status::OK();
}

Status Sequences::DropKeyspace(const std::string& keyspace) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = sequences_.begin(); it != sequences_.end();) {
    if (it->first.first != keyspace) {
      ++it;
      continue;
    }
    TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(SequenceKey(it->first.first, it->first.second)));
    it = sequences_.erase(it);
  }
  return Status::OK();
}

Result<int64_t> Sequences::Next(const std::string& keyspace, const std::string& name) {
  auto s = Find(keyspace, name);
  if (!s) return Status::NotFound("Sequence " + keyspace + "." + name + " doesn't exist");
  std::lock_guard<std::mutex> lock(s->mu);
  // Each try uses up a counter, so the loop ends at the latest when the counter is exhausted; it
  // repeats only for values inside the skip range.
  for (;;) {
    if (s->next == INT64_MAX) return Status::InvalidArgument("Sequence " + keyspace + "." + name + " is exhausted");
    if (s->next >= s->reserved) {
      const int64_t reserved = s->next > INT64_MAX - kBlock ? INT64_MAX : s->next + kBlock;
      TESSERA_RETURN_IF_ERROR(Persist(keyspace, name, s->options, reserved));
      s->reserved = reserved;
    }
    const int64_t value = BitReverse(s->next++, /*preserve_sign=*/true);
    if (value >= s->options.skip_range_min && value <= s->options.skip_range_max) continue;
    return value;
  }
}

std::vector<Sequences::Listed> Sequences::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Listed> out;
  for (const auto& [key, s] : sequences_) {
    std::lock_guard<std::mutex> seq(s->mu);
    out.push_back({key.first, key.second, s->options, s->reserved});
  }
  return out;
}

}  // namespace tessera
