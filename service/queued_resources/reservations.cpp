#include "service/queued_resources/reservations.h"

#include <algorithm>
#include <cctype>

#include "service/common/clock.h"
#include "service/common/not_found.h"
#include "service/common/validation.h"
#include "service/queued_resources/qr_rows.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Fits(const db::ReservationRow& row, const engine::AcceleratorType& type) {
  if (row.resource_type.empty()) return true;
  const std::string want = Lower(row.resource_type);
  return want == AcceleratorFamily(type.name) ||
         want == Lower(std::string(engine::Spec(type.generation).api_type));
}

Reservation FromRow(const db::ReservationRow& row, int64_t used) {
  return {row.name,           row.project,       row.zone,        row.size,
          row.capacity_units, row.resource_type, row.create_time, used};
}

}  // namespace

std::string AcceleratorFamily(const std::string& type_name) {
  return Lower(type_name.substr(0, type_name.rfind('-')));
}

json RenderReservation(const Reservation& r) {
  json standard = {{"size", r.size},
                   {"capacityUnits", r.capacity_units},
                   {"usage", {{"total", std::to_string(r.used)}}}};
  if (!r.resource_type.empty()) standard["resourceType"] = r.resource_type;
  return {{"name", r.name}, {"standard", std::move(standard)}, {"state", "ACTIVE"}};
}

ReservationBook::ReservationBook(db::Store& store, WriteBatcher& batcher, const Catalog& catalog)
    : catalog_(catalog),
      batcher_(batcher),
      store_(store),
      reservations_(store),
      queued_resources_(store) {}

Result<Reservation> ReservationBook::Create(const std::string& project, const std::string& zone,
                                            const std::string& id, int64_t size,
                                            const std::string& units,
                                            const std::string& resource_type) {
  TPUEMU_RETURN_IF_ERROR(ValidateProjectId(project));
  if (catalog_.FindZone(zone) == nullptr) {
    return ResourceNotFound("projects/" + project + "/locations/" + zone);
  }
  if (Status s = ValidateNodeId(id); !s.ok()) {
    return Status::InvalidArgument("Invalid value for field 'reservationId': '" + id +
                                   "' (^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$).");
  }
  if (size < 1) {
    return Status::InvalidArgument("Invalid value for field 'size': " + std::to_string(size) +
                                   " (at least 1).");
  }
  if (units != "CORES" && units != "CHIPS") {
    return Status::InvalidArgument("Invalid value for field 'capacityUnits': '" + units +
                                   "' (CORES or CHIPS).");
  }
  db::ReservationRow row{"projects/" + project + "/locations/" + zone + "/reservations/" + id,
                         project,
                         zone,
                         size,
                         units,
                         resource_type,
                         NowRfc3339(),
                         0};
  Status s = batcher_.Run([&](db::Txn& txn) -> Status {
    Result<int64_t> seq = reservations_.Insert(txn, row);
    if (!seq.ok()) return seq.status();
    row.seq = *seq;
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return FromRow(row, 0);
}

Status ReservationBook::Delete(const std::string& name) {
  return batcher_.Run(
      [&](db::Txn& txn) -> Status { return NotFoundAs(reservations_.Delete(txn, name), name); });
}

Result<std::vector<Reservation>> ReservationBook::List(const std::string& project,
                                                       const std::string& zone) const {
  if (catalog_.FindZone(zone) == nullptr) {
    return ResourceNotFound("projects/" + project + "/locations/" + zone);
  }
  std::vector<Reservation> out;
  Status s = store_.Read([&](db::Txn& txn) -> Status {
    Result<std::vector<db::ReservationRow>> rows = reservations_.List(txn, project, zone);
    if (!rows.ok()) return rows.status();
    for (const db::ReservationRow& row : *rows) {
      Result<int64_t> used = Used(txn, row);
      if (!used.ok()) return used.status();
      out.push_back(FromRow(row, *used));
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

Result<int64_t> ReservationBook::Used(db::Txn& txn, const db::ReservationRow& row) const {
  Result<std::vector<db::QueuedResourceRow>> rows =
      queued_resources_.ListInReservation(txn, row.name);
  if (!rows.ok()) return rows.status();
  int64_t used = 0;
  for (const db::QueuedResourceRow& qr_row : *rows) {
    if (qr_row.held_tensorcores == 0) continue;
    if (row.capacity_units == "CORES") {
      used += qr_row.held_tensorcores;
    } else {
      Result<QueuedResource> qr = QueuedResourceFromRow(qr_row);
      if (!qr.ok()) return qr.status();
      used += qr->chips;
    }
  }
  return used;
}

Result<std::string> ReservationBook::Resolve(db::Txn& txn, const std::string& project,
                                             const std::string& zone, const std::string& requested,
                                             const engine::AcceleratorType& type) const {
  const std::string parent = "projects/" + project + "/locations/" + zone;
  auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument("Invalid value for field 'reservationName': '" + requested +
                                   "': " + why);
  };
  if (requested.rfind(parent + "/reservations/", 0) != 0) {
    return invalid("a queued resource in " + parent +
                   " can only use that project's reservations "
                   "in that zone (" +
                   parent + "/reservations/{reservation} or …/reservations/-)");
  }
  Result<std::vector<db::ReservationRow>> rows = reservations_.List(txn, project, zone);
  if (!rows.ok()) return rows.status();
  const bool any = requested == parent + "/reservations/-";
  for (const db::ReservationRow& row : *rows) {
    if ((any || row.name == requested) && Fits(row, type)) return row.name;
    if (row.name == requested) {
      return invalid("the reservation is for " + row.resource_type + ", not " + type.name + ".");
    }
  }
  if (any) {
    return invalid("project " + project + " has no reservation in " + zone + " for " + type.name +
                   " (configure one with POST /_emulator/" + parent + "/reservations).");
  }
  return invalid("the reservation was not found.");
}

Result<bool> ReservationBook::HasRoom(db::Txn& txn, const std::string& reservation,
                                      int64_t tensorcores, int64_t chips) const {
  Result<db::ReservationRow> row = reservations_.Get(txn, reservation);
  if (!row.ok()) {
    if (row.status().code() == StatusCode::kNotFound) return false;
    return row.status();
  }
  Result<int64_t> used = Used(txn, *row);
  if (!used.ok()) return used.status();
  const int64_t need = row->capacity_units == "CORES" ? tensorcores : chips;
  return *used + need <= row->size;
}

}  // namespace tpuemu::service
