#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: MIT

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: linklab_test
short_description: Measure throughput with linklab test (iperf3-compatible) and return its JSON
description:
  - With I(mode=client) (the default), runs C(linklab test -c SERVER -J) on
    the target and returns the iperf3-style JSON document as C(result) and
    as the fact named by I(fact), with the SUM rates pulled out
    (C(sum_sent_bps), C(sum_received_bps)).
  - With I(measure=verify) or I(measure=rpm) the client runs C(linklab
    verify -J) (the dial both peers hold against what the wire does, one
    row per quantity, C(ok) when every row is) or C(linklab rpm -J)
    (responsiveness under load, with C(rpm), C(idle_rtt_ms),
    C(working_rtt_ms) and C(confidence)) instead of a throughput test.
  - With I(mode=serve), starts C(linklab serve -1) on the target in the
    background for one test (it exits after serving it, and is stopped
    after I(serve_timeout) seconds in any case) and returns once the port
    accepts connections. Delegate this to the partner host just before the
    client task to have a server for the duration of the test.
  - With I(peer), linklab itself starts the server on that host over SSH for
    the duration of the test (C(linklab test --peer HOST)); the target then
    needs an SSH login to the peer.
  - Option problems are reported by linklab all at once (option, value,
    accepted range) and fail the task before anything connects.
version_added: "0.1.0"
author:
  - linklab contributors
requirements:
  - linklab on the target (the role C(linklab.lab.linklab) installs it)
options:
  mode:
    description: C(client) runs a test; C(serve) starts a one-shot server.
    type: str
    choices: [client, serve]
    default: client
  measure:
    description: What the client runs, C(test) (throughput, iperf3 JSON), C(verify) or C(rpm). I(duration), I(parallel), I(reverse), I(bidir) and I(congestion) apply to C(rpm) as to C(test); C(verify) takes I(duration) (2 .. 300 s per measurement).
    type: str
    choices: [test, verify, rpm]
    default: test
  server:
    description: Address of the server (C(linklab serve) or C(iperf3 -s)); required for I(mode=client) unless I(peer) is given.
    type: str
  peer:
    description: ssh_config alias or C([user@]host[:port]) on which linklab starts the server for the test (C(linklab test --peer)).
    type: str
  port:
    description: Server port, 1 .. 65535.
    type: int
    default: 5201
  bind:
    description: For I(mode=serve), the local address to listen on (C(-B)); default all.
    type: str
  serve_timeout:
    description: For I(mode=serve), seconds after which the server is stopped whatever it is doing (longer than the test).
    type: int
    default: 120
  duration:
    description: Test duration in seconds (C(-t)), 1 .. 86400.
    type: int
    default: 10
  parallel:
    description: Parallel streams (C(-P)), 1 .. 128.
    type: int
    default: 1
  reverse:
    description: The server sends (C(-R)).
    type: bool
    default: false
  bidir:
    description: Both directions at once (C(--bidir)).
    type: bool
    default: false
  udp:
    description: UDP instead of TCP (C(-u)).
    type: bool
    default: false
  bitrate:
    description: Target rate per stream (C(-b)), K/M/G 1000-based, for example C(20M).
    type: str
  omit:
    description: Seconds omitted from the totals at the start (C(-O)), 0 .. 600.
    type: int
  interval:
    description: Report interval in seconds (C(-i)), 0.1 .. 60.
    type: float
  congestion:
    description: TCP congestion control (C(-C)), one of the host's available ones.
    type: str
  extra_args:
    description: More C(linklab test) options, one list item per argument (see C(linklab test -h)).
    type: list
    elements: str
    default: []
  fact:
    description: Name of the fact the JSON document is returned under (I(mode=client)).
    type: str
    default: linklab_test
  executable:
    description: Path of linklab on the target. Default, C(linklab) from the C(PATH) of the login.
    type: path
notes:
  - A test changes nothing on the host, so a client task reports C(changed=false); starting a server reports C(changed=true).
  - In check mode nothing is run.
attributes:
  check_mode:
    support: full
    description: nothing is run in check mode.
  diff_mode:
    support: none
seealso:
  - module: linklab.lab.linklab_impair
'''

EXAMPLES = r'''
- name: a server on the partner for the next test
  linklab.lab.linklab_test:
    mode: serve
  delegate_to: "{{ linklab_peer }}"

