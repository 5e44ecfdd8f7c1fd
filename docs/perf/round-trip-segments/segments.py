#!/usr/bin/env python3
"""Splits 64 B window-1 Write round trips into segments from two processes' timestamp dumps.

Usage: segments.py FILE_A FILE_B [--fine]
Each file: for event e = 0, 1, ... a little-endian int64 count n, then n int64 CLOCK_MONOTONIC
nanoseconds (what fabtests.patch and efabench-timestamps.patch write at exit; both clocks are
CLOCK_MONOTONIC, so the two processes' stamps compare). Events: 0 leader/client posts the write,
1 target/server saw it, 2 target starts its ack (sync message), 3 leader saw the ack; --fine
(efabench only) adds 6 target's send returned, 7 leader's CQ read that returned the ack,
4 leader's receive repost returned, 5 leader's next timed invocation started.
A round is a run of stamps in exactly the expected order, merged over both processes; the last
900000 stamps of each event are used (the measured iterations).
"""
import array
import struct
import sys


def load(path):
    data = open(path, 'rb').read()
    off, events = 0, []
    while off < len(data):
        n = struct.unpack_from('<q', data, off)[0]
        off += 8
        a = array.array('q')
        a.frombytes(data[off:off + 8 * n])
        off += 8 * n
        events.append(a)
    return events


def main():
    fine = '--fine' in sys.argv
    a, b = (load(p) for p in sys.argv[1:3])
    leader, target = (a, b) if len(a[0]) else (b, a)
    if fine:
        mine, theirs = (0, 3, 4, 5, 7), (1, 2, 6)
        pattern = [0, 1, 2, 6, 7, 3, 4, 5, 0]
        names = ['write posted -> target saw it', 'target saw it -> ack started', 'ack started -> send returned',
                 'send returned -> leader CQ read hit', 'CQ read hit -> ack handled', 'ack handled -> repost returned',
                 'repost returned -> next invocation', 'next invocation -> write posted']
    else:
        mine, theirs = (0, 3), (1, 2)
        pattern = [0, 1, 2, 3, 0]
        names = ['write posted -> target saw it', 'target saw it -> ack started', 'ack started -> leader saw ack',
                 'leader saw ack -> next write posted']
    stamps = [(t, e) for e in mine for t in leader[e][-900000:]]
    stamps += [(t, e) for e in theirs for t in target[e][-900000:]]
    stamps.sort()
    segs = [[] for _ in names]
    kinds = [e for _, e in stamps]
    for i in range(len(stamps) - len(pattern)):
        if kinds[i:i + len(pattern)] == pattern:
            for k in range(len(names)):
                segs[k].append(stamps[i + k + 1][0] - stamps[i + k][0])

    def q(x, p):
        x = sorted(x)
        return x[int(p * (len(x) - 1))]

    print('rounds', len(segs[0]))
    for name, x in zip(names, segs):
        print('  %-38s p50 %6d  p25 %6d  p75 %6d ns' % (name, q(x, .5), q(x, .25), q(x, .75)))
    print('  %-38s %6d ns' % ('sum of the p50s', sum(q(x, .5) for x in segs)))


main()
