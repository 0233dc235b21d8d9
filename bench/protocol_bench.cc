// Micro-benchmarks of what native protocol v5's framing adds per reply
// (Google Benchmark): a reply envelope framed with EncodeSegments (CRC24 of
// the header, CRC32 of the payload, LZ4 when negotiated) and a request frame
// opened with SegmentDecoder, beside the v4 path's per-envelope LZ4
// compression. Results: bench/RESULTS.md ("Protocol v5 framing").
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "cql/protocol/compression.h"
#include "cql/protocol/segment.h"

namespace tessera::cql {
namespace {

// An envelope of `bytes` that compresses as rows of text do (repeated
// column names and values, varying numbers).
std::string Envelope(size_t bytes) {
  std::mt19937 rng(7);
  std::string out;
  while (out.size() < bytes) out += "host-" + std::to_string(rng() % 50) + "/path/" + std::to_string(rng() % 1000) + ";";
  out.resize(bytes);
  return out;
}

void BM_V5FrameEncode(benchmark::State& state) {
  const std::string envelope = Envelope(static_cast<size_t>(state.range(0)));
  const bool lz4 = state.range(1) != 0;
  std::string out;
  for (auto _ : state) {
    out.clear();
    EncodeSegments(envelope, lz4, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_V5FrameEncode)->ArgsProduct({{100, 1024, 65536}, {0, 1}})->ArgNames({"bytes", "lz4"});

void BM_V5FrameDecode(benchmark::State& state) {
  const std::string envelope = Envelope(static_cast<size_t>(state.range(0)));
  const bool lz4 = state.range(1) != 0;
  std::string framed;
  EncodeSegments(envelope, lz4, &framed);
  SegmentDecoder decoder(lz4);
  std::string raw, out;
  for (auto _ : state) {
    raw = framed;
    out.clear();
    if (!decoder.Decode(&raw, &out).ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_V5FrameDecode)->ArgsProduct({{100, 1024, 65536}, {0, 1}})->ArgNames({"bytes", "lz4"});

// v4's compression of a reply body (lz4 with its length prefix), for scale.
void BM_V4BodyLz4(benchmark::State& state) {
  const std::string body = Envelope(static_cast<size_t>(state.range(0)));
  std::string out;
  for (auto _ : state) {
    if (!Compress(Compression::kLz4, body, &out).ok()) state.SkipWithError("compress failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_V4BodyLz4)->Arg(100)->Arg(1024)->Arg(65536);

}  // namespace
}  // namespace tessera::cql

BENCHMARK_MAIN();
