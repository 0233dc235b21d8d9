// Sequences: Spanner's bit-reversed positive sequences as a CQL extension
// (CREATE SEQUENCE ks.s WITH kind = 'bit_reversed_positive'; nextval(ks.s)),
// so that a generated key spreads over a range table's key space instead of
// piling onto its last tablet (DESIGN "Key-design primitives"; Spanner's
// "Primary key default values management", GET_NEXT_SEQUENCE_VALUE).
//
// Values: an internal counter c = start_with_counter, start_with_counter + 1,
// ... is bit-reversed over its 63 low bits (BitReverse(c, preserve_sign)), so
// every value is positive and consecutive values land far apart. Values in
// [skip_range_min, skip_range_max] are skipped (a range reserved for keys
// written by other means).
//
// Allocation: counters are reserved in blocks of kBlock. Reserving a block
// persists the counter past it (meta column family, key
// "sequence/<ks>/<name>", JSON format 1, FROZEN ON DISK) before any of its
// values is handed out, so values are unique across connections and
// restarts; the unused rest of a block is lost at a restart, as in Spanner.
// The sequence's stored state is written once per block, not once per value,
// so the sequence is not a hot spot of its own.
//
// Thread safety: thread-safe; Next is serialised per sequence.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

class StorageEngine;

struct SequenceOptions {
  std::string kind = "bit_reversed_positive";  // the only kind
  int64_t skip_range_min = 0, skip_range_max = -1;  // empty range: nothing skipped
  int64_t start_with_counter = 1;
};

class Sequences {
 public:
  static constexpr int64_t kBlock = 1000;

  // Loads the sequences stored in `engine`'s meta column family.
  // REQUIRES: engine outlives this. Errors: IOError, Corruption.
  static Result<std::unique_ptr<Sequences>> Open(StorageEngine* engine);

  // Errors: AlreadyExists (unless if_not_exists), InvalidArgument (options), IOError.
  Status Create(const std::string& keyspace, const std::string& name, const SequenceOptions& options,
                bool if_not_exists);
  // Errors: NotFound (unless if_exists), IOError.
  Status Drop(const std::string& keyspace, const std::string& name, bool if_exists);
  // Drops every sequence of a keyspace.
  Status DropKeyspace(const std::string& keyspace);
  // The next value. Errors: NotFound, InvalidArgument (the counter is exhausted), IOError.
  Result<int64_t> Next(const std::string& keyspace, const std::string& name);

  struct Listed {
    std::string keyspace, name;
    SequenceOptions options;
    int64_t reserved_until = 0;  // counters below it may have been handed out
  };
  std::vector<Listed> List() const;

 private:
  struct Sequence {
    std::mutex mu;
    SequenceOptions options;
    int64_t next = 0;      // next counter to hand out
    int64_t reserved = 0;  // counters below it are persisted as used
  };
  explicit Sequences(StorageEngine* engine) : engine_(engine) {}
  Status Persist(const std::string& keyspace, const std::string& name, const SequenceOptions& options,
                 int64_t reserved);
  std::shared_ptr<Sequence> Find(const std::string& keyspace, const std::string& name) const;

  StorageEngine* engine_;
  mutable std::mutex mu_;  // guards sequences_ (not the sequences' state)
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Sequence>> sequences_;
};

}  // namespace tessera
