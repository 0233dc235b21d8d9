#include "server/cql_server.h"

#include <asio.hpp>
#include <asio/ssl.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <set>
#include <thread>

#include "common/steady_micros.h"
#include "common/thread_name.h"
#include "cql/protocol/compression.h"
#include "cql/protocol/responses.h"
#include "cql/protocol/segment.h"
#include "cql/protocol/wire.h"
#include "server/tls_context.h"

#include <spdlog/spdlog.h>

namespace tessera::server {

using cql::Opcode;
using TlsStream = asio::ssl::stream<asio::ip::tcp::socket&>;

// The serving thread's read buffer; a connection's input buffer above it is given back once empty.
constexpr size_t kReadBufferBytes = 64 * 1024;

// What every connection of a listener shares.
struct ListenerShared {
  cql::RequestProcessor* processor = nullptr;
  const CqlServerOptions* options = nullptr;
  std::shared_ptr<asio::ssl::context> tls;  // null: plaintext only
  ConnectionLimiter* limiter = nullptr;
  std::atomic<size_t> requests_in_flight{0};
  bool concurrent_requests = false;  // false: requests run inline on the connection's strand
  // The threads of requests that may wait for other nodes
  // (RequestProcessor::MayWait); null: they run with the others.
  asio::io_context* waiting = nullptr;
  LatencyHistogram request_latency;  // CqlServer::request_latency()
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, std::string address, ListenerShared* shared)
      : socket_(std::move(socket)), strand_(asio::make_strand(socket_.get_executor())), shared_(shared),
        address_(address), state_(std::move(address)) {}

  void Start() {
    asio::post(strand_, [self = shared_from_this()] {
      if (!self->shared_->tls) return self->DoRead();
      if (!self->shared_->options->tls.optional) return self->StartTls();
      self->DetectTls();
    });
  }

  void Close() {
    asio::post(strand_, [self = shared_from_this()] { self->CloseNow(); });
  }

  bool registered_for_schema() const { return registered_schema_.load(); }
  bool registered_for_topology() const { return registered_topology_.load(); }
  bool registered_for_status() const { return registered_status_.load(); }

  void SendEvent(std::string body) {
    asio::post(strand_, [self = shared_from_this(), body = std::move(body)] {
      self->Send(0, -1, Opcode::kEvent, body, {});
    });
  }

  bool closed() const { return closed_.load(); }

