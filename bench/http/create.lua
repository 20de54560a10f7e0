-- wrk script for bench/http/run.sh: durable creates per second.
--
-- Every request is `POST /v2/projects/<project>/locations/<zone>/nodes?nodeId=c<thread>-<n>` with a
-- v4-8 body; ids are unique per wrk thread (each thread has its own counter) and match the API's
-- ^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$. A 200 counts as an acknowledged (hence durable) create, any other
-- status as an error. done() prints machine-readable lines that run.sh parses:
--   creates_ok N / creates_errors N / creates_seconds S / creates_per_second R / creates_status CODE N
-- Environment: BENCH_PROJECT (default "bench-create"), BENCH_ZONE (default "us-central2-b").

local project = os.getenv("BENCH_PROJECT") or "bench-create"
local zone = os.getenv("BENCH_ZONE") or "us-central2-b"
local body = '{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"}'
local path_prefix = "/v2/projects/" .. project .. "/locations/" .. zone .. "/nodes?nodeId="

-- Main Lua state: hand each thread its index so node ids never collide across threads.
local threads = {}
local next_thread_id = 0

function setup(thread)
  thread:set("thread_id", next_thread_id)
  next_thread_id = next_thread_id + 1
  table.insert(threads, thread)
end

-- Per-thread state (each wrk thread runs its own Lua state). Globals, not locals: done() reads them
-- through thread:get, which only sees a thread's globals.
counter = 0
ok = 0
errors = 0
statuses = {}
local headers = { ["Content-Type"] = "application/json" }

function request()
  counter = counter + 1
  local id = "c" .. thread_id .. "-" .. counter
  return wrk.format("POST", path_prefix .. id, headers, body)
end

function response(status, hdrs, resp_body)
  if status == 200 then
    ok = ok + 1
  else
    errors = errors + 1
    statuses[status] = (statuses[status] or 0) + 1
  end
end

-- Runs in the main state after the run; reads each thread's counters.
function done(summary, latency, requests)
  local total_ok, total_errors, by_status = 0, 0, {}
  for _, t in ipairs(threads) do
    total_ok = total_ok + t:get("ok")
    total_errors = total_errors + t:get("errors")
    local s = t:get("statuses")
    if s then
      for code, n in pairs(s) do
        by_status[code] = (by_status[code] or 0) + n
      end
    end
  end
  local seconds = summary.duration / 1e6
  io.write(string.format("creates_ok %d\n", total_ok))
  io.write(string.format("creates_errors %d\n", total_errors))
  io.write(string.format("creates_seconds %.3f\n", seconds))
  io.write(string.format("creates_per_second %.1f\n", total_ok / seconds))
  io.write(string.format("creates_p99_ms %.3f\n", latency:percentile(99) / 1000))
  for code, n in pairs(by_status) do
    io.write(string.format("creates_status %s %d\n", tostring(code), n))
  end
end
