// RecordReader: the records of a CSV, TSV or JSON-lines file, one at a time,
// with their line numbers — the input side of `tessera load`.
//
//  - CSV (RFC 4180): comma-separated; fields may be double-quoted, with ""
//    for a quote inside; a quoted field may span lines (the record's line
//    number is the line it starts on).
//  - TSV: tab-separated, no quoting (the layout of the NASA-HTTP dataset).
//  - JSON lines: one JSON object per line; each member is a field, its value
//    as text (strings without quotes, numbers and booleans as written, null
//    as absent).
// Blank lines are skipped in every format. A file ending in .gz is read
// through gzip (zlib); progress counts compressed bytes.
// CSV and TSV take their field names from a header line (default) or name
// fields by 1-based position ("1", "2", ...).
//
// Errors: a record that cannot be read (unterminated quote, bad JSON, a JSON
// line that is not an object) is returned as a Record with `error` set, so
// that the loader can reject it with its line number and read on.
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::loader {

enum class Format { kCsv, kTsv, kJsonLines };

// The format named by a file's extension (.csv, .tsv/.tab, .jsonl/.ndjson/.json),
// after any .gz.
// Errors: InvalidArgument for another extension.
Result<Format> FormatOfPath(const std::string& path);
Result<Format> ParseFormat(const std::string& name);  // "csv", "tsv", "jsonl"

struct Record {
  uint64_t line = 0;                          // 1-based line where the record starts
  std::string raw;                            // the record's text as read (for the reject file)
  std::map<std::string, std::string> fields;  // field name -> text; absent = null
  std::string error;                          // non-empty: the record could not be parsed
};

class RecordReader {
 public:
  // Opens `path`. `header`: CSV/TSV files start with a line of field names.
  // Errors: IOError (cannot open), InvalidArgument (empty file with header).
  static Result<std::unique_ptr<RecordReader>> Open(const std::string& path, Format format, bool header);

  // The next record, or nullopt at the end of the file.
  std::optional<Record> Next();
  // Field names from the header (CSV/TSV with header), else empty.
  const std::vector<std::string>& header() const { return header_; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t file_size() const { return file_size_; }

 private:
  RecordReader() = default;
 public:
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

 private:
  bool ReadLine(std::string* line);
  // Splits one CSV record, reading more lines while a quote is open.
  bool SplitCsv(std::string* raw, std::vector<std::string>* fields, std::string* error);
  Record FromFields(uint64_t line, std::string raw, std::vector<std::string> fields) const;

  void* gz_ = nullptr;  // zlib gzFile: reads gzip and plain files alike
  Format format_ = Format::kCsv;
  std::vector<std::string> header_;
  uint64_t line_ = 0;
  uint64_t bytes_read_ = 0;
  uint64_t file_size_ = 0;
};

}  // namespace tessera::loader
