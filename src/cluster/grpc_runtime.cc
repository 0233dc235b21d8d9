#include "cluster/grpc_runtime.h"

#include <absl/synchronization/mutex.h>

namespace tessera::cluster {

void ConfigureGrpcRuntime() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace tessera::cluster
