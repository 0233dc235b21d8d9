#include "server/cql_server.h"

#include <asio.hpp>

#include <algorithm>
#include <deque>
#include <set>
#include <thread>

#include "cql/protocol/compression.h"
#include "cql/protocol/wire.h"

namespace tessera::server {

using cql::Opcode;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, cql::RequestProcessor* processor, const CqlServerOptions* options)
      : socket_(std::move(socket)), strand_(asio::make_strand(socket_.get_executor())), processor_(processor),
        options_(options) {}

  void Start() { asio::post(strand_, [self = shared_from_this()] { self->DoRead(); }); }

  void Close() {
    asio::post(strand_, [self = shared_from_this()] { self->CloseNow(); });
  }

  bool registered_for_schema() const { return registered_schema_.load(); }

  void SendEvent(std::string body) {
    asio::post(strand_, [self = shared_from_this(), body = std::move(body)] {
      self->Send(0, -1, Opcode::kEvent, body, {});
    });
  }

  bool closed() const { return closed_.load(); }

 private:
  // Waits until the socket is readable, then reads what is there into a
  // buffer of the serving thread: an idle connection holds no read buffer
  // (10,000 idle connections once held 64 KiB each, 675 MB resident).
  void DoRead() {
    if (closed_) return;
    socket_.async_wait(asio::ip::tcp::socket::wait_read,
                       asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec) {
                         if (ec) return self->CloseNow();
                         self->ReadAvailable();
                       }));
  }

  void ReadAvailable() {
    thread_local std::array<char, 64 * 1024> buffer;
    std::error_code ec;
    socket_.non_blocking(true, ec);
    const size_t n = ec ? 0 : socket_.read_some(asio::buffer(buffer), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return DoRead();
    if (ec) return CloseNow();
    in_.append(buffer.data(), n);
    // Replies to every request of this read go out together, in one write.
    batching_ = true;
    ProcessBuffer();
    batching_ = false;
    // A large request is done with: give its memory back rather than keep it per connection.
    if (in_.empty() && in_.capacity() > buffer.size()) std::string().swap(in_);
    if (!writing_ && !write_queue_.empty()) {
      DoWrite();
    } else if (closing_ && !writing_) {
      CloseNow();
    }
    if (!closing_) DoRead();
  }

  void ProcessBuffer() {
    while (!closing_) {
      cql::FrameHeader h;
      switch (cql::ParseFrameHeader(in_, &h)) {
        case cql::HeaderCheck::kNeedMore:
          return;
        case cql::HeaderCheck::kBadVersion:
          return Fail(h.stream, "Invalid or unsupported protocol version (" + std::to_string(h.version) +
                                    "); supported versions are (4/v4)");
        case cql::HeaderCheck::kTooLarge:
          return Fail(h.stream, "Request is too big: length " + std::to_string(h.length) + " exceeds maximum allowed length " +
                                    std::to_string(cql::kMaxFrameBodySize));
        case cql::HeaderCheck::kOk:
          break;
      }
      if (in_.size() < cql::kFrameHeaderSize + h.length) return;
      std::string body = in_.substr(cql::kFrameHeaderSize, h.length);
      in_.erase(0, cql::kFrameHeaderSize + h.length);
      HandleFrame(h, std::move(body));
    }
  }

  void HandleFrame(const cql::FrameHeader& h, std::string body) {
    if (h.flags & cql::kFlagCompression) {
      if (compression_ == cql::Compression::kNone) return Fail(h.stream, "compressed frame but no compression negotiated");
      std::string plain;
      Status s = cql::Decompress(compression_, body, cql::kMaxFrameBodySize, &plain);
      if (!s.ok()) return Fail(h.stream, s.message());
      body = std::move(plain);
    }
    auto request = cql::DecodeRequest(h.opcode, body);
    if (!request.ok()) return Fail(h.stream, request.status().message());
    if (auto* startup = std::get_if<cql::StartupRequest>(&*request)) return HandleStartup(h.stream, *startup);
    if (std::holds_alternative<cql::OptionsRequest>(*request)) {
      return Send(0, h.stream, Opcode::kSupported,
                  cql::EncodeSupported({{"CQL_VERSION", {options_->cql_version}},
                                        {"COMPRESSION", {"lz4", "snappy"}},
                                        {"PROTOCOL_VERSIONS", {"4/v4"}}}),
                  {});
    }
    if (!started_) return Fail(h.stream, "STARTUP must be the first message on a connection");
    if (auto* reg = std::get_if<cql::RegisterRequest>(&*request)) {
      for (const auto& e : reg->event_types) {
        if (e == "SCHEMA_CHANGE") registered_schema_ = true;
        else if (e != "TOPOLOGY_CHANGE" && e != "STATUS_CHANGE") return Fail(h.stream, "unknown event type " + e);
      }
      return Send(0, h.stream, Opcode::kReady, "", {});
    }
    cql::Reply reply = processor_->Process(state_, *request);
    Send(0, h.stream, reply.opcode, reply.body, reply.warnings);
  }

  void HandleStartup(int16_t stream, const cql::StartupRequest& s) {
    auto it = s.options.find("COMPRESSION");
    if (it != s.options.end() && !it->second.empty()) {
      auto c = cql::ParseCompression(it->second);
      if (!c.ok()) return Fail(stream, c.status().message());
      // READY itself goes out uncompressed; compression starts after it.
      Send(0, stream, Opcode::kReady, "", {});
      compression_ = *c;
    } else {
      Send(0, stream, Opcode::kReady, "", {});
    }
    started_ = true;
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

  void Send(uint8_t flags, int16_t stream, Opcode opcode, const std::string& body,
            const std::vector<std::string>& warnings) {
    if (closed_) return;
    std::string payload;
    if (!warnings.empty()) {
      cql::WireWriter w;
      w.StringList(warnings);
      payload = w.Take();
      flags |= cql::kFlagWarning;
    }
    payload += body;
    if (compression_ != cql::Compression::kNone && opcode != Opcode::kReady && !payload.empty()) {
      std::string packed;
      if (cql::Compress(compression_, payload, &packed).ok()) {
        payload = std::move(packed);
        flags |= cql::kFlagCompression;
      }
    }
    std::string frame;
    cql::EncodeResponseHeader(flags, stream, opcode, static_cast<uint32_t>(payload.size()), &frame);
    frame += payload;
    write_queue_.push_back(std::move(frame));
    if (!writing_ && !batching_) DoWrite();
  }

  // Writes every queued frame with one gathered write (writev).
  void DoWrite() {
    writing_ = true;
    sending_.clear();
    std::vector<asio::const_buffer> buffers;
    while (!write_queue_.empty()) {
      sending_.push_back(std::move(write_queue_.front()));
      write_queue_.pop_front();
    }
    for (const auto& f : sending_) buffers.push_back(asio::buffer(f));
    asio::async_write(socket_, buffers,
                      asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec, size_t) {
                        self->sending_.clear();
                        if (ec) return self->CloseNow();
                        if (!self->write_queue_.empty()) return self->DoWrite();
                        self->writing_ = false;
                        if (self->closing_) self->CloseNow();
                      }));
  }

  void CloseNow() {
    if (closed_.exchange(true)) return;
    std::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  asio::ip::tcp::socket socket_;
  asio::strand<asio::any_io_executor> strand_;
  cql::RequestProcessor* processor_;
  const CqlServerOptions* options_;
  std::string in_;
  std::deque<std::string> write_queue_;
  std::vector<std::string> sending_;  // the frames of the write in progress
  bool writing_ = false;
  bool batching_ = false;  // replying to the requests of one read
  bool closing_ = false;
  bool started_ = false;
  cql::Compression compression_ = cql::Compression::kNone;
  std::atomic<bool> registered_schema_{false};
  std::atomic<bool> closed_{false};
  cql::ConnectionState state_;
};

struct CqlServer::Impl {
  CqlServerOptions options;
  cql::RequestProcessor* processor;
  asio::io_context io;
  std::optional<asio::ip::tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  mutable std::mutex mu;
  std::vector<std::weak_ptr<Connection>> connections;
  bool running = false;

  void Accept() {
    acceptor->async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
      if (ec) return;  // acceptor closed
      socket.set_option(asio::ip::tcp::no_delay(true));
      auto conn = std::make_shared<Connection>(std::move(socket), processor, &options);
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

CqlServer::CqlServer(CqlServerOptions options, cql::RequestProcessor* processor) : impl_(new Impl) {
  impl_->options = std::move(options);
  impl_->processor = processor;
}

CqlServer::~CqlServer() { Stop(); }

Status CqlServer::Start() {
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
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i) {
    impl_->threads.emplace_back([this] { impl_->io.run(); });
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
  // Let the closes run, then stop the loop.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  impl_->io.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

uint16_t CqlServer::port() const {
  std::error_code ec;
  return impl_->acceptor ? impl_->acceptor->local_endpoint(ec).port() : 0;
}

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

}  // namespace tessera::server
