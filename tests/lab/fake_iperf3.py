#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fake_iperf3.py - a hostile iperf3 peer on loopback for tests/lab/hostile.sh:
#   server PORT  - accept one client, run the exchange up to the results and
#                  answer them with bytes that are not JSON but terminal
#                  escape sequences (ESC ] 2 ; PWN BEL ESC [ 2 J ...)
#   client PORT  - connect to a server, send a cookie, answer PARAM_EXCHANGE
#                  with the same escape bytes instead of parameters
# Prints "fake: ..." lines on stderr for the test log; exits 0 when its part
# of the exchange was done.
import socket
import struct
import sys
import threading

EVIL = b"\x1b]2;PWN\x07\x1b[2J\xc2\x9b31m\x7fevil"
COOKIE = b"hostilehostilehostilehostilehostile1\0"   # 37 bytes


def read_full(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("peer closed after %d of %d bytes" % (len(b), n))
        b += c
    return b


def read_json(s):
    n = struct.unpack(">I", read_full(s, 4))[0]
    return read_full(s, n)


def send_raw_json(s, body):
    s.sendall(struct.pack(">I", len(body)) + body)


def state(s, v):
    s.sendall(struct.pack("b", v))


def server(port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(8)
    print("fake: listening", file=sys.stderr, flush=True)
    ctl, _ = ls.accept()
    read_full(ctl, 37)
    state(ctl, 9)                       # PARAM_EXCHANGE
    params = read_json(ctl)
    print("fake: params %d bytes" % len(params), file=sys.stderr, flush=True)
    state(ctl, 10)                      # CREATE_STREAMS
    st, _ = ls.accept()
    read_full(st, 37)
    drain = threading.Thread(target=lambda: [None for _ in iter(lambda: st.recv(65536), b"")],
                             daemon=True)
    drain.start()
    state(ctl, 1)                       # TEST_START
    state(ctl, 2)                       # TEST_RUNNING
    while True:                         # until the client's TEST_END
        b = read_full(ctl, 1)
        if b == b"\x04":
            break
    state(ctl, 13)                      # EXCHANGE_RESULTS
    read_json(ctl)                      # the client's results
    send_raw_json(ctl, EVIL)            # ours: escape bytes, not JSON
    print("fake: sent escapes as results", file=sys.stderr, flush=True)
    try:
        ctl.recv(1)
    except OSError:
        pass
    return 0


def client(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(COOKIE)
    b = read_full(s, 1)
    if b != b"\x09":
        print("fake: expected PARAM_EXCHANGE, got %r" % b, file=sys.stderr)
        return 1
    send_raw_json(s, EVIL)
    print("fake: sent escapes as parameters", file=sys.stderr, flush=True)
    try:
        s.recv(16)
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    sys.exit(server(port) if mode == "server" else client(port))
