#include "shell/result_printer.h"

#include <algorithm>

#include "types/value_format.h"

namespace tessera::shell {
namespace {

bool Numeric(const CqlType& t) {
  switch (t.kind()) {
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kVarint: case TypeKind::kCounter: case TypeKind::kFloat: case TypeKind::kDouble:
    case TypeKind::kDecimal:
      return true;
    default:
      return false;
  }
}

// Display width: UTF-8 code points (continuation bytes do not count).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Pad(const std::string& s, size_t width, bool right) {
  const std::string fill(width > Width(s) ? width - Width(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

void PrintRows(const std::vector<cql::ColumnSpec>& columns, const cql::DecodedRows& rows, bool expanded,
               size_t first_row, std::ostream& out) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : rows.rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < columns.size() && i < row.size(); ++i) {
      line.push_back(row[i] ? FormatValue(columns[i].type, *row[i]) : "null");
    }
    cells.push_back(std::move(line));
  }
  if (expanded) {
    size_t name_width = 0;
    for (const auto& c : columns) name_width = std::max(name_width, Width(c.name));
    for (size_t r = 0; r < cells.size(); ++r) {
      out << "\n@ Row " << first_row + r + 1 << "\n";
      out << std::string(name_width + 2, '-') << "+" << std::string(20, '-') << "\n";
      for (size_t i = 0; i < cells[r].size(); ++i) {
        out << " " << Pad(columns[i].name, name_width, false) << " | " << cells[r][i] << "\n";
      }
    }
    return;
  }
  std::vector<size_t> width;
  for (const auto& c : columns) width.push_back(Width(c.name));
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], Width(line[i]));
  }
  out << "\n";
  for (size_t i = 0; i < columns.size(); ++i) {
    out << (i ? " | " : " ") << Pad(columns[i].name, width[i], Numeric(columns[i].type));
  }
  out << "\n";
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "+" : "") << std::string(width[i] + 2, '-');
  out << "\n";
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) {
      out << (i ? " | " : " ") << Pad(line[i], width[i], Numeric(columns[i].type));
    }
    out << "\n";
  }
}

}  // namespace tessera::shell
