#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: MIT

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: linklab_impair
short_description: Dial a network impairment (rate, delay, loss, ...) on an interface with linklab
description:
  - Runs C(linklab) on the target host to put an impairment on one network
    interface, as C(linklab apply --dev DEV) does, or to restore what was
    there before linklab first changed it (C(linklab clear), from linklab's
    journal).
  - Idempotent. The module first runs C(linklab apply --check -J), which reads
    the qdisc tree back from the kernel, folds it into a dial and compares
    the qdisc plan it implies with the plan of the requested dial (burst and
    limits within tc's 1% rounding). Only when they differ does it apply,
    so C(changed) is true only when the kernel's state changes.
  - Check mode reports what would change and touches nothing. Diff mode
    shows the kernel's tree before and after in tc terms
    (C(tbf rate 50mbit burst 25000b limit 337500b)).
  - Every dial value is checked by linklab, all problems at once; a refused
    dial fails the task with linklab's message (field, value, accepted
    range) and changes nothing on that host.
  - The dial options carry linklab's names with C(_) for C(-) and take tc
    units as strings (C(50mbit), C(100ms), C(1%)); see
    C(linklab apply -h) and the linklab(1) manual.
version_added: "0.1.0"
author:
  - linklab contributors
requirements:
  - linklab on the target (the role C(linklab.lab.linklab) installs it)
  - C(ip) (iproute2) on the target, to find the interface from I(peer_addr)
  - root (CAP_NET_ADMIN) on the target to change qdiscs