- name: seed 000's first test, 1 TCP stream for 10 s
  linklab.lab.linklab_test:
    server: "{{ linklab_peer_addr }}"
    duration: 10
  register: t

- name: show the rate
  ansible.builtin.debug:
    msg: "{{ (t.sum_received_bps / 1e6) | round(1) }} Mbit/s"

- name: linklab starts the server over SSH for the duration
  linklab.lab.linklab_test:
    peer: pair01-b
    parallel: 4
'''

RETURN = r'''
result:
  description: The C(linklab test -J) document (iperf3 3.12 layout - start, intervals, end), or the C(verify -J) / C(rpm -J) one.
  returned: mode is client
  type: dict
ok:
  description: I(measure=verify) - every row of the verify table is ok.
  returned: measure is verify
  type: bool
not_ok:
  description: I(measure=verify) - the rows that are not ok, as C(quantity direction).
  returned: measure is verify
  type: list
  elements: str
rpm:
  description: I(measure=rpm) - round trips per minute under load (60000 / working RTT in ms).
  returned: measure is rpm
  type: float
sum_sent_bps:
  description: C(end.sum_sent.bits_per_second) (UDP, C(end.sum)) - the sender's SUM rate.
  returned: measure is test
  type: float
  sample: 47800000.0
sum_received_bps:
  description: C(end.sum_received.bits_per_second) (UDP, C(end.sum)) - the receiver's SUM goodput.
  returned: measure is test
  type: float
  sample: 47700000.0
retransmits:
  description: C(end.sum_sent.retransmits) (TCP), 0 when not reported.
  returned: measure is test
  type: int
ansible_facts:
  description: The document under the name I(fact).
  returned: mode is client
  type: dict
pid:
  description: Process id of the server started.
  returned: mode is serve
  type: int
port:
  description: The port the server listens on.
  returned: mode is serve
  type: int
log:
  description: File the server's output goes to.
  returned: mode is serve
  type: str
