#include "storage/wal_file_system.h"

#include <filesystem>
#include <vector>

#include "common/failpoints.h"

namespace tessera {
namespace {

bool IsWriteAheadLog(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
}

// Sees each sync of one file.
class SyncObservingFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  SyncObservingFile(std::unique_ptr<rocksdb::FSWritableFile> target, bool wal, Failpoints* failpoints,
                    std::atomic<uint64_t>* wal_syncs)
      : FSWritableFileOwnerWrapper(std::move(target)), wal_(wal), failpoints_(failpoints), wal_syncs_(wal_syncs) {}

  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    Before();
    return target()->Sync(options, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    Before();
    return target()->Fsync(options, dbg);
  }

 private:
  void Before() {
    if (!wal_) return;
    wal_syncs_->fetch_add(1, std::memory_order_relaxed);
    if (failpoints_ != nullptr && failpoints_->armed()) {
      (void)failpoints_->Hit("storage.wal_sync");  // pause holds the sync; error is not injected here
    }
  }
  const bool wal_;
  Failpoints* const failpoints_;
  std::atomic<uint64_t>* const wal_syncs_;
};

// Keeps one file's size and reports its syncs to its PowerLossFileSystem. Once the
// power is gone its syncs make nothing durable; every call still succeeds, as
// a process that died with the machine never sees an error (an error would
// put RocksDB's writers on error paths a crash never takes).
class PowerLossFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  PowerLossFile(std::unique_ptr<rocksdb::FSWritableFile> target, PowerLossFileSystem* fs, std::string name,
                uint64_t size)
      : FSWritableFileOwnerWrapper(std::move(target)), fs_(fs), name_(std::move(name)), size_(size) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->Append(data, options, dbg);
    if (s.ok()) size_.fetch_add(data.size());
    return s;
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->Append(data, options, info, dbg);
    if (s.ok()) size_.fetch_add(data.size());
    return s;
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset, const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->PositionedAppend(data, offset, options, dbg);
    if (s.ok()) Grow(offset + data.size());
    return s;
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset, const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->PositionedAppend(data, offset, options, info, dbg);
    if (s.ok()) Grow(offset + data.size());
    return s;
  }
  rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->Truncate(size, options, dbg);
    if (s.ok()) size_ = size;
    return s;
  }
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    return target()->Flush(options, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    // What the sync covers: the bytes appended before it began (RocksDB may
    // append to a log while another thread syncs it).
    const uint64_t size = size_.load();
    const auto started = std::chrono::steady_clock::now();
    rocksdb::IOStatus s = target()->Sync(options, dbg);
    if (s.ok()) fs_->Synced(name_, size, started);  // not durable if the power went before
    return s;
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    const uint64_t size = size_.load();
    const auto started = std::chrono::steady_clock::now();
    rocksdb::IOStatus s = target()->Fsync(options, dbg);
    if (s.ok()) fs_->Synced(name_, size, started);  // not durable if the power went before
    return s;
  }
  rocksdb::IOStatus RangeSync(uint64_t, uint64_t, const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    // Starts write-back of a range without waiting: durable only after a Sync.
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Close(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    // Closing makes nothing durable.
    return target()->Close(options, dbg);
  }

 private:
  void Grow(uint64_t size) {
    uint64_t now = size_.load();
    while (now < size && !size_.compare_exchange_weak(now, size)) {
    }
  }

  PowerLossFileSystem* const fs_;
  const std::string name_;
  std::atomic<uint64_t> size_;  // appended by RocksDB's writer while another thread syncs
};

}  // namespace

rocksdb::IOStatus WritableFileWrappingFileSystem::NewWritableFile(const std::string& name,
                                                                  const rocksdb::FileOptions& options,
                                                                  std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                                  rocksdb::IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSWritableFile> f;
  rocksdb::IOStatus s = target()->NewWritableFile(name, options, &f, dbg);
  if (s.ok()) *result = Wrap(name, std::move(f), 0);
  return s;
}

rocksdb::IOStatus WritableFileWrappingFileSystem::ReopenWritableFile(const std::string& name,
                                                                     const rocksdb::FileOptions& options,
                                                                     std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                                     rocksdb::IODebugContext* dbg) {
  uint64_t size = 0;
  if (!target()->GetFileSize(name, rocksdb::IOOptions(), &size, dbg).ok()) size = 0;
  std::unique_ptr<rocksdb::FSWritableFile> f;
  rocksdb::IOStatus s = target()->ReopenWritableFile(name, options, &f, dbg);
  if (s.ok()) *result = Wrap(name, std::move(f), size);
  return s;
}

