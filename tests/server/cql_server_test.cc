#include "server/cql_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "common/bytes.h"
#include "cql/protocol/compression.h"
#include "cql/protocol/segment.h"
#include "cql/protocol/wire.h"

namespace tessera::server {
namespace {

using cql::Opcode;

// Answers QUERY with a one-row result holding the query text; "fail" gets an Invalid error.
class EchoProcessor : public cql::RequestProcessor {
 public:
  cql::Reply Process(cql::ConnectionState&, const cql::Request& request, cql::RequestFlags) override {
    ++calls;
    const auto* q = std::get_if<cql::QueryRequest>(&request);
    if (!q) return {Opcode::kResult, cql::EncodeVoidResult(), {}};
    if (q->query == "fail") {
      cql::ErrorResponse e{cql::ErrorCode::kInvalid, "no such thing"};
      return {Opcode::kError, cql::EncodeError(e), {}};
    }
    cql::RowsWriter rows({{"ks", "t", "q", CqlType::Scalar(TypeKind::kText)}}, std::nullopt, false);
    rows.AddRow({q->query});
    return {Opcode::kResult, rows.Finish(), q->query == "warn" ? std::vector<std::string>{"careful"} : std::vector<std::string>{}};
  }
  std::atomic<int> calls{0};
};

struct Frame {
  uint8_t version = 0, flags = 0, opcode = 0;
  int16_t stream = 0;
  std::string body;
};

// A raw loopback client with bounded waits.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ~Client() { close(fd_); }

  void SendRaw(const std::string& bytes) { ASSERT_EQ(send(fd_, bytes.data(), bytes.size(), 0), ssize_t(bytes.size())); }

  static std::string Frame(uint8_t version, uint8_t flags, int16_t stream, Opcode op, const std::string& body) {
    std::string f;
    f.push_back(static_cast<char>(version));
    f.push_back(static_cast<char>(flags));
    PutBigEndian16(&f, static_cast<uint16_t>(stream));
    f.push_back(static_cast<char>(op));
    PutBigEndian32(&f, static_cast<uint32_t>(body.size()));
    return f + body;
  }

  void Send(int16_t stream, Opcode op, const std::string& body, cql::Compression c = cql::Compression::kNone) {
    std::string payload = body;
    uint8_t flags = 0;
    if (c != cql::Compression::kNone) {
      ASSERT_TRUE(cql::Compress(c, body, &payload).ok());
      flags = cql::kFlagCompression;
    }
    SendRaw(Frame(0x04, flags, stream, op, payload));
  }

  // Reads one frame (5 s at most); false on EOF or timeout.
  bool Read(struct Frame* f, cql::Compression c = cql::Compression::kNone) {
    std::string header;
    if (!ReadN(9, &header)) return false;
    f->version = static_cast<uint8_t>(header[0]);
    f->flags = static_cast<uint8_t>(header[1]);
    f->stream = static_cast<int16_t>(GetBigEndian16(header.data() + 2));
    f->opcode = static_cast<uint8_t>(header[4]);
    if (!ReadN(GetBigEndian32(header.data() + 5), &f->body)) return false;
    if (f->flags & cql::kFlagCompression) {
      std::string plain;
      EXPECT_TRUE(cql::Decompress(c, f->body, cql::kMaxFrameBodySize, &plain).ok());
      f->body = plain;
    }
    return true;
  }

  // Reads what has arrived (waiting 5 s at most for something); false on EOF or timeout.
  bool ReadSome(std::string* out) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 5000) <= 0) return false;
    char buf[65536];
    ssize_t got = recv(fd_, buf, sizeof buf, 0);
    if (got <= 0) return false;
    out->assign(buf, static_cast<size_t>(got));
    return true;
  }

  // True when the server closes the connection within 5 s (pending bytes, such
  // as a final ERROR frame, are drained first).
  bool ClosedByServer() {
    for (int i = 0; i < 100; ++i) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 5000) <= 0) return false;
      char buf[4096];
      ssize_t got = recv(fd_, buf, sizeof buf, 0);
      if (got == 0) return true;
      if (got < 0) return errno == ECONNRESET;
    }
    return false;
  }

 private:
  bool ReadN(size_t n, std::string* out) {
    out->clear();
    while (out->size() < n) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 5000) <= 0) return false;
      char buf[65536];
      ssize_t got = recv(fd_, buf, std::min(sizeof buf, n - out->size()), 0);
      if (got <= 0) return false;
      out->append(buf, static_cast<size_t>(got));
    }
    return true;
  }
  int fd_;
};

std::string StartupBody(const std::string& compression) {
  cql::WireWriter w;
  w.Short(compression.empty() ? 1 : 2);
  w.String("CQL_VERSION");
  w.String("3.0.0");
  if (!compression.empty()) {
    w.String("COMPRESSION");
    w.String(compression);
  }
  return w.Take();
}