'''

import os
import socket
import subprocess
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.linklab.lab.plugins.module_utils.linklab import (
    find_linklab, messages, run_json)


def listening(addr, port):
    try:
        s = socket.create_connection((addr, port), timeout=0.5)
    except (OSError, socket.error):
        return False
    s.close()
    return True


def serve(module, exe):
    p = module.params
    if module.check_mode:
        module.exit_json(changed=True, msg="check mode: no server started")
    fd, log = tempfile.mkstemp(prefix='linklab-serve-', suffix='.log')
    argv = [exe, 'serve', '-1', '-p', str(p['port'])]
    if p['bind']:
        argv += ['-B', p['bind']]
    timeout = module.get_bin_path('timeout', required=False)
    if timeout:
        argv = [timeout, str(p['serve_timeout'])] + argv
    with open(os.devnull, 'rb') as devnull:
        proc = subprocess.Popen(argv, stdin=devnull, stdout=fd, stderr=fd,
                                close_fds=True, start_new_session=True)
    os.close(fd)
    probe = p['bind'] or '127.0.0.1'
    deadline = time.time() + 10
    while time.time() < deadline:
        if proc.poll() is not None:
            with open(log) as f:
                text = f.read()
            module.fail_json(msg="linklab serve exited at once: %s"
                             % (messages(text, 'linklab serve: ') or
                                'status %d' % proc.returncode), cmd=argv)
        if listening(probe, p['port']):
            module.exit_json(changed=True, pid=proc.pid, port=p['port'],
                             log=log, cmd=argv)
        time.sleep(0.1)
    module.fail_json(msg="linklab serve (pid %d) does not listen on %s port %d "
                         "after 10 s" % (proc.pid, probe, p['port']), log=log)


def sums(doc):
    end = doc.get('end') or {}
    sent = end.get('sum_sent') or end.get('sum') or {}
    recv = end.get('sum_received') or end.get('sum') or {}
    return (float(sent.get('bits_per_second', 0.0)),
            float(recv.get('bits_per_second', 0.0)),
            int(sent.get('retransmits', 0) or 0))


def measure(module, exe):
    """linklab verify -J / rpm -J: the document as the result; verify's
    exit 1 (a row not ok) is a result, not a failure."""
    p = module.params
    cmd = p['measure']
    argv = [exe, cmd, '-J', '-t', str(p['duration'])]
    if cmd == 'rpm':
        argv += ['-P', str(p['parallel'])]
        for flag, opt in (('reverse', '-R'), ('bidir', '--bidir')):
            if p[flag]:
                argv.append(opt)
        if p['congestion']:
            argv += ['-C', p['congestion']]
    argv += ['--peer', p['peer']] if p['peer'] else ['-c', p['server'], '-p', str(p['port'])]
    argv += p['extra_args']
    if module.check_mode:
        module.exit_json(changed=False, msg="check mode: %s not run" % cmd, cmd=argv)
    rc, doc, err = run_json(module, argv, cmd, check_rc=False)
    if not isinstance(doc, dict) or doc.get('error') or rc not in (0, 1) or (rc == 1 and cmd == 'rpm'):
        text = doc.get('error') if isinstance(doc, dict) else None
        module.fail_json(msg="linklab %s failed: %s"
                         % (cmd, text or messages(err, 'linklab %s: ' % cmd) or
                            'exit status %d' % rc),
                         rc=rc, stderr=err, cmd=argv, result=doc)
    extra = {}
    if cmd == 'verify':
        extra['ok'] = bool(doc.get('ok'))
        extra['not_ok'] = [c.get('quantity', '?') + ' ' + c.get('direction', '')
                           for c in doc.get('checks', []) if not c.get('ok')]
    else:
        extra['rpm'] = doc.get('rpm')
    module.exit_json(changed=False, result=doc, cmd=argv,
                     ansible_facts={p['fact']: doc}, **extra)


def client(module, exe):
    p = module.params
    if not p['server'] and not p['peer']:
        module.fail_json(msg="mode=client needs server (an address) or peer "
                             "(a host linklab starts the server on over SSH)")
    if p['measure'] != 'test':
        measure(module, exe)
    argv = [exe, 'test', '-J', '-t', str(p['duration']), '-P', str(p['parallel'])]
    if p['peer']:
        argv += ['--peer', p['peer']]
    else:
        argv += ['-c', p['server'], '-p', str(p['port'])]
    for flag, opt in (('reverse', '-R'), ('bidir', '--bidir'), ('udp', '-u')):
        if p[flag]:
            argv.append(opt)
    for key, opt in (('bitrate', '-b'), ('omit', '-O'), ('interval', '-i'),
                     ('congestion', '-C')):
        if p[key] is not None:
            argv += [opt, str(p[key])]
    argv += p['extra_args']
    if module.check_mode:
        module.exit_json(changed=False, msg="check mode: test not run", cmd=argv)
    rc, doc, err = run_json(module, argv, 'test', check_rc=False)
    if rc != 0 or not isinstance(doc, dict) or doc.get('error'):
        text = (doc or {}).get('error') if isinstance(doc, dict) else None
        module.fail_json(msg="linklab test failed: %s"
                         % (text or messages(err, 'linklab test: ') or
                            'exit status %d' % rc),
                         rc=rc, stderr=err, cmd=argv, result=doc)
    sent, recv, retr = sums(doc)
    module.exit_json(changed=False, result=doc, sum_sent_bps=sent,
                     sum_received_bps=recv, retransmits=retr, cmd=argv,
                     ansible_facts={p['fact']: doc})


def argument_spec():
    """The module's options (DOCUMENTATION lists the same)."""
    return dict(
        mode=dict(type='str', default='client', choices=['client', 'serve']),
        measure=dict(type='str', default='test', choices=['test', 'verify', 'rpm']),
        server=dict(type='str'),
        peer=dict(type='str'),
        port=dict(type='int', default=5201),
        bind=dict(type='str'),
        serve_timeout=dict(type='int', default=120),
        duration=dict(type='int', default=10),
        parallel=dict(type='int', default=1),
        reverse=dict(type='bool', default=False),
        bidir=dict(type='bool', default=False),
        udp=dict(type='bool', default=False),
        bitrate=dict(type='str'),
        omit=dict(type='int'),
        interval=dict(type='float'),
        congestion=dict(type='str'),
        extra_args=dict(type='list', elements='str', default=[]),
        fact=dict(type='str', default='linklab_test'),
        executable=dict(type='path'),
    )


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        mutually_exclusive=[('server', 'peer')],
        supports_check_mode=True,
    )
    exe = find_linklab(module)
    if module.params['mode'] == 'serve':
        serve(module, exe)
    client(module, exe)


if __name__ == '__main__':
    main()