 private:
  // TLS optional: a TLS ClientHello starts with a handshake record (0x16);
  // a CQL request frame starts with its protocol version (0x04, or a probe).
  void DetectTls() {
    socket_.async_wait(asio::ip::tcp::socket::wait_read,
                       asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec) {
                         if (ec) return self->CloseNow();
                         unsigned char first = 0;
                         std::error_code peek_ec;
                         size_t n = self->socket_.receive(asio::buffer(&first, 1), asio::socket_base::message_peek, peek_ec);
                         if (peek_ec || n == 0) return self->CloseNow();
                         if (first == 0x16) return self->StartTls();
                         self->DoRead();
                       }));
  }

  void StartTls() {
    tls_ = std::make_unique<TlsStream>(socket_, *shared_->tls);
    tls_->async_handshake(asio::ssl::stream_base::server,
                          asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec) {
                            if (ec) return self->CloseNow();  // plaintext on a TLS port, no client certificate, ...
                            self->DoRead();
                          }));
  }

  // Over TLS, decrypted bytes may wait inside the TLS stream while the
  // socket is idle, so a TLS connection reads with async_read_some into a
  // buffer of its own (16 KiB, one TLS record) instead of waiting on the socket.
  void DoTlsRead() {
    if (!tls_buffer_) tls_buffer_ = std::make_unique<std::array<char, 16 * 1024>>();
    tls_->async_read_some(asio::buffer(*tls_buffer_),
                          asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec, size_t n) {
                            if (ec) return self->CloseNow();
                            self->Consume(self->tls_buffer_->data(), n);
                          }));
  }

  // Waits until the socket is readable, then reads what is there into a
  // buffer of the serving thread: an idle connection holds no read buffer
  // (10,000 idle connections once held 64 KiB each, 675 MB resident).
  void DoRead() {
    if (closed_) return;
    if (tls_) return DoTlsRead();
    socket_.async_wait(asio::ip::tcp::socket::wait_read,
                       asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec) {
                         if (ec) return self->CloseNow();
                         self->ReadAvailable();
                       }));
  }

  void ReadAvailable() {
    thread_local std::array<char, kReadBufferBytes> buffer;
    std::error_code ec;
    SetNonBlocking(ec);
    const size_t n = ec ? 0 : socket_.read_some(asio::buffer(buffer), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return DoRead();
    if (ec) return CloseNow();
    Consume(buffer.data(), n);
  }

  // Plain connections read and write synchronously without blocking
  // (ReadAvailable, DoWrite); one ioctl per connection, not per read.
  void SetNonBlocking(std::error_code& ec) {
    if (!socket_.non_blocking()) socket_.non_blocking(true, ec);
  }

  void Consume(const char* data, size_t n) {
    if (segments_) {
      raw_.append(data, n);
      DecodeSegments();
    } else {
      in_.append(data, n);
    }
    read_at_ = SteadyMicros();  // when the requests this read completes arrived
    // Replies to every request of this read go out together, in one write.
    batching_ = true;
    ProcessBuffer();
    batching_ = false;
    // A large request is done with: give its memory back rather than keep it per connection.
    if (in_.empty() && in_.capacity() > kReadBufferBytes) std::string().swap(in_);
    if (raw_.empty() && raw_.capacity() > kReadBufferBytes) std::string().swap(raw_);
    if (!writing_ && !write_queue_.empty()) {
      DoWrite();
    } else if (closing_ && !writing_) {
      CloseNow();
    }
    if (!closing_) DoRead();
  }

  // v5, after STARTUP: the envelopes of every complete frame (segment.h)
  // move from raw_ to in_; a checksum mismatch ends the connection.
  void DecodeSegments() {
    Status s = segments_->Decode(&raw_, &in_);
    if (!s.ok()) Fail(0, s.message());
  }

  void ProcessBuffer() {
    while (!closing_) {
      cql::FrameHeader h;
      switch (cql::ParseFrameHeader(in_, &h)) {
        case cql::HeaderCheck::kNeedMore:
          return;
        case cql::HeaderCheck::kBadVersion:
          return Fail(h.stream, "Invalid or unsupported protocol version (" + std::to_string(h.version) +
                                    "); supported versions are (4/v4, 5/v5)");
        case cql::HeaderCheck::kTooLarge:
          return Fail(h.stream, "Request is too big: length " + std::to_string(h.length) + " exceeds maximum allowed length " +
                                    std::to_string(cql::kMaxFrameBodySize));
        case cql::HeaderCheck::kOk:
          break;
      }
      if (in_.size() < cql::kFrameHeaderSize + h.length) return;
      // Every complete request of this read is in flight until answered.
      size_t frames = 0;
      for (size_t at = 0;; ++frames) {
        cql::FrameHeader next;
        std::string_view rest(in_.data() + at, in_.size() - at);
        if (cql::ParseFrameHeader(rest, &next) != cql::HeaderCheck::kOk ||
            rest.size() < cql::kFrameHeaderSize + next.length) {
          break;
        }
        at += cql::kFrameHeaderSize + next.length;
      }
      // Requests already in flight elsewhere on the server when these arrived.
      const size_t elsewhere = shared_->requests_in_flight.fetch_add(frames);
      const ConnectionLimits& limits = shared_->options->limits;
      size_t i = 0;
      for (; i < frames && !closing_; ++i) {
        cql::FrameHeader fh;
        cql::ParseFrameHeader(in_, &fh);
        std::string body = in_.substr(cql::kFrameHeaderSize, fh.length);
        in_.erase(0, cql::kFrameHeaderSize + fh.length);
        // Inline, the requests of this read are the connection's in flight;
        // concurrent, those started and not answered yet.
        const size_t on_connection = shared_->concurrent_requests ? in_flight_ : i;
        if (limits.max_requests_per_connection && on_connection >= limits.max_requests_per_connection) {
          Overloaded(fh.stream, "Too many requests in flight on this connection: " +
                                    std::to_string(on_connection + 1) +
                                    " > native_transport_max_requests_per_connection " +
                                    std::to_string(limits.max_requests_per_connection));
        } else if (limits.max_requests_in_flight && elsewhere + i >= limits.max_requests_in_flight) {
          Overloaded(fh.stream, "Too many requests in flight on this server: " + std::to_string(elsewhere + frames) +
                                    " > native_transport_max_requests_in_flight " +
                                    std::to_string(limits.max_requests_in_flight));
        } else {
          HandleFrame(fh, std::move(body));
        }
        // A request run off the strand stays in flight until Complete answers it.
        if (!std::exchange(dispatched_, false)) shared_->requests_in_flight.fetch_sub(1);
        if (framing_started_) {  // what follows STARTUP is framed: parse it anew
          ++i;
          break;
        }
      }
      shared_->requests_in_flight.fetch_sub(frames - i);  // not run: the connection is closing, or now framed
      if (std::exchange(framing_started_, false)) {
        raw_ = std::move(in_);
        in_.clear();
        DecodeSegments();
      }
    }
  }

  // A request past an in-flight bound: Overloaded, not run (the connection stays open).
  void Overloaded(int16_t stream, const std::string& message) {
    cql::ErrorResponse e;
    e.code = cql::ErrorCode::kOverloaded;
    e.message = message;
    Send(0, stream, Opcode::kError, cql::EncodeError(e), {});
  }

  void HandleFrame(const cql::FrameHeader& h, std::string body) {
    // STARTUP fixes the connection's version (v5 §2.4.1.1); before it,
    // OPTIONS is answered in the version it came in.
    if (!started_) version_ = h.version;
    if (h.version != version_) {
      return Fail(h.stream, "Invalid message version. Got " + std::to_string(h.version) +
                                " but previous messages on this connection had version " + std::to_string(version_));
    }
    // v5 compresses frames, not envelopes: the envelope flag is ignored (v5 §2.4.1.2).
    if ((h.flags & cql::kFlagCompression) && version_ < cql::kProtocolV5) {
      if (compression_ == cql::Compression::kNone) return Fail(h.stream, "compressed frame but no compression negotiated");
      std::string plain;
      Status s = cql::Decompress(compression_, body, cql::kMaxFrameBodySize, &plain);
      if (!s.ok()) return Fail(h.stream, s.message());
      body = std::move(plain);
    }
    auto request = cql::DecodeRequest(h.opcode, body, h.version);
    if (!request.ok()) return Fail(h.stream, request.status().message());
    if (auto* startup = std::get_if<cql::StartupRequest>(&*request)) return HandleStartup(h.stream, *startup);
    if (std::holds_alternative<cql::OptionsRequest>(*request)) {
      return Send(0, h.stream, Opcode::kSupported,
                  cql::EncodeSupported({{"CQL_VERSION", {shared_->options->cql_version}},
                                        {"COMPRESSION", {"lz4", "snappy"}},
                                        {"PROTOCOL_VERSIONS", {"4/v4", "5/v5"}}}),
                  {});
    }
    if (!started_) return Fail(h.stream, "STARTUP must be the first message on a connection");
    if (!authenticated_) {
      if (!std::holds_alternative<cql::AuthResponseRequest>(*request)) {
        return Fail(h.stream, "Unexpected message " + std::string(cql::OpcodeName(h.opcode)) +
                                  ", expecting SASL_RESPONSE (AUTH_RESPONSE)");
      }
      cql::Reply reply = shared_->processor->Process(state_, *request, {});
      authenticated_ = reply.opcode == Opcode::kAuthSuccess;
      return SendReply(h.stream, reply, 0);
    }
    if (auto* reg = std::get_if<cql::RegisterRequest>(&*request)) {
      for (const auto& e : reg->event_types) {
        if (e == "SCHEMA_CHANGE") registered_schema_ = true;
        else if (e == "TOPOLOGY_CHANGE") registered_topology_ = true;
        else if (e == "STATUS_CHANGE") registered_status_ = true;
        else return Fail(h.stream, "unknown event type " + e);
      }
      return Send(0, h.stream, Opcode::kReady, "", {});
    }
    const cql::RequestFlags flags{(h.flags & cql::kFlagTracing) != 0};
    if (!shared_->concurrent_requests) {
      return SendReply(h.stream, shared_->processor->Process(state_, *request, flags), read_at_);
    }
    // Off the strand, on the server's threads: this connection reads on while
    // the request runs, and its reply goes out when it completes, whatever
    // the order. defer, not post: queued as this handler's continuation on
    // this thread, so no idle thread is woken per request (another takes it
    // when this one is busy); a separate pool cost 30-40% on 2 cores.
    dispatched_ = true;
    ++in_flight_;
    const bool may_wait = shared_->waiting != nullptr && shared_->processor->MayWait(state_, *request);
    auto run = [self = shared_from_this(), stream = h.stream, request = std::move(*request), started = read_at_,
                flags]() mutable {
      // A write on a cluster answers from the thread of its
      // replicas' answer: this thread goes on to the next request.
      self->shared_->processor->ProcessAsync(
          self->state_, request, flags, [self, stream, started](cql::Reply reply) {
            // dispatch: runs here at once when the strand is idle, no scheduler round trip.
            asio::dispatch(self->strand_, [self, stream, started, reply = std::move(reply)] {
              self->Complete(stream, reply, started);
            });
          });
    };
    // One that may wait for other nodes on its thread waits on a thread
    // of its own kind, never on one that reads connections.
    if (may_wait) return asio::post(*shared_->waiting, std::move(run));
    asio::defer(socket_.get_executor(), std::move(run));
  }

  // A concurrent request's reply, on the strand. While a write is under
  // way, replies queue and go out together in the next one.
  void Complete(int16_t stream, const cql::Reply& reply, int64_t started) {
    --in_flight_;
    shared_->requests_in_flight.fetch_sub(1);
    SendReply(stream, reply, started);
  }

  // A processor's reply: its warnings and tracing id with it (§2.2); an
  // error whose body differs in v5 encoded for the connection's version.
  void SendReply(int16_t stream, const cql::Reply& reply, int64_t started) {
    if (reply.error && version_ >= cql::kProtocolV5) {
      return Send(0, stream, reply.opcode, cql::EncodeError(*reply.error, version_), reply.warnings, started,
                  reply.tracing_id);
    }
    Send(0, stream, reply.opcode, reply.body, reply.warnings, started, reply.tracing_id);
  }

  void HandleStartup(int16_t stream, const cql::StartupRequest& s) {
    if (started_) return Fail(stream, "STARTUP may be sent only once on a connection");
    auto it = s.options.find("COMPRESSION");
    std::optional<cql::Compression> compression;
    if (it != s.options.end() && !it->second.empty()) {
      auto c = cql::ParseCompression(it->second);
      if (!c.ok()) return Fail(stream, c.status().message());
      if (*c == cql::Compression::kSnappy && version_ >= cql::kProtocolV5) {
        return Fail(stream, "Unsupported compression snappy in protocol v5: v5 frames are compressed with lz4 only");
      }
      compression = *c;
    }
    // READY or AUTHENTICATE itself goes out uncompressed; compression starts after it.
    const std::string authenticator = shared_->processor->Authenticator();
    if (authenticator.empty()) {
      Send(0, stream, Opcode::kReady, "", {});
    } else {
      Send(0, stream, Opcode::kAuthenticate, cql::EncodeAuthenticate(authenticator), {});
      authenticated_ = false;
    }
    if (compression) compression_ = *compression;
    started_ = true;
    state_.set_protocol_version(version_);
    // v5: everything after READY or AUTHENTICATE travels in frames (v5 §2.3.1).
    if (version_ >= cql::kProtocolV5) {
      segments_.emplace(compression_ == cql::Compression::kLz4);
      framing_started_ = true;
    }
  }

  // A protocol error: reply on the stream, then close this connection.
  void Fail(int16_t stream, const std::string& message) {
    cql::ErrorResponse e;
    e.code = cql::ErrorCode::kProtocolError;
    e.message = message;
    Send(0, stream, Opcode::kError, cql::EncodeError(e), {});
    closing_ = true;
    in_.clear();
    if (!writing_ && !batching_) CloseNow();
  }

  // `started`: when the request this answers was read (SteadyMicros), 0 for
  // replies not counted in request_latency (events, protocol errors, ...).
  // `tracing_id`: 16 bytes, sent first with the Tracing flag; empty: untraced.
  void Send(uint8_t flags, int16_t stream, Opcode opcode, const std::string& body,
            const std::vector<std::string>& warnings, int64_t started = 0, const std::string& tracing_id = {}) {
    if (closed_) return;
    std::string payload;
    if (!tracing_id.empty()) {
      payload = tracing_id;
      flags |= cql::kFlagTracing;
    }
    if (!warnings.empty()) {
      cql::WireWriter w;
      w.StringList(warnings);
      payload += w.Take();
      flags |= cql::kFlagWarning;
    }
    payload += body;
    if (compression_ != cql::Compression::kNone && !segments_ && opcode != Opcode::kReady &&
        opcode != Opcode::kAuthenticate && !payload.empty()) {
      std::string packed;
      if (cql::Compress(compression_, payload, &packed).ok()) {
        payload = std::move(packed);
        flags |= cql::kFlagCompression;
      }
    }
    std::string frame;
    cql::EncodeResponseHeader(version_, flags, stream, opcode, static_cast<uint32_t>(payload.size()), &frame);
    frame += payload;
    if (segments_) {  // v5 after STARTUP: the envelope goes in a frame of its own
      std::string framed;
      cql::EncodeSegments(frame, compression_ == cql::Compression::kLz4, &framed);
      frame = std::move(framed);
    }
    write_queue_.push_back(std::move(frame));
    write_started_.push_back(started);
    if (!writing_ && !batching_) DoWrite();
  }

  // Writes every queued frame with one gathered write (writev).
  void DoWrite() {
    writing_ = true;
    sending_.clear();
    sending_started_.assign(write_started_.begin(), write_started_.end());
    write_started_.clear();
    std::vector<asio::const_buffer> buffers;
    while (!write_queue_.empty()) {
      sending_.push_back(std::move(write_queue_.front()));
      write_queue_.pop_front();
    }
    if (tls_ && sending_.size() > 1) {
      // A TLS stream writes one buffer per record and per socket write: join
      // the frames so that a batch of replies is one record, one write.
      std::string joined;
      for (const auto& f : sending_) joined += f;
      sending_.assign(1, std::move(joined));
    }
    for (const auto& f : sending_) buffers.push_back(asio::buffer(f));
    if (!tls_) {
      // Writes what the socket takes now, on this thread (non-blocking): a
      // reply completed on another thread (a replica answer's) then wakes
      // no I/O thread just to learn that its write is done. The rest, if
      // any, goes out asynchronously.
      std::error_code ec;
      SetNonBlocking(ec);
      size_t written = ec ? 0 : socket_.write_some(buffers, ec);
      if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return WriteDone(ec);
      if (ec) written = 0;
      size_t skip = written;
      while (!buffers.empty() && skip >= buffers.front().size()) {
        skip -= buffers.front().size();
        buffers.erase(buffers.begin());
      }
      if (buffers.empty()) return WriteDone({});
      buffers.front() += skip;
    }
    auto done = asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec, size_t) {
      self->WriteDone(ec);
    });
    if (tls_) {
      asio::async_write(*tls_, buffers, std::move(done));
    } else {
      asio::async_write(socket_, buffers, std::move(done));
    }
  }

  // The frames of the last DoWrite are out (or `ec` says why not).
  void WriteDone(std::error_code ec) {
    sending_.clear();
    if (!ec) {
      const int64_t now = SteadyMicros();
      for (int64_t started : sending_started_) {
        if (started > 0) shared_->request_latency.Record(now - started);
      }
    }
    if (ec) return CloseNow();
    if (!write_queue_.empty()) return DoWrite();
    writing_ = false;
    if (closing_) CloseNow();
  }

  void CloseNow() {
    if (closed_.exchange(true)) return;
    std::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    shared_->limiter->Release(address_);
    // Give the buffers back now rather than when the last handler lets go of the connection.
    std::string().swap(in_);
    std::string().swap(raw_);
    write_queue_.clear();
    write_started_.clear();
    tls_buffer_.reset();
  }

  asio::ip::tcp::socket socket_;
  asio::strand<asio::any_io_executor> strand_;
  ListenerShared* shared_;
  const std::string address_;  // the client's IP address
  std::unique_ptr<TlsStream> tls_;  // set once the TLS handshake starts
  std::unique_ptr<std::array<char, 16 * 1024>> tls_buffer_;
  std::string in_;   // envelopes (frames of v4) not processed yet
  std::string raw_;  // v5 after STARTUP: the bytes read, before their frames are checked and opened
  std::optional<cql::SegmentDecoder> segments_;  // set once a v5 STARTUP is answered
  bool framing_started_ = false;                 // set by that STARTUP until ProcessBuffer switches
  uint8_t version_ = cql::kProtocolV4;           // of the last request before STARTUP, then fixed by it
  std::deque<std::string> write_queue_;
  std::vector<std::string> sending_;  // the frames of the write in progress
  std::deque<int64_t> write_started_;     // per frame of write_queue_: its request's read time, or 0
  std::vector<int64_t> sending_started_;  // the same for sending_
  int64_t read_at_ = 0;                   // SteadyMicros() of the last read
  bool writing_ = false;
  bool batching_ = false;  // replying to the requests of one read
  bool dispatched_ = false;  // HandleFrame ran its request off the strand
  size_t in_flight_ = 0;     // requests off the strand, not answered yet
  bool closing_ = false;
  bool started_ = false;
  bool authenticated_ = true;  // false from an AUTHENTICATE reply until AUTH_SUCCESS
  cql::Compression compression_ = cql::Compression::kNone;
  std::atomic<bool> registered_schema_{false};
  std::atomic<bool> registered_topology_{false};
  std::atomic<bool> registered_status_{false};
  std::atomic<bool> closed_{false};
  cql::ConnectionState state_;
};

