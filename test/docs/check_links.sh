#!/usr/bin/env bash
# The README is a map an operator reads first (issue 35): it stays under 10 KB, and no link in
# it, or in the maps beside it, leads nowhere.
#
#   check_links.sh [ROOT]     ROOT: the checkout (default: the one this script lives in)
#
# Fails (exit 1, one line per problem, FILE:LINE first) when
#   - README.md is 10,240 bytes or more;
#   - one of the maps (README.md, test/README.md, daemon/README.md, resources/README.md) is
#     missing;
#   - a relative link in one of them names no file or folder inside ROOT;
#   - a link with an anchor into a Markdown file (FILE.md#anchor, or #anchor in the same file)
#     names no heading of that file, by GitHub's slugs ("### `[[vip]]`" is #vip, a second
#     "## Notes" is #notes-1), nor an <a name> or id= of it.
# Links inside code (fenced blocks, `spans`) are not links. External links (http:, https:,
# mailto: ...) are not checked: the test has no network.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/../.." && pwd)}
max_readme=10240
maps=(README.md test/README.md daemon/README.md resources/README.md)

command -v python3 >/dev/null 2>&1 || { echo "FAIL: no python3 (packaging/build-deps installs it)"; exit 1; }
[[ -d $root ]] || { echo "FAIL: no such checkout: $root"; exit 1; }

failed=0
if [[ -f $root/README.md ]]; then
  size=$(wc -c <"$root/README.md")
  if ((size >= max_readme)); then
    echo "README.md: $size bytes; the README is a map, under $max_readme bytes (issue 35): move detail to test/README.md or the reference"
    failed=1
  else
    echo "README.md: $size bytes (under $max_readme)"
  fi
fi

python3 - "$root" "${maps[@]}" <<'PY' || failed=1
import os, re, sys, unicodedata
from urllib.parse import unquote

root = os.path.realpath(sys.argv[1])
maps = sys.argv[2:]
fence = re.compile(r'^ {0,3}(`{3,}|~{3,})')

def code_free_lines(text):
    """The file's lines with fenced code blanked and inline code spans removed."""
    out, closing = [], None
    for line in text.split('\n'):
        m = fence.match(line)
        if closing:
            if m and m.group(1)[0] == closing[0] and len(m.group(1)) >= len(closing):
                closing = None
            out.append('')
            continue
        if m:
            closing = m.group(1)
            out.append('')
            continue
        out.append(re.sub(r'(`+)(?:(?!\1).)+?\1', '', line))
    return out

def slug(heading):
    """GitHub's anchor for a heading's text (github-slugger)."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # a link reads as its text
    text = re.sub(r'<[^>]+>', '', text)                           # inline HTML
    text = text.strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in ' -_' or cat[0] in 'LN' or cat == 'Mn':
            kept.append(ch)
    return ''.join(kept).replace(' ', '-')

anchors_of = {}
def anchors(path):
    if path in anchors_of:
        return anchors_of[path]
    found, seen, closing = set(), {}, None
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    for i, line in enumerate(lines):
        m = fence.match(line)
        if closing:
            if m and m.group(1)[0] == closing[0] and len(m.group(1)) >= len(closing):
                closing = None
            continue
        if m:
            closing = m.group(1)
            continue
        h = re.match(r'^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$', line)
        text = None
        if h:
            text = h.group(1)
        elif (i + 1 < len(lines) and line.strip() and not line.startswith(('|', '-', '*', '>'))
              and re.match(r'^ {0,3}(=+|-+)[ \t]*$', lines[i + 1])):
            text = line.strip()  # a setext heading
        if text is not None:
            text = text.replace('`', '')
            base = slug(text)
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f'{base}-{n}')
        for a in re.findall(r'<a\s[^>]*\b(?:name|id)\s*=\s*"([^"]+)"', line):
            found.add(a)
    anchors_of[path] = found
    return found

link = re.compile(r'!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)')
refdef = re.compile(r'^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)')
problems, checked = [], 0
for name in maps:
    path = os.path.join(root, name)
    if not os.path.isfile(path):
        problems.append(f'{name}: missing: every folder map the README points into must exist')
        continue
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = code_free_lines(f.read())
    here = os.path.dirname(path)
    for no, line in enumerate(lines, 1):
        targets = [m.group(1) for m in link.finditer(line)]
        d = refdef.match(line)
        if d:
            targets.append(d.group(1))
        for target in targets:
            target = target.strip('<>')
            if re.match(r'^[A-Za-z][A-Za-z0-9+.-]*:', target):
                continue  # http:, https:, mailto: ...: not checked, no network
            checked += 1
            where = f'{name}:{no}: ({target})'
            file_part, _, anchor = target.partition('#')
            file_part = unquote(file_part)
            dest = os.path.realpath(os.path.join(here, file_part)) if file_part else path
            if dest != root and not dest.startswith(root + os.sep):
                problems.append(f'{where} leads out of the checkout')
                continue
            if not os.path.exists(dest):
                problems.append(f'{where} names no file: {os.path.relpath(dest, root)} does not exist')
                continue
            if anchor and dest.endswith('.md') and os.path.isfile(dest):
                if unquote(anchor).lower() not in anchors(dest):
                    problems.append(f'{where} names no heading of {os.path.relpath(dest, root)}: '
                                    f'no #{anchor} there')
for p in problems:
    print(p)
print(f'{checked} relative links checked in {len(maps)} files, {len(problems)} problem(s)')
sys.exit(1 if problems else 0)
PY

if ((failed)); then
  echo "FAIL: the README and its maps (see above)"
  exit 1
fi
echo "PASS: README.md under $max_readme bytes, every relative link and anchor in ${maps[*]} resolves"
