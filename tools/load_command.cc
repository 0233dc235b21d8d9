#include "tools/load_command.h"

#include "tools/client_flags.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "loader/bulk_loader.h"

namespace tessera {
namespace {

struct LoadFlags {
  loader::LoadOptions options;
  std::string host = "127.0.0.1";
  int port = 9042;
  std::string table;  // keyspace.table
  std::string format;
  std::vector<std::string> maps;
  std::string timestamp_unit = "ms";
  bool no_header = false;
  ClientFlags client;
};

std::string Eta(const loader::LoadProgress& p) {
  if (p.bytes_read == 0 || p.file_size == 0 || p.done) return "-";
  const double left = p.seconds * static_cast<double>(p.file_size - std::min(p.file_size, p.bytes_read)) /
                      static_cast<double>(p.bytes_read);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fs", left);
  return buf;
}

void PrintProgress(const loader::LoadProgress& p, bool tty) {
  static double last_plain = -10;
  const double rate = p.seconds > 0 ? static_cast<double>(p.loaded) / p.seconds : 0;
  const double fraction = p.file_size ? std::min(1.0, static_cast<double>(p.bytes_read) / p.file_size) : 0;
  if (tty) {
    std::string bar(30, ' ');
    for (size_t i = 0; i < static_cast<size_t>(fraction * 30); ++i) bar[i] = '#';
    std::fprintf(stderr, "\r[%s] %3.0f%% %llu rows loaded, %llu rejected, %.0f rows/s, ETA %s   ", bar.c_str(),
                 fraction * 100, static_cast<unsigned long long>(p.loaded),
                 static_cast<unsigned long long>(p.rejected), rate, Eta(p).c_str());
    if (p.done) std::fputc('\n', stderr);
  } else if (p.seconds - last_plain >= 5 && !p.done) {
    last_plain = p.seconds;
    std::fprintf(stderr, "progress: %.0f%% %llu rows loaded, %llu rejected, %.0f rows/s, ETA %s\n", fraction * 100,
                 static_cast<unsigned long long>(p.loaded), static_cast<unsigned long long>(p.rejected), rate,
                 Eta(p).c_str());
  }
}

int Run(LoadFlags& f) {
  loader::LoadOptions& o = f.options;
  o.client.host = f.host;
  o.client.port = static_cast<uint16_t>(f.port);
  ApplyClientFlags(f.client, &o.client);
  auto dot = f.table.find('.');
  if (dot == std::string::npos) {
    std::fprintf(stderr, "error: --table takes keyspace.table\n");
    return 2;
  }
  o.keyspace = f.table.substr(0, dot);
  o.table = f.table.substr(dot + 1);
  auto format = f.format.empty() ? loader::FormatOfPath(o.path) : loader::ParseFormat(f.format);
  if (!format.ok()) {
    std::fprintf(stderr, "error: %s\n", format.status().message().c_str());
    return 2;
  }
  o.format = *format;
  o.header = !f.no_header;
  for (const auto& m : f.maps) {
    auto eq = m.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "error: --map takes column=field, got %s\n", m.c_str());
      return 2;
    }
    o.mapping.push_back({m.substr(0, eq), m.substr(eq + 1)});
  }
  if (f.timestamp_unit == "s") o.timestamp_unit = loader::TimestampUnit::kSeconds;
  else if (f.timestamp_unit == "us") o.timestamp_unit = loader::TimestampUnit::kMicroseconds;
  if (o.reject_path.empty()) o.reject_path = o.path + ".rejects";
  const bool tty = isatty(STDERR_FILENO);
  auto result = loader::RunLoad(o, [tty](const loader::LoadProgress& p) { PrintProgress(p, tty); });
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n", result.status().ToString().c_str());
    return 1;
  }
  const auto& p = *result;
  std::printf("loaded %llu of %llu records into %s.%s in %.1f s (%.0f rows/s); %llu rejected (see %s); %llu retries\n",
              static_cast<unsigned long long>(p.loaded), static_cast<unsigned long long>(p.records),
              o.keyspace.c_str(), o.table.c_str(), p.seconds, p.seconds > 0 ? p.loaded / p.seconds : 0.0,
              static_cast<unsigned long long>(p.rejected), o.reject_path.c_str(),
              static_cast<unsigned long long>(p.retries));
  return 0;
}

}  // namespace

CLI::App* AddLoadCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<LoadFlags>();
  auto* cmd = app.add_subcommand("load", "load a CSV, TSV or JSON-lines file into a table over CQL");
  cmd->add_option("file", flags->options.path, "input file")->required();
  cmd->add_option("--table", flags->table, "keyspace.table to load into")->required();
  cmd->add_option("--host", flags->host, "server address")->capture_default_str();
  cmd->add_option("--port", flags->port, "server CQL port")->capture_default_str();
  AddClientFlags(cmd, &flags->client);
  cmd->add_option("--format", flags->format, "csv, tsv or jsonl (default: from the file extension)");
  cmd->add_flag("--no-header", flags->no_header, "CSV/TSV without a header line: fields are named 1, 2, ...");
  cmd->add_option("--map", flags->maps,
                  "column=field, repeatable; only mapped columns are loaded; field @line is the line number");
  cmd->add_option("--timestamp-unit", flags->timestamp_unit, "unit of integer timestamps: s, ms or us")
      ->capture_default_str();
  cmd->add_option("--reject-file", flags->options.reject_path, "where rejected records go (default FILE.rejects)");
  cmd->add_option("--connections", flags->options.connections, "connections")->capture_default_str();
  cmd->add_option("--inflight", flags->options.inflight, "requests in flight per connection")
      ->capture_default_str();
  cmd->add_option("--max-retries", flags->options.max_retries, "retries of a retryable failure")
      ->capture_default_str();
  cmd->add_option("--rate", flags->options.max_rows_per_second, "at most this many rows per second (0: no limit)")
      ->capture_default_str();
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
  return cmd;
}

}  // namespace tessera
