#include "common/thread_name.h"

#include <pthread.h>

#include <string>

namespace tessera {

void SetCurrentThreadName(std::string_view name) {
  const std::string cut(name.substr(0, 15));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace tessera