std::string QueryBody(const std::string& query) {
  cql::WireWriter w;
  w.LongString(query);
  w.Short(1);  // ONE
  w.Byte(0);
  return w.Take();
}

int32_t ErrorCodeOf(const Frame& f) { return static_cast<int32_t>(GetBigEndian32(f.body.data())); }

class CqlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CqlServerOptions o;
    o.port = 0;
    server_ = std::make_unique<CqlServer>(o, &processor_);
    ASSERT_TRUE(server_->Start().ok());
  }
  EchoProcessor processor_;
  std::unique_ptr<CqlServer> server_;
};

TEST_F(CqlServerTest, RefusesOtherProtocolVersionsWithTheWordingDriversExpect) {
  for (uint8_t version : {0x42, 0x41, 0x06, 0x03}) {
    Client c(server_->port());
    c.SendRaw(Client::Frame(version, 0, 0x0102, Opcode::kOptions, ""));
    Frame f;
    ASSERT_TRUE(c.Read(&f));
    EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kError));
    EXPECT_EQ(f.stream, 0x0102);
    EXPECT_EQ(ErrorCodeOf(f), 0x000A);
    EXPECT_NE(f.body.find("Invalid or unsupported protocol version (" + std::to_string(version) +
                          "); supported versions are (4/v4, 5/v5)"),
              std::string::npos);
    EXPECT_TRUE(c.ClosedByServer());
  }
}

// v5 frames one or more envelopes per checksummed frame (segment.h); the
// client side here uses the same codec, whose bytes segment_test.cc checks
// against the Python driver's.
std::string V5Query(const std::string& query) {
  cql::WireWriter w;
  w.LongString(query);
  w.Short(1);  // ONE
  w.Int(0);    // [int] flags in v5
  return w.Take();
}

TEST_F(CqlServerTest, ProtocolV5FramesEverythingAfterStartupWithLz4) {
  Client c(server_->port());
  c.SendRaw(Client::Frame(0x05, 0, 1, Opcode::kOptions, ""));
  Frame f;
  ASSERT_TRUE(c.Read(&f));  // unframed before STARTUP, in the version asked
  EXPECT_EQ(f.version, 0x85);
  EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kSupported));
  EXPECT_NE(f.body.find("5/v5"), std::string::npos);
  c.SendRaw(Client::Frame(0x05, 0, 2, Opcode::kStartup, StartupBody("lz4")));
  ASSERT_TRUE(c.Read(&f));
  EXPECT_EQ(f.version, 0x85);
  EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kReady));
  // Two queries in one frame, a third whose envelope spans three frames, and
  // an error; the deprecated envelope compression flag is ignored.
  const std::string long_query(300000, 'q');
  std::string envelopes = Client::Frame(0x05, cql::kFlagCompression, 3, Opcode::kQuery, V5Query("one")) +
                          Client::Frame(0x05, 0, 4, Opcode::kQuery, V5Query("two"));
  std::string framed;
  cql::EncodeSegments(envelopes, /*lz4=*/true, &framed);
  cql::EncodeSegments(Client::Frame(0x05, 0, 5, Opcode::kQuery, V5Query(long_query)), true, &framed);
  cql::EncodeSegments(Client::Frame(0x05, 0, 6, Opcode::kQuery, V5Query("fail")), true, &framed);
  c.SendRaw(framed);
  std::map<int16_t, std::string> replies;  // stream -> envelope body
  cql::SegmentDecoder decoder(/*lz4=*/true);
  std::string raw, in;
  while (replies.size() < 4) {
    std::string chunk;
    ASSERT_TRUE(c.ReadSome(&chunk));
    raw += chunk;
    ASSERT_TRUE(decoder.Decode(&raw, &in).ok());
    while (in.size() >= 9 && in.size() >= 9 + GetBigEndian32(in.data() + 5)) {
      EXPECT_EQ(static_cast<uint8_t>(in[0]), 0x85);
      EXPECT_EQ(in[1] & cql::kFlagCompression, 0);  // frames compress in v5, not envelopes
      const auto stream = static_cast<int16_t>(GetBigEndian16(in.data() + 2));
      const size_t length = GetBigEndian32(in.data() + 5);
      replies[stream] = in.substr(9, length);
      in.erase(0, 9 + length);
    }
  }
  EXPECT_NE(replies[3].find("one"), std::string::npos);
  EXPECT_NE(replies[4].find("two"), std::string::npos);
  EXPECT_NE(replies[5].find(long_query), std::string::npos);
  EXPECT_EQ(GetBigEndian32(replies[6].data()), 0x2200u);  // Invalid
  // A frame whose payload checksum is wrong ends the connection with a protocol error.
  std::string bad;
  cql::EncodeSegments(Client::Frame(0x05, 0, 7, Opcode::kQuery, V5Query("three")), true, &bad);
  bad[bad.size() - 1] = static_cast<char>(bad[bad.size() - 1] ^ 1);
  c.SendRaw(bad);
  in.clear();
  while (in.size() < 13) {
    std::string chunk;
    ASSERT_TRUE(c.ReadSome(&chunk));
    raw += chunk;
    ASSERT_TRUE(decoder.Decode(&raw, &in).ok());
  }
  EXPECT_EQ(static_cast<uint8_t>(in[4]), static_cast<uint8_t>(Opcode::kError));
  EXPECT_EQ(GetBigEndian32(in.data() + 9), 0x000Au);
  EXPECT_NE(in.find("CRC mismatch"), std::string::npos);
  EXPECT_TRUE(c.ClosedByServer());
}

