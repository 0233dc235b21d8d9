#include "client/cql_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/bytes.h"
#include "cql/protocol/frame.h"
#include "cql/protocol/request_encoding.h"

namespace tessera::client {
namespace {

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

const char* ErrorName(int32_t code) {
  switch (code) {
    case 0x0000: return "Server error";
    case 0x000A: return "Protocol error";
    case 0x0100: return "Bad credentials";
    case 0x1000: return "Unavailable";
    case 0x1001: return "Overloaded";
    case 0x1002: return "Is bootstrapping";
    case 0x1100: return "Write timeout";
    case 0x1200: return "Read timeout";
    case 0x1300: return "Read failure";
    case 0x2000: return "Syntax error";
    case 0x2100: return "Unauthorized";
    case 0x2200: return "Invalid";
    case 0x2300: return "Config error";
    case 0x2400: return "Already exists";
    case 0x2500: return "Unprepared";
    default: return "Error";
  }
}

}  // namespace

bool IsRetryable(int32_t code) {
  return code == 0x1000 || code == 0x1001 || code == 0x1002 || code == 0x1100 || code == 0x1200;
}

Status ServerErrorStatus(const cql::DecodedResponse& r) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%04X", static_cast<unsigned>(r.error_code));
  std::string msg = std::string("Error ") + code + " (" + ErrorName(r.error_code) + "): " + r.error_message;
  if (r.error_code == 0x2000) return Status::SyntaxError(std::move(msg));
  if (r.error_code == 0x0100) return Status::AuthenticationFailed(std::move(msg));
  if (r.error_code == 0x2100) return Status::Unauthorized(std::move(msg));
  if (IsRetryable(r.error_code)) return Status::Busy(std::move(msg));
  return Status::InvalidArgument(std::move(msg));
}

