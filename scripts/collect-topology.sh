#!/bin/sh
# Collects on this host what `reflex topology` reads (docs/cli.md): writes one
# file a tool into OUTDIR (default ./topology-$(hostname)). A tool that is
# missing or fails is skipped with a message; the script never stops for it.
set -u
out=${1:-./topology-$(hostname 2>/dev/null || echo host)}
mkdir -p "$out" || { echo "collect-topology: cannot create $out" >&2; exit 2; }

run() {  # run FILE CMD...: CMD's stdout into OUTDIR/FILE, kept only when it worked
  file=$1; shift
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "collect-topology: $1 not found: $file skipped" >&2
    return 0
  fi
  if "$@" >"$out/$file.tmp" 2>/dev/null && [ -s "$out/$file.tmp" ]; then
    mv "$out/$file.tmp" "$out/$file"
  else
    rm -f "$out/$file.tmp"
    echo "collect-topology: '$*' failed: $file skipped" >&2
  fi
}

hostname >"$out/hostname" 2>/dev/null || rm -f "$out/hostname"
run lspci-tv.txt lspci -tv
run lspci-vvv.txt lspci -vvv
run nvidia-smi-q.txt nvidia-smi -q
run nvidia-smi-topo-m.txt nvidia-smi topo -m
# Explicit indexes (-q gives them by order only) and the NVLink link states.
run nvidia-smi-query-gpu.csv nvidia-smi --query-gpu=index,pci.bus_id,serial,uuid,name --format=csv
run nvidia-smi-nvlink-s.txt nvidia-smi nvlink -s
# -v adds each RDMA device's PCI address; older MOFED lacks it.
run ibdev2netdev.txt ibdev2netdev -v
[ -s "$out/ibdev2netdev.txt" ] || run ibdev2netdev.txt ibdev2netdev
run ibstat.txt ibstat
echo "collect-topology: wrote $out" >&2
