#!/usr/bin/env bash
# bench/http/run.sh — tpuemud vs nginx under wrk, and durable creates per second.
#
# Usage: bench/http/run.sh [path/to/tpuemud]      (or TPUEMUD=...; default <repo>/build/daemon/tpuemud)
# Env:   BENCH_SECONDS (default 10) duration of each wrk run; BENCH_THREADS (2), BENCH_CONNECTIONS (64).
#
# Same run, same wrk settings for every target:
#   1. tpuemud on a free loopback port, durable SQLite file in a temp dir, delays 0, 2 IO threads;
#      100 v4-8 nodes created with curl and waited READY.
#   2. The GET-one-node and list-100 bodies saved as static files and served by nginx (worker_processes 2,
#      access_log off, keep-alive).
#   3. wrk against tpuemud GET node, nginx GET node, tpuemud list, nginx list, tpuemud GET job (a
#      SUCCEEDED 8x8x8 matmul job on n0), nginx GET job; req/s, p99, ratios.
#   4. Durable creates: wrk + create.lua (unique ids, non-200 = error) for BENCH_SECONDS, then tpuemud
#      is stopped with SIGTERM and the SQLite file is counted: stored nodes must be >= 200 responses.
# Exits non-zero only on a setup failure; a missed target prints MISS, not a failure exit.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
tpuemud="${1:-${TPUEMUD:-${repo_root}/build/daemon/tpuemud}}"
seconds="${BENCH_SECONDS:-10}"
threads="${BENCH_THREADS:-2}"
connections="${BENCH_CONNECTIONS:-64}"
zone="us-central2-b"
read_project="bench-read"
create_project="bench-create"
node_count=100

die() {
  echo "bench/http: $*" >&2
  exit 2
}

[[ -x "${tpuemud}" ]] || die "tpuemud not found or not executable: ${tpuemud} (pass it as \$1 or TPUEMUD)"
for tool in wrk nginx curl; do
  command -v "${tool}" >/dev/null || die "missing tool: ${tool} (scripts/ installs it)"
done
[[ "${seconds}" =~ ^[0-9]+$ && "${seconds}" -ge 1 ]] || die "BENCH_SECONDS must be a positive integer"

tmp="$(mktemp -d -t tpuemu-bench-http.XXXXXX)"
tpuemud_pid=""
nginx_pid=""

# shellcheck source=bench/lib.sh
source "${script_dir}/../lib.sh"

cleanup() {
  stop_pid "${nginx_pid}" QUIT
  stop_pid "${tpuemud_pid}" TERM
  rm -rf "${tmp}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# nginx's workers run as "nobody" when we are root: they must be able to read the static root.
chmod 755 "${tmp}"
mkdir -p "${tmp}/data" "${tmp}/www" "${tmp}/nginx"

# ---------------------------------------------------------------------------------------------- tpuemud
start_tpuemud() {
  "${tpuemud}" --host 127.0.0.1 --port 0 --worker-sandboxes off --data-dir "${tmp}/data" \
    --provisioning-delay-ms 0 --transition-delay-ms 0 --log-level warn --io-threads "${BENCH_IO_THREADS:-2}" \
    --zone-capacity-tensorcores 2000000000 >"${tmp}/tpuemud.out" 2>"${tmp}/tpuemud.err" &
  tpuemud_pid=$!
  local port
  port="$(ready_port "${tmp}/tpuemud.out" "${tpuemud_pid}")"
  if [[ -z "${port}" ]]; then
    cat "${tmp}/tpuemud.err" >&2
    die "tpuemud did not report ready within 10 s"
  fi
  tpuemud_port="${port}"
}

start_tpuemud
api="http://127.0.0.1:${tpuemud_port}/v2/projects/${read_project}/locations/${zone}"
body='{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"}'
for i in $(seq 0 $((node_count - 1))); do
  curl -sS --fail --max-time 5 -X POST -H 'Content-Type: application/json' -d "${body}" \
    "${api}/nodes?nodeId=n${i}" -o /dev/null || die "create of node n${i} failed"
done

ready=0
for _ in $(seq 100); do
  ready="$(curl -sS --fail --max-time 5 "${api}/nodes?pageSize=${node_count}" |
    grep -o '"state": *"READY"' | wc -l)" || die "list of nodes failed"
  [[ "${ready}" -ge "${node_count}" ]] && break
  sleep 0.1
