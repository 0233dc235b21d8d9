#include "cluster/hint_store.h"

#include <chrono>

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "cluster/write_set_codec.h"
#include "common/bytes.h"

namespace tessera::cluster {
namespace {

constexpr size_t kHostIdBytes = 16;
constexpr size_t kKeyBytes = kHostIdBytes + 8 + 8;
constexpr uint8_t kFormatVersion = 1;

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  return Status::IOError("hints: " + s.ToString());
}

std::string Encode(const std::string& table_uuid, const WriteSet& writes) {
  std::string out;
  out.push_back(static_cast<char>(kFormatVersion));
  out += table_uuid;
  AppendWriteOps(writes, &out);
  return out;
}

Status Decode(std::string_view value, Hint* hint) {
  ByteReader r(value);
  uint8_t version = 0;
  std::string_view uuid;
  if (!r.ReadByte(&version) || version != kFormatVersion || !r.ReadBytes(16, &uuid)) {
    return Status::Corruption("hints: a hint of an unknown format");
  }
  hint->table_uuid = std::string(uuid);
  Status ops = DecodeWriteOps(value.substr(1 + 16), &hint->writes);
  return ops.ok() ? ops : Status::Corruption("hints: a truncated hint");
}

int64_t SystemMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct HintStore::Impl {
  std::unique_ptr<rocksdb::DB> db;
};

HintStore::HintStore(std::unique_ptr<Impl> impl, HintLimits limits, std::function<int64_t()> clock)
    : impl_(std::move(impl)), limits_(limits), clock_(std::move(clock)) {}

HintStore::~HintStore() = default;

Result<std::shared_ptr<HintStore>> HintStore::Open(const std::string& path, HintLimits limits,
                                                   std::function<int64_t()> clock_micros) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 8u << 20;
  rocksdb::DB* raw = nullptr;
  TESSERA_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(options, path, &raw)));
  auto impl = std::make_unique<Impl>();
  impl->db.reset(raw);
  if (!clock_micros) clock_micros = SystemMicros;
  std::shared_ptr<HintStore> store(new HintStore(std::move(impl), limits, clock_micros));
  // The queues' sizes, from what a previous run left.
  std::unique_ptr<rocksdb::Iterator> it(store->impl_->db->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().size() != kKeyBytes) continue;
    Queue& q = store->queues_[it->key().ToString().substr(0, kHostIdBytes)];
    ++q.hints;
    q.bytes += it->value().size();
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status()));
  store->sequence_ = static_cast<uint64_t>(store->clock_());
  return store;
}

Status HintStore::Store(const std::string& host_id, const std::string& table_uuid, const WriteSet& writes) {
  std::string value = Encode(table_uuid, writes);
  std::string key = host_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Queue& q = queues_[host_id];
    if (q.bytes + value.size() > limits_.max_bytes_per_node) {
      ++dropped_;
      return Status::Busy("hints for a replica exceed " + std::to_string(limits_.max_bytes_per_node) + " bytes");
    }
    PutBigEndian64(&key, static_cast<uint64_t>(clock_()));
    PutBigEndian64(&key, ++sequence_);
    ++q.hints;
    q.bytes += value.size();
  }
  Status s = FromRocks(impl_->db->Put(rocksdb::WriteOptions(), key, value));
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    Queue& q = queues_[host_id];
    --q.hints;
    q.bytes -= value.size();
    return s;
  }
  ++stored_;
  return Status::OK();
}

Result<std::vector<Hint>> HintStore::Oldest(const std::string& host_id, size_t max) {
  std::vector<Hint> hints;
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(host_id); it->Valid() && hints.size() < max && it->key().starts_with(host_id); it->Next()) {
    if (it->key().size() != kKeyBytes) continue;
    Hint h;
    h.key = it->key().ToString();
    h.created_micros = static_cast<int64_t>(GetBigEndian64(h.key.data() + kHostIdBytes));
    TESSERA_RETURN_IF_ERROR(Decode(std::string_view(it->value().data(), it->value().size()), &h));
    hints.push_back(std::move(h));
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status()));
  return hints;
}

Status HintStore::Remove(const std::string& host_id, const Hint& hint, bool delivered) {
  const uint64_t size = Encode(hint.table_uuid, hint.writes).size();
  TESSERA_RETURN_IF_ERROR(FromRocks(impl_->db->Delete(rocksdb::WriteOptions(), hint.key)));
  std::lock_guard<std::mutex> lock(mu_);
  auto q = queues_.find(host_id);
  if (q != queues_.end()) {
    q->second.hints -= std::min<uint64_t>(q->second.hints, 1);
    q->second.bytes -= std::min(q->second.bytes, size);
    if (q->second.hints == 0) queues_.erase(q);
  }
  ++(delivered ? delivered_ : dropped_);
  return Status::OK();
}

std::vector<std::string> HintStore::Targets() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> hosts;
  for (const auto& [host, q] : queues_) {
    if (q.hints > 0) hosts.push_back(host);
  }
  return hosts;
}

bool HintStore::Expired(const Hint& hint) const { return clock_() - hint.created_micros > limits_.max_age_micros; }

uint64_t HintStore::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& [host, q] : queues_) n += q.hints;
  return n;
}

uint64_t HintStore::pending_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& [host, q] : queues_) n += q.bytes;
  return n;
}

}  // namespace tessera::cluster
