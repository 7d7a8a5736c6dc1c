#!/bin/bash
# conf/reference.md documents exactly the keys the loader reads: no key undocumented, no
# documented key that the loader no longer knows.
#
# usage: check_reference.sh KNOWN_KEYS REFERENCE_MD CONFIG...
#   KNOWN_KEYS: the config_known_keys program; it loads each CONFIG (the shipped configs and
#   test/config/good/all-keys.conf, which names every key) and prints every "table.key" the
#   loader asked for, e.g. cluster.heartbeat_interval, virtual_server.real_server.check.path,
#   and the table names themselves (cluster, cluster.key, virtual_server.check, ...).
#
# What counts as documented: in markdown table rows and headings of REFERENCE_MD (outside code
# blocks), every name in backticks that has the form table.key (lowercase words joined by dots),
# and every table written in backticks as [name] or [[name]]. Backticked values such as
# `"wlc"`, `250ms` or `ipvsadm -s` do not have that form and are ignored.
set -u

if [ $# -lt 3 ]; then
  echo "usage: $0 KNOWN_KEYS REFERENCE_MD CONFIG..." >&2
  exit 2
fi
known_keys=$1
reference=$2
shift 2

work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-reference.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

if ! "$known_keys" "$@" >"$work/known.raw" 2>"$work/known.err"; then
  echo "FAIL: $known_keys could not list the keys (every config it reads must be valid):"
  sed 's/^/    /' "$work/known.err"
  exit 1
fi
LC_ALL=C sort -u "$work/known.raw" >"$work/known"

if [ ! -f "$reference" ]; then
  echo "FAIL: $reference does not exist"
  exit 1
fi
awk '
  /^[[:space:]]*```/ { fenced = !fenced; next }
  fenced { next }
  /^[[:space:]]*(\||#)/ {
    line = $0
    while (match(line, /`[^`]+`/)) {
      name = substr(line, RSTART + 1, RLENGTH - 2)
      line = substr(line, RSTART + RLENGTH)
      bracketed = 0
      if (name ~ /^\[\[.*\]\]$/) { name = substr(name, 3, length(name) - 4); bracketed = 1 }
      else if (name ~ /^\[.*\]$/) { name = substr(name, 2, length(name) - 2); bracketed = 1 }
      if (name ~ /^[a-z_]+(\.[a-z_]+)+$/ || (bracketed && name ~ /^[a-z_]+$/)) print name
    }
  }
' "$reference" | LC_ALL=C sort -u >"$work/documented"

LC_ALL=C comm -23 "$work/known" "$work/documented" >"$work/undocumented"
LC_ALL=C comm -13 "$work/known" "$work/documented" >"$work/stale"

status=0
if [ -s "$work/undocumented" ]; then
  echo "FAIL: the loader reads these keys, but $reference does not document them (add a table"
  echo "row with the key in backticks, or a heading with the [table] in backticks):"
  sed 's/^/    /' "$work/undocumented"
  status=1
fi
if [ -s "$work/stale" ]; then
  echo "FAIL: $reference documents these names, but the loader does not read them (a removed or"
  echo "misspelt key; or, if the loader does read it, name it in test/config/good/all-keys.conf):"
  sed 's/^/    /' "$work/stale"
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "ok: $reference documents all $(wc -l <"$work/known") keys and tables the loader reads, and no others"
fi
exit "$status"
