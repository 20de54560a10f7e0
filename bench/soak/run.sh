#!/usr/bin/env bash
# bench/soak/run.sh — soak tpuemud: wrk on GET node/list plus a job submitter, for N minutes.
#
# Usage: bench/soak/run.sh [minutes]        (default 5; 1..120)
# Env:   TPUEMUD (default <repo>/build/daemon/tpuemud), SOAK_THREADS (2), SOAK_CONNECTIONS (16),
#        SOAK_WARMUP_SECONDS (default: a quarter of the run, at least 20 s).
#
#   1. tpuemud on a free loopback port (127.0.0.1, port 0), durable SQLite file in a temp dir,
#      delays 0; 20 v4-8 nodes to list and 2 to run jobs on.
#   2. For the whole run, side by side:
#      - wrk -t$SOAK_THREADS -c$SOAK_CONNECTIONS on GET one node + GET the list (soak.lua);
#      - one job submitter: submit a small job (matmul or 5-step mlp), :wait for it, check it
#        SUCCEEDED, delete it; at most 5 jobs a second and 36,000 in all;
#      - tpuemud's RSS (VmRSS) sampled every 5 s.
#   3. Reports requests, errors (wrk socket errors + non-2xx, submitter failures) and RSS growth from
#      the end of warm-up to the end of the run.
# Exits 0 only when errors == 0 and RSS growth after warm-up < 10%; 1 when a check fails, 2 on a
# setup failure. Every process it starts is stopped on exit; nothing leaves the loopback interface.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
minutes="${1:-5}"
tpuemud="${TPUEMUD:-${repo_root}/build/daemon/tpuemud}"
threads="${SOAK_THREADS:-2}"
connections="${SOAK_CONNECTIONS:-16}"
zone="us-central2-b"

die() {
  echo "bench/soak: $*" >&2
  exit 2
}

[[ "${minutes}" =~ ^[0-9]+$ && "${minutes}" -ge 1 && "${minutes}" -le 120 ]] ||
  die "minutes must be an integer in 1..120 (got '${minutes}')"
[[ -x "${tpuemud}" ]] || die "tpuemud not found or not executable: ${tpuemud} (set TPUEMUD)"
for tool in wrk curl; do
  command -v "${tool}" >/dev/null || die "missing tool: ${tool} (scripts/setup installs it)"
done
seconds=$((minutes * 60))
warmup="${SOAK_WARMUP_SECONDS:-$((seconds / 4 > 20 ? seconds / 4 : 20))}"
[[ "${warmup}" =~ ^[0-9]+$ && "${warmup}" -lt "${seconds}" ]] ||
  die "SOAK_WARMUP_SECONDS must be an integer below the run time (${seconds} s)"

tmp="$(mktemp -d -t tpuemu-soak.XXXXXX)"
tpuemud_pid=""
wrk_pid=""
submitter_pid=""
: >"${tmp}/failures.txt"

# shellcheck source=bench/lib.sh
source "${script_dir}/../lib.sh"

cleanup() {
  stop_pid "${wrk_pid}" TERM
  stop_pid "${submitter_pid}" TERM
  stop_pid "${tpuemud_pid}" TERM
  rm -rf "${tmp}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --------------------------------------------------------------------------------------- tpuemud
mkdir -p "${tmp}/data"
"${tpuemud}" --host 127.0.0.1 --port 0 --worker-sandboxes off --data-dir "${tmp}/data" --provisioning-delay-ms 0 \
  --transition-delay-ms 0 --log-level warn >"${tmp}/tpuemud.out" 2>"${tmp}/tpuemud.err" &
tpuemud_pid=$!
port="$(ready_port "${tmp}/tpuemud.out" "${tpuemud_pid}")"
[[ -n "${port}" ]] || {
  cat "${tmp}/tpuemud.err" >&2
  die "tpuemud did not report ready within 10 s"
}
base="http://127.0.0.1:${port}"
api="${base}/v2/projects/soak/locations/${zone}"
node_body='{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"}'
for id in $(seq -f 'n%g' 0 19) job-a job-b; do
  curl -sS --fail --max-time 5 -X POST -d "${node_body}" "${api}/nodes?nodeId=${id}" -o /dev/null ||
    die "create of node ${id} failed"
done
for _ in $(seq 100); do
  ready="$(curl -sS --fail --max-time 5 "${api}/nodes?pageSize=100" | grep -o '"state": *"READY"' |
    wc -l)" || die "list of nodes failed"
  [[ "${ready}" -ge 22 ]] && break
  sleep 0.1
done
[[ "${ready}" -ge 22 ]] || die "only ${ready}/22 nodes READY after 10 s"

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/${tpuemud_pid}/status" 2>/dev/null || echo 0; }

# The first top-level-looking "KEY":"value" of a compact JSON object on stdin.
field() { awk -v RS=',' -F'"' -v key="$1" '$2 == key && $3 == ":" {print $4; exit}'; }

