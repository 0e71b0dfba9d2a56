# -*- coding: utf-8 -*-
# SPDX-License-Identifier: MIT
# Shared by the linklab.lab modules: find the linklab binary, run it with -J
# and turn its stderr into one task message.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

ROLE_HINT = ("install it with the role linklab.lab.linklab "
             "(roles: [linklab.lab.linklab], with linklab_binary or "
             "linklab_source_dir), or give executable=PATH")


def find_linklab(module):
    """Path of linklab on the target; fails the task when there is none."""
    exe = module.params.get('executable')
    if exe:
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe
        module.fail_json(msg="linklab: executable %s is not an executable "
                             "file on this host; %s" % (exe, ROLE_HINT))
    path = module.get_bin_path('linklab', required=False)
    if not path:
        module.fail_json(msg="linklab is not installed on this host (no "
                             "linklab in PATH %s); %s"
                             % (os.environ.get('PATH', ''), ROLE_HINT))
    return path


def messages(stderr, prefix):
    """linklab's stderr lines without its 'linklab CMD: ' prefix, joined."""
    lines = []
    for line in (stderr or '').splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith(prefix):
            line = line[len(prefix):]
        lines.append(line)
    return '; '.join(lines)


def run_json(module, argv, what, check_rc=True):
    """Run argv, parse stdout as JSON. On a non-zero exit (when check_rc)
    fail the task with linklab's own message. Returns (rc, doc, stderr)."""
    rc, out, err = module.run_command(argv, environ_update={'LC_ALL': 'C'})
    doc = None
    if out.strip():
        try:
            doc = json.loads(out)
        except ValueError:
            doc = None
    if rc != 0 and check_rc:
        text = messages(err, 'linklab %s: ' % what)
        if not text and isinstance(doc, dict) and doc.get('error'):
            text = str(doc['error'])
        module.fail_json(msg="linklab %s failed: %s" % (what, text or
                                                         'exit status %d' % rc),
                         rc=rc, stderr=err, stdout=out, cmd=argv)
    if doc is None and rc == 0:
        module.fail_json(msg="linklab %s -J printed no JSON document "
                             "(is this linklab too old for the collection? "
                             "%s)" % (what, ROLE_HINT),
                         rc=rc, stderr=err, stdout=out, cmd=argv)
    return rc, doc, err
