#include "server/host_id.h"

#include <fstream>

#include "common/uuid.h"

namespace tessera::server {

Result<std::string> LoadOrCreateHostId(const std::string& data_dir) {
  const std::string path = data_dir + "/HOST_ID";
  if (std::ifstream in(path); in) {
    std::string text;
    std::getline(in, text);
    auto id = UuidFromText(text);
    if (!id.ok()) return Status::Corruption(path + " does not hold a host id: " + text.substr(0, 64));
    return *id;
  }
  const std::string id = RandomUuidV4();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << UuidText(id) << "\n";
    out.flush();
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::IOError("cannot rename " + tmp + " to " + path);
  return id;
}

}  // namespace tessera::server
