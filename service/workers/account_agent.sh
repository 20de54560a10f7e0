#!/bin/bash
# tpuemu's account agent: the accounts part of Google's guest agent (google_guest_agent), run as
# root inside a TPU VM worker by tpuemud. tpuemud does not read this file at run time: the build
# embeds it in the binary (service/CMakeLists.txt, account_agent.h).
#
# Input (stdin): one "user type base64" line per key, already checked by ssh_keys.cpp.
# Effect, as the guest agent's: every granted user exists (useradd -m -s /bin/bash -p '*': no
# password can match, yet not locked, since sshd refuses locked accounts), is in group
# google-sudoers (passwordless sudo through /etc/sudoers.d/google_sudoers) and has exactly its keys
# in ~/.ssh/authorized_keys. Users granted before (the list is /var/lib/google/google_users, as
# the guest agent keeps it) that are not granted now lose their keys and sudo.
# Refused, never given keys or sudo: root, existing system accounts (uid below UID_MIN of
# /etc/login.defs, 1000 when unset, and nobody's 65534) and names the guest agent would not make.
# Output: one line per refused user, machine-readable, "reject<TAB>user<TAB>why" (tpuemud makes
# it an SSH_KEY_REJECTED event); "made user U" and "removed the keys of U" lines for people.
# Exit status 1 when a user could not be made (the others are still applied), else 0.
set -u

state=/var/lib/google/google_users

uid_min=1000
if [ -r /etc/login.defs ]; then
  while read -r name value _; do
    if [ "$name" = UID_MIN ] && [[ "$value" =~ ^[0-9]+$ ]]; then uid_min=$value; fi
  done </etc/login.defs
fi

# Prints why `user` may not get keys or sudo here; prints nothing when it may.
refusal() {
  local user=$1 uid
  # As ssh_keys.cpp's ValidUserName; all digits would be looked up as a uid.
  if ! [[ "$user" =~ ^[A-Za-z0-9._][A-Za-z0-9._-]{0,31}$ ]] || [[ "$user" =~ ^[0-9]+$ ]]; then
    echo "not a user name the guest agent makes"
    return
  fi
  if [ "$user" = root ]; then
    echo "root never gets keys or sudo"
    return
  fi
  uid=$(getent passwd "$user" | cut -d: -f3)
  [ -n "$uid" ] || return 0  # not there yet: useradd makes it in the normal range
  if [ "$uid" -lt "$uid_min" ] || [ "$uid" -eq 65534 ]; then
    echo "an existing system account (uid $uid, below UID_MIN $uid_min or nobody) never gets keys or sudo"
  fi
}

mkdir -p "${state%/*}"
touch "$state"
getent group google-sudoers >/dev/null || groupadd google-sudoers
if [ ! -f /etc/sudoers.d/google_sudoers ]; then
  mkdir -p /etc/sudoers.d
  echo '%google-sudoers ALL=(ALL:ALL) NOPASSWD:ALL' >/etc/sudoers.d/google_sudoers
  chmod 0440 /etc/sudoers.d/google_sudoers
fi

declare -A keys refused
while read -r user type blob; do
  [ -n "$user" ] || continue
  if [ -n "${refused[$user]+x}" ]; then continue; fi
  why=$(refusal "$user")
  if [ -n "$why" ]; then
    refused[$user]=1
    printf 'reject\t%s\t%s\n' "$user" "$why"
    continue
  fi
  keys[$user]+="$type $blob"$'\n'
done

status=0
# Granted before, not now (no longer listed, or refused since): no keys, no sudo.
while read -r old; do
  [ -n "$old" ] || continue
  if [ -z "${keys[$old]+x}" ]; then
    home=$(getent passwd "$old" | cut -d: -f6)
    [ -n "$home" ] && rm -f "$home/.ssh/authorized_keys"
    gpasswd -d "$old" google-sudoers >/dev/null 2>&1
    echo "removed the keys of $old"
  fi
done <"$state"

: >"$state.new"
for user in "${!keys[@]}"; do
  if ! getent passwd "$user" >/dev/null; then
    if ! useradd -m -s /bin/bash -p '*' "$user"; then
      echo "cannot make user $user" >&2
      status=1
      continue
    fi
    echo "made user $user"
  fi
  usermod -aG google-sudoers "$user"
  home=$(getent passwd "$user" | cut -d: -f6)
  group=$(id -gn "$user")
  install -d -m 700 -o "$user" -g "$group" "$home/.ssh"
  printf '%s' "${keys[$user]}" >"$home/.ssh/authorized_keys.tpuemu"
  chown "$user:$group" "$home/.ssh/authorized_keys.tpuemu"
  chmod 600 "$home/.ssh/authorized_keys.tpuemu"
  mv -f "$home/.ssh/authorized_keys.tpuemu" "$home/.ssh/authorized_keys"
  echo "$user" >>"$state.new"
done
mv -f "$state.new" "$state"
exit $status
