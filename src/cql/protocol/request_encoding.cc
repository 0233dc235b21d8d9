#include "cql/protocol/request_encoding.h"

#include <type_traits>

#include "common/bytes.h"

namespace tessera::cql {
namespace {

void PutValues(const std::vector<WireValue>& values, WireWriter* w) {
  w->Short(static_cast<uint16_t>(values.size()));
  for (const auto& v : values) {
    switch (v.kind) {
      case WireValue::Kind::kBytes: w->Bytes(v.bytes); break;
      case WireValue::Kind::kNull: w->Int(-1); break;
      case WireValue::Kind::kUnset: w->Int(-2); break;
    }
  }
}

void PutParameters(const QueryParameters& p, WireWriter* w) {
  w->Short(static_cast<uint16_t>(p.consistency));
  uint8_t flags = 0;
  if (!p.values.empty()) flags |= QueryParameters::kValues;
  if (p.skip_metadata) flags |= QueryParameters::kSkipMetadata;
  if (p.page_size) flags |= QueryParameters::kPageSize;
  if (p.paging_state) flags |= QueryParameters::kPagingState;
  if (p.serial_consistency) flags |= QueryParameters::kSerialConsistency;
  if (p.default_timestamp) flags |= QueryParameters::kDefaultTimestamp;
  w->Byte(flags);
  if (!p.values.empty()) PutValues(p.values, w);
  if (p.page_size) w->Int(*p.page_size);
  if (p.paging_state) w->Bytes(*p.paging_state);
  if (p.serial_consistency) w->Short(static_cast<uint16_t>(*p.serial_consistency));
  if (p.default_timestamp) w->Long(*p.default_timestamp);
}

}  // namespace

EncodedRequest EncodeRequest(const Request& request) {
  WireWriter w;
  Opcode op = Opcode::kOptions;
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, StartupRequest>) {
          op = Opcode::kStartup;
          w.Short(static_cast<uint16_t>(r.options.size()));
          for (const auto& [k, v] : r.options) {
            w.String(k);
            w.String(v);
          }
        } else if constexpr (std::is_same_v<T, OptionsRequest>) {
          op = Opcode::kOptions;
        } else if constexpr (std::is_same_v<T, QueryRequest>) {
          op = Opcode::kQuery;
          w.LongString(r.query);
          PutParameters(r.params, &w);
        } else if constexpr (std::is_same_v<T, PrepareRequest>) {
          op = Opcode::kPrepare;
          w.LongString(r.query);
        } else if constexpr (std::is_same_v<T, ExecuteRequest>) {
          op = Opcode::kExecute;
          w.ShortBytes(r.id);
          PutParameters(r.params, &w);
        } else if constexpr (std::is_same_v<T, BatchRequest>) {
          op = Opcode::kBatch;
          w.Byte(r.type);
          w.Short(static_cast<uint16_t>(r.statements.size()));
          for (const auto& s : r.statements) {
            w.Byte(s.prepared ? 1 : 0);
            s.prepared ? w.ShortBytes(s.query_or_id) : w.LongString(s.query_or_id);
            PutValues(s.values, &w);
          }
          w.Short(static_cast<uint16_t>(r.consistency));
          uint8_t flags = 0;
          if (r.serial_consistency) flags |= QueryParameters::kSerialConsistency;
          if (r.default_timestamp) flags |= QueryParameters::kDefaultTimestamp;
          w.Byte(flags);
          if (r.serial_consistency) w.Short(static_cast<uint16_t>(*r.serial_consistency));
          if (r.default_timestamp) w.Long(*r.default_timestamp);
        } else if constexpr (std::is_same_v<T, RegisterRequest>) {
          op = Opcode::kRegister;
          w.StringList(r.event_types);
        } else if constexpr (std::is_same_v<T, AuthResponseRequest>) {
          op = Opcode::kAuthResponse;
          r.token ? w.Bytes(*r.token) : w.NullBytes();
        }
      },
      request);
  return EncodedRequest{op, w.Take()};
}

std::string EncodeRequestFrame(int16_t stream, const EncodedRequest& request, uint8_t flags) {
  std::string f;
  f.push_back(static_cast<char>(kProtocolV4));
  f.push_back(static_cast<char>(flags));
  PutBigEndian16(&f, static_cast<uint16_t>(stream));
  f.push_back(static_cast<char>(request.opcode));
  PutBigEndian32(&f, static_cast<uint32_t>(request.body.size()));
  f += request.body;
  return f;
}

}  // namespace tessera::cql