rocksdb::IOStatus WritableFileWrappingFileSystem::ReuseWritableFile(const std::string& name,
                                                                    const std::string& old_name,
                                                                    const rocksdb::FileOptions& options,
                                                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                                    rocksdb::IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSWritableFile> f;
  rocksdb::IOStatus s = target()->ReuseWritableFile(name, old_name, options, &f, dbg);
  if (s.ok()) {
    Reused(old_name);
    *result = Wrap(name, std::move(f), 0);
  }
  return s;
}

SyncObservingFileSystem::SyncObservingFileSystem(std::shared_ptr<rocksdb::FileSystem> target, Failpoints* failpoints)
    : WritableFileWrappingFileSystem(std::move(target)), failpoints_(failpoints) {}

std::unique_ptr<rocksdb::FSWritableFile> SyncObservingFileSystem::Wrap(const std::string& name,
                                                                       std::unique_ptr<rocksdb::FSWritableFile> file,
                                                                       uint64_t) {
  return std::make_unique<SyncObservingFile>(std::move(file), IsWriteAheadLog(name), failpoints_, &wal_syncs_);
}

PowerLossFileSystem::PowerLossFileSystem(std::shared_ptr<rocksdb::FileSystem> target)
    : WritableFileWrappingFileSystem(std::move(target)) {}

void PowerLossFileSystem::Reused(const std::string& name) {
  if (!powered()) return;  // the old file stays as it was on disk
  std::lock_guard<std::mutex> lock(mu_);
  files_.erase(name);
}

std::unique_ptr<rocksdb::FSWritableFile> PowerLossFileSystem::Wrap(const std::string& name,
                                                                   std::unique_ptr<rocksdb::FSWritableFile> file,
                                                                   uint64_t existing) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = files_.try_emplace(name);
    if (!powered()) {
      if (inserted) it->second.born_after_loss = true;  // never reached the disk
    } else if (existing == 0) {
      it->second = Tracked{};  // a new (or emptied) file: nothing durable yet
    } else if (inserted) {
      it->second.synced = existing;  // there before the harness saw it: durable
    }
  }
  return std::make_unique<PowerLossFile>(std::move(file), this, name, existing);
}

rocksdb::IOStatus PowerLossFileSystem::RenameFile(const std::string& from, const std::string& to,
                                                  const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) {
  if (!powered()) return rocksdb::IOStatus::OK();  // the directory never saw it
  rocksdb::IOStatus s = target()->RenameFile(from, to, options, dbg);
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(from);
    if (it != files_.end()) {
      files_[to] = it->second;
      files_.erase(it);
    } else {
      files_.erase(to);
    }
  }
  return s;
}

rocksdb::IOStatus PowerLossFileSystem::DeleteFile(const std::string& name, const rocksdb::IOOptions& options,
                                                  rocksdb::IODebugContext* dbg) {
  // The file stays: a deletion after the loss never reached the disk (and an
  // old log must outlive a flush whose table and manifest edit are dropped).
  if (!powered()) return rocksdb::IOStatus::OK();
  rocksdb::IOStatus s = target()->DeleteFile(name, options, dbg);
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    files_.erase(name);
  }
  return s;
}

void PowerLossFileSystem::Synced(const std::string& name, uint64_t size,
                                 std::chrono::steady_clock::time_point started) {
  if (!powered()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Tracked& t = files_[name];
  t.synced = std::max(t.synced, size);
  if (IsWriteAheadLog(name)) last_log_sync_started_ = std::max(last_log_sync_started_, started);
}

std::chrono::steady_clock::time_point PowerLossFileSystem::LastLogSyncStarted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_log_sync_started_;
}

Result<uint64_t> PowerLossFileSystem::DropUnsyncedData() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t dropped = 0;
  for (auto it = files_.begin(); it != files_.end();) {
    const std::string& name = it->first;
    Tracked& t = it->second;
    std::error_code ec;
    const auto size = std::filesystem::file_size(name, ec);
    if (ec) {  // gone
      it = files_.erase(it);
      continue;
    }
    if (t.born_after_loss) {
      std::filesystem::remove(name, ec);
      if (ec) return Status::IOError("cannot remove " + name + ": " + ec.message());
      dropped += size;
      it = files_.erase(it);
      continue;
    }
    if (size > t.synced) {
      std::filesystem::resize_file(name, t.synced, ec);
      if (ec) return Status::IOError("cannot truncate " + name + ": " + ec.message());
      dropped += size - t.synced;
    }
    ++it;
  }
  powered_.store(true);
  return dropped;
}

}  // namespace tessera
