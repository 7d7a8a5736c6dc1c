#!/bin/bash
# The ldirectord importer against real input and the real checker:
#   1. every golden tandem.conf (golden/ldirectord/*.toml) passes `tandemd --check-config` and
#      `tandem config verify` beside a key from `tandem keygen`;
#   2. so does the import of Debian's example ldirectord.cf (from the installed ldirectord
#      package), whose counts of mapped lines and dropped constructs must match
#      samples.expected ("ldirectord ldirectord.cf mapped=N dropped=M").
# Part 2 prints "SKIPPED: <why>" and passes when ldirectord is not installed, unless
# TANDEM_TEST_NO_SKIP=1 (CI), which makes that a failure.
#
# usage: ldirectord_samples.sh IMPORT_DRIVER TANDEM TANDEMD SAMPLES_EXPECTED GOLDEN_DIR
set -u

if [ $# -ne 5 ]; then
  echo "usage: $0 IMPORT_DRIVER TANDEM TANDEMD SAMPLES_EXPECTED GOLDEN_DIR" >&2
  exit 2
fi
driver=$1 tandem=$2 tandemd=$3 expected=$4 golden=$5

work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-ldirectord.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
"$tandem" keygen "$work/authkey" >/dev/null || { echo "FAIL: tandem keygen"; exit 1; }

# check FILE: both checkers accept it (warnings are allowed: the VIPs are the operator's).
check() {
  local f=$1 failed=0
  if ! timeout -k 5 20 "$tandemd" --check-config --config "$f" >"$work/out" 2>&1; then
    echo "FAIL: tandemd --check-config --config $f:"
    sed 's/^/    /' "$work/out"
    failed=1
  fi
  if ! timeout -k 5 20 "$tandem" config verify "$f" >"$work/out" 2>&1; then
    echo "FAIL: tandem config verify $f:"
    sed 's/^/    /' "$work/out"
    failed=1
  fi
  [ $failed -eq 0 ] && echo "ok: $(basename "$f") is valid"
  return $failed
}

failed=0
for toml in "$golden"/*.toml; do
  cp "$toml" "$work/$(basename "$toml")"
  check "$work/$(basename "$toml")" || failed=1
done
[ $failed -eq 0 ] || exit 1

skip() {
  if [ "${TANDEM_TEST_NO_SKIP:-0}" = 1 ]; then
    echo "FAIL: $1, and TANDEM_TEST_NO_SKIP=1"
    exit 1
  fi
  echo "SKIPPED: Debian's example ldirectord.cf: $1"
  exit 0
}
command -v dpkg >/dev/null || skip "no dpkg here"
sample=$(dpkg -L ldirectord 2>/dev/null | grep -E '/examples/ldirectord\.cf(\.gz)?$' | head -1)
[ -n "$sample" ] || skip "the ldirectord package is not installed (apt-get install ldirectord)"
[ -f "$sample" ] || skip "$sample is listed by dpkg but missing (docs excluded by dpkg?)"

# The report names the file as given: import a copy named ldirectord.cf.
case "$sample" in
  *.gz) zcat "$sample" >"$work/ldirectord.cf" ;;
  *) cp "$sample" "$work/ldirectord.cf" ;;
esac
if ! (cd "$work" && "$driver" ldirectord ldirectord.cf >tandem.conf 2>report); then
  echo "FAIL: importing $sample:"
  sed 's/^/    /' "$work/report"
  exit 1
fi
echo "imported $sample:"
sed 's/^/    /' "$work/report"
check "$work/tandem.conf" || exit 1

counts=$(tail -1 "$work/report")
mapped=$(echo "$counts" | sed -n 's/^\([0-9]*\) lines mapped, \([0-9]*\) constructs dropped$/\1/p')
dropped=$(echo "$counts" | sed -n 's/^\([0-9]*\) lines mapped, \([0-9]*\) constructs dropped$/\2/p')
if [ -z "$mapped" ]; then
  echo "FAIL: the report's last line is not a count: $counts"
  exit 1
fi
got="ldirectord ldirectord.cf mapped=$mapped dropped=$dropped"
want=$(grep '^ldirectord ldirectord.cf ' "$expected")
if [ "$got" != "$want" ]; then
  echo "FAIL: counts changed: got \"$got\", $expected says \"$want\""
  echo "      (update $expected if the change is deliberate)"
  exit 1
fi
echo "ok: $got"
