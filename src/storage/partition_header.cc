#include "storage/partition_header.h"

#include <algorithm>
#include <tuple>

#include "common/bytes.h"

namespace tessera {
namespace {

auto RangeKey(const RangeTombstone& r) { return std::tie(r.start, r.end_unbounded, r.end); }

void Normalize(PartitionHeader* h) {
  auto& v = h->range_tombstones;
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return RangeKey(a) < RangeKey(b); });
  std::vector<RangeTombstone> out;
  for (auto& r : v) {
    if (h->partition_deletion.Deletes(r.deletion.timestamp)) continue;
    if (!out.empty() && RangeKey(out.back()) == RangeKey(r)) {
      if (r.deletion.Supersedes(out.back().deletion)) out.back().deletion = r.deletion;
      continue;
    }
    out.push_back(std::move(r));
  }
  v = std::move(out);
}

bool ReadDeletion(ByteReader* r, DeletionTime* d) {
  uint64_t ts;
  if (!r->ReadBigEndian64(&ts) || !r->ReadBigEndian32(&d->local_deletion_time)) return false;
  d->timestamp = static_cast<int64_t>(ts);
  return true;
}

void PutDeletion(std::string* out, const DeletionTime& d) {
  PutBigEndian64(out, static_cast<uint64_t>(d.timestamp));
  PutBigEndian32(out, d.local_deletion_time);
}

}  // namespace

DeletionTime PartitionHeader::DeletionFor(std::string_view ck, bool is_static) const {
  DeletionTime best = partition_deletion;
  if (is_static) return best;
  for (const auto& r : range_tombstones) {
    if (r.start > ck) break;  // sorted by start
    if (r.Covers(ck) && r.deletion.Supersedes(best)) best = r.deletion;
  }
  return best;
}

RangeTombstone MakeRangeTombstone(std::string_view start_prefix, bool start_inclusive, std::string_view end_prefix,
                                  bool end_inclusive, DeletionTime deletion) {
  RangeTombstone r;
  r.deletion = deletion;
  if (start_prefix.empty() || start_inclusive) {
    r.start.assign(start_prefix);
  } else if (!PrefixSuccessor(start_prefix, &r.start)) {
    r.start.assign(start_prefix);  // all-0xFF prefix: nothing sorts above it; covers only itself
  }
  if (end_prefix.empty()) {
    r.end_unbounded = true;
  } else if (end_inclusive) {
    r.end_unbounded = !PrefixSuccessor(end_prefix, &r.end);
  } else {
    r.end.assign(end_prefix);
  }
  return r;
}

void EncodePartitionHeader(const PartitionHeader& h, std::string* out) {
  out->push_back(static_cast<char>(kValueTypePartitionHeader));
  out->push_back(static_cast<char>(h.partition_deletion.IsLive() ? 0 : 1));
  if (!h.partition_deletion.IsLive()) PutDeletion(out, h.partition_deletion);
  PutVarint64(out, h.range_tombstones.size());
  for (const auto& r : h.range_tombstones) {
    PutVarint64(out, r.start.size());
    out->append(r.start);
    out->push_back(static_cast<char>(r.end_unbounded ? 1 : 0));
    if (!r.end_unbounded) {
      PutVarint64(out, r.end.size());
      out->append(r.end);
    }
    PutDeletion(out, r.deletion);
  }
}

Status DecodePartitionHeader(std::string_view in, PartitionHeader* h) {
  auto bad = [](const char* what) { return Status::Corruption(std::string("partition header: ") + what); };
  ByteReader r(in);
  uint8_t type, flags;
  if (!r.ReadByte(&type) || type != kValueTypePartitionHeader) return bad("wrong value type");
  if (!r.ReadByte(&flags) || flags > 1) return bad("bad flags");
  *h = PartitionHeader{};
  if (flags && !ReadDeletion(&r, &h->partition_deletion)) return bad("truncated partition deletion");
  uint64_t n;
  if (!r.ReadVarint64(&n) || n > r.remaining()) return bad("bad range tombstone count");
  h->range_tombstones.resize(n);
  for (auto& rt : h->range_tombstones) {
    uint8_t unbounded;
    if (!r.ReadLengthPrefixed(&rt.start) || !r.ReadByte(&unbounded) || unbounded > 1) return bad("truncated range tombstone");
    rt.end_unbounded = unbounded;
    if (!rt.end_unbounded && !r.ReadLengthPrefixed(&rt.end)) return bad("truncated range end");
    if (!ReadDeletion(&r, &rt.deletion)) return bad("truncated range deletion");
  }
  if (!r.empty()) return bad("trailing bytes");
  return Status::OK();
}

void ReconcileHeader(PartitionHeader* h, const PartitionHeader& other) {
  if (other.partition_deletion.Supersedes(h->partition_deletion)) h->partition_deletion = other.partition_deletion;
  h->range_tombstones.insert(h->range_tombstones.end(), other.range_tombstones.begin(), other.range_tombstones.end());
  Normalize(h);
}

bool PurgeHeader(PartitionHeader* h, uint32_t now, int32_t gc_grace) {
  auto purgeable = [&](const DeletionTime& d) {
    return !d.IsLive() && int64_t{d.local_deletion_time} + gc_grace <= int64_t{now};
  };
  bool changed = false;
  if (purgeable(h->partition_deletion)) {
    h->partition_deletion = DeletionTime{};
    changed = true;
  }
  size_t before = h->range_tombstones.size();
  std::erase_if(h->range_tombstones, [&](const RangeTombstone& r) { return purgeable(r.deletion); });
  return changed || before != h->range_tombstones.size();
}

}  // namespace tessera