# ------------------------------------------------------------------------------------ job submitter
# Runs until the deadline or the count cap; one line per failure in failures.txt, a count in jobs.txt.
submitter() {
  local deadline=$(($(date +%s) + seconds)) n=0 max_jobs=36000 body job name waited state
  local bodies=('{"workload":{"matmul":{"m":64,"n":64,"k":64}}}'
    '{"workload":{"mlp":{"steps":5,"hidden":32,"batch":32}}}')
  while [[ $(date +%s) -lt ${deadline} && ${n} -lt ${max_jobs} ]]; do
    local node="job-a"
    ((n % 2)) && node="job-b"
    body="${bodies[$((n % 2))]}"
    if ! job="$(curl -sS --fail --max-time 10 -X POST -d "${body}" "${api}/nodes/${node}/jobs")"; then
      echo "submit ${n} failed" >>"${tmp}/failures.txt"
    else
      name="$(field name <<<"${job}")"
      if waited="$(curl -sS --fail --max-time 40 "${base}/v2/${name}:wait?timeout=30s")"; then
        state="$(field state <<<"${waited}")"
      else
        state="wait failed"
      fi
      [[ "${state}" == "SUCCEEDED" ]] || echo "job ${name}: ${state}" >>"${tmp}/failures.txt"
      curl -sS --fail --max-time 10 -X DELETE "${base}/v2/${name}" -o /dev/null ||
        echo "delete ${name} failed" >>"${tmp}/failures.txt"
    fi
    n=$((n + 1))
    echo "${n}" >"${tmp}/jobs.txt"
    sleep 0.2 # at most 5 jobs/s: a steady background, not a second load generator
  done
}

# --------------------------------------------------------------------------------------------- run
cat >"${tmp}/soak.lua" <<'EOF'
-- Alternates GET one node and GET the node list.
local paths = {"/v2/projects/soak/locations/us-central2-b/nodes/n0",
               "/v2/projects/soak/locations/us-central2-b/nodes?pageSize=20"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % 2) + 1])
end
EOF

echo "soak: ${minutes} min against ${base} (wrk -t${threads} -c${connections}, job submitter, warm-up ${warmup} s)"
start_rss="$(rss_kb)"
submitter &
submitter_pid=$!
wrk -t"${threads}" -c"${connections}" -d"${seconds}s" --timeout 10s --latency -s "${tmp}/soak.lua" \
  "${base}" >"${tmp}/wrk.txt" 2>&1 &
wrk_pid=$!

warm_rss=""
peak_rss=0
elapsed=0
: >"${tmp}/rss.txt"
while kill -0 "${wrk_pid}" 2>/dev/null; do
  sleep 5
  elapsed=$((elapsed + 5))
  rss="$(rss_kb)"
  echo "${elapsed} ${rss}" >>"${tmp}/rss.txt"
  [[ "${rss}" -gt "${peak_rss}" ]] && peak_rss="${rss}"
  [[ -z "${warm_rss}" && "${elapsed}" -ge "${warmup}" ]] && warm_rss="${rss}"
  [[ "${elapsed}" -gt $((seconds + 60)) ]] && die "wrk did not finish"
done
wait "${wrk_pid}" || true
wrk_pid=""
wait "${submitter_pid}" || true
submitter_pid=""
end_rss="$(rss_kb)"
[[ -n "${warm_rss}" ]] || warm_rss="${start_rss}"
ready_after="$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "${base}/readyz" || true)"

# ----------------------------------------------------------------------------------------- report
requests="$(awk '/requests in/ {print $1}' "${tmp}/wrk.txt")"
rps="$(awk '/^Requests\/sec:/ {print $2}' "${tmp}/wrk.txt")"
p99="$(awk '$1 == "99%" {print $2}' "${tmp}/wrk.txt")"
non2xx="$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "${tmp}/wrk.txt")"
socket_errors="$(sed -n 's/.*Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1 \2 \3 \4/p' "${tmp}/wrk.txt" |
  awk '{print $1 + $2 + $3 + $4}')"
jobs="$(cat "${tmp}/jobs.txt" 2>/dev/null || echo 0)"
job_errors="$(wc -l <"${tmp}/failures.txt")"
[[ -n "${requests}" ]] || {
  cat "${tmp}/wrk.txt" >&2
  die "could not read wrk's report"
}
errors=$((${non2xx:-0} + ${socket_errors:-0} + job_errors))
[[ "${ready_after}" == "200" ]] || errors=$((errors + 1))
growth="$(awk -v a="${warm_rss}" -v b="${end_rss}" 'BEGIN {printf "%.1f", (b - a) * 100 / a}')"

echo "wrk:       ${requests} requests, ${rps} req/s, p99 ${p99}, non-2xx ${non2xx:-0}, socket errors ${socket_errors:-0}"
echo "jobs:      ${jobs} submitted + waited + deleted, ${job_errors} failures"
[[ "${job_errors}" -gt 0 ]] && head -5 "${tmp}/failures.txt"
echo "readyz:    ${ready_after} after the run"
echo "rss:       start ${start_rss} kB, after warm-up ${warm_rss} kB, end ${end_rss} kB, peak ${peak_rss} kB"
echo "errors:    ${errors} (must be 0)"
echo "rss growth after warm-up: ${growth}% (must stay under 10%)"
status=0
if [[ "${errors}" -ne 0 ]]; then
  echo "FAIL: errors"
  status=1
fi
if ! awk -v g="${growth}" 'BEGIN {exit !(g < 10)}'; then
  echo "FAIL: RSS growth"
  status=1
fi
[[ "${status}" -eq 0 ]] && echo "PASS"
exit "${status}"
