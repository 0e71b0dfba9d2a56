# SPDX-License-Identifier: MIT
# UDP probes for tests/lab/engine.sh (the endpoint engine's figures).
#   engprobe.py sink ADDR PORT IDLE_S [AFTER_FILE]
#       count datagrams "seq send_ns" until IDLE_S without one; prints JSON:
#       total, unique, dup_fraction, rfc3550_jitter_ms (RFC 3550 6.4.1
#       J += (|D| - J)/16, averaged over the run after 20 packets),
#       mean_abs_d_ms, owd_ms (one-way delay quantiles 0/1/50/99/100 %),
#       with $ENGPROBE_OWD_CAP_MS the jitter over packets under that one-way
#       delay (rfc3550_jitter_capped_ms, host_delayed = the others), and with AFTER_FILE (a CLOCK_MONOTONIC ns value) the
#       first arrival at or after that time: first_after_ms
#   engprobe.py send ADDR PORT N GAP_S
#   engprobe.py echo ADDR PORT IDLE_S      echo server
#   engprobe.py rtloss ADDR PORT N GAP_S   N probes to an echo server; JSON
#       sent, unique answers, loss_fraction
import json, os, socket, sys, time
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "sink":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((addr, port))
    s.settimeout(float(sys.argv[4]))
    seen, total, arr = set(), 0, []
    try:
        while True:
            d, _ = s.recvfrom(2048)
            r = time.monotonic_ns()
            total += 1
            seq, snd = (int(x) for x in d.split()[:2])
            if seq not in seen:
                seen.add(seq)
                arr.append((r, snd))
    except socket.timeout:
        pass
    out = {"total": total, "unique": len(seen),
           "dup_fraction": (total - len(seen)) / len(seen) if seen else 0}
    j, js, ds = 0.0, [], []
    for i in range(1, len(arr)):
        d = (arr[i][0] - arr[i - 1][0]) - (arr[i][1] - arr[i - 1][1])
        ds.append(abs(d))
        j += (abs(d) - j) / 16
        if i >= 20:
            js.append(j)
    out["rfc3550_jitter_ms"] = sum(js) / len(js) / 1e6 if js else 0
    out["mean_abs_d_ms"] = sum(ds) / len(ds) / 1e6 if ds else 0
    # $ENGPROBE_OWD_CAP_MS: the same over the packets whose one-way delay is
    # at most the cap (the dial's delay + jitter + margin); the others were
    # held by the host (scheduling), counted in host_delayed
    cap = float(os.environ.get("ENGPROBE_OWD_CAP_MS", "0")) * 1e6
    if cap:
        ok = [x for x in arr if x[0] - x[1] <= cap]
        j, js = 0.0, []
        for i in range(1, len(ok)):
            d = (ok[i][0] - ok[i - 1][0]) - (ok[i][1] - ok[i - 1][1])
            j += (abs(d) - j) / 16
            if i >= 20:
                js.append(j)
        out["host_delayed"] = len(arr) - len(ok)
        out["rfc3550_jitter_capped_ms"] = sum(js) / len(js) / 1e6 if js else 0
    if arr:
        owd = sorted((r - snd) / 1e6 for r, snd in arr)
        out["owd_ms"] = [round(owd[int(q * (len(owd) - 1))], 3) for q in (0, 0.01, 0.5, 0.99, 1)]
    if len(sys.argv) > 5:
        t = int(open(sys.argv[5]).read())
        late = [r for r, _ in arr if r >= t]
        out["first_after_ms"] = (min(late) - t) / 1e6 if late else None
    print(json.dumps(out))
elif mode == "send":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    n, gap = int(sys.argv[4]), float(sys.argv[5])
    t0 = time.monotonic()
    for i in range(n):
        s.sendto(b"%d %d" % (i, time.monotonic_ns()), (addr, port))
        w = t0 + (i + 1) * gap - time.monotonic()
        if w > 0:
            time.sleep(w)
elif mode == "echo":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    s.settimeout(float(sys.argv[4]))
    try:
        while True:
            d, a = s.recvfrom(2048)
            s.sendto(d, a)
    except socket.timeout:
        pass
elif mode == "rtloss":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.setblocking(False)
    n, gap = int(sys.argv[4]), float(sys.argv[5])
    got = set()
    def drain():
        while True:
            try:
                d, _ = s.recvfrom(2048)
                got.add(int(d.split()[0]))
            except BlockingIOError:
                return
    t0 = time.monotonic()
    for i in range(n):
        s.sendto(b"%d %d" % (i, time.monotonic_ns()), (addr, port))
        drain()
        w = t0 + (i + 1) * gap - time.monotonic()
        if w > 0:
            time.sleep(w)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        drain()
        time.sleep(0.01)
    print(json.dumps({"sent": n, "unique": len(got), "loss_fraction": 1 - len(got) / n}))
