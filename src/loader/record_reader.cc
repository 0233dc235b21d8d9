#include "loader/record_reader.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <filesystem>

namespace tessera::loader {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == '\t') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::string JsonText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();  // numbers, booleans, arrays and objects as JSON text
}

}  // namespace

Result<Format> ParseFormat(const std::string& name) {
  if (name == "csv") return Format::kCsv;
  if (name == "tsv") return Format::kTsv;
  if (name == "jsonl" || name == "ndjson" || name == "json") return Format::kJsonLines;
  return Status::InvalidArgument("unknown format '" + name + "' (csv, tsv or jsonl)");
}

Result<Format> FormatOfPath(const std::string& gz_path) {
  const std::string path = EndsWith(gz_path, ".gz") ? gz_path.substr(0, gz_path.size() - 3) : gz_path;
  if (EndsWith(path, ".csv")) return Format::kCsv;
  if (EndsWith(path, ".tsv") || EndsWith(path, ".tab")) return Format::kTsv;
  if (EndsWith(path, ".jsonl") || EndsWith(path, ".ndjson") || EndsWith(path, ".json")) return Format::kJsonLines;
  return Status::InvalidArgument("cannot tell the format of " + path + " from its extension; use --format");
}

Result<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path, Format format, bool header) {
  std::unique_ptr<RecordReader> r(new RecordReader());
  r->gz_ = gzopen(path.c_str(), "rb");
  if (!r->gz_) return Status::IOError("cannot open " + path);
  gzbuffer(static_cast<gzFile>(r->gz_), 1 << 16);
  std::error_code ec;
  r->file_size_ = std::filesystem::file_size(path, ec);
  r->format_ = format;
  if (header && format != Format::kJsonLines) {
    std::string raw;
    if (!r->ReadLine(&raw)) return Status::InvalidArgument(path + " is empty: no header line");
    if (format == Format::kTsv) {
      r->header_ = SplitTabs(raw);
    } else {
      std::string error;
      if (!r->SplitCsv(&raw, &r->header_, &error)) return Status::InvalidArgument(path + " header: " + error);
    }
    for (auto& h : r->header_) {
      while (!h.empty() && (h.back() == ' ' || h.back() == '\r')) h.pop_back();
    }
  }
  return r;
}

RecordReader::~RecordReader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

bool RecordReader::ReadLine(std::string* line) {
  line->clear();
  char buf[4096];
  auto* gz = static_cast<gzFile>(gz_);
  bool any = false;
  while (gzgets(gz, buf, sizeof buf) != nullptr) {
    any = true;
    line->append(buf);
    if (!line->empty() && line->back() == '\n') break;
  }
  if (!any) return false;
  ++line_;
  bytes_read_ = static_cast<uint64_t>(gzoffset(gz));
  if (!line->empty() && line->back() == '\n') line->pop_back();
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

bool RecordReader::SplitCsv(std::string* raw, std::vector<std::string>* fields, std::string* error) {
  fields->assign(1, std::string());
  bool quoted = false;
  for (size_t i = 0;; ++i) {
    if (i == raw->size()) {
      if (!quoted) return true;
      std::string more;
      if (!ReadLine(&more)) {
        *error = "unterminated quoted field";
        return false;
      }
      *raw += "\n" + more;  // the newline is part of the quoted field
    }
    const char c = (*raw)[i];
    if (quoted) {
      if (c == '"' && i + 1 < raw->size() && (*raw)[i + 1] == '"') {
        fields->back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields->back() += c;
      }
    } else if (c == '"' && fields->back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields->emplace_back();
    } else {
      fields->back() += c;
    }
  }
}

Record RecordReader::FromFields(uint64_t line, std::string raw, std::vector<std::string> fields) const {
  Record r;
  r.line = line;
  r.raw = std::move(raw);
  if (!header_.empty() && fields.size() != header_.size()) {
    r.error = "expected " + std::to_string(header_.size()) + " fields, found " + std::to_string(fields.size());
    return r;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    r.fields[header_.empty() ? std::to_string(i + 1) : header_[i]] = std::move(fields[i]);
  }
  return r;
}

std::optional<Record> RecordReader::Next() {
  std::string raw;
  for (;;) {
    if (!ReadLine(&raw)) return std::nullopt;
    if (!raw.empty()) break;  // blank lines are skipped
  }
  const uint64_t line = line_;
  switch (format_) {
    case Format::kTsv:
      return FromFields(line, raw, SplitTabs(raw));
    case Format::kCsv: {
      std::vector<std::string> fields;
      std::string error;
      if (!SplitCsv(&raw, &fields, &error)) return Record{line, raw, {}, error};
      return FromFields(line, raw, std::move(fields));
    }
    case Format::kJsonLines: {
      Record r{line, raw, {}, ""};
      auto doc = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded()) {
        r.error = "not valid JSON";
      } else if (!doc.is_object()) {
        r.error = "a JSON line must be an object";
      } else {
        for (const auto& [name, value] : doc.items()) {
          if (!value.is_null()) r.fields[name] = JsonText(value);
        }
      }
      return r;
    }
  }
  return std::nullopt;
}

}  // namespace tessera::loader
