# SPDX-License-Identifier: MIT
# UDP echo RTT probes for the lab suites (bridge.sh, bridgectl.sh).
#   rtt.py server ADDR PORT IDLE_S            echo until IDLE_S without a datagram
#   rtt.py client ADDR PORT N GAP_S [TIMEOUT_S]
# The client prints "median min max n sd iqr p2.5 p97.5 p5 p95" in ms (n =
# answered probes; "nan ... n ..." and exit 1 when fewer than 2 came back).
import socket, sys, time, statistics
fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET   # IPv6 when ADDR is one
if sys.argv[1] == "server":
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((sys.argv[2], int(sys.argv[3])))
    s.settimeout(float(sys.argv[4]))
    try:
        while True:
            d, a = s.recvfrom(2048)
            s.sendto(d, a)
    except socket.timeout:
        pass
    sys.exit(0)
host, port, n, gap = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(float(sys.argv[6]) if len(sys.argv) > 6 else 1.5)
r = []
for i in range(-3, n):   # 3 warm-up probes (neighbour resolution) not counted
    msg = str(i).encode()
    t = time.monotonic_ns()
    s.sendto(msg, (host, port))
    try:
        while True:
            d, _ = s.recvfrom(2048)
            if d == msg:
                break
        if i >= 0:
            r.append((time.monotonic_ns() - t) / 1e6)
    except socket.timeout:
        pass
    time.sleep(gap)
if len(r) < 2:
    print("nan nan nan %d nan nan nan nan nan nan" % len(r)); sys.exit(1)
q = statistics.quantiles(r, n=40)   # q[0] = 2.5%, q[9] = 25%, q[29] = 75%, q[38] = 97.5%
print("%.3f %.3f %.3f %d %.3f %.3f %.3f %.3f %.3f %.3f" % (statistics.median(r), min(r), max(r), len(r),
      statistics.stdev(r), q[29] - q[9], q[0], q[38], q[1], q[37]))
