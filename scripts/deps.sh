#!/usr/bin/env bash
# Installs, idempotently, every Debian package the project needs (run as root on Debian 12).
# The MLIR/LLVM 22 packages are for the compiler backend; they are installed now so that CI
# sees one stable set of packages. fortunes: the text that lt-train --model charlm learns.
set -euo pipefail
PKGS=(build-essential g++ cmake ninja-build pkg-config zlib1g-dev
      libopenblas-dev libgtest-dev libgmock-dev libbenchmark-dev libomp-dev libgloo-dev
      libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
      dataset-fashion-mnist fortunes graphviz)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
