#!/usr/bin/env bash
# bench/abuse/run.sh — the job-abuse probes of issue 18 against a real tpuemud, with figures.
#
# Usage: bench/abuse/run.sh
# Env:   TPUEMUD (default <repo>/build/daemon/tpuemud), ABUSE_BUDGET_BYTES (default: tpuemud's own,
#        half of MemTotal).
#
# Probes, one line of figures each:
#   1. the issue's huge mlp {layers 64, hidden 4096, batch 4096} with timeoutSeconds 3: refused at
#      submit (400, the planned bytes and the limit), or, if it fits, how long it took to end;
#   2. a heavy mlp that fits, timeoutSeconds 3, and a 4096^3 f32 HIGHEST matmul, timeoutSeconds 2:
#      ms from submit to TIMED_OUT, and its lateness: endTime - (startTime + timeoutSeconds), and
#      when the client's :wait saw it;
#   3. cancel latency: :cancel during a 4096^3 f32 HIGHEST matmul, ms from the request to the job's
#      endTime and to the client's :wait seeing it CANCELLED;
#   4. two heavy mlps (4x2048, batch 2048) on two nodes at once: tpuemud's peak RSS (VmHWM) vs budget;
#   5. SIGTERM during a 4096^3 HIGHEST matmul: ms until the process exited, and its exit code.
# Exits 0 when every probe ran (the figures are for a human or a CI log; no thresholds), 2 on a
# setup failure. Every process it starts is stopped on exit; nothing leaves the loopback interface.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
tpuemud="${TPUEMUD:-${repo_root}/build/daemon/tpuemud}"
zone="us-central2-b"

die() {
  echo "bench/abuse: $*" >&2
  exit 2
}
[[ -x "${tpuemud}" ]] || die "tpuemud not found or not executable: ${tpuemud} (set TPUEMUD)"
for tool in curl jq; do
  command -v "${tool}" >/dev/null || die "missing tool: ${tool} (scripts/setup installs it)"
done

tmp="$(mktemp -d -t tpuemu-abuse.XXXXXX)"
tpuemud_pid=""
# shellcheck source=bench/lib.sh
source "${script_dir}/../lib.sh"
cleanup() {
  stop_pid "${tpuemud_pid}" KILL
  rm -rf "${tmp}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# rfc3339_ms TIME: unix ms of an RFC 3339 timestamp ("2026-01-02T03:04:05.123456Z").
rfc3339_ms() { date -d "$1" +%s%3N; }

start_tpuemud() {
  local extra=()
  [[ -n "${ABUSE_BUDGET_BYTES:-}" ]] && extra=(--host-memory-budget-bytes "${ABUSE_BUDGET_BYTES}")
  : >"${tmp}/tpuemud.out"
  "${tpuemud}" --host 127.0.0.1 --port 0 --worker-sandboxes off --data-dir "${tmp}/data" --provisioning-delay-ms 0 \
    --transition-delay-ms 0 --log-level info "${extra[@]}" >"${tmp}/tpuemud.out" \
    2>"${tmp}/tpuemud.err" &
  tpuemud_pid=$!
  port="$(ready_port "${tmp}/tpuemud.out" "${tpuemud_pid}")"
  [[ -n "${port}" ]] || die "tpuemud did not report ready within 10 s: $(cat "${tmp}/tpuemud.err")"
  base="http://127.0.0.1:${port}"
  api="${base}/v2/projects/abuse/locations/${zone}"
  for id in a b; do
    curl -sS --fail --max-time 5 -X POST -d '{"acceleratorType":"v4-8",
      "runtimeVersion":"tpu-ubuntu2204-base"}' "${api}/nodes?nodeId=${id}" -o /dev/null ||
      die "create of node ${id} failed"
  done
  for _ in $(seq 100); do
    [[ "$(curl -sS "${api}/nodes?pageSize=10" | jq '[.nodes[] | select(.state=="READY")] | length')" \
      == 2 ]] && return 0
    sleep 0.1
  done
  die "nodes not READY after 10 s"
}

# submit NODE BODY: prints the HTTP status and writes the body to ${tmp}/submit.json.
submit() {
  curl -sS --max-time 60 -o "${tmp}/submit.json" -w '%{http_code}' -X POST -d "$2" \
    "${api}/nodes/$1/jobs"
}
# wait_terminal NAME: prints the final state; the job as the :wait returned it is in
# ${tmp}/job.json, and ${tmp}/seen_ms holds when the client had it (unix ms).
wait_terminal() {
  local state=""
  for _ in $(seq 60); do
    curl -sS --max-time 40 -o "${tmp}/job.json" "${base}/v2/$1:wait?timeout=30s"
    now_ms >"${tmp}/seen_ms"
    state="$(jq -r .state "${tmp}/job.json")"
    [[ "${state}" != "QUEUED" && "${state}" != "RUNNING" ]] && break
  done
  echo "${state}"
}
# lateness SECONDS: of the job in ${tmp}/job.json, its endTime and the client's sighting in ms
# after startTime + SECONDS.
lateness() {
  local deadline
  deadline=$(($(rfc3339_ms "$(jq -r .startTime "${tmp}/job.json")") + $1 * 1000))
  echo "endTime $(($(rfc3339_ms "$(jq -r .endTime "${tmp}/job.json")") - deadline)) ms after the" \
    "deadline, seen by the client after $(($(cat "${tmp}/seen_ms") - deadline)) ms"
}
# wait_compiled NAME: returns once the job's log has its compile line (its first op is under way).
wait_compiled() {
  for _ in $(seq 1200); do
    curl -sS "${base}/v2/$1/logs" | jq -e '.lines | any(startswith("compile:"))' >/dev/null && return
    sleep 0.05
  done
  die "job $1 did not compile within 60 s"
}
hwm_bytes() { awk '/^VmHWM:/ {print $2 * 1024}' "/proc/${tpuemud_pid}/status"; }