struct CqlServer::Impl {
  CqlServerOptions options;
  cql::RequestProcessor* processor;
  std::unique_ptr<ConnectionLimiter> limiter;
  ListenerShared shared;
  asio::io_context io;
  // CqlServerOptions::waiting_threads run it; the guard keeps them in it while idle.
  std::optional<asio::io_context> waiting;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> waiting_guard;
  std::vector<std::thread> waiting_threads;
  std::optional<asio::ip::tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  mutable std::mutex mu;
  std::vector<std::weak_ptr<Connection>> connections;
  bool running = false;

  void Accept() {
    acceptor->async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
      if (ec) return;  // acceptor closed
      std::error_code peer_ec;
      auto peer = socket.remote_endpoint(peer_ec);
      std::string address = peer_ec ? "unknown" : peer.address().to_string();
      std::string why;
      if (!limiter->Admit(address, &why)) {
        // As Cassandra's ConnectionLimitHandler: close at once, keep serving the others.
        spdlog::warn("refused a connection from {}: {}", address, why);
        std::error_code ignored;
        socket.close(ignored);
        return Accept();
      }
      socket.set_option(asio::ip::tcp::no_delay(true));
      auto conn = std::make_shared<Connection>(std::move(socket), std::move(address), &shared);
      {
        std::lock_guard<std::mutex> lock(mu);
        std::erase_if(connections, [](const std::weak_ptr<Connection>& w) {
          auto c = w.lock();
          return !c || c->closed();
        });
        connections.push_back(conn);
      }
      conn->Start();
      Accept();
    });
  }
};

