// SchemaLog: the cluster's schema changes as an ordered log in etcd, the
// executor's SchemaCoordinator (cql/executor/schema_coordinator.h). It
// stands where ScyllaDB's group 0 schema changes stand, with etcd's
// transactions in the place of Raft.
//
// Key layout (frozen):
//   /tessera/schema/head        the sequence number of the last change (decimal)
//   /tessera/schema/log/<seq>   one change, <seq> zero-padded to 20 digits:
//                               JSON {"keyspace": the session keyspace,
//                               "statement": the CQL text, "origin": host id,
//                               "table_uuid": for CREATE TABLE, the uuid the
//                               table got, which every node gives it}
//   /tessera/schema/lock        held by the node running a change (bound to
//                               a lease of 10 s, so a dead holder frees it)
//
// A change: take the lock; wait until this node has applied the log up to
// head; run the statement here; if it changed the schema, append it (head +
// 1) in one transaction that compares head's revision; free the lock. Every
// other node watches the log and applies each entry in order through the
// `apply` callback (the processor's ApplySchemaStatement), which also tells
// that node's drivers (SCHEMA_CHANGE). The last applied sequence number is
// kept in <data_dir>/SCHEMA_LOG_APPLIED (frozen), so a restarted node
// applies only what it missed.
//
// Known limits, documented in ARCHITECTURE.md: the applied number is written
// after the change, so a crash between the two applies one entry twice (an
// AlreadyExists, logged and skipped); the numeric table ids agree only while
// every node applies the same log from an empty catalog (tables a node
// makes for itself, as system_auth's, shift them); CREATE SEQUENCE stays
// per node.
//
// Thread safety: thread-safe. Stop is explicit (the destructor calls it).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "cluster/etcd_client.h"
#include "cql/executor/schema_coordinator.h"

namespace tessera::cluster {

inline constexpr char kSchemaHeadKey[] = "/tessera/schema/head";
inline constexpr char kSchemaLogPrefix[] = "/tessera/schema/log/";
inline constexpr char kSchemaLockKey[] = "/tessera/schema/lock";

class SchemaLog : public cql::SchemaCoordinator {
 public:
  // Applies another node's change; table_uuid: the uuid of the table a CREATE TABLE made there (else empty).
  using Apply = std::function<Status(const std::string& keyspace, const std::string& statement,
                                     const std::string& table_uuid)>;
  // Applies every entry this node has not applied yet, then watches for more.
  // Errors: IOError when etcd is unreachable. An entry that fails to apply
  // and an unwritable applied file are logged, not returned (the log moves on).
  static Result<std::unique_ptr<SchemaLog>> Start(const EtcdEndpoint& etcd_endpoint, const std::string& data_dir,
                                                  const std::string& host_id, Apply apply);
  ~SchemaLog() override;
  void Stop();

  Result<cql::SchemaOutcome> Run(const std::string& keyspace, const std::string& statement,
                                 const std::function<Result<cql::SchemaOutcome>()>& execute) override;
  int64_t applied() const;  // the last sequence number applied here

 private:
  SchemaLog(const EtcdEndpoint& etcd_endpoint, std::string data_dir, std::string host_id, Apply apply);
  Status CatchUp(int64_t from_revision_hint);
  void ApplyEntries(const std::vector<EtcdKeyValue>& kvs);
  Status PersistApplied(int64_t seq);
  Status WaitApplied(int64_t seq, int timeout_ms);

  std::unique_ptr<EtcdClient> etcd_;
  const std::string data_dir_, host_id_;
  const Apply apply_;
  std::mutex run_mu_;      // one change at a time from this node
  std::mutex persist_mu_;  // one writer of SCHEMA_LOG_APPLIED
  mutable std::mutex mu_;
  std::condition_variable applied_cv_;
  int64_t applied_ = 0;  // guarded by mu_
  std::unique_ptr<EtcdWatch> watch_;
};

}  // namespace tessera::cluster
