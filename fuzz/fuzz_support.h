// What the fuzz targets behind QueryProcessor share: a scratch database and
// the check every reply must pass (it decodes with the client's decoder and
// is never a ServerError, 0x0000). Failures abort, which libFuzzer reports.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cql/protocol/request_processor.h"
#include "cql/protocol/response_decoding.h"
#include "db/database.h"

namespace tessera::fuzz {

// A database in a fresh directory named after `name`: under /dev/shm when it
// exists (schema changes sync the meta column family), else under /tmp.
inline std::unique_ptr<Database> OpenScratchDatabase(const std::string& name) {
  std::string shm = "/dev/shm/tessera_" + name + "_XXXXXX", tmp = "/tmp/tessera_" + name + "_XXXXXX";
  const char* dir = mkdtemp(shm.data()) ? shm.c_str() : mkdtemp(tmp.data());
  if (!dir) abort();
  DatabaseOptions options;
  options.data_dir = dir;
  auto db = Database::Open(options);
  if (!db.ok()) abort();
  return std::move(db).value();
}

inline cql::DecodedResponse DecodeReplyOrAbort(const cql::Reply& reply) {
  auto decoded = cql::DecodeResponse(static_cast<uint8_t>(reply.opcode), 0, reply.body);
  if (!decoded.ok()) {
    fprintf(stderr, "reply does not decode: %s\n", decoded.status().ToString().c_str());
    abort();
  }
  if (decoded->is_error() && decoded->error_code == 0x0000) {
    fprintf(stderr, "ServerError reached the client: %s\n", decoded->error_message.c_str());
    abort();
  }
  return std::move(decoded).value();
}

}  // namespace tessera::fuzz
