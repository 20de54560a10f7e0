#include "engine/stablehlo/sharding.h"

#include <cctype>
#include <string>
#include <vector>

namespace tpuemu::engine::stablehlo {
namespace {

// The integers of s from `pos` up to `end`, in order.
std::vector<int64_t> Numbers(std::string_view s) {
  std::vector<int64_t> out;
  for (size_t k = 0; k < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) {
      ++k;
      continue;
    }
    int64_t v = 0;
    while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
      v = v * 10 + (s[k++] - '0');
      if (v > (int64_t{1} << 40)) break;
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

Status CheckSharding(std::string_view s, const hlo::Shape& type, int64_t devices) {
  const std::string what = "mhlo.sharding \"" + std::string(s) + "\"";
  if (s.find("replicated") != std::string_view::npos ||
      s.find("manual") != std::string_view::npos || s.find("unknown") != std::string_view::npos ||
      s == "{}" || s.empty()) {
    return Status::Ok();
  }
  if (const size_t m = s.find("maximal device="); m != std::string_view::npos) {
    std::vector<int64_t> d = Numbers(s.substr(m));
    if (d.empty() || d[0] >= devices) {
      return Status::InvalidArgument(what + " names a device the module's " +
                                     std::to_string(devices) + " devices do not have");
    }
    return Status::Ok();
  }
  const size_t t = s.find("devices=[");
  if (t == std::string_view::npos) return Status::Ok();  // tuple shardings and the like
  const size_t close = s.find(']', t);
  if (close == std::string_view::npos) return Status::InvalidArgument(what + " is malformed");
  const std::vector<int64_t> tiles = Numbers(s.substr(t + 9, close - t - 9));
  int64_t product = 1;
  for (int64_t d : tiles) product *= d;
  const bool replicate_last = s.find("last_tile_dim_replicate") != std::string_view::npos;
  const size_t tiled = tiles.size() - (replicate_last ? 1 : 0);
  if (type.IsArray() && tiled != static_cast<size_t>(type.rank()) && tiles.size() > 0 &&
      s.find("last_tile_dims") == std::string_view::npos) {
    return Status::InvalidArgument(what + " tiles " + std::to_string(tiled) + " dimensions of " +
                                   type.ToString());
  }
  if (product > devices) {
    return Status::InvalidArgument(what + " needs " + std::to_string(product) +
                                   " devices; the module has " + std::to_string(devices) +
                                   " (mhlo.num_partitions x mhlo.num_replicas)");
  }
  std::string_view rest = s.substr(close + 1);
  if (rest.find("<=[") == std::string_view::npos) {
    for (int64_t d : Numbers(rest)) {
      if (d >= devices) {
        return Status::InvalidArgument(what + " names device " + std::to_string(d) +
                                       "; the module has " + std::to_string(devices));
      }
    }
  }
  return Status::Ok();
}

}  // namespace tpuemu::engine::stablehlo
