#!/bin/sh
# `cmake --install` into a temporary prefix, then build the C embedding example
# against it twice: with find_package(reflex) and with pkg-config; run both.
set -eu
BUILD=$1; SRC=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cmake --install "$BUILD" --prefix "$T/prefix" >/dev/null
mkdir -p "$T/consumer"
cat > "$T/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(reflex REQUIRED)
add_executable(consumer $SRC/examples/embed_c/main.c)
target_link_libraries(consumer PRIVATE reflex::reflex)
CM
cmake -S "$T/consumer" -B "$T/consumer/build" -DCMAKE_PREFIX_PATH="$T/prefix" >/dev/null
cmake --build "$T/consumer/build" >/dev/null
LD_LIBRARY_PATH="$T/prefix/lib" "$T/consumer/build/consumer" "$SRC/tests/engine/kb" "$SRC/examples/incident-pcie" | grep -q '"root_causes"'
PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" cc "$SRC/examples/embed_c/main.c" -o "$T/pc-consumer" \
  $(PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" pkg-config --cflags --libs reflex)
LD_LIBRARY_PATH="$T/prefix/lib" "$T/pc-consumer" "$SRC/tests/engine/kb" "$SRC/examples/incident-pcie" | grep -q '"root_causes"'
# The installed reflex finds its modules (LIBDIR/reflex, relative to the
# binary): a tarball goes through reflex_archive.so.
tar -C "$SRC/examples" -czf "$T/incident.tgz" incident-pcie
"$T/prefix/bin/reflex" events --kb "$SRC/kb" "$T/incident.tgz" | grep -q '"event"'
echo "install test: find_package and pkg-config consumers ran; the installed reflex read a tarball"
