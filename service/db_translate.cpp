#include "service/db_translate.h"

namespace tpuemu::service {

Status FromDb(const db::DbStatus& status) {
  switch (status.code()) {
    case db::DbCode::kOk:
      return Status::Ok();
    case db::DbCode::kNotFound:
      return Status::NotFound(status.message());
    case db::DbCode::kAlreadyExists:
      return Status::AlreadyExists(status.message());
    case db::DbCode::kBusy:
      return Status::Unavailable("database busy: " + status.message());
    case db::DbCode::kCorruption:
      return {StatusCode::kDataLoss, status.message()};
    case db::DbCode::kIoError:
    case db::DbCode::kInvalid:
      return Status::Internal("database error: " + status.message());
  }
  return Status::Internal(status.message());
}

db::DbStatus ToDb(const Status& status) {
  if (status.ok()) return db::DbStatus::Ok();
  return db::DbStatus::Invalid(status.ToString());
}

Status FromTxn(const db::DbStatus& status, const Status& carried) {
  if (!carried.ok()) return carried;
  return FromDb(status);
}

}  // namespace tpuemu::service