TEST_F(CqlServerTest, ProtocolV5RefusesSnappy) {
  Client c(server_->port());
  c.SendRaw(Client::Frame(0x05, 0, 1, Opcode::kStartup, StartupBody("snappy")));
  Frame f;
  ASSERT_TRUE(c.Read(&f));
  EXPECT_EQ(ErrorCodeOf(f), 0x000A);
  EXPECT_NE(f.body.find("lz4 only"), std::string::npos);
  EXPECT_TRUE(c.ClosedByServer());
}

TEST_F(CqlServerTest, HandshakeOptionsAndCompressedQueries) {
  for (const char* name : {"", "lz4", "snappy"}) {
    cql::Compression comp = *name ? *cql::ParseCompression(name) : cql::Compression::kNone;
    Client c(server_->port());
    c.Send(1, Opcode::kOptions, "");
    Frame f;
    ASSERT_TRUE(c.Read(&f));
    EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kSupported));
    EXPECT_NE(f.body.find("COMPRESSION"), std::string::npos);
    EXPECT_NE(f.body.find("snappy"), std::string::npos);
    c.Send(2, Opcode::kStartup, StartupBody(name));
    ASSERT_TRUE(c.Read(&f));
    EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kReady));
    EXPECT_EQ(f.flags & cql::kFlagCompression, 0);  // READY is never compressed
    c.Send(3, Opcode::kQuery, QueryBody("SELECT 'hello'"), comp);
    ASSERT_TRUE(c.Read(&f, comp));
    EXPECT_EQ(f.stream, 3);
    EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kResult));
    EXPECT_EQ((f.flags & cql::kFlagCompression) != 0, comp != cql::Compression::kNone);
    EXPECT_NE(f.body.find("SELECT 'hello'"), std::string::npos);
    c.Send(4, Opcode::kQuery, QueryBody("warn"), comp);
    ASSERT_TRUE(c.Read(&f, comp));
    EXPECT_TRUE(f.flags & cql::kFlagWarning);
    EXPECT_EQ(f.body.substr(0, 11), std::string("\x00\x01\x00\x07" "careful", 11));
  }
}

TEST_F(CqlServerTest, ManyStreamsInFlightEachAnsweredOnItsStream) {
  Client c(server_->port());
  c.Send(0, Opcode::kStartup, StartupBody(""));
  Frame f;
  ASSERT_TRUE(c.Read(&f));
  std::string burst;
  for (int16_t s = 1; s <= 200; ++s) burst += Client::Frame(0x04, 0, s, Opcode::kQuery, QueryBody("q" + std::to_string(s)));
  c.SendRaw(burst);
  std::set<int16_t> seen;
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(c.Read(&f));
    EXPECT_NE(f.body.find("q" + std::to_string(f.stream)), std::string::npos);
    seen.insert(f.stream);
  }
  EXPECT_EQ(seen.size(), 200u);
}

// Replies larger than the socket takes at once: the part written on the
// spot and the rest written asynchronously arrive whole and in order.
TEST_F(CqlServerTest, RepliesLargerThanTheSocketTakesArriveWhole) {
  Client c(server_->port());
  c.Send(0, Opcode::kStartup, StartupBody(""));
  Frame f;
  ASSERT_TRUE(c.Read(&f));
  // 3 x 4 MiB of replies, more than loopback's buffers hold while the
  // client reads nothing.
  std::string burst;
  for (int16_t s = 1; s <= 3; ++s) {
    burst += Client::Frame(0x04, 0, s, Opcode::kQuery, QueryBody(std::string(4 << 20, static_cast<char>('a' + s))));
  }
  c.SendRaw(burst);
  std::set<int16_t> seen;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.Read(&f));
    ASSERT_GE(f.stream, 1);
    ASSERT_LE(f.stream, 3);
    EXPECT_NE(f.body.find(std::string(4 << 20, static_cast<char>('a' + f.stream))), std::string::npos);
    seen.insert(f.stream);
  }
  EXPECT_EQ(seen.size(), 3u);
  // The connection still serves after them.
  c.Send(9, Opcode::kQuery, QueryBody("after"));
  ASSERT_TRUE(c.Read(&f));
  EXPECT_EQ(f.stream, 9);
  EXPECT_NE(f.body.find("after"), std::string::npos);
}

