// Write guardrails with the seeds' thresholds (Tablestore / GeminiDB best
// practice) as warnings and Cassandra's hard limits as failures:
//  - a primary-key component over 1 KB warns; over 65,535 bytes fails
//    (the native protocol's and Cassandra's key length limit);
//  - a cell over 2 MB warns; over 16 MB fails (Cassandra's default
//    max_mutation_size);
//  - a row over 64 KB written by one statement warns.
// Warnings reach the client with the response (protocol Warning flag).
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "db/guardrails.h"
#include "db/mutation.h"

namespace tessera::cql {

// Appends warnings for `mutations` under the key, cell and row thresholds of
// `limits` (bytes). Errors: InvalidArgument when a hard limit is exceeded
// (nothing is written then).
Status CheckWriteGuardrails(const std::vector<Mutation>& mutations, const Guardrails& limits,
                            std::vector<std::string>* warnings);

}  // namespace tessera::cql
