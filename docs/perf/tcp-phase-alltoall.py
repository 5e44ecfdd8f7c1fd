# The MoE testbed's reference: the phases of an all-to-all over plain TCP sockets, what TCP alone
# carries of the links for that traffic (journal moe.md, "A fabric that queues"). Every node runs
# it at once; each phase every node writes BYTES to every other node, striped over RAILS (one
# connection a rail and peer), and starts the next phase once its own writes are in its sockets
# and every peer's bytes of the phase arrived (ACK=1: and its sent bytes were acknowledged, as a
# fabric write's completion is). Prints the busiest NIC's rate over the last 3/4 of the phases
# and its ratio to GOOD (a rail's goodput in Gbps, `testbed links`).
#   for i in 1 2 3 4; do ip netns exec efb-n$i python3 docs/perf/tcp-phase-alltoall.py $i 4 2 826000 60 & done; wait
import fcntl, os, selectors, socket, struct, sys, time

me, n, rails, B, P = (int(a) for a in sys.argv[1:6])
ACK = os.environ.get("ACK") == "1"
GOOD = float(os.environ.get("GOOD", "0.0478"))
PORT = 29900
TIOCOUTQ = 0x5411
stripe = B // rails


def unacked(c):
    return struct.unpack("i", fcntl.ioctl(c.fileno(), TIOCOUTQ, b"\0\0\0\0"))[0]


listeners = []
for k in range(rails):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("198.18.%d.%d" % (k, me), PORT))
    s.listen(16)
    listeners.append(s)
time.sleep(1.0)
out = [socket.create_connection(("198.18.%d.%d" % (k, j), PORT)) for k in range(rails) for j in range(1, n + 1) if j != me]
inc = [s.accept()[0] for s in listeners for _ in range(n - 1)]
sel = selectors.DefaultSelector()
for c in out + inc:
    c.setblocking(False)
for c in inc:
    sel.register(c, selectors.EVENT_READ)
for c in out:
    sel.register(c, selectors.EVENT_WRITE)
writing = set(out)
zeros = memoryview(bytearray(1 << 20))
sink = bytearray(1 << 20)
sent = {c: 0 for c in out}
got = {c: 0 for c in inc}
marks = []
phase = 0
while phase < P:
    target = (phase + 1) * stripe
    for key, ev in sel.select(0.05):
        c = key.fileobj
        if ev & selectors.EVENT_READ:
            got[c] += c.recv_into(sink)
        elif target > sent[c]:
            try:
                sent[c] += c.send(zeros[: min(target - sent[c], len(zeros))])
            except BlockingIOError:
                pass
    for c in out:
        if sent[c] >= target and c in writing:
            sel.unregister(c)
            writing.discard(c)
    if not writing and all(v >= target for v in got.values()) and (not ACK or all(unacked(c) == 0 for c in out)):
        phase += 1
        marks.append(time.time())
        for c in out:
            sel.register(c, selectors.EVENT_WRITE)
            writing.add(c)
w = P // 4
elapsed = marks[-1] - marks[w - 1]
gbps = (n - 1) * stripe * (P - w) / elapsed * 8 / 1e9
print("node %d: %d phases of %d B a pair, %.1f ms a phase, busiest NIC %.4f Gbps, %.3f of %s" % (me, P - w, B, elapsed / (P - w) * 1000, gbps, gbps / GOOD, GOOD))