int DefaultRequestThreads() { return static_cast<int>(std::max(2u, std::thread::hardware_concurrency())); }

CqlServer::CqlServer(CqlServerOptions options, cql::RequestProcessor* processor) : impl_(new Impl) {
  impl_->options = std::move(options);
  impl_->processor = processor;
}

CqlServer::~CqlServer() { Stop(); }

Status CqlServer::Start() {
  impl_->limiter = std::make_unique<ConnectionLimiter>(impl_->options.limits);
  impl_->shared.processor = impl_->processor;
  impl_->shared.options = &impl_->options;
  impl_->shared.limiter = impl_->limiter.get();
  impl_->shared.concurrent_requests = impl_->options.request_threads > 0;
  if (impl_->shared.concurrent_requests && impl_->options.waiting_threads > 0) {
    impl_->waiting.emplace();
    impl_->waiting_guard.emplace(impl_->waiting->get_executor());
    impl_->shared.waiting = &*impl_->waiting;
    for (int i = 0; i < impl_->options.waiting_threads; ++i) {
      impl_->waiting_threads.emplace_back([this] {
        SetCurrentThreadName("cql-waiting");
        impl_->waiting->run();
      });
    }
  }
  if (impl_->options.tls.enabled) {
    TESSERA_ASSIGN_OR_RETURN(impl_->shared.tls, MakeServerTlsContext(impl_->options.tls));
  }
  std::error_code ec;
  auto address = asio::ip::make_address(impl_->options.address, ec);
  if (ec) return Status::IOError("bad listen address " + impl_->options.address + ": " + ec.message());
  asio::ip::tcp::endpoint endpoint(address, impl_->options.port);
  impl_->acceptor.emplace(impl_->io);
  impl_->acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor->set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(endpoint, ec);
  if (!ec) impl_->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("cannot listen on " + impl_->options.address + ":" + std::to_string(impl_->options.port) +
                           ": " + ec.message());
  }
  impl_->Accept();
  impl_->running = true;
  const int threads = std::max({1, impl_->options.threads, impl_->options.request_threads});
  for (int i = 0; i < threads; ++i) {
    impl_->threads.emplace_back([this] {
      SetCurrentThreadName("cql-io");
      impl_->io.run();
    });
  }
  return Status::OK();
}

