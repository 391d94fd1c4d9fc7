#!/usr/bin/env python3
"""tkc's GGML dequantizers (src/io/quant.c) against the gguf package's numpy ones, bit-exact, on every
device: blocks quantized by gguf.quants.quantize (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) or, for
the K-quants gguf cannot quantize, random blocks with finite float16 scales, dequantized by
gguf.quants.dequantize and by tests/quant_dequantize_tool (tkc's tensor ops) on each device.

usage: test_quant_py.py PATH/TO/quant_dequantize_tool
Exit 0 when every available device matches, 77 (skipped) when the gguf package or numpy is missing
or no device runs here, 1 on a mismatch."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType as T
    from gguf import quants
except ImportError as e:  # the writer llama.cpp's authors publish: pip install gguf
    print(f"skipped: {e} (pip install gguf numpy)")
    sys.exit(77)

DEVICES = ["CPU", "LLVM", "WEBGPU", "INTERP", "CUDA"]
QUANTIZED = [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]  # gguf quantizes these
K_QUANTS = [T.Q4_K, T.Q5_K, T.Q6_K]  # gguf only dequantizes these
# byte offsets of the float16 scales in a block (they must be finite in random blocks)
K_HALVES = {T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208]}


def finite_halves(rng, n):
    h = rng.integers(0, 1 << 16, size=n, dtype=np.uint32)
    h[((h >> 10) & 31) == 31] ^= 1 << 14  # inf / NaN -> a finite exponent
    return h.astype(np.uint16)


def cases(rng):
    """(name, qtype, shape, packed bytes, gguf's float32 values)"""
    for qt in QUANTIZED:
        be = GGML_QUANT_SIZES[qt][0]
        for shape in [(32,), (3, 7 * 32), (2, 2, 5 * 32), (4, 1024)]:
            x = rng.standard_normal(size=shape).astype(np.float32) * rng.choice([1e-3, 1.0, 300.0])
            x.reshape(-1)[:: max(1, 17 * be)] = 0.0  # a block of zeros now and then
            q = np.ascontiguousarray(quants.quantize(x, qt))
            yield f"{qt.name}{shape}", qt, shape, q.view(np.uint8).reshape(-1), quants.dequantize(q, qt).astype(np.float32)
    for qt in K_QUANTS:
        be, bb = GGML_QUANT_SIZES[qt]
        for shape in [(256,), (3, 3 * 256), (2, 2, 2 * 256)]:
            nblocks = int(np.prod(shape)) // be
            blocks = rng.integers(0, 256, size=(nblocks, bb), dtype=np.uint8)
            for off in K_HALVES[qt]:
                blocks[:, off : off + 2] = finite_halves(rng, nblocks).view(np.uint8).reshape(nblocks, 2)
            want = quants.dequantize(blocks.reshape(*shape[:-1], -1), qt).astype(np.float32)
            yield f"{qt.name}{shape}", qt, shape, blocks.reshape(-1), want


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 1
    tool = sys.argv[1]
    rng = np.random.default_rng(28)
    all_cases = list(cases(rng))
    failures, ran = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        for i, (name, qt, shape, packed, want) in enumerate(all_cases):
            assert want.shape == shape, (name, want.shape)
            packed.tofile(os.path.join(tmp, f"in{i}"))
            lines.append(f"{int(qt)} {len(shape)} {' '.join(map(str, shape))} {tmp}/in{i} {tmp}/out{i}\n")
        for dev in DEVICES:
            for i in range(len(all_cases)):  # no device reads another's outputs
                if os.path.exists(os.path.join(tmp, f"out{i}")):
                    os.remove(os.path.join(tmp, f"out{i}"))
            p = subprocess.run([tool, dev], input="".join(lines), capture_output=True, text=True, timeout=600)
            if p.returncode == 77:
                print(f"{dev}: skipped ({p.stdout.strip()})")
                continue
            if p.returncode != 0:
                print(f"FAIL {dev}: the tool failed ({p.returncode}): {p.stderr.strip()}")
                failures += 1
                continue
            ran.append(dev)
            for i, (name, qt, shape, packed, want) in enumerate(all_cases):
                got = np.fromfile(os.path.join(tmp, f"out{i}"), dtype=np.float32)
                w = want.reshape(-1)
                if got.size != w.size or not np.array_equal(got.view(np.uint32), w.view(np.uint32)):
                    bad = np.nonzero(got.view(np.uint32) != w.view(np.uint32))[0] if got.size == w.size else []
                    j = int(bad[0]) if len(bad) else -1
                    print(f"FAIL {dev} {name}: {len(bad)} of {w.size} values differ from gguf's"
                          + (f"; first at {j}: {got[j]!r} vs {w[j]!r}" if j >= 0 else f" (size {got.size} vs {w.size})"))
                    failures += 1
    print(f"{len(all_cases)} cases on {', '.join(ran) or 'no device'}: {failures} failure(s)")
    if not ran:
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
