# SPDX-License-Identifier: MIT
# UDP echo RTT probes for the lab suites (bridge.sh, bridgectl.sh, engine.sh).
#   rtt.py server ADDR PORT IDLE_S            echo until IDLE_S without a datagram
#   rtt.py client ADDR PORT N GAP_S [TIMEOUT_S]
# The client prints "median min max n sd iqr p2.5 p97.5 p5 p95" in ms (n =
# answered probes; "nan ... n ..." and exit 1 when fewer than 2 came back).
#
# What is measured is the network's round trip, as ping and TWAMP (RFC 5357)
# measure it, not the two Pythons' wake-ups: the reply's arrival is the
# kernel's receive time (SO_TIMESTAMPNS), and the reflector returns how long
# it held the probe (its kernel receive time to its send), which the client
# takes off, as TWAMP's reflector timestamps are. On an idle VM a process
# woken by a datagram runs 0.1-0.6 ms after it came; that would otherwise
# count as path delay.
import socket, struct, sys, time, statistics
SO_TIMESTAMPNS = 35     # Linux, asm-generic/socket.h
fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET   # IPv6 when ADDR is one


def recv_stamped(s):
    """(payload, sender, kernel receive time in ns or the time now)"""
    d, anc, _, a = s.recvmsg(2048, 64)
    for lvl, typ, v in anc:
        if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(v) >= 16:
            sec, nsec = struct.unpack("qq", v[:16])
            return d, a, sec * 1000000000 + nsec
    return d, a, time.time_ns()


def socket_stamped():
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    return s


if sys.argv[1] == "server":
    s = socket_stamped()
    s.bind((sys.argv[2], int(sys.argv[3])))
    s.settimeout(float(sys.argv[4]))
    try:
        while True:
            d, a, t_rx = recv_stamped(s)
            s.sendto(d + b"|%d" % (time.time_ns() - t_rx), a)
    except socket.timeout:
        pass
    sys.exit(0)
host, port, n, gap = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
s = socket_stamped()
s.settimeout(float(sys.argv[6]) if len(sys.argv) > 6 else 1.5)
r = []
for i in range(-3, n):   # 3 warm-up probes (neighbour resolution) not counted
    msg = str(i).encode()
    t = time.time_ns()
    s.sendto(msg, (host, port))
    try:
        while True:
            d, _, t_rx = recv_stamped(s)
            body, _, held = d.partition(b"|")
            if body == msg:
                break
        if i >= 0:
            r.append((t_rx - t - int(held or 0)) / 1e6)
    except socket.timeout:
        pass
    time.sleep(gap)
if len(r) < 2:
    print("nan nan nan %d nan nan nan nan nan nan" % len(r)); sys.exit(1)
q = statistics.quantiles(r, n=40)   # q[0] = 2.5%, q[9] = 25%, q[29] = 75%, q[38] = 97.5%
print("%.3f %.3f %.3f %d %.3f %.3f %.3f %.3f %.3f %.3f" % (statistics.median(r), min(r), max(r), len(r),
      statistics.stdev(r), q[29] - q[9], q[0], q[38], q[1], q[37]))
