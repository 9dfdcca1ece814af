#!/usr/bin/env bash
# Install the running interpreter's wheel of the directory given (default target/wheels) into a fresh virtual environment outside the source tree and
# run the smoke test and the installed package's doctests there (`make wheel-check`).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
shopt -s nullglob
TAG="$("$PYTHON" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
DIR="$(cd "${1:-$ROOT/target/wheels}" && pwd)"
wheels=("$DIR"/tenferro-*-"$TAG"-*.whl)
if [ "${#wheels[@]}" -ne 1 ]; then
    echo "wheel_check: expected one $TAG wheel in $DIR, found ${#wheels[@]}" >&2
    exit 1
fi
WHEEL="${wheels[0]}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip
# The wheel with its declared dependencies, and what its doctests and examples import.
"$WORK/venv/bin/python" -m pip install -q "$WHEEL" pytest scipy autoray
cd "$WORK"   # nothing of the checkout is importable from here
echo "wheel: $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1))"
"$WORK/venv/bin/python" "$ROOT/tools/wheel_smoke.py"
# The examples need matplotlib, scikit-learn and tqdm (requirements-dev.txt), not the wheel's
# dependencies: their modules are skipped here (make demo runs them).
"$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider --doctest-modules --pyargs tenferro \
    --ignore-glob='*/tenferro/examples/*' \
    -o doctest_optionflags="NORMALIZE_WHITESPACE ELLIPSIS"
