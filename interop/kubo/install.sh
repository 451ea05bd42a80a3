#!/usr/bin/env bash
# Creates interop/kubo/.venv (Python 3.11) and installs requirements.txt into it,
# only when a pinned package is missing or at another version. Quick when done.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
req="$here/requirements.txt"

find_python() {
  for c in "${PYTHON:-}" python3.11 python3; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1 &&
       "$c" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
      echo "$c"; return 0
    fi
  done
  echo "install.sh: Python 3.11 not found (set PYTHON=...)" >&2
  return 1
}

if ! "$venv/bin/python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
  py="$(find_python)"
  rm -rf "$venv"
  echo "install.sh: creating $venv with $py" >&2
  "$py" -m venv "$venv"
fi

check() {
  "$venv/bin/python" - "$req" <<'PY'
import sys, importlib.metadata as md
bad = []
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        have = None
    if have != want:
        bad.append(f"{name}: have {have}, want {want}")
for b in bad:
    print("install.sh:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

if check 2>/dev/null; then
  echo "install.sh: kubo interop venv up to date" >&2
  exit 0
fi
check || true
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$req"
check
echo "install.sh: installed $(grep -c '==' "$req") pinned packages into $venv" >&2
