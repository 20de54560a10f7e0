#include "db/job_program_repository.h"

#include "db/statement_helpers.h"

namespace tpuemu::db {
Status JobProgramRepository::Put(Txn& txn, const JobProgramRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "INSERT INTO job_programs (job, compile_cache_hit, compile_seconds, "
          "compile_end_unix_ns, tensorcores, hbm_peak_bytes_per_tensorcore, "
          "transfer_to_device_bytes_per_step, transfer_from_device_bytes_per_step) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (job) DO UPDATE SET "
          "compile_cache_hit = excluded.compile_cache_hit, compile_seconds = "
          "excluded.compile_seconds, "
          "compile_end_unix_ns = excluded.compile_end_unix_ns, tensorcores = excluded.tensorcores, "
          "hbm_peak_bytes_per_tensorcore = excluded.hbm_peak_bytes_per_tensorcore, "
          "transfer_to_device_bytes_per_step = excluded.transfer_to_device_bytes_per_step, "
          "transfer_from_device_bytes_per_step = excluded.transfer_from_device_bytes_per_step"));
  stmt.Bind(1, row.job)
      .Bind(2, row.compile_cache_hit)
      .BindReal(3, row.compile_seconds)
      .Bind(4, row.compile_end_unix_ns)
      .Bind(5, row.tensorcores)
      .Bind(6, row.hbm_peak_bytes_per_tensorcore)
      .Bind(7, row.transfer_to_device_bytes_per_step)
      .Bind(8, row.transfer_from_device_bytes_per_step);
  return stmt.Run();
}

Result<JobProgramRow> JobProgramRepository::Get(Txn& txn, std::string_view job) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare(
                "SELECT job, compile_cache_hit, compile_seconds, compile_end_unix_ns, tensorcores, "
                "hbm_peak_bytes_per_tensorcore, transfer_to_device_bytes_per_step, "
                "transfer_from_device_bytes_per_step FROM job_programs WHERE job = ?1"));
  stmt.Bind(1, job);
  Result<bool> found = stmt.Step();
  if (!found.ok()) return found.status();
  if (!*found) return Status::NotFound("no compiled program recorded for job " + std::string(job));
  const Statement& s = stmt;
  JobProgramRow row;
  row.job = s.ColumnText(0);
  row.compile_cache_hit = s.ColumnInt64(1) != 0;
  row.compile_seconds = s.ColumnReal(2);
  row.compile_end_unix_ns = s.ColumnInt64(3);
  row.tensorcores = s.ColumnInt64(4);
  row.hbm_peak_bytes_per_tensorcore = s.ColumnInt64(5);
  row.transfer_to_device_bytes_per_step = s.ColumnInt64(6);
  row.transfer_from_device_bytes_per_step = s.ColumnInt64(7);
  return row;
}

Result<JobProgramRow> JobProgramRepository::Get(std::string_view job) const {
  return store_.ReadResult<JobProgramRow>([&](Txn& txn) { return Get(txn, job); });
}

}  // namespace tpuemu::db
