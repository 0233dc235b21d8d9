// The cluster layer's Prometheus metrics (text format 0.0.4), appended to
// /metrics (server/metrics_text.h) on a cluster node: internode traffic
// sent and served, hinted handoff, read repair, and the requests that ended
// in Unavailable, WriteTimeout or ReadTimeout at this coordinator.
//
// Names (stable: dashboards use them): tessera_internode_requests_sent_total,
// tessera_internode_bytes_sent_total, tessera_internode_requests_served_total,
// tessera_internode_bytes_served_total, tessera_hints_stored_total,
// tessera_hints_delivered_total, tessera_hints_dropped_total,
// tessera_hints_pending, tessera_hints_pending_bytes,
// tessera_read_repairs_total (keys written back by reads),
// tessera_coordinator_unavailables_total, tessera_coordinator_write_timeouts_total,
// tessera_coordinator_read_timeouts_total, tessera_coordinator_speculative_retries_total,
// tessera_coordinator_requests_total, tessera_coordinator_forwarded_requests_total
// (requests coordinated without a local replica),
// tessera_coordinator_digest_reads_total, tessera_coordinator_digest_mismatches_total.
//
// Thread safety: reads atomics; callable from any thread.
#pragma once

#include <string>

#include "cluster/replica_service.h"
#include "cluster/replicated_tablet.h"

namespace tessera::cluster {

// REQUIRES: services->client set; served may be null (not serving).
std::string RenderClusterMetrics(const ReplicationServices& services, const ReplicaService* served);

}  // namespace tessera::cluster