uint64_t Observations(const LatencyHistogram& h) {
  uint64_t n = 0;
  for (size_t i = 0; i <= LatencyHistogram::kBoundsMicros.size(); ++i) n += h.Count(i);
  return n;
}

TEST_F(CqlServerTest, RequestLatencyCountsEveryAnsweredRequestOnce) {
  Client c(server_->port());
  c.Send(0, Opcode::kOptions, "");
  Frame f;
  ASSERT_TRUE(c.Read(&f));
  c.Send(0, Opcode::kStartup, StartupBody(""));
  ASSERT_TRUE(c.Read(&f));
  std::string burst;
  for (int16_t s = 1; s <= 50; ++s) burst += Client::Frame(0x04, 0, s, Opcode::kQuery, QueryBody(s % 5 ? "q" : "fail"));
  c.SendRaw(burst);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(c.Read(&f));
  // Recorded once each write completes, which may be just after the client read it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Observations(server_->request_latency()) < 50 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // OPTIONS and STARTUP are the connection's, not requests; errors count.
  EXPECT_EQ(Observations(server_->request_latency()), 50u);
}

TEST_F(CqlServerTest, AMalformedFrameClosesOnlyItsOwnConnection) {
  Client good(server_->port()), bad(server_->port());
  Frame f;
  good.Send(0, Opcode::kStartup, StartupBody(""));
  ASSERT_TRUE(good.Read(&f));
  bad.Send(0, Opcode::kStartup, StartupBody(""));
  ASSERT_TRUE(bad.Read(&f));
  bad.SendRaw(Client::Frame(0x04, 0, 9, Opcode::kQuery, std::string("\x00\x00\x00\x10short", 9)));
  ASSERT_TRUE(bad.Read(&f));
  EXPECT_EQ(f.stream, 9);
  EXPECT_EQ(ErrorCodeOf(f), 0x000A);
  EXPECT_NE(f.body.find("at byte"), std::string::npos);
  EXPECT_TRUE(bad.ClosedByServer());
  good.Send(5, Opcode::kQuery, QueryBody("still here"));
  ASSERT_TRUE(good.Read(&f));
  EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kResult));
  // Garbage that is not even a frame, and a compressed frame without negotiation.
  Client junk(server_->port());
  junk.SendRaw("GET / HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(junk.ClosedByServer());
  Client sneaky(server_->port());
  sneaky.Send(0, Opcode::kStartup, StartupBody(""));
  ASSERT_TRUE(sneaky.Read(&f));
  sneaky.Send(1, Opcode::kQuery, QueryBody("x"), cql::Compression::kLz4);
  ASSERT_TRUE(sneaky.Read(&f));
  EXPECT_EQ(ErrorCodeOf(f), 0x000A);
}

TEST_F(CqlServerTest, RequestsBeforeStartupAreProtocolErrors) {
  Client c(server_->port());
  c.Send(7, Opcode::kQuery, QueryBody("SELECT 1"));
  Frame f;
  ASSERT_TRUE(c.Read(&f));
  EXPECT_EQ(ErrorCodeOf(f), 0x000A);
  EXPECT_EQ(processor_.calls.load(), 0);
}

TEST_F(CqlServerTest, RegisteredConnectionsReceiveSchemaChangeEvents) {
  Client listener(server_->port()), other(server_->port());
  Frame f;
  for (Client* c : {&listener, &other}) {
    c->Send(0, Opcode::kStartup, StartupBody(""));
    ASSERT_TRUE(c->Read(&f));
  }
  cql::WireWriter reg;
  reg.StringList({"TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"});
  listener.Send(1, Opcode::kRegister, reg.Take());
  ASSERT_TRUE(listener.Read(&f));
  EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kReady));
  server_->BroadcastSchemaChange({"CREATED", "TABLE", "ks", "t"});
  ASSERT_TRUE(listener.Read(&f));
  EXPECT_EQ(f.opcode, static_cast<uint8_t>(Opcode::kEvent));
  EXPECT_EQ(f.stream, -1);
  EXPECT_NE(f.body.find("SCHEMA_CHANGE"), std::string::npos);
  other.Send(2, Opcode::kQuery, QueryBody("next"));
  ASSERT_TRUE(other.Read(&f));
  EXPECT_EQ(f.stream, 2);  // no event went to the unregistered connection
  EXPECT_GE(server_->connection_count(), 2u);
}

}  // namespace
}  // namespace tessera::server
