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
// Errors: Corruption when the text is not a version-1 table document, or a
// column names a user type `user_types` does not resolve.
Result<TableSchema> TableFromJson(const std::string& text, const UserTypeLookup* user_types = nullptr);

// A user-defined type (REQUIRES: kind kUdt): {"format": 1, "keyspace", "name",
// "fields": [{"name", "type"}]}, field types in CQL spelling.
std::string UserTypeToJson(const CqlType& type);
// The type, frozen. Errors: Corruption (not a version-1 type document), NotFound
// when a field names a user type `user_types` does not resolve (yet).
Result<CqlType> UserTypeFromJson(const std::string& text, const UserTypeLookup* user_types);

std::string KeyspaceToJson(const KeyspaceMetadata& ks);
Result<KeyspaceMetadata> KeyspaceFromJson(const std::string& text);

}  // namespace tessera