options:
  state:
    description:
      - C(present) puts the dial on I(dev); C(absent) restores the root
        qdisc linklab journalled before it first changed I(dev) (a no-op,
        not changed, when linklab never touched it).
    type: str
    choices: [present, absent]
    default: present
  dev:
    description:
      - Interface to impair.
      - Default, the interface whose route reaches I(peer_addr), else the
        interface of the default route.
    type: str
  peer_addr:
    description:
      - Address of the other end of the link (an IPv4 or IPv6 literal),
        used only to pick I(dev) when it is not given.
    type: str
  profile:
    description:
      - A linklab profile name (C(linklab profile list)), for example
        C(rate-50mbit); its C([dial]) (or C([a])) section is applied. Dial
        options given as well override the profile's fields.
    type: str
  engine:
    description:
      - Which engine carries the impairment, passed to linklab as
        C(--engine). C(kernel) is the qdisc path (tbf/netem); C(user) is
        linklab's endpoint engine where the linklab on the host has one;
        C(auto) lets linklab choose.
      - Not given, linklab's own default is used. A linklab without
        C(--engine) refuses the option, and the task fails with its message.
    type: str
    choices: [auto, kernel, user]
  executable:
    description:
      - Path of linklab on the target. Default, C(linklab) from the C(PATH)
        of the login (the role installs it in C(/usr/local/bin)).
    type: path
  rate:
    description: tbf rate, C(8bit) .. C(4tbit) (C(mbit) is bit/s, C(mbps) bytes/s).
    type: str
  burst:
    description: tbf bucket size, C(1b) .. C(4294967295b); default derived from the rate and HZ.
    type: str
  tbf_limit:
    description: tbf queue in bytes (linklab C(--tbf-limit)); default rate x latency + burst.
    type: str
  latency:
    description: tbf queueing latency used to size its queue, C(1us) .. C(274s) (default C(50ms)).
    type: str
  delay:
    description: netem one-way delay, C(0ns) .. C(274s).
    type: str
  jitter:
    description: netem jitter, C(0ns) .. C(2.147483647s); needs I(delay).
    type: str
  delay_corr:
    description: delay correlation, C(0%) .. C(100%) (linklab C(--delay-corr)).
    type: str
  loss:
    description: random loss, C(0%) .. C(100%).
    type: str
  loss_corr:
    description: loss correlation, C(0%) .. C(100%).
    type: str
  duplicate:
    description: duplication probability, C(0%) .. C(100%).
    type: str
  dup_corr:
    description: duplication correlation, C(0%) .. C(100%).
    type: str
  corrupt:
    description: corruption probability, C(0%) .. C(100%).
    type: str
  corrupt_corr:
    description: corruption correlation, C(0%) .. C(100%).
    type: str
  reorder:
    description: reordering probability, C(0%) .. C(100%); needs I(delay).
    type: str
  reorder_corr:
    description: reordering correlation, C(0%) .. C(100%).
    type: str
  gap:
    description: reorder every N-th packet, 1 .. 4294967295; needs I(reorder).
    type: int
  limit:
    description: netem queue in packets, 1 .. 4294967295; default derived from rate x delay.
    type: int
  distribution:
    description: netem delay distribution.
    type: str
    choices: [uniform, normal, pareto, paretonormal]
  loss_state:
    description: 4-state Markov loss, C(P13[,P31[,P32[,P23[,P14]]]]) percents.
    type: str
  loss_gemodel:
    description: Gilbert-Elliott loss, C(P[,R[,1-H[,1-K]]]) percents.
    type: str
  ecn:
    description: mark CE instead of dropping (needs a loss).
    type: bool
  netem_rate:
    description: netem's own rate limit, C(8bit) .. C(4tbit).
    type: str
  packet_overhead:
    description: bytes added per packet by I(netem_rate) accounting.
    type: int
  cell_size:
    description: cell size in bytes for I(netem_rate) accounting.
    type: int
  cell_overhead:
    description: bytes added per cell.
    type: int
  slot:
    description: netem slotting, C(MIN[,MAX]) times.
    type: str
  slot_packets:
    description: packets per slot, 1 .. 2147483647.
    type: int
  slot_bytes:
    description: bytes per slot, C(1b) .. C(2147483647b).
    type: str
  seed:
    description: netem random seed (kernel 6.6 and later).
    type: int
  direction:
    description: C(egress) (the interface's own root) or C(ingress) (through an IFB device).
    type: str
    choices: [egress, ingress]
  dst:
    description: only traffic to this address or prefix (C(A.B.C.D[/N]) or IPv6).
    type: str
  dport:
    description: only traffic to this TCP/UDP port, 1 .. 65535.
    type: int
notes:
  - linklab runs on the target host itself, so each host of a play dials its
    own interface; use the role C(linklab.lab.linklab) to install it.
  - The kernel never dumps netem's distribution table, so a change of
    I(distribution) alone is not seen by the comparison.
  - On a kernel without C(sch_netem), delay, jitter and loss are refused by
    linklab with its C(modprobe sch_netem) hint unless I(engine) selects an
    engine that does not need netem.
attributes:
  check_mode:
    support: full
    description: C(linklab apply --check) compares and changes nothing.
  diff_mode:
    support: full
    description: before/after qdisc trees in tc terms.
seealso:
  - module: linklab.lab.linklab_test
'''

EXAMPLES = r'''
- name: 50 Mbit/s on the interface towards the partner
  linklab.lab.linklab_impair:
    peer_addr: 10.0.1.2
    rate: 50mbit

- name: the classroom profile on eth1
  linklab.lab.linklab_impair:
    dev: eth1
    profile: rate-50mbit

- name: delay and loss through linklab's endpoint engine where netem is missing
  linklab.lab.linklab_impair:
    dev: eth1
    delay: 50ms
    loss: 1%
    engine: user

- name: put eth1 back as it was before linklab
  linklab.lab.linklab_impair:
    dev: eth1
    state: absent
'''

RETURN = r'''
dev:
  description: The interface acted on.
  returned: always
  type: str
  sample: eth1
dial:
  description: >-
    The dial the kernel holds on I(dev) after the task, read back, in
    linklab's field names and exact tc units (burst and limits derived from
    the rate are left out). Empty when the root qdisc is a kernel default.
  returned: always
  type: dict
  sample: {"rate": "50mbit"}
summary:
  description: The qdisc tree on I(dev) after the task, in tc words.
  returned: always
  type: str
  sample: tbf rate 50mbit burst 25000b limit 337500b
