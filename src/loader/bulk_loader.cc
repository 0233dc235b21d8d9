#include "loader/bulk_loader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace tessera::loader {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kLineField = "@line";

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
}

struct Item {
  uint64_t line = 0;
  std::string raw;
  std::vector<cql::WireValue> values;
  int attempts = 0;
};

// A bounded multi-producer, multi-consumer queue of items.
class ItemQueue {
 public:
  explicit ItemQueue(size_t capacity) : capacity_(capacity) {}
  void Push(Item item) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(std::move(item));
    not_empty_.notify_one();
  }
  // False when nothing came within `wait` (or the queue is closed and empty: see closed()).
  bool Pop(Item* out, std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!not_empty_.wait_for(lock, wait, [&] { return !items_.empty() || closed_; })) return false;
    if (items_.empty()) return false;
    *out = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  bool TryPop(Item* out) { return Pop(out, std::chrono::milliseconds(0)); }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }
  bool drained() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_ && items_.empty();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Item> items_;
  bool closed_ = false;
};

class RejectFile {
 public:
  Status Open(const std::string& path) {
    out_.open(path, std::ios::trunc);
    if (!out_) return Status::IOError("cannot write the reject file " + path);
    out_ << "# line\treason\trecord\n";
    return Status::OK();
  }
  void Add(uint64_t line, const std::string& reason, const std::string& raw) {
    std::string text;
    for (char c : raw) {
      if (c == '\n') {
        text += "\\n";
      } else {
        text += c;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line << '\t' << reason << '\t' << text << '\n';
    out_.flush();
    ++count_;
  }
  uint64_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
  uint64_t count_ = 0;
};

struct Shared {
  const LoadOptions* options = nullptr;
  std::string insert_cql;
  ItemQueue* queue = nullptr;
  RejectFile* rejects = nullptr;
  std::atomic<uint64_t> loaded{0}, retries{0};
};

// One connection: keeps up to `inflight` EXECUTEs outstanding, retries what
// may be retried, rejects what the server refuses.
class Worker {
 public:
  Worker(Shared* shared, uint64_t seed) : s_(*shared), rng_(seed) {}

  void Run() {
    const LoadOptions& o = *s_.options;
    for (;;) {
      if (!conn_ && !Reconnect()) break;
      FillWindow(o);
      if (inflight_.empty()) {
        if (!delayed_.empty()) {
          std::this_thread::sleep_for(std::chrono::microseconds(std::max<int64_t>(0, delayed_.begin()->first - NowMicros())));
          continue;
        }
        Item item;
        if (s_.queue->Pop(&item, std::chrono::milliseconds(100))) {
          delayed_.emplace(0, std::move(item));
          continue;
        }
        if (s_.queue->drained()) break;
        continue;
      }
      auto r = conn_->Receive();
      if (!r.ok()) {
        Disconnect(r.status().ToString());
        continue;
      }
      Handle(std::move(*r));
    }
    // Out of retries on connections: whatever is left is rejected, not lost.
    for (auto& [stream, item] : inflight_) s_.rejects->Add(item.line, "not loaded: " + last_error_, item.raw);
    for (auto& [due, item] : delayed_) s_.rejects->Add(item.line, "not loaded: " + last_error_, item.raw);
  }

 private:
  void FillWindow(const LoadOptions& o) {
    while (conn_ && inflight_.size() < static_cast<size_t>(o.inflight)) {
      Item item;
      if (!delayed_.empty() && delayed_.begin()->first <= NowMicros()) {
        item = std::move(delayed_.begin()->second);
        delayed_.erase(delayed_.begin());
      } else if (!s_.queue->TryPop(&item)) {
        return;
      }
      cql::QueryParameters p;
      p.values = item.values;
      auto stream = conn_->Send(cql::ExecuteRequest{prepared_.id, std::move(p)});
      if (!stream.ok()) {
        delayed_.emplace(0, std::move(item));
        Disconnect(stream.status().ToString());
        return;
      }
      inflight_.emplace(*stream, std::move(item));
    }
  }

  void Handle(client::CqlConnection::Response r) {
    auto it = inflight_.find(r.stream);
    if (it == inflight_.end()) return;  // an event, or an answer we gave up on
    Item item = std::move(it->second);
    inflight_.erase(it);
    const auto& d = r.decoded;
    if (!d.is_error()) {
      s_.loaded.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (d.error_code == 0x2500) {  // Unprepared: the server restarted; prepare again
      auto p = conn_->Prepare(s_.insert_cql);
      if (p.ok()) prepared_ = std::move(*p);
      Retry(std::move(item), "Unprepared");
      return;
    }
    if (client::IsRetryable(d.error_code)) {
      Retry(std::move(item), client::ServerErrorStatus(d).ToString());
      return;
    }
    s_.rejects->Add(item.line, client::ServerErrorStatus(d).ToString(), item.raw);
  }

  void Retry(Item item, const std::string& why) {
    const LoadOptions& o = *s_.options;
    if (++item.attempts > o.max_retries) {
      s_.rejects->Add(item.line, "gave up after " + std::to_string(o.max_retries) + " retries: " + why, item.raw);
      return;
    }
    s_.retries.fetch_add(1, std::memory_order_relaxed);
    std::uniform_real_distribution<double> u(0, 1);
    const int64_t delay = RetryDelayMicros(item.attempts, o.retry_base_micros, o.retry_max_micros, u(rng_));
    delayed_.emplace(NowMicros() + delay, std::move(item));
  }

  void Disconnect(const std::string& why) {
    last_error_ = why;
    conn_.reset();
    for (auto& [stream, item] : inflight_) Retry(std::move(item), why);
    inflight_.clear();
  }

  bool Reconnect() {
    const LoadOptions& o = *s_.options;
    for (int attempt = 1; attempt <= o.max_retries + 1; ++attempt) {
      auto c = client::CqlConnection::Connect(o.client);
      if (c.ok()) {
        auto p = (*c)->Prepare(s_.insert_cql);
        if (p.ok()) {
          conn_ = std::move(*c);
          prepared_ = std::move(*p);
          return true;
        }
        last_error_ = p.status().ToString();
      } else {
        last_error_ = c.status().ToString();
      }
      std::uniform_real_distribution<double> u(0, 1);
      std::this_thread::sleep_for(
          std::chrono::microseconds(RetryDelayMicros(attempt, o.retry_base_micros, o.retry_max_micros, u(rng_))));
    }
    // Drain the queue into the reject file so that the reader never blocks on us.
    Item item;
    while (!s_.queue->drained()) {
      if (s_.queue->Pop(&item, std::chrono::milliseconds(100))) {
        s_.rejects->Add(item.line, "not loaded: " + last_error_, item.raw);
      }
    }
    return false;
  }

  Shared& s_;
  std::mt19937_64 rng_;
  std::unique_ptr<client::CqlConnection> conn_;
  cql::DecodedPrepared prepared_;
  std::map<int16_t, Item> inflight_;
  std::multimap<int64_t, Item> delayed_;  // due time -> item
  std::string last_error_;
};

struct Target {
  std::vector<std::string> columns;  // INSERT column order
  std::vector<std::string> fields;   // the input field of each column
  std::vector<CqlType> types;        // from the prepared statement
  std::string insert_cql;
};

std::string Quote(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Result<std::set<std::string>> TableColumns(client::CqlConnection& conn, const LoadOptions& o) {
  cql::QueryParameters p;
  auto text = [](const std::string& s) { return cql::WireValue::Of(s); };
  p.values = {text(o.keyspace), text(o.table)};
  TESSERA_ASSIGN_OR_RETURN(auto r, conn.Query("SELECT column_name FROM system_schema.columns "
                                              "WHERE keyspace_name = ? AND table_name = ?",
                                              p));
  std::set<std::string> out;
  for (const auto& row : r.rows.rows) {
    if (row[0]) out.insert(*row[0]);
  }
  if (out.empty()) return Status::NotFound("table " + o.keyspace + "." + o.table + " does not exist");
  return out;
}

Result<Target> Resolve(client::CqlConnection& conn, const LoadOptions& o, const RecordReader& reader) {
  TESSERA_ASSIGN_OR_RETURN(auto columns, TableColumns(conn, o));
  Target t;
  if (!o.mapping.empty()) {
    for (const auto& m : o.mapping) {
      t.columns.push_back(m.column);
      t.fields.push_back(m.field);
    }
  } else if (!reader.header().empty()) {
    t.columns = t.fields = reader.header();
  } else if (o.format == Format::kJsonLines) {
    t.columns.assign(columns.begin(), columns.end());
    t.fields = t.columns;
  } else {
    return Status::InvalidArgument("a file without a header needs --map column=position");
  }
  for (const auto& c : t.columns) {
    if (!columns.count(c)) {
      return Status::InvalidArgument("'" + c + "' is not a column of " + o.keyspace + "." + o.table +
                                     (o.mapping.empty() ? " (map input fields to columns with --map column=field)" : ""));
    }
  }
  if (!reader.header().empty()) {
    std::set<std::string> header(reader.header().begin(), reader.header().end());
    for (const auto& f : t.fields) {
      if (!header.count(f) && f != kLineField) return Status::InvalidArgument("the input has no field '" + f + "'");
    }
  }
  t.insert_cql = "INSERT INTO " + Quote(o.keyspace) + "." + Quote(o.table) + " (";
  for (size_t i = 0; i < t.columns.size(); ++i) t.insert_cql += (i ? ", " : "") + Quote(t.columns[i]);
  t.insert_cql += ") VALUES (";
  for (size_t i = 0; i < t.columns.size(); ++i) t.insert_cql += i ? ", ?" : "?";
  t.insert_cql += ")";
  TESSERA_ASSIGN_OR_RETURN(auto prepared, conn.Prepare(t.insert_cql));
  for (const auto& spec : prepared.bind_columns) t.types.push_back(spec.type);
  if (t.types.size() != t.columns.size()) return Status::Corruption("prepared INSERT has unexpected bind markers");
  return t;
}

// The values of one record, or the reason it cannot be loaded.
Result<std::vector<cql::WireValue>> Convert(const Record& r, const Target& t, const LoadOptions& o) {
  if (!r.error.empty()) return Status::InvalidArgument(r.error);
  std::vector<cql::WireValue> values;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (t.fields[i] == kLineField) {
      TESSERA_ASSIGN_OR_RETURN(auto bytes, ConvertField(std::to_string(r.line), t.types[i], t.columns[i]));
      values.push_back(bytes ? cql::WireValue::Of(std::move(*bytes)) : cql::WireValue{});
      continue;
    }
    auto f = r.fields.find(t.fields[i]);
    if (f == r.fields.end()) {
      values.push_back(cql::WireValue{});  // absent: null
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(auto bytes, ConvertField(f->second, t.types[i], t.columns[i], o.timestamp_unit));
    values.push_back(bytes ? cql::WireValue::Of(std::move(*bytes)) : cql::WireValue{});
  }
  return values;
}

}  // namespace

int64_t RetryDelayMicros(int attempt, int64_t base, int64_t max, double random01) {
  int64_t cap = base;
  for (int i = 1; i < attempt && cap < max; ++i) cap *= 2;
  cap = std::min(cap, max);
  return static_cast<int64_t>(random01 * static_cast<double>(cap));
}

Result<LoadProgress> RunLoad(const LoadOptions& o, const std::function<void(const LoadProgress&)>& progress) {
  TESSERA_ASSIGN_OR_RETURN(auto reader, RecordReader::Open(o.path, o.format, o.header));
  TESSERA_ASSIGN_OR_RETURN(auto control, client::CqlConnection::Connect(o.client));
  TESSERA_ASSIGN_OR_RETURN(Target target, Resolve(*control, o, *reader));
  control.reset();
  RejectFile rejects;
  TESSERA_RETURN_IF_ERROR(rejects.Open(o.reject_path.empty() ? o.path + ".rejects" : o.reject_path));

  ItemQueue queue(static_cast<size_t>(std::max(1, o.connections * o.inflight * 4)));
  Shared shared;
  shared.options = &o;
  shared.insert_cql = target.insert_cql;
  shared.queue = &queue;
  shared.rejects = &rejects;
  std::vector<std::thread> workers;
  for (int i = 0; i < std::max(1, o.connections); ++i) {
    workers.emplace_back([&shared, i] { Worker(&shared, 0x5EED + static_cast<uint64_t>(i)).Run(); });
  }
  const auto started = Clock::now();
  std::atomic<uint64_t> records{0}, bytes_read{0};
  auto snapshot = [&](bool done) {
    LoadProgress p;
    p.records = records.load();
    p.loaded = shared.loaded.load();
    p.rejected = rejects.count();
    p.retries = shared.retries.load();
    p.bytes_read = bytes_read.load();
    p.file_size = reader->file_size();
    p.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    p.done = done;
    return p;
  };
  std::atomic<bool> reading{true};
  std::thread reporter;
  if (progress) {
    reporter = std::thread([&] {
      while (reading.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        progress(snapshot(false));
      }
    });
  }
  while (auto record = reader->Next()) {
    const uint64_t n = records.fetch_add(1, std::memory_order_relaxed) + 1;
    if (o.max_rows_per_second > 0) {
      std::this_thread::sleep_until(started + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(n / o.max_rows_per_second)));
    }
    bytes_read.store(reader->bytes_read(), std::memory_order_relaxed);
    auto values = Convert(*record, target, o);
    if (!values.ok()) {
      rejects.Add(record->line, values.status().message(), record->raw);
      continue;
    }
    queue.Push(Item{record->line, std::move(record->raw), std::move(*values), 0});
  }
  queue.Close();
  for (auto& w : workers) w.join();
  reading.store(false);
  if (reporter.joinable()) reporter.join();
  LoadProgress final = snapshot(true);
  if (progress) progress(final);
  return final;
}

}  // namespace tessera::loader
