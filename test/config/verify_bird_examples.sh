#!/bin/bash
# The shipped BIRD examples, conf/examples/bird/*.conf, must parse with Debian's BIRD 2
# (`bird -p`). lab_route runs them on its directors; this catches a typo in the fast tests.
# Without bird it prints SKIPPED, a failure under TANDEM_TEST_NO_SKIP=1 (CI installs bird2).
# usage: verify_bird_examples.sh DIR
set -u
if ! command -v bird >/dev/null; then
  [ "${TANDEM_TEST_NO_SKIP:-0}" = 1 ] && { echo "FAIL: bird is not installed (Debian: bird2)"; exit 1; }
  echo "SKIPPED: bird is not installed (Debian: bird2)"
  exit 0
fi
n=0
for f in "$1"/*.conf; do
  [ -f "$f" ] || { echo "FAIL: no BIRD example in $1"; exit 1; }
  bird -p -c "$f" || { echo "FAIL: $f does not parse"; exit 1; }
  echo "ok: $f"
  n=$((n + 1))
done
echo "$n BIRD examples parse"
