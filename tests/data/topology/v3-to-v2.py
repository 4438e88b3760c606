#!/usr/bin/env python3
"""Rewrites an hwloc 3.0 XML topology in the 2.0 format that Debian 12's
hwloc 2.9 loads.  Only two things differ in these files: the version
attribute, and osdev_type, which hwloc 3.0 made a bit mask
(STORAGE=1 MEMORY=2 GPU=4 COPROC=8 NETWORK=16 OPENFABRICS=32 DMA=64)
where hwloc 2.x has an enum (BLOCK=0 GPU=1 NETWORK=2 OPENFABRICS=3 DMA=4
COPROC=5).  Usage: v3-to-v2.py IN.xml > OUT.xml"""
import re
import sys


def v2_type(mask, name):
    if mask & 32:
        return 3                       # OpenFabrics (IB HCA: NETWORK|OPENFABRICS)
    if mask & 16:
        return 2                       # network interface
    if mask & 64:
        return 4                       # DMA engine
    if mask & 4 and not (mask & 8):
        return 1                       # display device (card0, nvml without compute)
    if mask & 8:
        # hwloc 2.x: NVML/RSMI/LevelZero handles are GPU, CUDA/OpenCL are COPROC.
        return 1 if re.match(r'(nvml|rsmi|ze)\d', name) else 5
    return 0                           # storage / memory: BLOCK


def fix(match):
    tag = match.group(0)
    name = re.search(r' name="([^"]*)"', tag)
    mask = int(re.search(r'osdev_type="(\d+)"', tag).group(1))
    new = v2_type(mask, name.group(1) if name else "")
    return re.sub(r'osdev_type="\d+"', 'osdev_type="%d"' % new, tag)


text = open(sys.argv[1], encoding="utf-8").read()
text = text.replace('<topology version="3.0">', '<topology version="2.0">', 1)
text = re.sub(r'<object type="OSDev"[^>]*>', fix, text)
sys.stdout.write(text)
