// Process-wide settings of the gRPC runtime the internode layer runs on.
//
// ConfigureGrpcRuntime: turns off abseil's Mutex deadlock detection, which
// Debian's abseil leaves on: every lock gRPC takes is then checked against a
// global lock-order graph (absl GraphCycles), 5% of a node's CPU under
// internode load in bench/RESULTS.md's profile. Tessera's own locks are
// std::mutex and are not affected; TSan and the tests still see real races.
//
// Thread safety: call before the first gRPC channel or server is made;
// idempotent.
#pragma once

namespace tessera::cluster {

void ConfigureGrpcRuntime();

}  // namespace tessera::cluster
