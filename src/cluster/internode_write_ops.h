// WriteSets to and from internode.proto's repeated WriteOp (FROZEN ON THE
// WIRE; cluster/proto/internode.proto). Included only by the internode_*.cc
// files, which alone see the generated protobuf code.
//
// Thread safety: pure functions.
#pragma once

#include "internode.pb.h"
#include "storage/storage_engine.h"

namespace tessera::cluster {

inline void ToWriteOps(const WriteSet& ws, google::protobuf::RepeatedPtrField<tessera::internode::WriteOp>* out) {
  for (const auto& op : ws.ops()) {
    tessera::internode::WriteOp* o = out->Add();
    o->set_kind(op.kind == WriteSet::Op::kMerge ? tessera::internode::WriteOp::MERGE
                                                : tessera::internode::WriteOp::DELETE_RANGE);
    o->set_key(op.key);
    o->set_value(op.value);
  }
}

inline WriteSet FromWriteOps(const google::protobuf::RepeatedPtrField<tessera::internode::WriteOp>& ops) {
  WriteSet ws;
  for (const auto& op : ops) {
    if (op.kind() == tessera::internode::WriteOp::MERGE) {
      ws.Merge(op.key(), op.value());
    } else {
      ws.DeleteRange(op.key(), op.value());
    }
  }
  return ws;
}

}  // namespace tessera::cluster
