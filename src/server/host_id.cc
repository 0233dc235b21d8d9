#include "server/host_id.h"

#include <fstream>
#include <random>

#include "cluster/node_record.h"

namespace tessera::server {

Result<std::string> LoadOrCreateHostId(const std::string& data_dir) {
  const std::string path = data_dir + "/HOST_ID";
  if (std::ifstream in(path); in) {
    std::string text;
    std::getline(in, text);
    auto id = cluster::UuidFromText(text);
    if (!id.ok()) return Status::Corruption(path + " does not hold a host id: " + text.substr(0, 64));
    return *id;
  }
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 16; ++i) id.push_back(static_cast<char>(rd()));
  id[6] = static_cast<char>((id[6] & 0x0F) | 0x40);
  id[8] = static_cast<char>((id[8] & 0x3F) | 0x80);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << cluster::UuidText(id) << "\n";
    out.flush();
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::IOError("cannot rename " + tmp + " to " + path);
  return id;
}

}  // namespace tessera::server
