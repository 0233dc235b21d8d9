#include "cql/protocol/response_decoding.h"

namespace tessera::cql {
namespace {

constexpr int kMaxTypeDepth = 32;

Status MalformedResponse(const char* what, const WireReader& r) {
  return Status::Corruption(std::string("malformed response: ") + what + " at byte " + std::to_string(r.position()));
}

Result<CqlType> DecodeType(WireReader* r, int depth) {
  if (depth > kMaxTypeDepth) return MalformedResponse("type nested too deeply", *r);
  uint16_t id;
  if (!r->Short(&id)) return MalformedResponse("type id", *r);
  const auto kind = static_cast<TypeKind>(id);
  switch (kind) {
    case TypeKind::kList:
    case TypeKind::kSet: {
      TESSERA_ASSIGN_OR_RETURN(CqlType element, DecodeType(r, depth + 1));
      return kind == TypeKind::kList ? CqlType::List(std::move(element), false)
                                     : CqlType::Set(std::move(element), false);
    }
    case TypeKind::kMap: {
      TESSERA_ASSIGN_OR_RETURN(CqlType key, DecodeType(r, depth + 1));
      TESSERA_ASSIGN_OR_RETURN(CqlType value, DecodeType(r, depth + 1));
      return CqlType::Map(std::move(key), std::move(value), false);
    }
    case TypeKind::kTuple: {
      uint16_t n;
      if (!r->Short(&n)) return MalformedResponse("tuple arity", *r);
      std::vector<CqlType> components;
      for (uint16_t i = 0; i < n; ++i) {
        TESSERA_ASSIGN_OR_RETURN(CqlType c, DecodeType(r, depth + 1));
        components.push_back(std::move(c));
      }
      return CqlType::Tuple(std::move(components));
    }
    case TypeKind::kUdt: {
      std::string keyspace, name;
      uint16_t n;
      if (!r->String(&keyspace) || !r->String(&name) || !r->Short(&n)) return MalformedResponse("user type", *r);
      if (n == 0) return MalformedResponse("user type without fields", *r);
      std::vector<std::string> field_names;
      std::vector<CqlType> field_types;
      for (uint16_t i = 0; i < n; ++i) {
        std::string field;
        if (!r->String(&field)) return MalformedResponse("user type field name", *r);
        TESSERA_ASSIGN_OR_RETURN(CqlType t, DecodeType(r, depth + 1));
        field_names.push_back(std::move(field));
        field_types.push_back(std::move(t));
      }
      return CqlType::UserType(std::move(keyspace), std::move(name), std::move(field_names), std::move(field_types),
                               /*frozen=*/true);
    }
    default:
      break;
  }
  if (id == 0x0000) {  // a custom type: vectors (Cassandra 5.0) are the only one we read
    std::string class_name;
    if (!r->String(&class_name)) return MalformedResponse("custom type class", *r);
    auto type = ParseMarshalClassName(class_name);
    if (!type.ok()) return MalformedResponse("unsupported custom type", *r);
    return type;
  }
  if (id > static_cast<uint16_t>(TypeKind::kDuration)) return MalformedResponse("unsupported type", *r);
  return CqlType::Scalar(kind);
}

Status DecodeSpecs(WireReader* r, int32_t count, bool global, std::vector<ColumnSpec>* out) {
  std::string ks, table;
  if (global && (!r->String(&ks) || !r->String(&table))) return MalformedResponse("global table spec", *r);
  for (int32_t i = 0; i < count; ++i) {
    ColumnSpec c;
    if (global) {
      c.keyspace = ks;
      c.table = table;
    } else if (!r->String(&c.keyspace) || !r->String(&c.table)) {
      return MalformedResponse("column table spec", *r);
    }
    if (!r->String(&c.name)) return MalformedResponse("column name", *r);
    TESSERA_ASSIGN_OR_RETURN(c.type, DecodeType(r, 0));
    out->push_back(std::move(c));
  }
  return Status::OK();
}

Status DecodeRowsMetadata(WireReader* r, DecodedRows* rows, int32_t* column_count) {
  int32_t flags;
  if (!r->Int(&flags) || !r->Int(column_count) || *column_count < 0) return MalformedResponse("rows metadata", *r);
  if (flags & kMetaHasMorePages) {
    std::optional<std::string> state;
    if (!r->Bytes(&state)) return MalformedResponse("paging state", *r);
    rows->paging_state = state.value_or("");
  }
  if (flags & kMetaNoMetadata) return Status::OK();
  return DecodeSpecs(r, *column_count, flags & kMetaGlobalTableSpec, &rows->columns);
}

Status DecodeRows(WireReader* r, DecodedRows* rows) {
  int32_t columns = 0, count = 0;
  TESSERA_RETURN_IF_ERROR(DecodeRowsMetadata(r, rows, &columns));
  if (!r->Int(&count) || count < 0) return MalformedResponse("row count", *r);
  // Every cell takes at least its 4-byte length: a count the body cannot
  // hold is malformed, before anything is allocated for it. Rows without
  // columns take no bytes at all, and no server sends them.
  const uint64_t cells = static_cast<uint64_t>(count) * static_cast<uint64_t>(columns);
  if (cells > r->remaining() / 4 || (columns == 0 && count > 0)) return MalformedResponse("row count", *r);
  for (int32_t i = 0; i < count; ++i) {
    std::vector<std::optional<std::string>> row(static_cast<size_t>(columns));
    for (auto& cell : row) {
      if (!r->Bytes(&cell)) return MalformedResponse("cell", *r);
    }
    rows->rows.push_back(std::move(row));
  }
  return Status::OK();
}

Status DecodePrepared(WireReader* r, DecodedPrepared* p) {
  if (!r->ShortBytes(&p->id)) return MalformedResponse("prepared id", *r);
  int32_t flags, count, pk_count;
  if (!r->Int(&flags) || !r->Int(&count) || !r->Int(&pk_count) || count < 0 || pk_count < 0) {
    return MalformedResponse("prepared metadata", *r);
  }
  for (int32_t i = 0; i < pk_count; ++i) {
    uint16_t index;
    if (!r->Short(&index)) return MalformedResponse("partition key index", *r);
    p->partition_key_indexes.push_back(index);
  }
  TESSERA_RETURN_IF_ERROR(DecodeSpecs(r, count, flags & kMetaGlobalTableSpec, &p->bind_columns));
  DecodedRows result;
  int32_t result_columns = 0;
  TESSERA_RETURN_IF_ERROR(DecodeRowsMetadata(r, &result, &result_columns));
  p->result_columns = std::move(result.columns);
  return Status::OK();
}

Status DecodeSchemaChange(WireReader* r, SchemaChange* c) {
  if (!r->String(&c->change_type) || !r->String(&c->target) || !r->String(&c->keyspace)) {
    return MalformedResponse("schema change", *r);
  }
  if (c->target == "KEYSPACE") return Status::OK();
  if (!r->String(&c->name)) return MalformedResponse("schema change name", *r);
  if ((c->target == "FUNCTION" || c->target == "AGGREGATE") && !r->StringList(&c->argument_types)) {
    return MalformedResponse("schema change arguments", *r);
  }
  return Status::OK();
}

}  // namespace

Result<CqlType> DecodeTypeOption(WireReader* reader) { return DecodeType(reader, 0); }

Result<DecodedResponse> DecodeResponse(uint8_t opcode, uint8_t flags, std::string_view body) {
  DecodedResponse out;
  out.opcode = static_cast<Opcode>(opcode);
  WireReader r(body);
  if (flags & kFlagTracing) {
    for (int i = 0; i < 16; ++i) {
      uint8_t b;
      if (!r.Byte(&b)) return MalformedResponse("tracing id", r);
      out.tracing_id.push_back(static_cast<char>(b));
    }
  }
  if ((flags & kFlagWarning) && !r.StringList(&out.warnings)) return MalformedResponse("warnings", r);
  switch (out.opcode) {
    case Opcode::kError:
      if (!r.Int(&out.error_code) || !r.String(&out.error_message)) return MalformedResponse("error", r);
      return out;  // code-specific fields are not needed by the client
    case Opcode::kReady:
    case Opcode::kSupported:
    case Opcode::kAuthSuccess:
      return out;
    case Opcode::kAuthenticate:
      if (!r.String(&out.authenticator)) return MalformedResponse("authenticator", r);
      return out;
    case Opcode::kEvent: {
      std::string type;
      if (!r.String(&type)) return MalformedResponse("event type", r);
      if (type == "SCHEMA_CHANGE") TESSERA_RETURN_IF_ERROR(DecodeSchemaChange(&r, &out.schema_change));
      return out;
    }
    case Opcode::kResult:
      break;
    default:
      return Status::Corruption("unexpected response opcode " + std::to_string(opcode));
  }
  if (!r.Int(&out.result_kind)) return MalformedResponse("result kind", r);
  switch (out.result_kind) {
    case kResultVoid: break;
    case kResultRows: TESSERA_RETURN_IF_ERROR(DecodeRows(&r, &out.rows)); break;
    case kResultSetKeyspace:
      if (!r.String(&out.keyspace)) return MalformedResponse("keyspace", r);
      break;
    case kResultPrepared: TESSERA_RETURN_IF_ERROR(DecodePrepared(&r, &out.prepared)); break;
    case kResultSchemaChange: TESSERA_RETURN_IF_ERROR(DecodeSchemaChange(&r, &out.schema_change)); break;
    default: return MalformedResponse("result kind", r);
  }
  return out;
}

}  // namespace tessera::cql
