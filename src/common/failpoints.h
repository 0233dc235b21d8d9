// Failpoints: named hooks that hold or fail an operation at a stage, so that
// fault tests (kill -9 of a process while it is held) are deterministic, in
// the manner of RocksDB's sync points and FreeBSD's fail points. Off by
// default; set by the server's --failpoint NAME=ACTION flag or the admin
// API (POST /failpoints?name=NAME&action=ACTION).
//
// Names in use (FROZEN for tests and operators):
//   migration.<stage>   a tablet migration driven by this node, right after
//                       every node acknowledged <stage> (cluster/tablet_migration.h;
//                       stage names as cluster/tablet_transition.h)
//   migration.planned   a tablet migration driven by this node, validated,
//                       before its first stage is written
//   repair.held         a repair run by this node, once every node holds the
//                       repaired tables' tombstones (cluster/repair_holds.h)
//   coordinator.derived_write.<keyspace>.<table>
//                       a write to a table with secondary indexes or views
//                       (its first such table), once it holds its partition
//                       locks, before its first read (coordinator/derived_writes.cc);
//                       a pause holds the thread the locks were granted on
//   replica.read.<keyspace>.<table>
//                       every read of the table this node coordinates or
//                       serves from its store (Coordinator::ReadRow, ReadSlice,
//                       ScanRange and their async forms; Database's), before it reads
//   tablets.median_read a split without a position, before it reads the
//                       median partition from this node's copy (Database::SplitTablet)
//
// Actions: "pause" (Hit blocks until the failpoint is set to something else
// or ReleaseAll), "error" (Hit returns an IOError naming the failpoint),
// "off".
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

class Failpoints {
 public:
  enum class Action { kOff, kPause, kError };

  // Errors: InvalidArgument for an action other than pause, error, off.
  Status Set(const std::string& name, const std::string& action);
  // "NAME=ACTION" as the flag takes it. Errors: InvalidArgument.
  Status SetFromFlag(const std::string& flag);
  // OK when the failpoint is off; IOError("failpoint NAME") for error; for
  // pause, blocks until it changes or ReleaseAll, then acts on the new action.
  Status Hit(const std::string& name);
  // Turns every failpoint off and wakes every paused Hit (shutdown).
  void ReleaseAll();
  // Names currently held in Hit (tests wait for one to be reached).
  std::vector<std::string> Paused() const;
  // False while every failpoint is off: a hot path checks this (one relaxed
  // load) before it builds a name and calls Hit.
  bool armed() const { return armed_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Action> actions_;  // absent: off
  std::map<std::string, int> paused_;      // name -> threads held there
  std::atomic<bool> armed_{false};         // !actions_.empty()
};

}  // namespace tessera
