#include "cql/protocol/requests.h"

#include <algorithm>
#include <cctype>

#include "cql/protocol/frame.h"

namespace tessera::cql {
namespace {

Status Malformed(const char* what, const WireReader& r) {
  return Status::InvalidArgument(std::string("malformed ") + what + " at byte " + std::to_string(r.position()));
}

bool ReadConsistency(WireReader* r, Consistency* c) {
  uint16_t v;
  if (!r->Short(&v) || v > static_cast<uint16_t>(Consistency::kLocalOne)) return false;
  *c = static_cast<Consistency>(v);
  return true;
}

Status ReadValues(WireReader* r, bool named, std::vector<WireValue>* values, std::vector<std::string>* names) {
  uint16_t n;
  if (!r->Short(&n)) return Malformed("value count", *r);
  for (uint16_t i = 0; i < n; ++i) {
    if (named) {
      std::string name;
      if (!r->String(&name)) return Malformed("value name", *r);
      names->push_back(std::move(name));
    }
    WireValue v;
    if (!r->Value(&v)) return Malformed("value", *r);
    values->push_back(std::move(v));
  }
  return Status::OK();
}

// The flags: a [byte] in v4, an [int] in v5; `known` the bits understood.
bool ReadFlags(WireReader* r, uint8_t version, uint32_t known, uint32_t* flags) {
  if (version >= kProtocolV5) {
    int32_t v;
    if (!r->Int(&v)) return false;
    *flags = static_cast<uint32_t>(v);
  } else {
    uint8_t v;
    if (!r->Byte(&v)) return false;
    *flags = v;
  }
  return (*flags & ~known) == 0;
}

// The v5 tail of QUERY, EXECUTE and BATCH: [<keyspace>][<now_in_seconds>].
Status ReadKeyspaceAndNow(WireReader* r, uint32_t flags, std::optional<std::string>* keyspace,
                          std::optional<int32_t>* now_in_seconds) {
  if (flags & QueryParameters::kKeyspace) {
    std::string ks;
    if (!r->String(&ks)) return Malformed("keyspace", *r);
    *keyspace = std::move(ks);
  }
  if (flags & QueryParameters::kNowInSeconds) {
    int32_t now;
    if (!r->Int(&now)) return Malformed("now in seconds", *r);
    *now_in_seconds = now;
  }
  return Status::OK();
}

Status ReadQueryParameters(WireReader* r, uint8_t version, QueryParameters* p) {
  if (!ReadConsistency(r, &p->consistency)) return Malformed("consistency", *r);
  const uint32_t known = version >= kProtocolV5 ? 0x1FF : 0x7F;
  if (!ReadFlags(r, version, known, &p->flags)) return Malformed("query flags", *r);
  if (p->flags & QueryParameters::kValues) {
    TESSERA_RETURN_IF_ERROR(ReadValues(r, p->flags & QueryParameters::kNamesForValues, &p->values, &p->value_names));
  }
  p->skip_metadata = p->flags & QueryParameters::kSkipMetadata;
  if (p->flags & QueryParameters::kPageSize) {
    int32_t n;
    if (!r->Int(&n)) return Malformed("page size", *r);
    p->page_size = n;
  }
  if (p->flags & QueryParameters::kPagingState) {
    std::optional<std::string> state;
    if (!r->Bytes(&state)) return Malformed("paging state", *r);
    p->paging_state = state;
  }
  if (p->flags & QueryParameters::kSerialConsistency) {
    Consistency c;
    if (!ReadConsistency(r, &c)) return Malformed("serial consistency", *r);
    p->serial_consistency = c;
  }
  if (p->flags & QueryParameters::kDefaultTimestamp) {
    int64_t ts;
    if (!r->Long(&ts)) return Malformed("default timestamp", *r);
    p->default_timestamp = ts;
  }
  return ReadKeyspaceAndNow(r, p->flags, &p->keyspace, &p->now_in_seconds);
}

Status ExpectEnd(const WireReader& r) { return r.AtEnd() ? Status::OK() : Malformed("message (trailing bytes)", r); }

Result<Request> DecodeBatch(WireReader* r, uint8_t version) {
  BatchRequest b;
  uint8_t type;
  if (!r->Byte(&type) || type > BatchRequest::kCounter) return Malformed("batch type", *r);
  b.type = static_cast<BatchRequest::Type>(type);
  uint16_t n;
  if (!r->Short(&n)) return Malformed("batch statement count", *r);
  // The flags (and so whether values are named) come after the statements;
  // drivers never name batch values (CASSANDRA-10246), so parse unnamed.
  for (uint16_t i = 0; i < n; ++i) {
    BatchEntry s;
    uint8_t kind;
    if (!r->Byte(&kind) || kind > 1) return Malformed("batch statement kind", *r);
    s.prepared = kind == 1;
    if (s.prepared ? !r->ShortBytes(&s.query_or_id) : !r->LongString(&s.query_or_id)) {
      return Malformed("batch statement", *r);
    }
    TESSERA_RETURN_IF_ERROR(ReadValues(r, false, &s.values, &s.value_names));
    b.statements.push_back(std::move(s));
  }
  if (!ReadConsistency(r, &b.consistency)) return Malformed("batch consistency", *r);
  // The four lowest bits are meaningless for a batch and must be 0; names (0x40) are refused below.
  const uint32_t known = version >= kProtocolV5 ? 0x1F0 : 0x70;
  if (!ReadFlags(r, version, known, &b.flags)) return Malformed("batch flags", *r);
  if (b.flags & QueryParameters::kSerialConsistency) {
    Consistency c;
    if (!ReadConsistency(r, &c)) return Malformed("batch serial consistency", *r);
    b.serial_consistency = c;
  }
  if (b.flags & QueryParameters::kDefaultTimestamp) {
    int64_t ts;
    if (!r->Long(&ts)) return Malformed("batch timestamp", *r);
    b.default_timestamp = ts;
  }
  TESSERA_RETURN_IF_ERROR(ReadKeyspaceAndNow(r, b.flags, &b.keyspace, &b.now_in_seconds));
  TESSERA_RETURN_IF_ERROR(ExpectEnd(*r));
  return Request(std::move(b));
}

}  // namespace

const char* ConsistencyName(Consistency c) {
  static const char* kNames[] = {"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
                                 "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE"};
  auto i = static_cast<size_t>(c);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "UNKNOWN";
}

std::optional<Consistency> ConsistencyFromName(std::string_view name) {
  for (uint16_t i = 0; i <= static_cast<uint16_t>(Consistency::kLocalOne); ++i) {
    const std::string_view known = ConsistencyName(static_cast<Consistency>(i));
    if (known.size() == name.size() &&
        std::equal(known.begin(), known.end(), name.begin(),
                   [](char a, char b) { return a == std::toupper(static_cast<unsigned char>(b)); })) {
      return static_cast<Consistency>(i);
    }
  }
  return std::nullopt;
}

Result<Request> DecodeRequest(uint8_t opcode, std::string_view body, uint8_t version) {
  WireReader r(body);
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::kStartup: {
      StartupRequest s;
      if (!r.StringMap(&s.options)) return Malformed("STARTUP options", r);
      TESSERA_RETURN_IF_ERROR(ExpectEnd(r));
      return Request(std::move(s));
    }
    case Opcode::kOptions:
      return Request(OptionsRequest{});  // body ignored, as Cassandra does
    case Opcode::kQuery: {
      QueryRequest q;
      if (!r.LongString(&q.query)) return Malformed("query string", r);
      TESSERA_RETURN_IF_ERROR(ReadQueryParameters(&r, version, &q.params));
      TESSERA_RETURN_IF_ERROR(ExpectEnd(r));
      return Request(std::move(q));
    }
    case Opcode::kPrepare: {
      PrepareRequest p;
      if (!r.LongString(&p.query)) return Malformed("query string", r);
      if (version >= kProtocolV5) {
        uint32_t flags;
        if (!ReadFlags(&r, version, 0x01, &flags)) return Malformed("prepare flags", r);
        if (flags & 0x01) {
          std::string ks;
          if (!r.String(&ks)) return Malformed("keyspace", r);
          p.keyspace = std::move(ks);
        }
      }
      TESSERA_RETURN_IF_ERROR(ExpectEnd(r));
      return Request(std::move(p));
    }
    case Opcode::kExecute: {
      ExecuteRequest e;
      if (!r.ShortBytes(&e.id)) return Malformed("prepared id", r);
      if (version >= kProtocolV5) {
        std::string metadata_id;
        if (!r.ShortBytes(&metadata_id)) return Malformed("result metadata id", r);
        e.result_metadata_id = std::move(metadata_id);
      }
      TESSERA_RETURN_IF_ERROR(ReadQueryParameters(&r, version, &e.params));
      TESSERA_RETURN_IF_ERROR(ExpectEnd(r));
      return Request(std::move(e));
    }
    case Opcode::kBatch:
      return DecodeBatch(&r, version);
    case Opcode::kRegister: {
      RegisterRequest g;
      if (!r.StringList(&g.event_types)) return Malformed("event types", r);
      TESSERA_RETURN_IF_ERROR(ExpectEnd(r));
      return Request(std::move(g));
    }
    case Opcode::kAuthResponse: {
      AuthResponseRequest a;
      if (!r.Bytes(&a.token)) return Malformed("auth token", r);
      TESSERA_RETURN_IF_ERROR(ExpectEnd(r));
      return Request(std::move(a));
    }
    default:
      return Status::InvalidArgument(std::string("unknown or non-request opcode ") + OpcodeName(opcode) + " (" +
                                     std::to_string(opcode) + ")");
  }
}

}  // namespace tessera::cql
