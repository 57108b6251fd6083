#!/bin/sh
# libreflex.so exports exactly tests/capi/exported_symbols.txt (the C API and
# the C++ embedding API): an extra symbol leaks an internal, a missing one
# breaks embedders. REFLEX_UPDATE_SYMBOLS=1 rewrites the list.
set -eu
LIB=$1; EXPECTED=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
nm -D --defined-only -C "$LIB" | sed 's/^[0-9a-f]* [A-Za-z] //' | LC_ALL=C sort -u > "$T/actual"
if [ "${REFLEX_UPDATE_SYMBOLS:-}" = 1 ]; then cp "$T/actual" "$EXPECTED"; fi
if ! diff "$EXPECTED" "$T/actual"; then
  echo "libreflex.so exports differ from $EXPECTED (< missing, > extra)" >&2
  exit 1
fi
echo "symbols: $(wc -l < "$T/actual") exported, as listed"
