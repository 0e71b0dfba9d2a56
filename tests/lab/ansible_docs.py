#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# ansible_docs.py COLLECTIONS_DIR MODULE... - for each module of linklab.lab:
# DOCUMENTATION, EXAMPLES and RETURN parse as YAML, and DOCUMENTATION's
# options match the module's argument_spec() (names, type, choices, default,
# elements) - the part of ansible-test's validate-modules that needs no
# download. Prints "PASS: ..." / "FAIL: ..." lines; exit 1 on a failure.
import importlib
import sys

import yaml

sys.path.insert(0, sys.argv[1])
bad = 0


def report(ok, what):
    global bad
    print(("PASS: " if ok else "FAIL: ") + what)
    bad += 0 if ok else 1


for name in sys.argv[2:]:
    mod = importlib.import_module('ansible_collections.linklab.lab.plugins.modules.' + name)
    try:
        doc = yaml.safe_load(mod.DOCUMENTATION)
        ex = yaml.safe_load(mod.EXAMPLES)
        ret = yaml.safe_load(mod.RETURN)
    except yaml.YAMLError as e:
        report(False, "%s: YAML: %s" % (name, e))
        continue
    problems = []
    if doc.get('module') != name:
        problems.append("DOCUMENTATION module: %r" % doc.get('module'))
    if not isinstance(ex, list) or not ex:
        problems.append("EXAMPLES is no list of tasks")
    else:
        for task in ex:
            if 'linklab.lab.' + name not in task and not any(
                    k.startswith('ansible.builtin.') for k in task):
                problems.append("example %r uses neither the module nor a builtin"
                                % task.get('name'))
    if not isinstance(ret, dict) or not all(
            'description' in v and 'returned' in v and 'type' in v for v in ret.values()):
        problems.append("RETURN values need description, returned, type")
    spec = mod.argument_spec()
    opts = doc.get('options', {})
    for o in sorted(set(spec) ^ set(opts)):
        problems.append("option %s: in %s only" % (o, 'argument_spec' if o in spec else 'DOCUMENTATION'))
    for o in sorted(set(spec) & set(opts)):
        s, d = spec[o], opts[o]
        if not d.get('description'):
            problems.append("option %s: no description" % o)
        for key, dflt in (('type', 'str'), ('choices', None), ('default', None),
                          ('elements', None)):
            if s.get(key, dflt) != d.get(key, dflt):
                problems.append("option %s: %s %r in argument_spec, %r documented"
                                % (o, key, s.get(key, dflt), d.get(key, dflt)))
    report(not problems, "%s: DOCUMENTATION/EXAMPLES/RETURN parse, %d options match "
           "argument_spec%s" % (name, len(spec), (": " + "; ".join(problems)) if problems else ""))
sys.exit(1 if bad else 0)
