#!/bin/bash
# The shipped configs, conf/tandem.conf and conf/examples/*.conf, must pass
# `tandem config verify` (and `tandemd --check-config --config`, when TANDEMD is given) with
# exit 0 and without a single warning, with their key file where they say: /etc/tandem/authkey.
#
# usage: verify_examples.sh TANDEM CONF_DIR [TANDEMD]
#
# Two passes:
#   1. anywhere: copies of the files with the key path pointed at a key in a temp directory;
#   2. as root: the files themselves, inside a private mount namespace (unshare -m) in which /etc
#      is an overlay whose writable layer lives on a tmpfs, so /etc/tandem/authkey can be made
#      without touching the host's /etc. Nothing of it outlives the namespace.
# Pass 2 prints "SKIPPED: <reason>" and is not run when it cannot be (not root, no unshare, no
# overlayfs); set TANDEM_TEST_NO_SKIP=1 (CI runs as root) to make that a failure instead.
set -u

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 TANDEM CONF_DIR [TANDEMD]" >&2
  exit 2
fi
tandem=$1
conf_dir=$2
tandemd=${3:--}
case "$tandemd" in /* | -) ;; *) tandemd="$PWD/$tandemd" ;; esac
key_path=/etc/tandem/authkey

case "$tandem" in /*) ;; *) tandem="$PWD/$tandem" ;; esac
if [ ! -x "$tandem" ]; then
  echo "FAIL: $tandem is not an executable" >&2
  exit 1
fi
files=("$conf_dir/tandem.conf" "$conf_dir"/examples/*.conf)
for f in "${files[@]}"; do
  if [ ! -f "$f" ]; then
    echo "FAIL: $f does not exist" >&2
    exit 1
  fi
done

# verify_all TANDEM TANDEMD|- FILE...: each must exit 0 and print nothing on stderr (no
# warnings), for tandem and, unless "-", for tandemd.
verify_all() {
  local tandem=$1 tandemd=$2 rc f err failed=0 what
  shift 2
  err=$(mktemp)
  for f in "$@"; do
    for what in tandem tandemd; do
      case "$what" in
        tandem) timeout -k 5 10 "$tandem" config verify "$f" >/dev/null 2>"$err" ;;
        tandemd)
          [ "$tandemd" = - ] && continue
          timeout -k 5 10 "$tandemd" --check-config --config "$f" >/dev/null 2>"$err" ;;
      esac
      rc=$?
      if [ "$rc" -ne 0 ]; then
        echo "FAIL: $what: $f: exit $rc, expected 0"
        sed 's/^/    /' "$err"
        failed=1
      elif [ -s "$err" ]; then
        echo "FAIL: $what: $f is valid but warns; the shipped configs should not:"
        sed 's/^/    /' "$err"
        failed=1
      else
        echo "ok: $what: $f"
      fi
    done
  done
  rm -f "$err"
  return "$failed"
}

# --- Pass 1: copies, with the key in a temp directory -----------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-examples.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
head -c 32 /dev/urandom >"$work/authkey" && chmod 0600 "$work/authkey"
copies=()
for f in "${files[@]}"; do
  if ! grep -q "^file = \"$key_path\"" "$f"; then
    echo "FAIL: $f does not use the key file $key_path (file = \"$key_path\")"
    exit 1
  fi
  copy="$work/$(basename "$(dirname "$f")")-$(basename "$f")"
  sed "s|^file = \"$key_path\"|file = \"authkey\"|" "$f" >"$copy"
  copies+=("$copy")
done
echo "pass 1: copies with the key file at $work/authkey"
verify_all "$tandem" "$tandemd" "${copies[@]}" || exit 1

# --- Pass 2: the files as shipped, with $key_path in a throw-away /etc ------------------------
skip() {
  if [ "${TANDEM_TEST_NO_SKIP:-0}" = 1 ]; then
    echo "FAIL: cannot verify with the real key path ($1), and TANDEM_TEST_NO_SKIP=1"
    exit 1
  fi
  echo "SKIPPED: verifying with $key_path itself: $1"
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip "needs root for unshare -m and mount (running as uid $(id -u))"
command -v unshare >/dev/null || skip "unshare(1) is not installed"
unshare -m --propagation private true 2>/dev/null ||
  skip "unshare -m fails here (no CAP_SYS_ADMIN in this container?)"

before=$(stat -c '%i %s %Y' "$key_path" 2>/dev/null || echo absent)
ns_dir="$work/ns"
mkdir "$ns_dir"
echo "pass 2: the files as shipped, $key_path in a private overlay of /etc"
# Inside the namespace: exit 77 = cannot set up (the reason on stdout), 1 = a file failed.
unshare -m --propagation private bash -s -- "$tandem" "$tandemd" "$ns_dir" "$key_path" \
  "${files[@]}" <<EOF
set -u
tandem=\$1 tandemd=\$2 dir=\$3 key=\$4
shift 4
$(declare -f verify_all)
mount -t tmpfs -o mode=0700 tandem-test "\$dir" || { echo "mount tmpfs failed"; exit 77; }
mkdir "\$dir/upper" "\$dir/work"
if ! mount -t overlay overlay -o "lowerdir=/etc,upperdir=\$dir/upper,workdir=\$dir/work" /etc \
    2>"\$dir/err"; then
  echo "overlayfs over /etc failed: \$(cat "\$dir/err")"
  exit 77
fi
mkdir -p "\$(dirname "\$key")" && rm -f "\$key" &&
  "\$tandem" keygen "\$key" >/dev/null || { echo "tandem keygen \$key failed"; exit 1; }
verify_all "\$tandem" "\$tandemd" "\$@"
EOF
rc=$?
if [ "$rc" -eq 77 ]; then
  skip "the private /etc could not be set up (see above)"
fi
after=$(stat -c '%i %s %Y' "$key_path" 2>/dev/null || echo absent)
if [ "$after" != "$before" ]; then
  echo "FAIL: the host's $key_path changed ($before -> $after); the namespace leaked"
  exit 1
fi
exit "$rc"
