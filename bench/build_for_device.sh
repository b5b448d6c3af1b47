#!/usr/bin/env bash
# Builds the native modules HERE for the device machine's Python (3.12; sm_90 only) and packs them
# into .carry/ (ignored by git; pass it as `carry` to the device tool), so a device call need not
# spend ~4 minutes of device time on pip's build. The device command then starts with
#   bench/unpack_on_device.sh && export PYTHONPATH=$PWD
# Needs a local python3.12 with jax and nanobind (e.g. pyenv 3.12: python3.12 -m pip install
# jax==0.11.2 jaxlib==0.11.2 nanobind, the device's jax; a plain `jax` is newer) and nvcc. The
# kernel objects are incremental (BUILD_DIR), so after small changes this takes a minute; from
# scratch about 13 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PY312:-}
if [ -z "$py" ]; then  # the first python3.12 that runs (a pyenv shim may exist but not run)
  for cand in "$(command -v python3.12 || true)" /root/.pyenv/versions/3.12*/bin/python3.12; do
    if [ -n "$cand" ] && "$cand" -c "import jax, nanobind" 2> /dev/null; then py=$cand; break; fi
  done
fi
[ -n "$py" ] || { echo "build_for_device.sh: no python3.12 with jax and nanobind (set PY312)" >&2; exit 2; }
build=${BUILD_DIR:-/tmp/batchla_build312}
# 90-real: SASS only. With sm_90's PTX too the packed module was 51.5 MB, which with the tracked
# tree (27.5 MB, mostly bench/results) passed the device tool's 64 MiB carry limit; SASS only
# packs to 28 MB.
cmake -S . -B "$build" -G Ninja -DPython_EXECUTABLE="$py" -DJAX_BATCHLA_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90-real > "$build.configure.log"
cmake --build "$build" -j"$(nproc)"
grep -qx "/.carry/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/.carry/" >> .git/info/exclude; }
mkdir -p .carry
cp "$build"/_cpu.cpython-312-*.so .carry/
# MODULE_NAME: another name for a variant build (e.g. CUDAFLAGS=-D... with its own BUILD_DIR), so
# the default module stays; bench/unpack_on_device.sh takes it as CUDA_MODULE.
xz -T0 -6 -c "$build"/_cuda.cpython-312-*.so > ".carry/${MODULE_NAME:-_cuda.so.xz}"  # ~188 MB -> ~28 MB (carry limit 64 MiB)
ls -la .carry
