#include "service/operations/operation.h"

#include <chrono>
#include <cstdio>
#include <random>

#include "service/common/clock.h"

namespace tpuemu::service {
namespace {

uint64_t RandomBits() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

}  // namespace

nlohmann::json RenderOperation(const Operation& op) {
  nlohmann::json metadata = {{"@type", kOperationMetadataType},
                             {"createTime", op.create_time},
                             {"target", op.target},
                             {"verb", op.verb},
                             {"apiVersion", "v2"}};
  if (!op.end_time.empty()) metadata["endTime"] = op.end_time;
  if (op.cancel_requested) metadata["cancelRequested"] = true;
  nlohmann::json out = {{"name", op.name}, {"metadata", std::move(metadata)}};
  if (op.done) {
    out["done"] = true;
    if (!op.error.ok()) {
      // Inside an Operation, `code` is the numeric gRPC code and there is no `status`.
      out["error"] = {{"code", static_cast<int>(op.error.code())}, {"message", op.error.message()}};
    } else if (!op.response.is_null()) {
      out["response"] = op.response;
    }
  }
  return out;
}

Operation NewOperation(const std::string& project, const std::string& zone,
                       const std::string& target, std::string_view verb) {
  Operation op;
  op.project = project;
  op.zone = zone;
  op.name = "projects/" + project + "/locations/" + zone + "/operations/" + NewOperationId();
  op.target = target;
  op.verb = std::string(verb);
  op.create_time = NowRfc3339();
  return op;
}

void CompleteOperation(Operation& op, nlohmann::json response) {
  op.done = true;
  op.end_time = NowRfc3339();
  op.response = std::move(response);
}

void FailOperation(Operation& op, Status error) {
  op.done = true;
  op.end_time = NowRfc3339();
  op.error = std::move(error);
}

std::string NewOperationId() {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char buf[80];
  uint64_t a = RandomBits(), b = RandomBits();
  std::snprintf(buf, sizeof(buf), "operation-%lld-%013llx-%08x-%08x", static_cast<long long>(ms),
                static_cast<unsigned long long>(a >> 12), static_cast<unsigned>(b >> 32),
                static_cast<unsigned>(b & 0xffffffffu));
  return buf;
}

std::string NewNodeUid() {
  // 19 digits, never starting with 0, and below 2^63: Node.id is an int64 in the API's proto, and
  // clients that read it as one (the Google Node.js client) would see a larger value as negative.
  uint64_t v = RandomBits() % 8000000000000000000ull + 1000000000000000000ull;
  return std::to_string(v);
}

}  // namespace tpuemu::service
