// TRACING ON / OFF, and a traced statement's steps as cqlsh prints them:
// "Tracing session: <id>", then activity | timestamp | source |
// source_elapsed | client, from system_traces.sessions and events.
#include <chrono>
#include <ctime>
#include <thread>

#include "common/bytes.h"
#include "common/time_uuid.h"
#include "common/uuid.h"
#include "shell/result_printer.h"
#include "shell/shell.h"
#include "types/value_compare.h"

namespace tessera::shell {
namespace {

// "2026-11-28 23:40:01.123000" (UTC), as cqlsh prints trace timestamps.
std::string TraceTimestamp(int64_t unix_micros) {
  const std::time_t seconds = static_cast<std::time_t>(unix_micros / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  const size_t n = std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
  std::snprintf(text + n, sizeof(text) - n, ".%06lld", static_cast<long long>(unix_micros % 1'000'000));
  return text;
}

// A version-1 uuid's time as Unix microseconds.
int64_t TimeUuidMicros(const std::string& u) {
  return (static_cast<int64_t>(UuidTimestamp(u)) - kGregorianOffset100ns) / 10;
}

std::string InetText(const std::optional<std::string>& cell) {
  if (!cell || cell->size() != 4) return cell ? ToHex(*cell) : std::string("null");
  const auto* b = reinterpret_cast<const unsigned char*>(cell->data());
  return std::to_string(b[0]) + "." + std::to_string(b[1]) + "." + std::to_string(b[2]) + "." + std::to_string(b[3]);
}

int32_t IntOf(const std::optional<std::string>& cell) {
  return cell && cell->size() == 4 ? static_cast<int32_t>(GetBigEndian32(cell->data())) : 0;
}

std::string IntCell(int32_t v) {
  std::string out;
  PutBigEndian32(&out, static_cast<uint32_t>(v));
  return out;
}

}  // namespace

bool Shell::Tracing(const std::vector<std::string>& words) {
  if (words.size() > 1) {
    const std::string v = words[1];
    if (v == "ON" || v == "on") {
      if (tracing_) {
        out_ << "Tracing is already enabled. Use TRACING OFF to disable.\n";
        return true;
      }
      tracing_ = true;
      out_ << "Now Tracing is enabled\n";
      return true;
    }
    if (v == "OFF" || v == "off") {
      if (!tracing_) {
        out_ << "Tracing is not enabled.\n";
        return true;
      }
      tracing_ = false;
      out_ << "Disabled Tracing.\n";
      return true;
    }
    err_ << "Improper TRACING command: " << v << "\n";
    return false;
  }
  out_ << "Tracing is currently " << (tracing_ ? "enabled" : "disabled") << ". Use TRACING ON/OFF to change it.\n";
  return true;
}

bool Shell::PrintTrace(const std::string& session_id) {
  out_ << "\nTracing session: " << UuidText(session_id) << "\n\n";
  // The session row is complete once it has a duration (the reply was sent
  // just before it is set): wait for it a little, as cqlsh does.
  std::optional<cql::DecodedRows> session;
  for (int attempt = 0; attempt < 20; ++attempt) {
    session = Rows("SELECT request, started_at, duration, coordinator, client FROM system_traces.sessions "
                   "WHERE session_id = ?",
                   {session_id});
    if (!session) return false;
    if (!session->rows.empty() && session->rows[0][2]) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (session->rows.empty() || !session->rows[0][2]) {
    err_ << "Statement trace did not complete within 2 seconds\n";
    return false;
  }
  auto events = Rows("SELECT event_id, activity, source, source_elapsed, thread FROM system_traces.events "
                     "WHERE session_id = ?",
                     {session_id});
  if (!events) return false;
  const auto& s = session->rows[0];
  const int64_t started_micros =
      s[1] && s[1]->size() == 8 ? static_cast<int64_t>(GetBigEndian64(s[1]->data())) * 1000 : 0;
  const int32_t duration = IntOf(s[2]);
  const std::string client = InetText(s[4]);
  cql::DecodedRows table;
  const auto text_column = [](const char* name) {
    cql::ColumnSpec c;
    c.name = name;
    c.type = CqlType::Scalar(TypeKind::kText);
    return c;
  };
  table.columns = {text_column("activity"), text_column("timestamp"), text_column("source"), {}, text_column("client")};
  table.columns[3].name = "source_elapsed";
  table.columns[3].type = CqlType::Scalar(TypeKind::kInt);
  table.rows.push_back({s[0].value_or(""), TraceTimestamp(started_micros), InetText(s[3]), IntCell(0), client});
  for (const auto& e : events->rows) {
    const std::string activity = e[1].value_or("") + (e[4] && !e[4]->empty() ? " [" + *e[4] + "]" : "");
    const int64_t at = e[0] && e[0]->size() == 16 ? TimeUuidMicros(*e[0]) : started_micros;
    table.rows.push_back({activity, TraceTimestamp(at), InetText(e[2]), IntCell(IntOf(e[3])), client});
  }
  table.rows.push_back({std::string("Request complete"), TraceTimestamp(started_micros + duration), InetText(s[3]),
                        IntCell(duration), client});
  PrintRows(table.columns, table, /*expanded=*/false, 0, out_);
  out_ << "\n";
  return true;
}

}  // namespace tessera::shell
