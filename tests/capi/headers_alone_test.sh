#!/bin/sh
# The installed headers are exactly the public ones, and each compiles alone
# in its own translation unit with nothing but the installed prefix on the
# include path (reflex.h also as C99).
set -eu
BUILD=$1; CXX=$2; CC=$3; shift 3
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cmake --install "$BUILD" --prefix "$T/prefix" >/dev/null
INC="$T/prefix/include"
printf '%s\n' "$@" | sort > "$T/expected"
(cd "$INC/reflex" && ls) | sort > "$T/installed"
if ! diff "$T/expected" "$T/installed"; then
  echo "installed headers differ from the public list (< expected, > installed)" >&2
  exit 1
fi
for h in "$@"; do
  printf '#include "reflex/%s"\n#include "reflex/%s"\n' "$h" "$h" > "$T/tu.cpp"
  "$CXX" -std=c++20 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$INC" "$T/tu.cpp" ||
    { echo "reflex/$h does not compile alone" >&2; exit 1; }
done
printf '#include "reflex/reflex.h"\n' > "$T/tu.c"
"$CC" -std=c99 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$INC" "$T/tu.c"
echo "headers alone: $# public header(s), each compiles in its own TU"