void CqlServer::Stop() {
  if (!impl_->running) return;
  impl_->running = false;
  asio::post(impl_->io, [this] {
    std::error_code ignored;
    impl_->acceptor->close(ignored);
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (auto& w : impl_->connections) {
      if (auto c = w.lock()) c->Close();
    }
  });
  // Let the closes run, then stop the loop (requests not started are
  // dropped: their connections are closed; running ones finish first).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  impl_->io.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
  if (impl_->waiting) {
    // As the loop's: requests not started are dropped, running ones
    // (waiting for replicas) finish first, by their time-outs at most.
    impl_->waiting->stop();
    for (auto& t : impl_->waiting_threads) t.join();
    impl_->waiting_threads.clear();
    impl_->waiting_guard.reset();
    impl_->shared.waiting = nullptr;
    impl_->waiting.reset();
  }
}

uint16_t CqlServer::port() const {
  std::error_code ec;
  return impl_->acceptor ? impl_->acceptor->local_endpoint(ec).port() : 0;
}

const LatencyHistogram& CqlServer::request_latency() const { return impl_->shared.request_latency; }

size_t CqlServer::connection_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  size_t n = 0;
  for (const auto& w : impl_->connections) {
    auto c = w.lock();
    n += c && !c->closed();
  }
  return n;
}

void CqlServer::BroadcastSchemaChange(const cql::SchemaChange& change) {
  std::string body = cql::EncodeSchemaChangeEvent(change);
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& w : impl_->connections) {
    auto c = w.lock();
    if (c && !c->closed() && c->registered_for_schema()) c->SendEvent(body);
  }
}

void CqlServer::BroadcastNodeEvent(NodeEvent event, std::string_view address_bytes, int32_t cql_port) {
  const bool topology = event == NodeEvent::kNewNode || event == NodeEvent::kRemovedNode;
  static const char* kChanges[] = {"NEW_NODE", "REMOVED_NODE", "UP", "DOWN"};
  std::string body = cql::EncodeNodeEvent(topology ? "TOPOLOGY_CHANGE" : "STATUS_CHANGE",
                                          kChanges[static_cast<int>(event)], address_bytes, cql_port);
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& w : impl_->connections) {
    auto c = w.lock();
    if (!c || c->closed()) continue;
    if (topology ? c->registered_for_topology() : c->registered_for_status()) c->SendEvent(body);
  }
}

}  // namespace tessera::server
