# Shell helpers shared by the bench scripts (sourced, not run).

# stop_pid PID SIGNAL: signals one process we started, waits for it at most 10 s, then SIGKILL.
stop_pid() {
  local pid="$1" sig="$2"
  [[ -n "${pid}" ]] || return 0
  kill -s "${sig}" "${pid}" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "${pid}" 2>/dev/null; then
    kill -s KILL "${pid}" 2>/dev/null || true
  fi
  wait "${pid}" 2>/dev/null || true
}

# ready_port OUT PID: waits at most 10 s for tpuemud (PID) to print "tpuemud ready on port N" in
# the file OUT; prints N, or nothing when it exited or did not get ready in time.
ready_port() {
  local port=""
  for _ in $(seq 200); do
    port="$(sed -n 's/^tpuemud ready on port \([0-9]\+\).*/\1/p' "$1")"
    [[ -n "${port}" ]] && break
    kill -0 "$2" 2>/dev/null || break
    sleep 0.05
  done
  echo "${port}"
}
