// JSON form of schema objects, used to persist the catalog. The field names
// and the column-kind / order / distribution spellings are FROZEN ON DISK
// (format version 1).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "common/status.h"
#include "types/schema.h"

namespace tessera {

std::string TableToJson(const TableSchema& table);
// Errors: Corruption when the text is not a version-1 table document.
Result<TableSchema> TableFromJson(const std::string& text);

std::string KeyspaceToJson(const KeyspaceMetadata& ks);
Result<KeyspaceMetadata> KeyspaceFromJson(const std::string& text);

}  // namespace tessera
