# Sourced before each README block by tests/readme (readme_test.cpp); not part of the README.
# - set -eo pipefail: any failing command fails the block; the ERR trap names it.
# - curl: fails on HTTP errors (--fail-with-body unless the block asks for -f/--fail itself), and
#   when the reply is an unfinished Operation it waits until the Operation is done, as a reader
#   pasting the lines one by one would, so the next line sees the finished transition.
set -eo pipefail
trap 'echo "readme-test: README.md line $((README_FIRST_LINE + LINENO - 3)): exit $?: $BASH_COMMAND" >&2' ERR

curl() {
  local strict=(--fail-with-body) a out rc op
  for a in "$@"; do
    case "$a" in
      --fail | --fail-with-body) strict=() ;;
      --*) ;;
      -*f*) strict=() ;;
    esac
  done
  out=$(command curl -sS "${strict[@]}" "$@") || {
    rc=$?
    printf '%s\n' "$out"
    echo "readme-test: curl failed (exit $rc): curl $*" >&2
    return $rc
  }
  printf '%s\n' "$out"
  op=$(printf '%s' "$out" | sed -n 's/.*"name":"\(projects\/[^"]*\/operations\/[^"]*\)".*/\1/p')
  if [ -n "$op" ] && ! printf '%s' "$out" | grep -q '"done":true'; then
    for _ in $(seq 1 1000); do
      if command curl -sS --fail-with-body "$E/v2/$op" | grep -q '"done":true'; then return 0; fi
      sleep 0.01
    done
    echo "readme-test: operation $op is not done after 10 s" >&2
    return 1
  fi
}
