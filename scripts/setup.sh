#!/usr/bin/env bash
# Installs the Debian packages Reflex builds against, only when missing.
# Idempotent: a second run on a ready machine installs nothing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  antlr4 libantlr4-runtime-dev
  libboost-graph-dev libsqlite3-dev libspdlog-dev libgtest-dev
  libhyperscan-dev libre2-dev nlohmann-json3-dev libcli11-dev libbenchmark-dev
  zlib1g-dev libarchive-dev ripgrep graphviz librsvg2-bin
  redis-server redis-tools redis-sentinel libhiredis-dev prometheus-alertmanager prometheus stunnel4
  libcpp-httplib-dev libsystemd-dev
  clang clang-tidy clang-format libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
