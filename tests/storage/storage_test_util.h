// Helpers the storage tests share: a fresh directory per test process and a
// one-cell row fragment.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "storage/row_fragment.h"

namespace tessera::testing {

// A path under the temp directory, emptied, unique to this process.
inline std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tessera_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

// A row fragment with one cell (column 1) written at `ts`.
inline std::string Fragment(int64_t ts, std::string v) {
  RowFragment r;
  Cell c;
  c.column_id = 1;
  c.timestamp = ts;
  c.value = std::move(v);
  r.cells.push_back(c);
  std::string out;
  EncodeRowFragment(r, &out);
  return out;
}

}  // namespace tessera::testing
