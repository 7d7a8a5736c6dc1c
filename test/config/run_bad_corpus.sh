#!/bin/bash
# The broken-config corpus: every test/config/bad/NAME.conf must be refused (exit 1) with exactly
# the diagnostics in NAME.expected, one "LINE:COL: message" per line, in the order printed.
#
# usage: run_bad_corpus.sh tandem|tandemd BINARY BAD_DIR
#   tandem:  runs BINARY config verify NAME.conf
#   tandemd: runs BINARY --check-config --config NAME.conf
#
# Each file is copied into a fresh directory that also holds the key files the corpus refers to
# by relative path (git keeps no file modes, so they are made here):
#   authkey        32 bytes, mode 0600 (a good key)
#   authkey-0644   32 bytes, mode 0644 (readable by others)
#   authkey-short   8 bytes, mode 0600 (too short)
# and the program runs in that directory on the relative name, so relative key paths print as
# "./authkey..." whatever the checkout's path. The "FILE: N errors" summary is not compared.
#
# To add a case: write NAME.conf, run this script with TANDEM_UPDATE_EXPECTED=1 to write
# NAME.expected from the program's output, and read that output line by line before committing
# it: the .expected file is the specification.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 tandem|tandemd BINARY BAD_DIR" >&2
  exit 2
fi
kind=$1
binary=$2
bad_dir=$3
case "$bad_dir" in /*) ;; *) bad_dir="$PWD/$bad_dir" ;; esac

case "$binary" in /*) ;; *) binary="$PWD/$binary" ;; esac
case "$kind" in
  tandem) cmd=("$binary" config verify) ;;
  tandemd) cmd=("$binary" --check-config --config) ;;
  *) echo "unknown program kind '$kind' (tandem or tandemd)" >&2; exit 2 ;;
esac
if [ ! -x "$binary" ]; then
  echo "FAIL: $binary is not an executable" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bad-corpus.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

make_key() {  # file bytes mode
  head -c "$2" /dev/urandom >"$work/$1" && chmod "$3" "$work/$1"
}
make_key authkey 32 0600 && make_key authkey-0644 32 0644 && make_key authkey-short 8 0600 || {
  echo "FAIL: cannot create the key files in $work" >&2
  exit 1
}

# stderr of one run -> the comparable lines: temp paths made relative, the "NAME:" prefix and
# the "NAME: N errors" summary removed. (One awk, not a pipeline: process starts are what this
# test spends its time on.)
normalize() {  # name stderr_file
  awk -v name="$1" -v dir="$work/" '
    {
      while ((i = index($0, dir)) > 0) $0 = substr($0, 1, i - 1) "./" substr($0, i + length(dir))
      line = $0
      if (substr(line, 1, 2) == "./") line = substr(line, 3)
      if (substr(line, 1, length(name) + 1) == name ":") {
        rest = substr(line, length(name) + 2)
        if (rest ~ /^ [0-9]+ errors?$/) next
        print rest
      } else {
        print $0
      }
    }' "$2"
}

pass=0
fail=0
failed=()
shopt -s nullglob
confs=("$bad_dir"/*.conf)
if [ ${#confs[@]} -eq 0 ]; then
  echo "FAIL: no .conf files in $bad_dir" >&2
  exit 1
fi

cd "$work" || exit 1
for conf in "${confs[@]}"; do
  name=${conf##*/}
  expected="${conf%.conf}.expected"
  cp "$conf" "$name"
  timeout -k 5 10 "${cmd[@]}" "$name" >"$work/stdout" 2>"$work/stderr"
  rc=$?
  normalize "$name" "$work/stderr" >"$work/actual"

  if [ "${TANDEM_UPDATE_EXPECTED:-0}" = 1 ] && [ "$rc" -eq 1 ]; then
    cp "$work/actual" "$expected"
  fi

  problems=()
  if [ "$rc" -eq 124 ]; then
    problems+=("it hung: no exit within 10 s")
  elif [ "$rc" -ge 128 ]; then
    problems+=("it crashed: exit $rc (signal $((rc - 128)))")
  elif [ "$rc" -ne 1 ]; then
    problems+=("exit $rc, expected 1 (invalid)")
  fi
  if [ ! -f "$expected" ]; then
    problems+=("$(basename "$expected") is missing")
  elif ! diff -u --label "expected ($(basename "$expected"))" --label "actual ($kind)" \
      "$expected" "$work/actual" >"$work/diff"; then
    problems+=("the diagnostics differ:")
  fi

  if [ ${#problems[@]} -eq 0 ]; then
    pass=$((pass + 1))
    continue
  fi
  fail=$((fail + 1))
  failed+=("$name")
  echo "FAIL: $name ($kind)"
  for p in "${problems[@]}"; do echo "  $p"; done
  if [ -s "$work/diff" ]; then sed 's/^/    /' "$work/diff"; fi
  if [ -s "$work/stdout" ]; then
    echo "  stdout:"
    sed 's/^/    /' "$work/stdout" | head -20
  fi
  : >"$work/diff"
done

# An .expected without its .conf is a case that silently stopped running.
for expected in "$bad_dir"/*.expected; do
  if [ ! -f "${expected%.expected}.conf" ]; then
    fail=$((fail + 1))
    failed+=("$(basename "$expected")")
    echo "FAIL: $(basename "$expected") has no .conf beside it"
  fi
done

echo "$kind: $pass of $((pass + fail)) broken configs gave exactly the expected diagnostics"
if [ "$fail" -ne 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
exit 0
