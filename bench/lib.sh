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
