// Response messages of native protocol v4 (§4.2) and v5 (v5 §4.2) and their
// encoding into frame bodies. Where v5 differs (the Prepared result's
// metadata id, Read_failure and Write_failure's reason map, Write_timeout's
// CAS contentions) the encoder takes the version. Error codes, result kinds and metadata flags are FROZEN ON
// THE WIRE.
//
// Thread safety: pure functions; a RowsWriter is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"
#include "cql/protocol/wire.h"
#include "types/cql_type.h"

namespace tessera::cql {

// Error codes (§9; v5 §8).
enum class ErrorCode : int32_t {
  kServerError = 0x0000, kProtocolError = 0x000A, kBadCredentials = 0x0100, kUnavailable = 0x1000,
  kOverloaded = 0x1001, kIsBootstrapping = 0x1002, kTruncateError = 0x1003, kWriteTimeout = 0x1100,
  kReadTimeout = 0x1200, kReadFailure = 0x1300, kFunctionFailure = 0x1400, kWriteFailure = 0x1500,
  kSyntaxError = 0x2000, kUnauthorized = 0x2100, kInvalid = 0x2200, kConfigError = 0x2300,
  kAlreadyExists = 0x2400, kUnprepared = 0x2500,
};

struct ErrorResponse {
  ErrorCode code = ErrorCode::kServerError;
  std::string message;
  // kAlreadyExists: keyspace and table ("" for a keyspace); kFunctionFailure: keyspace.
  std::string keyspace, table;
  // kFunctionFailure: the function and its argument types (CQL text).
  std::string function;
  std::vector<std::string> argument_types;
  // kUnprepared: the unknown id exactly as the client sent it.
  std::string unprepared_id;
  // kUnavailable, kWriteTimeout, kReadTimeout, kReadFailure, kWriteFailure.
  Consistency consistency = Consistency::kOne;
  int32_t required_or_received = 0, alive_or_blockfor = 0, failures = 0;
  std::string write_type = "SIMPLE";
  bool data_present = false;
  // kReadFailure, kWriteFailure: why each failed replica failed, for v5's
  // <reason_map> (v5 §8): its address (4 or 16 bytes) and a reason code
  // (0x0001 READ_TOO_MANY_TOMBSTONES, ...). v4 sends only `failures`.
  struct FailureReason {
    std::string address;
    uint16_t code = 0;
  };
  std::vector<FailureReason> reasons;
  // kWriteTimeout of write type CAS, in v5: the contentions the Paxos round met.
  uint16_t contentions = 0;
};
constexpr uint16_t kReasonReadTooManyTombstones = 0x0001;  // FROZEN ON THE WIRE
// A RESULT's <kind> (§4.2.5). FROZEN ON THE WIRE.
constexpr int32_t kResultVoid = 0x0001, kResultRows = 0x0002, kResultSetKeyspace = 0x0003,
                  kResultPrepared = 0x0004, kResultSchemaChange = 0x0005;
// A Rows or Prepared result's metadata <flags> (§4.2.5.2). FROZEN ON THE WIRE.
constexpr int32_t kMetaGlobalTableSpec = 0x0001, kMetaHasMorePages = 0x0002, kMetaNoMetadata = 0x0004,
                  kMetaMetadataChanged = 0x0008;
// The ERROR body for protocol `version` (kProtocolV4 or kProtocolV5).
std::string EncodeError(const ErrorResponse& e, uint8_t version = kProtocolV4);

// SUPPORTED: [string multimap] (§4.2.4).
std::string EncodeSupported(const std::map<std::string, std::vector<std::string>>& options);

// [option] of a type (§4.2.5.2): id, then element options for collections and tuples.
void EncodeTypeOption(const CqlType& type, WireWriter* w);

struct ColumnSpec {
  std::string keyspace, table, name;
  CqlType type = CqlType::Scalar(TypeKind::kInt);
};

// Writes a RESULT/Rows body (§4.2.5.2): metadata, then rows of [bytes] cells.
class RowsWriter {
 public:
  // `paging_state` set: the Has_more_pages flag and the state follow.
  // `no_metadata`: only flags, column count and paging state (Skip_metadata requested).
  RowsWriter(const std::vector<ColumnSpec>& columns, const std::optional<std::string>& paging_state,
             bool no_metadata);
  // One row; REQUIRES: cells.size() == column count. nullopt = null.
  void AddRow(const std::vector<std::optional<std::string>>& cells);
  // The finished body. REQUIRES: called once.
  std::string Finish();
  size_t rows() const { return rows_; }

 private:
  WireWriter head_;
  WireWriter rows_body_;
  size_t columns_ = 0;
  size_t rows_ = 0;
};

// Writes the metadata block shared by Rows and Prepared results.
void EncodeRowsMetadata(const std::vector<ColumnSpec>& columns, const std::optional<std::string>& paging_state,
                        bool no_metadata, WireWriter* w);

std::string EncodeVoidResult();
std::string EncodeSetKeyspaceResult(std::string_view keyspace);
// PREPARED: id, in v5 the result metadata id (`result_metadata_id` set),
// bind-variable metadata with partition-key bind indexes, result metadata.
std::string EncodePreparedResult(std::string_view id, const std::optional<std::string>& result_metadata_id,
                                 const std::vector<ColumnSpec>& bind_columns,
                                 const std::vector<uint16_t>& partition_key_indexes,
                                 const std::vector<ColumnSpec>& result_columns);
// A RESULT/Rows body whose metadata the client must replace (v5 §4.2.5.2):
// `rows_body` with the Metadata_changed flag and `new_metadata_id` added.
// REQUIRES: `rows_body` was written with its metadata (no_metadata false).
// Returns `rows_body` unchanged when it is not a Rows result.
std::string WithChangedMetadata(const std::string& rows_body, std::string_view new_metadata_id);

// A schema change (§4.2.5.5 / §4.2.6): change_type CREATED|UPDATED|DROPPED,
// target KEYSPACE|TABLE|TYPE|FUNCTION|AGGREGATE.
struct SchemaChange {
  std::string change_type, target, keyspace, name;
  std::vector<std::string> argument_types;  // FUNCTION / AGGREGATE
};
std::string EncodeSchemaChangeResult(const SchemaChange& change);
std::string EncodeSchemaChangeEvent(const SchemaChange& change);
// The node events (§4.2.6): TOPOLOGY_CHANGE with change NEW_NODE or
// REMOVED_NODE, STATUS_CHANGE with UP or DOWN, each followed by the node's
// [inet]: address_bytes (4 or 16) and its CQL port.
std::string EncodeNodeEvent(std::string_view event_type, std::string_view change, std::string_view address_bytes,
                            int32_t port);

std::string EncodeAuthenticate(std::string_view authenticator_class);
std::string EncodeAuthSuccess(const std::optional<std::string>& token);

}  // namespace tessera::cql