start_tpuemud
# spdlog writes to stdout, beside the ready line.
grep -ho 'GEMM kernel .*;' "${tmp}/tpuemud.out" "${tmp}/tpuemud.err" | head -1 || true
budget="$(grep -ho 'host-memory budget [0-9]*' "${tmp}/tpuemud.out" "${tmp}/tpuemud.err" |
  awk '{print $3}' | head -1 || true)"
echo "host-memory budget: ${budget} bytes"

# 1. The huge mlp.
huge='{"workload":{"mlp":{"layers":64,"hidden":4096,"batch":4096}},"timeoutSeconds":3}'
t0="$(now_ms)"
code="$(submit a "${huge}")"
if [[ "${code}" == 400 ]]; then
  echo "1. huge mlp (64x4096, batch 4096): 400 at submit in $(($(now_ms) - t0)) ms: $(jq -r \
    .error.message "${tmp}/submit.json")"
else
  name="$(jq -r .name "${tmp}/submit.json")"
  echo "1. huge mlp: ${code}, ended $(wait_terminal "${name}") after $(($(now_ms) - t0)) ms"
fi

# 2. A heavy mlp that fits, timeoutSeconds 3.
heavy='{"workload":{"mlp":{"layers":8,"hidden":4096,"batch":4096,"steps":1000}},"timeoutSeconds":3}'
t0="$(now_ms)"
[[ "$(submit a "${heavy}")" == 200 ]] || die "heavy mlp refused: $(cat "${tmp}/submit.json")"
name="$(jq -r .name "${tmp}/submit.json")"
state="$(wait_terminal "${name}")"
echo "2. heavy mlp (8x4096, batch 4096) with timeoutSeconds 3: ${state} after $(($(now_ms) - t0))" \
  "ms; $(lateness 3)"
big='{"workload":{"matmul":{"m":4096,"n":4096,"k":4096}},"precision":"HIGHEST","steps":100}'
t0="$(now_ms)"
[[ "$(submit b "$(jq -c '. + {timeoutSeconds: 2}' <<<"${big}")")" == 200 ]] ||
  die "matmul refused: $(cat "${tmp}/submit.json")"
state="$(wait_terminal "$(jq -r .name "${tmp}/submit.json")")"
echo "   4096^3 HIGHEST matmul with timeoutSeconds 2: ${state} after $(($(now_ms) - t0)) ms;" \
  "$(lateness 2)"

# 3. Cancel latency inside one large op.
[[ "$(submit b "${big}")" == 200 ]] || die "matmul refused: $(cat "${tmp}/submit.json")"
name="$(jq -r .name "${tmp}/submit.json")"
wait_compiled "${name}"
sleep 1 # well inside the first 4096^3 HIGHEST op (tens of seconds on 2 cores)
t0="$(now_ms)"
curl -sS --fail --max-time 10 -X POST "${base}/v2/${name}:cancel" -o /dev/null
state="$(wait_terminal "${name}")"
echo "3. :cancel during a 4096^3 HIGHEST matmul: ${state}; endTime" \
  "$(($(rfc3339_ms "$(jq -r .endTime "${tmp}/job.json")") - t0)) ms after the request, seen by" \
  "the client after $(($(cat "${tmp}/seen_ms") - t0)) ms"

# 4. Two heavy jobs at once on two nodes.
two='{"workload":{"mlp":{"layers":4,"hidden":2048,"batch":2048,"steps":1}}}'
names=()
for id in a b; do
  [[ "$(submit "${id}" "${two}")" == 200 ]] || die "mlp refused: $(cat "${tmp}/submit.json")"
  names+=("$(jq -r .name "${tmp}/submit.json")")
done
states=""
for name in "${names[@]}"; do states+="$(wait_terminal "${name}") "; done
waited="$(curl -sS "${base}/v2/${names[1]}/logs" | jq -r '.lines[] | select(startswith("waiting"))')"
echo "4. two heavy mlps on two nodes: ${states}; peak RSS $(hwm_bytes) bytes (budget ${budget})"
[[ -n "${waited}" ]] && echo "   second job: ${waited}"

# 5. SIGTERM during a large op.
[[ "$(submit b "${big}")" == 200 ]] || die "matmul refused: $(cat "${tmp}/submit.json")"
name="$(jq -r .name "${tmp}/submit.json")"
wait_compiled "${name}"
sleep 1
t0="$(now_ms)"
kill -TERM "${tpuemud_pid}"
rc=0
wait "${tpuemud_pid}" || rc=$?
tpuemud_pid=""
echo "5. SIGTERM during a 4096^3 HIGHEST matmul: exited ${rc} after $(($(now_ms) - t0)) ms"
