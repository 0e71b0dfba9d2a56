# -*- coding: utf-8 -*-
# SPDX-License-Identifier: MIT
# Test-only stdout callback for tests/lab/ansible.sh: one JSON document with
# every task's per-host results and the play recap counters, shaped like
# ansible.posix's json callback ({"plays": [{"play", "tasks": [{"task",
# "hosts": {HOST: result}}]}], "stats": {HOST: {...}}}), which ansible-core
# alone does not ship.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = '''
name: lljson
type: stdout
short_description: the json document tests/lab/ansible.sh reads
description: Every task's per-host results and the recap counters, as one JSON document.
'''

import json

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'lljson'

    def __init__(self, display=None):
        super(CallbackModule, self).__init__(display)
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append({'play': {'name': play.get_name()}, 'tasks': []})

    def _task(self, task):
        tasks = self.plays[-1]['tasks']
        if not tasks or tasks[-1]['task']['id'] != task._uuid:
            tasks.append({'task': {'name': task.get_name(), 'id': task._uuid},
                          'hosts': {}})
        return tasks[-1]

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._task(task)

    def _record(self, result, **extra):
        r = dict(result._result)
        r.update(extra)
        self._task(result._task)['hosts'][result._host.get_name()] = r

    def v2_runner_on_ok(self, result, **kwargs):
        self._record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, failed=True)

    def v2_runner_on_unreachable(self, result):
        self._record(result, unreachable=True)

    def v2_runner_on_skipped(self, result):
        self._record(result, skipped=True)

    def v2_playbook_on_stats(self, stats):
        summary = {}
        for h in sorted(stats.processed.keys()):
            summary[h] = stats.summarize(h)
        self._display.display(json.dumps({'plays': self.plays, 'stats': summary},
                                         default=str, indent=1, sort_keys=True))
