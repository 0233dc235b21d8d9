// The file systems under the node's RocksDB (issue 32, items 2 and 3):
//
// SyncObservingFileSystem wraps every file RocksDB writes and sees each
// sync: it counts the syncs of write-ahead logs (files named *.log) for
// /metrics, and hits the failpoint `storage.wal_sync` (common/failpoints.h)
// before each, so a test can hold the fsync and see that no acknowledgement
// of a synced write leaves before it is released.
//
// PowerLossFileSystem is the power-loss harness, after RocksDB's own
// FaultInjectionTestFS but on the public rocksdb/file_system.h API only: it
// records, per file, how many bytes a sync made durable. PowerLoss() cuts the power: from then on nothing reaches the disk
// for good: syncs make nothing durable, renames and deletions are not done,
// files created are removed again. Every call still succeeds, since a process
// that dies with its machine never sees an error (errors would send RocksDB
// down paths a crash never takes; a caller tells a write acknowledged after
// the loss by powered()). Once the engine is closed, DropUnsyncedData()
// truncates every file to what its last sync covered (a file never synced to
// nothing), which is what a disk holds after a power loss; the node then
// restarts on what is left.
//
// Thread safety: thread-safe (RocksDB calls them from its own threads).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <rocksdb/file_system.h>

#include "common/status.h"

namespace tessera {

class Failpoints;

// Wraps every file RocksDB opens for writing (new, reopened or reused); a
// subclass says how (Wrap).
class WritableFileWrappingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  using rocksdb::FileSystemWrapper::FileSystemWrapper;
  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& name, const std::string& old_name,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override;

 protected:
  // The file `name` as RocksDB will write it; `existing`: the bytes already in
  // it (0 for a new or reused file).
  virtual std::unique_ptr<rocksdb::FSWritableFile> Wrap(const std::string& name,
                                                        std::unique_ptr<rocksdb::FSWritableFile> file,
                                                        uint64_t existing) = 0;
  // `name` was reused as another file.
  virtual void Reused(const std::string& name) {}
};

class SyncObservingFileSystem : public WritableFileWrappingFileSystem {
 public:
  // REQUIRES: failpoints (may be null) outlives the file system.
  SyncObservingFileSystem(std::shared_ptr<rocksdb::FileSystem> target, Failpoints* failpoints);
  static const char* kClassName() { return "TesseraSyncObservingFileSystem"; }
  const char* Name() const override { return kClassName(); }

  uint64_t wal_syncs() const { return wal_syncs_.load(std::memory_order_relaxed); }

 protected:
  std::unique_ptr<rocksdb::FSWritableFile> Wrap(const std::string& name, std::unique_ptr<rocksdb::FSWritableFile> file,
                                                uint64_t existing) override;

 private:
  Failpoints* failpoints_;
  std::atomic<uint64_t> wal_syncs_{0};
};

class PowerLossFileSystem : public WritableFileWrappingFileSystem {
 public:
  explicit PowerLossFileSystem(std::shared_ptr<rocksdb::FileSystem> target);
  static const char* kClassName() { return "TesseraPowerLossFileSystem"; }
  const char* Name() const override { return kClassName(); }

  rocksdb::IOStatus RenameFile(const std::string& from, const std::string& to, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& name, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;

  // From now on nothing becomes durable: the power is gone.
  void PowerLoss() { powered_.store(false); }
  // False from PowerLoss() until DropUnsyncedData(). A write acknowledged
  // while this still reads true was synced (when its mode syncs) before the loss.
  bool powered() const { return powered_.load(); }
  // REQUIRES: PowerLoss() and the engine closed. Truncates every file to its
  // last synced size and powers the file system on again. Returns the bytes
  // dropped. Errors: IOError from the truncation.
  Result<uint64_t> DropUnsyncedData();

  // When the newest sync of a write-ahead log (a file named *.log) that
  // completed while powered began (steady clock; the clock's epoch if none).
  // Every byte appended to that log before then is durable, so a write
  // acknowledged before then survives the loss in every commitlog mode: the
  // periodic mode's bound on what it may lose, with no timing assumption.
  std::chrono::steady_clock::time_point LastLogSyncStarted() const;

  // What the file wrappers report (public for them; not for callers): the
  // first `size` bytes of `name` are on the disk for good, by a sync that
  // began at `started`.
  void Synced(const std::string& name, uint64_t size, std::chrono::steady_clock::time_point started);

 protected:
  std::unique_ptr<rocksdb::FSWritableFile> Wrap(const std::string& name, std::unique_ptr<rocksdb::FSWritableFile> file,
                                                uint64_t existing) override;
  void Reused(const std::string& name) override;

 private:
  std::atomic<bool> powered_{true};
  mutable std::mutex mu_;
  struct Tracked {
    uint64_t synced = 0;           // bytes durable
    bool born_after_loss = false;  // created after PowerLoss(): removed by DropUnsyncedData()
  };
  std::map<std::string, Tracked> files_;  // guarded by mu_
  std::chrono::steady_clock::time_point last_log_sync_started_;  // guarded by mu_
};

}  // namespace tessera
