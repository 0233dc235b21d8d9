// Prints response bodies encoded by Tessera, one per line as
// "name<TAB>opcode<TAB>hex", for tests/cql/check_responses_with_driver.py,
// which decodes them with the DataStax Python driver.
#include <cstdio>

#include "common/bytes.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/responses.h"

using namespace tessera;
using namespace tessera::cql;

static void Print(const char* name, Opcode op, const std::string& body) {
  std::printf("%s\t%d\t%s\n", name, static_cast<int>(op), ToHex(body).c_str());
}

int main() {
  Print("supported", Opcode::kSupported,
        EncodeSupported({{"CQL_VERSION", {"3.4.5"}}, {"COMPRESSION", {"lz4", "snappy"}}, {"PROTOCOL_VERSIONS", {"4/v4"}}}));
  Print("ready", Opcode::kReady, "");
  ErrorResponse exists{ErrorCode::kAlreadyExists, "Table ks.t already exists", "ks", "t"};
  Print("already_exists", Opcode::kError, EncodeError(exists));
  ErrorResponse unprepared{ErrorCode::kUnprepared, "Prepared query with ID abcd not found"};
  unprepared.unprepared_id = "\xab\xcd";
  Print("unprepared", Opcode::kError, EncodeError(unprepared));
  ErrorResponse syntax{ErrorCode::kSyntaxError, "line 1:7 no viable alternative at input 'FROM'"};
  Print("syntax", Opcode::kError, EncodeError(syntax));
  ErrorResponse timeout{ErrorCode::kWriteTimeout, "timed out"};
  timeout.consistency = Consistency::kQuorum;
  timeout.required_or_received = 1;
  timeout.alive_or_blockfor = 2;
  timeout.write_type = "BATCH_LOG";
  Print("write_timeout", Opcode::kError, EncodeError(timeout));
  Print("void", Opcode::kResult, EncodeVoidResult());
  Print("set_keyspace", Opcode::kResult, EncodeSetKeyspaceResult("ks"));

  std::vector<ColumnSpec> cols = {{"ks", "t", "k", CqlType::Scalar(TypeKind::kInt)},
                                  {"ks", "t", "v", CqlType::Scalar(TypeKind::kText)},
                                  {"ks", "t", "tags", *CqlType::Parse("frozen<map<text, list<int>>>")},
                                  {"ks", "t", "pair", *CqlType::Parse("tuple<bigint, boolean>")}};
  RowsWriter rows(cols, std::string("\x01\x02", 2), false);
  std::string map_value, tuple_value;
  // {'a': [7]}: 1 entry; key "a"; value = list of 1 int 7
  FromHex("00000001" "00000001" "61" "0000000c" "00000001" "00000004" "00000007", &map_value);
  // (42, true)
  FromHex("00000008" "000000000000002a" "00000001" "01", &tuple_value);
  rows.AddRow({std::string("\x00\x00\x00\x01", 4), std::string("one"), map_value, tuple_value});
  rows.AddRow({std::string("\x00\x00\x00\x02", 4), std::nullopt, std::nullopt, std::nullopt});
  Print("rows", Opcode::kResult, rows.Finish());
  std::vector<ColumnSpec> system_cols = {{"system", "local", "key", CqlType::Scalar(TypeKind::kText)},
                                         {"ks", "t", "v", CqlType::Scalar(TypeKind::kText)}};
  RowsWriter mixed(system_cols, std::nullopt, false);
  mixed.AddRow({std::string("local"), std::string("x")});
  Print("rows_mixed_tables", Opcode::kResult, mixed.Finish());

  std::vector<ColumnSpec> bind = {{"ks", "t", "k", CqlType::Scalar(TypeKind::kInt)},
                                  {"ks", "t", "v", CqlType::Scalar(TypeKind::kText)}};
  Print("prepared", Opcode::kResult, EncodePreparedResult("\x11\x22\x33", std::nullopt, bind, {0}, cols));
  Print("schema_change_table", Opcode::kResult, EncodeSchemaChangeResult({"CREATED", "TABLE", "ks", "t"}));
  Print("schema_change_keyspace", Opcode::kResult, EncodeSchemaChangeResult({"DROPPED", "KEYSPACE", "ks", ""}));
  Print("schema_event", Opcode::kEvent, EncodeSchemaChangeEvent({"UPDATED", "TABLE", "ks", "t"}));
  Print("authenticate", Opcode::kAuthenticate, EncodeAuthenticate("org.apache.cassandra.auth.PasswordAuthenticator"));
  return 0;
}
