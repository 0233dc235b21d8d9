// The compaction filter that expires TTL data and purges tombstones.
//
// Per key, in key order within one compaction:
//  - a partition header is remembered; rows of the same partition that follow
//    in the same compaction lose what its partition and range deletions shadow;
//  - expired TTL cells become tombstones (local deletion time = write time);
//  - cell and row tombstones older than the table's gc_grace_seconds are
//    dropped from fully merged values (a fully merged value already holds the
//    key's whole history, so no older version can be resurrected);
//  - partition and range tombstones live under a different key from the rows
//    they shadow, so they are purged only in full compactions (every file, in
//    key order: the rows they shadow were dropped above, earlier in the same pass);
//  - values that become empty are removed;
//  - nothing is purged in a range the registry holds (TableRegistry::
//    SetPurgeHolds: a tablet on the move), whatever its age.
// Keys of tables the registry does not know are kept (DROP TABLE removes its
// key range with a range delete instead).
//
// Thread safety: the factory is thread-safe; each filter is used by one
// compaction thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace rocksdb {
class CompactionFilterFactory;
}

namespace tessera {

class TableRegistry;

// `now_seconds` returns the current time in seconds since the epoch.
// REQUIRES: `registry` outlives the factory.
std::shared_ptr<rocksdb::CompactionFilterFactory> NewGarbageCollectingFilterFactory(
    const TableRegistry* registry, std::function<uint32_t()> now_seconds);

}  // namespace tessera
