#include "cql/protocol/responses.h"

#include <algorithm>

namespace tessera::cql {
namespace {

bool SameTable(const std::vector<ColumnSpec>& cols) {
  for (const auto& c : cols) {
    if (c.keyspace != cols[0].keyspace || c.table != cols[0].table) return false;
  }
  return !cols.empty();
}

// Column specs with the global table spec when all columns share one table.
void EncodeColumnSpecs(const std::vector<ColumnSpec>& cols, bool global, WireWriter* w) {
  if (global) {
    w->String(cols[0].keyspace);
    w->String(cols[0].table);
  }
  for (const auto& c : cols) {
    if (!global) {
      w->String(c.keyspace);
      w->String(c.table);
    }
    w->String(c.name);
    EncodeTypeOption(c.type, w);
  }
}

void EncodeSchemaChangeBody(const SchemaChange& c, WireWriter* w) {
  w->String(c.change_type);
  w->String(c.target);
  w->String(c.keyspace);
  if (c.target == "KEYSPACE") return;
  w->String(c.name);
  if (c.target == "FUNCTION" || c.target == "AGGREGATE") w->StringList(c.argument_types);
}

// v5's <reason_map>: [int] n, then n times <endpoint><failurecode>, the
// endpoint an [inetaddr] (size byte, address).
void EncodeReasonMap(const ErrorResponse& e, WireWriter* w) {
  w->Int(static_cast<int32_t>(e.reasons.size()));
  for (const auto& reason : e.reasons) {
    w->Byte(static_cast<uint8_t>(reason.address.size()));
    w->Raw(reason.address);
    w->Short(reason.code);
  }
}

}  // namespace

std::string EncodeError(const ErrorResponse& e, uint8_t version) {
  const bool v5 = version >= kProtocolV5;
  WireWriter w;
  w.Int(static_cast<int32_t>(e.code));
  w.String(e.message);
  switch (e.code) {
    case ErrorCode::kUnavailable:
      w.Short(static_cast<uint16_t>(e.consistency));
      w.Int(e.required_or_received);
      w.Int(e.alive_or_blockfor);
      break;
    case ErrorCode::kWriteTimeout:
      w.Short(static_cast<uint16_t>(e.consistency));
      w.Int(e.required_or_received);
      w.Int(e.alive_or_blockfor);
      w.String(e.write_type);
      if (v5 && e.write_type == "CAS") w.Short(e.contentions);
      break;
    case ErrorCode::kReadTimeout:
      w.Short(static_cast<uint16_t>(e.consistency));
      w.Int(e.required_or_received);
      w.Int(e.alive_or_blockfor);
      w.Byte(e.data_present ? 1 : 0);
      break;
    case ErrorCode::kReadFailure:
      w.Short(static_cast<uint16_t>(e.consistency));
      w.Int(e.required_or_received);
      w.Int(e.alive_or_blockfor);
      if (v5) EncodeReasonMap(e, &w);
      else w.Int(std::max(e.failures, static_cast<int32_t>(e.reasons.size())));
      w.Byte(e.data_present ? 1 : 0);
      break;
    case ErrorCode::kWriteFailure:
      w.Short(static_cast<uint16_t>(e.consistency));
      w.Int(e.required_or_received);
      w.Int(e.alive_or_blockfor);
      if (v5) EncodeReasonMap(e, &w);
      else w.Int(std::max(e.failures, static_cast<int32_t>(e.reasons.size())));
      w.String(e.write_type);
      break;
    case ErrorCode::kAlreadyExists:
      w.String(e.keyspace);
      w.String(e.table);
      break;
    case ErrorCode::kFunctionFailure:
      w.String(e.keyspace);
      w.String(e.function);
      w.StringList(e.argument_types);
      break;
    case ErrorCode::kUnprepared:
      w.ShortBytes(e.unprepared_id);
      break;
    default:
      break;
  }
  return w.Take();
}

std::string EncodeSupported(const std::map<std::string, std::vector<std::string>>& options) {
  WireWriter w;
  w.StringMultimap(options);
  return w.Take();
}

void EncodeTypeOption(const CqlType& type, WireWriter* w) {
  if (type.kind() == TypeKind::kVector) {  // a custom type (v4 §4.2.5.2 option 0x0000) by its class name
    w->Short(0x0000);
    w->String(MarshalClassName(type));
    return;
  }
  w->Short(static_cast<uint16_t>(type.kind()));
  switch (type.kind()) {
    case TypeKind::kList:
    case TypeKind::kSet:
      EncodeTypeOption(type.params()[0], w);
      break;
    case TypeKind::kMap:
      EncodeTypeOption(type.params()[0], w);
      EncodeTypeOption(type.params()[1], w);
      break;
    case TypeKind::kTuple:
      w->Short(static_cast<uint16_t>(type.params().size()));
      for (const auto& p : type.params()) EncodeTypeOption(p, w);
      break;
    case TypeKind::kUdt:  // v4 §4.2.5.2: keyspace, type name, then each field's name and type
      w->String(type.udt_keyspace());
      w->String(type.udt_name());
      w->Short(static_cast<uint16_t>(type.params().size()));
      for (size_t i = 0; i < type.params().size(); ++i) {
        w->String(type.field_names()[i]);
        EncodeTypeOption(type.params()[i], w);
      }
      break;
    default:
      break;
  }
}

void EncodeRowsMetadata(const std::vector<ColumnSpec>& cols, const std::optional<std::string>& paging_state,
                        bool no_metadata, WireWriter* w) {
  bool global = !no_metadata && SameTable(cols);
  int32_t flags = (global ? kMetaGlobalTableSpec : 0) | (paging_state ? kMetaHasMorePages : 0) |
                  (no_metadata ? kMetaNoMetadata : 0);
  w->Int(flags);
  w->Int(static_cast<int32_t>(cols.size()));
  if (paging_state) w->Bytes(*paging_state);
  if (!no_metadata) EncodeColumnSpecs(cols, global, w);
}

RowsWriter::RowsWriter(const std::vector<ColumnSpec>& columns, const std::optional<std::string>& paging_state,
                       bool no_metadata)
    : columns_(columns.size()) {
  head_.Int(kResultRows);
  EncodeRowsMetadata(columns, paging_state, no_metadata, &head_);
}

void RowsWriter::AddRow(const std::vector<std::optional<std::string>>& cells) {
  for (const auto& c : cells) {
    if (c) rows_body_.Bytes(*c);
    else rows_body_.NullBytes();
  }
  ++rows_;
}

std::string RowsWriter::Finish() {
  head_.Int(static_cast<int32_t>(rows_));
  head_.Raw(rows_body_.data());
  return head_.Take();
}

std::string EncodeVoidResult() {
  WireWriter w;
  w.Int(kResultVoid);
  return w.Take();
}

std::string EncodeSetKeyspaceResult(std::string_view keyspace) {
  WireWriter w;
  w.Int(kResultSetKeyspace);
  w.String(keyspace);
  return w.Take();
}

std::string EncodePreparedResult(std::string_view id, const std::optional<std::string>& result_metadata_id,
                                 const std::vector<ColumnSpec>& bind, const std::vector<uint16_t>& pk_indexes,
                                 const std::vector<ColumnSpec>& result) {
  WireWriter w;
  w.Int(kResultPrepared);
  w.ShortBytes(id);
  if (result_metadata_id) w.ShortBytes(*result_metadata_id);
  bool global = SameTable(bind);
  w.Int(global ? kMetaGlobalTableSpec : 0);
  w.Int(static_cast<int32_t>(bind.size()));
  w.Int(static_cast<int32_t>(pk_indexes.size()));
  for (uint16_t i : pk_indexes) w.Short(i);
  if (!bind.empty()) EncodeColumnSpecs(bind, global, &w);
  EncodeRowsMetadata(result, std::nullopt, false, &w);
  return w.Take();
}

std::string WithChangedMetadata(const std::string& rows_body, std::string_view new_metadata_id) {
  WireReader r(rows_body);
  int32_t kind = 0, flags = 0, columns = 0;
  if (!r.Int(&kind) || kind != kResultRows || !r.Int(&flags) || !r.Int(&columns) || (flags & kMetaNoMetadata)) {
    return rows_body;
  }
  if (flags & kMetaHasMorePages) {
    std::optional<std::string> paging_state;
    if (!r.Bytes(&paging_state)) return rows_body;
  }
  const size_t at = r.position();  // the new metadata id goes here, before the column specs
  WireWriter w;
  w.Int(kResultRows);
  w.Int(flags | kMetaMetadataChanged);
  w.Int(columns);
  std::string out = w.Take();
  out.append(rows_body, 12, at - 12);  // the paging state, if any
  WireWriter id;
  id.ShortBytes(new_metadata_id);
  out += id.Take();
  out.append(rows_body, at, std::string::npos);
  return out;
}

std::string EncodeSchemaChangeResult(const SchemaChange& c) {
  WireWriter w;
  w.Int(kResultSchemaChange);
  EncodeSchemaChangeBody(c, &w);
  return w.Take();
}

std::string EncodeSchemaChangeEvent(const SchemaChange& c) {
  WireWriter w;
  w.String("SCHEMA_CHANGE");
  EncodeSchemaChangeBody(c, &w);
  return w.Take();
}

std::string EncodeNodeEvent(std::string_view event_type, std::string_view change, std::string_view address_bytes,
                            int32_t port) {
  WireWriter w;
  w.String(event_type);
  w.String(change);
  w.Inet(address_bytes, port);
  return w.Take();
}

std::string EncodeAuthenticate(std::string_view authenticator_class) {
  WireWriter w;
  w.String(authenticator_class);
  return w.Take();
}

std::string EncodeAuthSuccess(const std::optional<std::string>& token) {
  WireWriter w;
  if (token) w.Bytes(*token);
  else w.NullBytes();
  return w.Take();
}

}  // namespace tessera::cql
