#!/bin/bash
# Files that are not configs at all, made here rather than committed: empty, binary, invalid
# UTF-8, 10 MB, just under and just over the 1 MiB limit, nested past the parser's limit, tens of
# thousands of errors, a directory, a missing file. The program must refuse each one with exit 1
# and a FILE:LINE:COL error, and never crash (exit >= 128) or hang. A hang is no exit within
# HANG_S (120 s): the slowest file takes 0.2 s in the release build and 2.4 s under ASan on an
# idle machine, so only a program that never ends, not a loaded one, meets the limit.
#
# usage: run_hostile_files.sh tandem|tandemd BINARY
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 tandem|tandemd BINARY" >&2
  exit 2
fi
kind=$1
binary=$2
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

work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-hostile.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fail=0
total=0
HANG_S=120

# check NAME SECONDS [EXACT_FIRST_LINE | ~REGEX_FIRST_LINE]
# Runs the program on NAME (relative, in $work) and checks exit 1, a first stderr line of the
# form NAME:LINE:COL: message, and if given, that line (after "NAME:") exactly or by regex.
check() {
  local name=$1 want=${2:-}
  total=$((total + 1))
  local start end rc first rest
  start=$(date +%s)
  timeout -k 5 "$HANG_S" "${cmd[@]}" "$name" >stdout 2>stderr
  rc=$?
  end=$(date +%s)
  first=$(head -n 1 stderr)
  rest=${first#"$name:"}
  local problem=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    problem="it hung: no exit within $HANG_S s"
  elif [ "$rc" -ge 128 ]; then
    problem="it crashed: exit $rc (signal $((rc - 128)))"
  elif [ "$rc" -ne 1 ]; then
    problem="exit $rc, expected 1"
  elif ! [[ "$first" =~ ^"$name":[0-9]+:[0-9]+:\ . ]]; then
    problem="the first line of stderr is not \"$name:LINE:COL: message\""
  elif [ -n "$want" ] && [ "${want:0:1}" = "~" ] && ! [[ "$rest" =~ ${want:1} ]]; then
    problem="the first diagnostic does not match /${want:1}/"
  elif [ -n "$want" ] && [ "${want:0:1}" != "~" ] && [ "$rest" != "$want" ]; then
    problem="the first diagnostic differs; expected: $want"
  fi
  if [ -n "$problem" ]; then
    fail=$((fail + 1))
    echo "FAIL: $name ($kind, $((end - start)) s): $problem"
    echo "  stderr (first lines):"
    head -n 5 stderr | cut -c 1-300 | sed 's/^/    /'
  else
    echo "ok: $name: ${rest:0:150}"
  fi
}

# toml++ 3.3 recurses once per dotted key part and overflows the stack at a few ten thousand
# parts (fixed upstream in 3.4); the loader refuses keys with more than 64 parts before parsing.
yes 'a.' | head -n 100000 | tr -d '\n' >long-key.conf && echo 'b = 1' >>long-key.conf
check long-key.conf '~^1:[0-9]+: a key with more than 64 dotted parts'
{ printf '['; yes 'a.' | head -n 100000 | tr -d '\n'; printf 'b]\n'; } >long-header.conf
check long-header.conf '~^1:[0-9]+: a key with more than 64 dotted parts'
# A FIFO: opening it for reading would block until a writer comes, so the type is checked first.
mkfifo fifo.conf
check fifo.conf '1:1: fifo.conf is not a regular file; give the path of a config file'

# Empty: nothing at all, so neither [cluster] nor [[node]].
: >empty.conf
check empty.conf '1:1: the file has no [cluster] table; add one with at least name = "..."'

# Binary: a NUL byte on line 3 of an otherwise plausible file.
printf '[cluster]\nname = "web"\n\000\001\002\003binary\n' >nul.conf
check nul.conf '3:1: the file holds binary data (a NUL byte at offset 23); a config is UTF-8 text in TOML'

# Binary: something that looks like an ELF executable, then every byte value.
{
  printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000'
  for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done
} >elf.conf
check elf.conf '1:1: the file holds binary data (a NUL byte at offset 7); a config is UTF-8 text in TOML'

# Text that is not UTF-8 (Latin-1), without a NUL.
printf '[cluster]\nname = "Z\374rich"\n' >latin1.conf
check latin1.conf '~^2:[0-9]+: TOML syntax error: '

# A UTF-8 byte order mark before a valid start is fine for TOML; the error is the missing node.
printf '\357\273\277[cluster]\nname = "web"\n[[cluster.key]]\nid = 1\nfile = "authkey"\n' >bom.conf
head -c 32 /dev/urandom >authkey && chmod 0600 authkey
check bom.conf '1:1: the file has no [[node]] table; add one [[node]] per director, each with name = "..." as in corosync.conf'

# 10 MB of comments: refused by size before anything is parsed.
yes '# padding padding padding padding padding padding padding padding padding padding' |
  head -c 10485760 >big.conf
check big.conf '1:1: file is larger than 1048576 bytes; a tandem config is at most that big'

# One byte over the limit, and exactly at it (read, then refused for what it lacks).
yes '# padding' | head -c 1048577 >over.conf
check over.conf '1:1: file is larger than 1048576 bytes; a tandem config is at most that big'
yes '# padding' | head -c 1048575 >limit.conf && echo >>limit.conf
check limit.conf '1:1: the file has no [cluster] table; add one with at least name = "..."'

# Nesting far past the parser's limit must be an error, not a stack overflow.
{ printf 'a = '; head -c 200000 /dev/zero | tr '\0' '['; } >deep-array.conf
check deep-array.conf '~^1:[0-9]+: TOML syntax error: '
{ printf 'a = '; yes '{ b = ' | head -n 50000 | tr -d '\n'; } >deep-table.conf
check deep-table.conf '~^1:[0-9]+: TOML syntax error: '

# 50000 unknown tables: 50002 errors, all listed (quadratic work here would be the hang).
seq 1 50000 | sed 's/^/[t/; s/$/]/' >many-errors.conf
check many-errors.conf '1:1: the file has no [cluster] table; add one with at least name = "..."'
if ! grep -qx 'many-errors.conf: 50002 errors' stderr && [ "$kind" = tandem ]; then
  fail=$((fail + 1))
  echo "FAIL: many-errors.conf: the summary is not \"many-errors.conf: 50002 errors\": $(tail -n 1 stderr)"
fi

# Not a regular file, and no file at all.
mkdir dir.conf
check dir.conf '1:1: dir.conf is not a regular file; give the path of a config file'
check missing.conf '1:1: cannot open missing.conf: No such file or directory'

echo "$kind: $((total - fail)) of $total hostile files refused cleanly"
[ "$fail" -eq 0 ]