Result<std::unique_ptr<CqlConnection>> CqlConnection::Connect(const ClientOptions& options) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options.port);
  if (int rc = getaddrinfo(options.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Status::IOError("cannot resolve " + options.host + ": " + gai_strerror(rc));
  }
  int fd = -1;
  Status last = Status::IOError("no address for " + options.host);
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    // Non-blocking connect bounded by the time-out, then back to blocking.
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, options.connect_timeout_ms) == 1 ? 0 : -1;
      int err = 0;
      socklen_t len = sizeof err;
      if (rc == 0 && (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)) {
        errno = err;
        rc = -1;
      }
      if (rc != 0 && errno == 0) errno = ETIMEDOUT;
    }
    if (rc != 0) {
      last = Errno("cannot connect to " + options.host + ":" + port);
      close(fd);
      fd = -1;
      continue;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  freeaddrinfo(found);
  if (fd < 0) return last;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::unique_ptr<CqlConnection> c(new CqlConnection(fd, options));
  if (options.tls.enabled) {
    // The handshake blocks; bound it by the connect time-out.
    timeval tv{options.connect_timeout_ms / 1000, (options.connect_timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    TESSERA_ASSIGN_OR_RETURN(c->tls_, TlsChannel::Handshake(fd, options.host, options.tls));
    timeval none{0, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  }
  TESSERA_ASSIGN_OR_RETURN(auto ready, c->Call(cql::StartupRequest{{{"CQL_VERSION", "3.0.0"}}}));
  if (ready.is_error()) return ServerErrorStatus(ready);
  if (ready.opcode == cql::Opcode::kAuthenticate) {
    TESSERA_RETURN_IF_ERROR(c->Login(ready));
    return c;
  }
  if (ready.opcode != cql::Opcode::kReady) return Status::IOError("server did not answer STARTUP with READY");
  return c;
}

Status CqlConnection::Login(const cql::DecodedResponse& authenticate) {
  if (options_.username.empty()) {
    return Status::InvalidArgument("the server requires authentication (" + authenticate.authenticator +
                                   "): give a username and password");
  }
  // SASL PLAIN (RFC 4616): no authzid, NUL, user, NUL, password.
  std::string token = std::string(1, '\0') + options_.username + std::string(1, '\0') + options_.password;
  TESSERA_ASSIGN_OR_RETURN(auto reply, Call(cql::AuthResponseRequest{token}));
  if (reply.is_error()) return ServerErrorStatus(reply);
  if (reply.opcode != cql::Opcode::kAuthSuccess) return Status::IOError("server did not answer AUTH_RESPONSE with AUTH_SUCCESS");
  return Status::OK();
}

CqlConnection::~CqlConnection() {
  if (fd_ >= 0) close(fd_);
}

Status CqlConnection::WriteAll(const std::string& bytes) {
  if (tls_) return tls_->Write(bytes.data(), bytes.size());
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("send");
    off += static_cast<size_t>(n);
  }
  return Status::OK();
}

Status CqlConnection::ReadExactly(size_t want, std::string* out) {
  out->resize(want);
  size_t off = 0;
  while (off < want) {
    pollfd p{fd_, POLLIN, 0};
    int ready = tls_ && tls_->HasBuffered() ? 1 : poll(&p, 1, options_.request_timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Status::IOError("no response within " + std::to_string(options_.request_timeout_ms) + " ms");
    if (ready < 0) return Errno("poll");
    if (tls_) {
      TESSERA_ASSIGN_OR_RETURN(size_t got, tls_->Read(out->data() + off, want - off));
      if (got == 0) return Status::IOError("the server closed the connection");
      off += got;
      continue;
    }
    ssize_t n = ::recv(fd_, out->data() + off, want - off, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Status::IOError("the server closed the connection");
    if (n < 0) return Errno("recv");
    off += static_cast<size_t>(n);
  }
  return Status::OK();
}

Result<int16_t> CqlConnection::Send(const cql::Request& request, uint8_t flags) {
  if (in_flight_ >= busy_.size()) return Status::Busy("all streams in flight");
  while (busy_[static_cast<size_t>(next_stream_)]) next_stream_ = static_cast<int16_t>((next_stream_ + 1) & 0x7FFF);
  const int16_t stream = next_stream_;
  next_stream_ = static_cast<int16_t>((next_stream_ + 1) & 0x7FFF);
  out_ += cql::EncodeRequestFrame(stream, cql::EncodeRequest(request), flags);
  busy_[static_cast<size_t>(stream)] = true;
  ++in_flight_;
  return stream;
}

Status CqlConnection::Flush() {
  if (out_.empty()) return Status::OK();
  Status s = WriteAll(out_);
  out_.clear();
  return s;
}

Result<bool> CqlConnection::WaitForResponse(int64_t timeout_micros) {
  TESSERA_RETURN_IF_ERROR(Flush());
  if (tls_ && tls_->HasBuffered()) return true;
  pollfd p{fd_, POLLIN, 0};
  const int64_t micros = std::max<int64_t>(timeout_micros, 0);
  timespec timeout{static_cast<time_t>(micros / 1'000'000), static_cast<long>(micros % 1'000'000) * 1000};
  for (;;) {
    const int ready = ppoll(&p, 1, &timeout, nullptr);
    if (ready < 0 && errno == EINTR) continue;  // the rest of the time-out is not tracked: a rare early retry
    if (ready < 0) return Errno("ppoll");
    return ready > 0;
  }
}

Result<size_t> CqlConnection::WaitForAny(const std::vector<CqlConnection*>& conns, int64_t timeout_micros) {
  std::vector<pollfd> fds;
  for (size_t i = 0; i < conns.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(conns[i]->Flush());
    if (conns[i]->tls_ && conns[i]->tls_->HasBuffered()) return i;
    fds.push_back(pollfd{conns[i]->fd_, POLLIN, 0});
  }
  const int64_t micros = std::max<int64_t>(timeout_micros, 0);
  timespec timeout{static_cast<time_t>(micros / 1'000'000), static_cast<long>(micros % 1'000'000) * 1000};
  for (;;) {
    const int ready = ppoll(fds.data(), fds.size(), &timeout, nullptr);
    if (ready < 0 && errno == EINTR) continue;  // as WaitForResponse: a rare early retry
    if (ready < 0) return Errno("ppoll");
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) return i;  // POLLHUP / POLLERR too: Receive() reports them
    }
    return conns.size();
  }
}

Result<CqlConnection::Response> CqlConnection::Receive() {
  TESSERA_RETURN_IF_ERROR(Flush());
  std::string header;
  TESSERA_RETURN_IF_ERROR(ReadExactly(9, &header));
  cql::FrameHeader h;
  // ParseFrameHeader checks requests; a response has the direction bit set.
  const cql::HeaderCheck check = cql::ParseFrameHeader(header, &h);
  if (check == cql::HeaderCheck::kNeedMore || !h.is_response || h.version != cql::kProtocolV4 ||
      h.length > cql::kMaxFrameBodySize) {
    return Status::Corruption("bad response frame header");
  }
  std::string body;
  TESSERA_RETURN_IF_ERROR(ReadExactly(h.length, &body));
  TESSERA_ASSIGN_OR_RETURN(auto decoded, cql::DecodeResponse(h.opcode, h.flags, body));
  if (h.stream >= 0 && busy_[static_cast<size_t>(h.stream)]) {
    busy_[static_cast<size_t>(h.stream)] = false;
    --in_flight_;
  }
  return Response{h.stream, std::move(decoded)};
}

Result<cql::DecodedResponse> CqlConnection::Call(const cql::Request& request) {
  TESSERA_ASSIGN_OR_RETURN(int16_t stream, Send(request));
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(Response r, Receive());
    if (r.stream == stream) return std::move(r.decoded);  // events (stream -1) are skipped
  }
}

Result<cql::DecodedResponse> CqlConnection::Query(const std::string& text, cql::QueryParameters params) {
  TESSERA_ASSIGN_OR_RETURN(auto r, Call(cql::QueryRequest{text, std::move(params)}));
  if (r.is_error()) return ServerErrorStatus(r);
  return r;
}

Result<cql::DecodedPrepared> CqlConnection::Prepare(const std::string& text) {
  TESSERA_ASSIGN_OR_RETURN(auto r, Call(cql::PrepareRequest{text}));
  if (r.is_error()) return ServerErrorStatus(r);
  if (r.result_kind != cql::kResultPrepared) return Status::Corruption("PREPARE did not return a Prepared result");
  return std::move(r.prepared);
}

}  // namespace tessera::client
