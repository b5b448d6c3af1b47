#!/usr/bin/env bash
# On the device: puts the modules bench/build_for_device.sh packed into .carry/ into jax_batchla/
# (CUDA_MODULE: a variant's packed module, .carry/_cuda.so.xz by default).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('${CUDA_MODULE:-.carry/_cuda.so.xz}'), open('jax_batchla/_cuda.cpython-312-x86_64-linux-gnu.so', 'wb'))"
cp .carry/_cpu.cpython-312-*.so jax_batchla/
