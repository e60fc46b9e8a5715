#!/usr/bin/env bash
# Installs fusor's build and test dependencies on Debian 12 (idempotent: installs only what is missing).
set -euo pipefail
pkgs=(build-essential cmake ninja-build ccache pkg-config git
      libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc libshaderc-dev
      spirv-tools glslang-dev glslang-tools libonnx-dev libprotobuf-dev protobuf-compiler
      googletest libgtest-dev libcli11-dev nlohmann-json3-dev graphviz python3-numpy)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[setup] all Debian packages present"
fi
if [ -x /usr/local/cuda/bin/nvcc ]; then echo "[setup] CUDA toolkit: /usr/local/cuda"; else echo "[setup] CUDA toolkit not found in /usr/local/cuda: the cuda backend will be off"; fi