done
[[ "${ready}" -ge "${node_count}" ]] || die "only ${ready}/${node_count} nodes READY after 10 s"

node_path="/v2/projects/${read_project}/locations/${zone}/nodes/n0"
list_path="/v2/projects/${read_project}/locations/${zone}/nodes?pageSize=${node_count}"
job_name="$(curl -sS --fail --max-time 5 -X POST -H 'Content-Type: application/json' \
  -d '{"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}}' "http://127.0.0.1:${tpuemud_port}${node_path}/jobs" |
  sed -n 's/.*"name": *"\([^"]*\)".*/\1/p' | head -1)" || die "job submit failed"
[[ -n "${job_name}" ]] || die "job submit gave no name"
curl -sS --fail --max-time 70 "http://127.0.0.1:${tpuemud_port}/v2/${job_name}:wait?timeout=60s" |
  grep -q '"state": *"SUCCEEDED"' || die "job ${job_name} did not succeed"
job_path="/v2/${job_name}"
curl -sS --fail --max-time 5 "http://127.0.0.1:${tpuemud_port}${node_path}" -o "${tmp}/www/node.json" ||
  die "GET node failed"
curl -sS --fail --max-time 5 "http://127.0.0.1:${tpuemud_port}${list_path}" -o "${tmp}/www/nodes.json" ||
  die "GET list failed"
curl -sS --fail --max-time 5 "http://127.0.0.1:${tpuemud_port}${job_path}" -o "${tmp}/www/job.json" ||
  die "GET job failed"
chmod 644 "${tmp}/www/"*.json

# ------------------------------------------------------------------------------------------------ nginx
write_nginx_conf() {  # write_nginx_conf PORT
  cat >"${tmp}/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid ${tmp}/nginx/nginx.pid;
error_log ${tmp}/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  keepalive_timeout 65;
  keepalive_requests 100000000;
  client_body_temp_path ${tmp}/nginx/client_body;
  proxy_temp_path ${tmp}/nginx/proxy;
  fastcgi_temp_path ${tmp}/nginx/fastcgi;
  uwsgi_temp_path ${tmp}/nginx/uwsgi;
  scgi_temp_path ${tmp}/nginx/scgi;
  server {
    listen 127.0.0.1:$1;
    root ${tmp}/www;
    location / { }
  }
}
EOF
}

nginx_port=""
for _ in $(seq 10); do
  candidate=$((20000 + RANDOM % 40000))
  # Skip ports someone already listens on; nginx exits at once if bind still fails (a race).
  if (exec 3<>"/dev/tcp/127.0.0.1/${candidate}") 2>/dev/null; then continue; fi
  write_nginx_conf "${candidate}"
  nginx -p "${tmp}/nginx" -e "${tmp}/nginx/error.log" -c "${tmp}/nginx/nginx.conf" \
    >"${tmp}/nginx/stdout" 2>&1 &
  nginx_pid=$!
  for _ in $(seq 50); do
    if curl -s --fail --max-time 1 -o /dev/null "http://127.0.0.1:${candidate}/node.json"; then
      nginx_port="${candidate}"
      break
    fi
    kill -0 "${nginx_pid}" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n "${nginx_port}" ]] && break
  stop_pid "${nginx_pid}" QUIT
  nginx_pid=""
done
if [[ -z "${nginx_port}" ]]; then
  cat "${tmp}/nginx/error.log" >&2 2>/dev/null || true
  die "nginx did not start"
fi
cmp -s <(curl -sS --max-time 5 "http://127.0.0.1:${nginx_port}/node.json") "${tmp}/www/node.json" ||
  die "nginx does not serve the saved node body"

# -------------------------------------------------------------------------------------------------- wrk
wrk_flags=(-t"${threads}" -c"${connections}" -d"${seconds}s" --latency --timeout 5s)
wrk_limit=$((seconds + 30))

