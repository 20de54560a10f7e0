#include "service/observability/transfer_model.h"

namespace tpuemu::service {

StepTransferBytes TransferBytesPerStep(const engine::Graph& graph, int shards) {
  StepTransferBytes bytes;
  for (const engine::Op& op : graph.ops()) {
    if (op.kind == engine::OpKind::kParameter) {
      bytes.to_device += op.shape.NumElements() * engine::DTypeBytes(op.dtype);
    }
  }
  for (const std::string& id : graph.outputs()) {
    if (const engine::Op* op = graph.Find(id)) {
      bytes.from_device += op->shape.NumElements() * engine::DTypeBytes(op->dtype);
    }
  }
  bytes.to_device *= shards;
  bytes.from_device *= shards;
  return bytes;
}

}  // namespace tpuemu::service
