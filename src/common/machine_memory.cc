#include "common/machine_memory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace tessera {
namespace {

// A control group's limit in bytes; 0 for none ("max", absent or unreadable).
uint64_t CgroupLimit(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

}  // namespace

uint64_t MachineMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  uint64_t memory = pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const uint64_t limit = CgroupLimit(path);
    if (limit > 0 && (memory == 0 || limit < memory)) memory = limit;  // v1 reports "no limit" as a huge number
  }
  return memory;
}

}  // namespace tessera