to_ms() {  # wrk prints 850.00us, 1.23ms, 1.02s, 2.00m
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
    printf "%.2f", n }'
}

# CPU ticks (user + system, all threads) of a process and its direct children (nginx's workers).
# Req/s swings with whatever else runs on a shared machine; CPU time per request much less so.
cpu_ticks() {  # cpu_ticks PID
  local pids=("$1") kids=() total=0 pid
  if [[ -r "/proc/$1/task/$1/children" ]]; then
    read -r -a kids <"/proc/$1/task/$1/children" || true
    pids+=("${kids[@]}")
  fi
  for pid in "${pids[@]}"; do
    # Fields after the ")" that closes comm: utime and stime are the 12th and 13th.
    total=$((total + $(sed 's/.*) //' "/proc/${pid}/stat" 2>/dev/null | awk '{print $12 + $13}')))
  done
  echo "${total}"
}
clk_tck="$(getconf CLK_TCK)"

declare -A rps p99 errs cpu_us
run_wrk() {  # run_wrk KEY URL SERVER_PID
  local key="$1" url="$2" server_pid="$3" out="${tmp}/wrk-$1.txt" ticks_before ticks_after
  ticks_before="$(cpu_ticks "${server_pid}")"
  timeout "${wrk_limit}" wrk "${wrk_flags[@]}" "${url}" >"${out}" 2>&1 || die "wrk failed for ${key}: $(cat "${out}")"
  ticks_after="$(cpu_ticks "${server_pid}")"
  rps[${key}]="$(awk '/^Requests\/sec:/ {print $2}' "${out}")"
  p99[${key}]="$(to_ms "$(awk '$1 == "99%" {print $2}' "${out}")")"
  # Non-2xx/3xx responses and socket errors would make a fast number meaningless: show them.
  local non2xx sock
  non2xx="$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "${out}")"
  sock="$(awk '/Socket errors:/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "${out}")"
  errs[${key}]=$((${non2xx:-0} + ${sock:-0}))
  [[ -n "${rps[${key}]}" ]] || die "could not parse wrk output for ${key}: $(cat "${out}")"
  local requests
  requests="$(awk '/requests in/ {print $1}' "${out}")"
  cpu_us[${key}]="$(awk -v t=$((ticks_after - ticks_before)) -v hz="${clk_tck}" -v n="${requests:-0}" \
    'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }')"
}

echo "CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo) ($(nproc) cores)"
echo "bench/http: wrk ${wrk_flags[*]}  (tpuemud $(basename "${tpuemud}") port ${tpuemud_port}, nginx port ${nginx_port})"
echo "bodies: node $(wc -c <"${tmp}/www/node.json") bytes, list of ${node_count} $(wc -c <"${tmp}/www/nodes.json") bytes," \
  "job $(wc -c <"${tmp}/www/job.json") bytes"
run_wrk tpuemud_get "http://127.0.0.1:${tpuemud_port}${node_path}" "${tpuemud_pid}"
run_wrk nginx_get "http://127.0.0.1:${nginx_port}/node.json" "${nginx_pid}"
run_wrk tpuemud_list "http://127.0.0.1:${tpuemud_port}${list_path}" "${tpuemud_pid}"
run_wrk nginx_list "http://127.0.0.1:${nginx_port}/nodes.json" "${nginx_pid}"
run_wrk tpuemud_job "http://127.0.0.1:${tpuemud_port}${job_path}" "${tpuemud_pid}"
run_wrk nginx_job "http://127.0.0.1:${nginx_port}/job.json" "${nginx_pid}"
stop_pid "${nginx_pid}" QUIT
nginx_pid=""

printf '\n%-16s %12s %10s %14s %8s\n' "target" "req/s" "p99 ms" "server cpu us" "errors"
for key in tpuemud_get nginx_get tpuemud_list nginx_list tpuemud_job nginx_job; do
  printf '%-16s %12s %10s %14s %8s\n' "${key}" "${rps[${key}]}" "${p99[${key}]}" "${cpu_us[${key}]}" \
    "${errs[${key}]}"
