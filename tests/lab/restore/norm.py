import json,sys,re
# normalise a "tc -j qdisc / class text / tc -j filter" dump: counters out
DROP={"bytes","packets","drops","overlimits","requeues","backlog","qlen","refcnt","direct_packets_stat","ref","bind","index","installed","last_used","first_used","expires","stats","stats64","pcnt","not_in_hw","in_hw","in_hw_count"}
def clean(x):
    if isinstance(x,dict): return {k:clean(v) for k,v in sorted(x.items()) if k not in DROP}
    if isinstance(x,list): return [clean(v) for v in x]
    return x
out=[]
for sec in sys.stdin.read().split("@@SEP@@"):
    sec=sec.strip()
    if not sec: out.append(None); continue
    try: out.append(sorted((clean(v) for v in json.loads(sec)), key=lambda v: json.dumps(v,sort_keys=True)))
    except Exception: out.append(sorted(l.strip() for l in sec.splitlines() if l.strip()))
print(json.dumps(out,sort_keys=True))