qdiscs:
  description: The tree as C(linklab show -J) reports it (kind, handle, parent, parameters, counters).
  returned: always
  type: list
  elements: dict
before:
  description: The tree before the task, in tc words.
  returned: always
  type: str
  sample: noqueue
after:
  description: The tree the task leaves (or, in check mode, would leave), in tc words.
  returned: always
  type: str
  sample: tbf rate 50mbit burst 25000b limit 337500b
commands:
  description: The tc command lines equivalent to what linklab applied (or would apply); empty when nothing changes.
  returned: when state is present
  type: list
  elements: str
journalled:
  description: Whether linklab's journal holds the original root qdisc of I(dev) after the task (C(state=absent) would restore it).
  returned: always
  type: bool
ingress:
  description: >-
    When I(dev) has an ingress qdisc, the IFB device linklab shapes
    ingress traffic on, with its C(qdiscs) and read-back C(dial)
    (C(linklab show -J)'s C(ingress) object).
  returned: when I(dev) has an ingress qdisc
  type: dict
cmd:
  description: The linklab apply command line (without C(--check) or C(-J)).
  returned: when state is present
  type: list
  elements: str
original:
  description: The root qdisc linklab journalled before it first changed I(dev).
  returned: when journalled
  type: str
  sample: noqueue (kernel default)
'''

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.linklab.lab.plugins.module_utils.linklab import (
    find_linklab, run_json)

# module option -> linklab field (--NAME)
DIAL_STR = ['rate', 'burst', 'tbf_limit', 'latency', 'delay', 'jitter',
            'delay_corr', 'loss', 'loss_corr', 'duplicate', 'dup_corr',
            'corrupt', 'corrupt_corr', 'reorder', 'reorder_corr',
            'distribution', 'loss_state', 'loss_gemodel', 'netem_rate',
            'slot', 'slot_bytes', 'direction', 'dst']
DIAL_INT = ['gap', 'limit', 'packet_overhead', 'cell_size', 'cell_overhead',
            'slot_packets', 'seed', 'dport']
DIAL_CHOICES = {'distribution': ['uniform', 'normal', 'pareto', 'paretonormal'],
                'direction': ['egress', 'ingress']}


def dial_args(params):
    args = []
    for name in DIAL_STR + DIAL_INT:
        v = params.get(name)
        if v is not None:
            args += ['--' + name.replace('_', '-'), str(v)]
    if params.get('ecn') is not None:
        args += ['--ecn', 'on' if params['ecn'] else 'off']
    return args


def route_dev(module, addr):
    ip = module.get_bin_path('ip', required=True)
    argv = [ip, '-j', 'route', 'get', addr] if addr else \
        [ip, '-j', 'route', 'show', 'default']
    rc, out, err = module.run_command(argv)
    try:
        routes = json.loads(out) if rc == 0 else []
    except ValueError:
        routes = []
    for r in routes:
        if r.get('dev'):
            return r['dev']
    if addr:
        module.fail_json(msg="no interface routes to peer_addr %s (%s); give dev"
                             % (addr, err.strip() or 'no route'))
    module.fail_json(msg="no dev given, no peer_addr and no default route: give dev")


def show(module, exe, dev):
    _, doc, _ = run_json(module, [exe, 'show', '--dev', dev, '-J'], 'show')
    side = (doc or {}).get('a') or {}
    if not side:
        module.fail_json(msg="linklab show -J reported no side for %s" % dev,
                         doc=doc)
    return side


def readback(result, side):
    result['dial'] = side.get('dial', {})
    result['summary'] = side.get('summary', '')
    result['qdiscs'] = side.get('qdiscs', [])
    result['journalled'] = bool(side.get('journalled', False))
    if side.get('original'):
        result['original'] = side['original']
    if side.get('ingress'):
        result['ingress'] = side['ingress']


def present(module, exe, dev, result):
    p = module.params
    extra = dial_args(p)
    if p.get('profile'):
        extra = ['--profile', p['profile']] + extra
    if not extra:
        module.fail_json(msg="nothing to dial: give a profile or at least one "
                             "dial option (rate, delay, loss, ...); "
                             "state=absent restores the interface")
    if p.get('engine'):
        extra += ['--engine', p['engine']]
    base = [exe, 'apply', '--dev', dev]
    result['cmd'] = base + extra
    _, doc, _ = run_json(module, base + ['--check', '-J'] + extra, 'apply')
    side = (doc or {}).get('a') or {}
    if 'changed' not in side:
        module.fail_json(msg="linklab apply --check -J gave no answer for %s "
                             "(a linklab without --check? update it with the "
                             "role linklab.lab.linklab)" % dev, doc=doc)
    changed = bool(side['changed'])
    result['before'] = side['before']['summary']
    result['after'] = side['after']['summary']
    result['commands'] = side['after'].get('commands', [])
    result['changed'] = changed
    result['diff'] = {'before_header': '%s (kernel)' % dev,
                      'after_header': '%s (dial)' % dev,
                      'before': 'dev %s: %s\n' % (dev, result['before']),
                      'after': 'dev %s: %s\n' % (dev, result['after'])}
    if changed and not module.check_mode:
        run_json(module, base + ['-J'] + extra, 'apply')
        # the next run must find nothing to do
        _, again, _ = run_json(module, base + ['--check', '-J'] + extra, 'apply')
        if ((again or {}).get('a') or {}).get('changed', True):
            module.warn("after apply, linklab still reads back a tree on %s "
                        "that differs from the dial (%s); the next run will "
                        "report changed again" % (dev, result['after']))
    if module.check_mode:
        readback(result, side['before'])
        result['journalled'] = bool(side.get('journalled', False))
        return
    now = show(module, exe, dev)
    readback(result, now)
    result['after'] = now.get('summary', result['after'])


def absent(module, exe, dev, result):
    side = show(module, exe, dev)
    if 'journalled' not in side:
        module.fail_json(msg="linklab show -J does not say whether linklab "
                             "changed %s (a linklab without the journal "
                             "flag? update it with the role "
                             "linklab.lab.linklab)" % dev)
    changed = bool(side['journalled'])
    result['changed'] = changed
    result['before'] = side.get('summary', '')
    result['after'] = ('%s, restored by linklab clear' % side.get('original')
                       if changed else result['before'])
    result['diff'] = {'before_header': '%s (kernel)' % dev,
                      'after_header': '%s (restored)' % dev,
                      'before': 'dev %s: %s\n' % (dev, result['before']),
                      'after': 'dev %s: %s\n' % (dev, result['after'])}
    if changed and not module.check_mode:
        run_json(module, [exe, 'clear', '--dev', dev, '-J'], 'clear')
        side = show(module, exe, dev)
        result['after'] = side.get('summary', '')
        result['diff']['after'] = 'dev %s: %s\n' % (dev, result['after'])
    readback(result, side)


def argument_spec():
    """The module's options (DOCUMENTATION lists the same)."""
    spec = dict(
        state=dict(type='str', default='present', choices=['present', 'absent']),
        dev=dict(type='str'),
        peer_addr=dict(type='str'),
        profile=dict(type='str'),
        engine=dict(type='str', choices=['auto', 'kernel', 'user']),
        executable=dict(type='path'),
        ecn=dict(type='bool'),
    )
    for name in DIAL_STR:
        spec[name] = dict(type='str')
        if name in DIAL_CHOICES:
            spec[name]['choices'] = DIAL_CHOICES[name]
    for name in DIAL_INT:
        spec[name] = dict(type='int')
    return spec


def main():
    spec = argument_spec()
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    exe = find_linklab(module)
    dev = module.params['dev'] or route_dev(module, module.params['peer_addr'])
    result = dict(changed=False, dev=dev)
    if module.params['state'] == 'present':
        present(module, exe, dev, result)
    else:
        absent(module, exe, dev, result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
