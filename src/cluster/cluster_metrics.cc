#include "cluster/cluster_metrics.h"

#include <fmt/format.h>

namespace tessera::cluster {
namespace {

void Metric(std::string* out, const char* name, const char* type, const char* help, uint64_t value) {
  *out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

}  // namespace

std::string RenderClusterMetrics(const ReplicationServices& s, const ReplicaService* served) {
  std::string out;
  Metric(&out, "tessera_internode_requests_sent_total", "counter", "Internode requests this node sent.",
         s.client->requests_sent());
  Metric(&out, "tessera_internode_messages_sent_total", "counter",
         "Internode gRPC calls this node made (requests to one node queued behind its calls in flight go in one).",
         s.client->messages_sent());
  Metric(&out, "tessera_internode_bytes_sent_total", "counter", "Key and value bytes of the internode requests sent.",
         s.client->bytes_sent());
  Metric(&out, "tessera_internode_requests_served_total", "counter", "Internode requests this node served.",
         served ? served->requests_served() : 0);
  Metric(&out, "tessera_internode_bytes_served_total", "counter",
         "Key and value bytes of the internode requests served.", served ? served->bytes_served() : 0);
  Metric(&out, "tessera_vector_searches_served_total", "counter",
         "ANN candidate searches of this node's vector indexes for other coordinators.",
         served ? served->vector_searches_served() : 0);
  const HintStore* h = s.hints.get();
  Metric(&out, "tessera_hints_stored_total", "counter", "Hints stored for replicas that missed a write.",
         h ? h->stored() : 0);
  Metric(&out, "tessera_hints_delivered_total", "counter", "Hints delivered to their replica.",
         h ? h->delivered() : 0);
  Metric(&out, "tessera_hints_dropped_total", "counter", "Hints dropped: over the size bound or expired.",
         h ? h->dropped() : 0);
  Metric(&out, "tessera_hints_pending", "gauge", "Hints waiting for their replica.", h ? h->pending() : 0);
  Metric(&out, "tessera_hints_pending_bytes", "gauge", "Bytes of the hints waiting.", h ? h->pending_bytes() : 0);
  Metric(&out, "tessera_migration_streamed_bytes_total", "counter",
         "Key and value bytes the tablet migrations this node drove streamed.", s.streamed_bytes.load());
  Metric(&out, "tessera_migration_streamed_keys_total", "counter",
         "Keys the tablet migrations this node drove streamed.", s.streamed_keys.load());
  Metric(&out, "tessera_migration_stream_limit_bytes_per_second", "gauge",
         "What those migrations stream at most, all together (0: no limit).",
         s.stream_limiter ? s.stream_limiter->bytes_per_second() : 0);
  Metric(&out, "tessera_read_repairs_total", "counter", "Keys written back to a replica by a read.",
         s.read_repairs.load());
  Metric(&out, "tessera_coordinator_unavailables_total", "counter", "Requests refused as Unavailable.",
         s.unavailables.load());
  Metric(&out, "tessera_coordinator_write_timeouts_total", "counter", "Writes that ended in WriteTimeout.",
         s.write_timeouts.load());
  Metric(&out, "tessera_coordinator_read_timeouts_total", "counter", "Reads that ended in ReadTimeout.",
         s.read_timeouts.load());
  Metric(&out, "tessera_coordinator_requests_total", "counter",
         "Tablet requests (writes, key reads, range read steps) this node coordinated.", s.coordinated.load());
  Metric(&out, "tessera_coordinator_forwarded_requests_total", "counter",
         "Coordinated tablet requests of which this node held no replica (every replica remote).", s.forwarded.load());
  Metric(&out, "tessera_coordinator_speculative_retries_total", "counter",
         "Reads that asked one more replica (speculative_retry, or an error answer).", s.speculative_retries.load());
  Metric(&out, "tessera_coordinator_digest_reads_total", "counter",
         "Key reads and windows (of slices, scan pages) answered by one replica's data and the others' digests.",
         s.digest_reads.load());
  Metric(&out, "tessera_coordinator_digest_mismatches_total", "counter",
         "Digest reads whose replicas disagreed, then read in full and repaired.", s.digest_mismatches.load());
  Metric(&out, "tessera_paxos_rounds_total", "counter",
         "Paxos rounds this node coordinated (a conditional statement or a SERIAL read prepares one each try).",
         s.paxos_rounds.load());
  Metric(&out, "tessera_paxos_round_trips_total", "counter",
         "Paxos phases this node sent to a partition's replicas (prepare, propose, commit, repairs).",
         s.paxos_round_trips.load());
  Metric(&out, "tessera_paxos_preempted_total", "counter",
         "Paxos proposals every replica refused (a later round won): the statement ran again.",
         s.paxos_preempted.load());
  return out;
}

}  // namespace tessera::cluster