done
echo "(server cpu us = server CPU time per request, all threads/workers; 10 ms tick resolution)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }'; }
# verdict "EXPR": PASS when the awk expression (built from numbers measured above) holds.
verdict() { awk "BEGIN { exit !($1) }" && echo PASS || echo MISS; }
get_ratio="$(ratio "${rps[tpuemud_get]}" "${rps[nginx_get]}")"
list_ratio="$(ratio "${rps[tpuemud_list]}" "${rps[nginx_list]}")"
job_ratio="$(ratio "${rps[tpuemud_job]}" "${rps[nginx_job]}")"
echo
echo "ratio tpuemud/nginx GET node = ${get_ratio}%"
echo "ratio tpuemud/nginx list 100 = ${list_ratio}%"
echo "ratio tpuemud/nginx GET job = ${job_ratio}%"
echo "cpu per request nginx/tpuemud: GET node = $(ratio "${cpu_us[nginx_get]}" "${cpu_us[tpuemud_get]}")%," \
  "list 100 = $(ratio "${cpu_us[nginx_list]}" "${cpu_us[tpuemud_list]}")%," \
  "GET job = $(ratio "${cpu_us[nginx_job]}" "${cpu_us[tpuemud_job]}")% (what the req/s ratio would be if CPU-bound)"
echo "target GET node >= 90% of nginx req/s: $(verdict "${get_ratio} >= 90 && ${errs[tpuemud_get]} == 0")"
echo "target GET node p99 <= 2 ms at ${connections} connections: $(verdict "${p99[tpuemud_get]} <= 2 && ${errs[tpuemud_get]} == 0")"
echo "(nginx's p99 in the same run: ${p99[nginx_get]} ms; on a shared machine p99 is mostly run-queue waits)"

# ------------------------------------------------------------------------------------- durable creates
echo
create_out="${tmp}/wrk-create.txt"
BENCH_PROJECT="${create_project}" BENCH_ZONE="${zone}" timeout "${wrk_limit}" \
  wrk -t"${threads}" -c"${connections}" -d"${seconds}s" --timeout 5s -s "${script_dir}/create.lua" \
  "http://127.0.0.1:${tpuemud_port}" >"${create_out}" 2>&1 || die "wrk create failed: $(cat "${create_out}")"
creates_ok="$(awk '$1 == "creates_ok" {print $2}' "${create_out}")"
creates_err="$(awk '$1 == "creates_errors" {print $2}' "${create_out}")"
creates_rate="$(awk '$1 == "creates_per_second" {print $2}' "${create_out}")"
creates_p99="$(awk '$1 == "creates_p99_ms" {print $2}' "${create_out}")"
[[ -n "${creates_ok}" ]] || die "could not parse create.lua output: $(cat "${create_out}")"
sock_err="$(awk '/Socket errors:/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "${create_out}")"
echo "durable creates: ${creates_rate}/s (${creates_ok} acknowledged with 200, ${creates_err} non-200," \
  "${sock_err:-0} socket errors/timeouts, p99 ${creates_p99} ms, ${connections} connections, ${seconds} s)"
awk '$1 == "creates_status" {print "  non-200 status " $2 ": " $3}' "${create_out}"

# Durability: stop with SIGTERM, then count what the SQLite file holds.
stop_pid "${tpuemud_pid}" TERM
tpuemud_pid=""
db="${tmp}/data/tpuemu.db"
if command -v sqlite3 >/dev/null && [[ -f "${db}" ]]; then
  stored="$(sqlite3 "${db}" "SELECT count(*) FROM nodes WHERE project = '${create_project}';")"
  echo "stored nodes after SIGTERM: ${stored} (acknowledged ${creates_ok})" \
    "durable: $(verdict "${stored} >= ${creates_ok}")"
else
  echo "stored nodes after SIGTERM: not checked (sqlite3 or ${db} missing)"
fi
echo "target creates >= 5000/s: $(verdict "${creates_rate} >= 5000 && ${creates_err} == 0")"
