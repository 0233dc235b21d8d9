// libFuzzer target: the client-side response decoder (what `tessera load`,
// `shell`, `demo` and `bench` run on every reply): byte 0 picks the opcode
// and the header flags, the rest is the body. Properties: no crash, no hang,
// and the same verdict twice; a decoded Rows result has as many cells per
// row as it has columns (or none, with No_metadata).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cql/protocol/response_decoding.h"

using namespace tessera::cql;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const uint8_t kOpcodes[] = {0x00, 0x02, 0x06, 0x08, 0x0C, 0x10};
  const uint8_t opcode = kOpcodes[data[0] % sizeof kOpcodes];
  const uint8_t flags = static_cast<uint8_t>((data[0] >> 4) & (kFlagTracing | kFlagWarning));
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto first = DecodeResponse(opcode, flags, body);
  auto second = DecodeResponse(opcode, flags, body);
  if (first.ok() != second.ok()) abort();
  if (first.ok() && first->result_kind == 2) {
    const auto& rows = first->rows;
    for (const auto& row : rows.rows) {
      if (!rows.columns.empty() && row.size() != rows.columns.size()) abort();
    }
  }
  return 0;
}
