#!/usr/bin/env python3
"""Writes seeds for the nsys harness (fuzz_nsys.c explains the encoding):
the kernels and step annotations of the real Kineto traces in tests/data/traces,
re-encoded as the rows an nsys export would hold.  Run from tests/fuzz."""
import gzip
import json
import struct


def i64(v):
    return b'\x00' + struct.pack('<q', int(v))


def text(s):
    b = s.encode()[:255]
    return b'\x02' + bytes([len(b)]) + b


NULL = b'\x03'


def seed(trace, variant, limit):
    ev = json.load(gzip.open(trace))['traceEvents']
    ids, out = {}, bytearray([variant])
    for e in ev:
        if len(out) > limit:
            break
        name = str(e.get('name', ''))
        if e.get('cat') == 'kernel':
            if name not in ids:
                ids[name] = len(ids) + 1
                out += b'\x00' + i64(ids[name]) + text(name)
            start = int(float(e['ts']) * 1000)
            out += b'\x01' + i64(start) + i64(start + int(float(e['dur']) * 1000))
            out += i64(e.get('args', {}).get('device', 0)) + i64(ids[name])
        elif e.get('cat') == 'gpu_user_annotation' and name.startswith('ProfilerStep#'):
            start = int(float(e['ts']) * 1000)
            row = b'\x02' + i64(start) + i64(start + int(float(e['dur']) * 1000))
            if variant & 8:
                ids.setdefault(name, len(ids) + 1)
                out += b'\x00' + i64(ids[name]) + text(name)
                row += NULL + i64(ids[name])
            else:
                row += text(name)
            out += row
    return bytes(out)


base = '../data/traces/real-a2a-gemm-2xh200-rank%d.json.gz'
for name, rank, variant in (('real-rank0-demangled-textid', 0, 1 | 4 | 8),
                            ('real-rank1-short-text', 1, 2 | 4 | 64),
                            ('real-rank0-both-threads', 0, 3 | 4 | 32),
                            ('real-rank1-no-stringids', 1, 1 | 16)):
    open('corpus/nsys/' + name, 'wb').write(seed(base % rank, variant, 6000))
