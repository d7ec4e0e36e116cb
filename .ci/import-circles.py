#!/usr/bin/env python3
"""Import circles between the files of a Rust crate: follows `crate::` and
`super::` paths (through `pub use` re-exports to the defining file), leaves
out `#[cfg(test)] mod tests` blocks and comments, and prints each strongly
connected group of modules. Exits 1 when there is one.

Usage: python3 .ci/import-circles.py actors/src  (then: src)
"""
import os,re,sys
from collections import defaultdict
sys.setrecursionlimit(10000)
root=sys.argv[1]
m={}
for d,_,fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p=os.path.join(d,f); rel=os.path.relpath(p,root)[:-3]
            parts=rel.split('/')
            if parts[-1] in('mod','lib','main'): parts=parts[:-1]
            if parts and parts[-1]=='tests': continue
            m['::'.join(parts)]=p
def strip(src):
    i=src.find('#[cfg(test)]\nmod tests')
    if i>=0: src=src[:i]
    return re.sub(r'//.*','',src)
# re-exports: in module M, "pub use X::{A,B}" / "pub use X::A" / "pub use X::*"
reexp=defaultdict(dict)  # M -> name -> target module
globs=defaultdict(list)
for mod,p in m.items():
    src=strip(open(p).read())
    for mm in re.finditer(r'pub(?:\([a-z]+\))? use ([a-z_0-9:]+)::(\{[^}]*\}|\*|[A-Za-z_0-9]+)\s*;',src):
        base=mm.group(1); names=mm.group(2)
        if base.startswith('crate::'): tgt=base[7:]
        elif base.startswith('self::'): tgt=(mod+'::' if mod else '')+base[6:]
        elif base.startswith('super::'): tgt=(mod.rsplit('::',1)[0]+'::' if '::' in mod else '')+base[7:]
        else: tgt=(mod+'::' if mod else '')+base
        if tgt not in m: continue
        if names=='*': globs[mod].append(tgt); continue
        for n in re.findall(r'[A-Za-z_0-9]+',names):
            reexp[mod][n]=tgt
def resolve(path):
    # path list of segments after crate::
    best=None
    for k in range(len(path),0,-1):
        c='::'.join(path[:k])
        if c in m: best=(c,k);break
    if not best: return None
    c,k=best
    seen=0
    while k<len(path) and seen<5:
        n=path[k]
        if n in reexp[c]: c=reexp[c][n]; seen+=1; continue
        break
    return c
g=defaultdict(set)
for mod,p in m.items():
    src=strip(open(p).read())
    for mm in re.finditer(r'crate::((?:[A-Za-z_0-9]+::)*[A-Za-z_0-9]+)',src):
        t=resolve(mm.group(1).split('::'))
        if t and t!=mod: g[mod].add(t)
    par=mod.rsplit('::',1)[0] if '::' in mod else ''
    for mm in re.finditer(r'super::((?:[A-Za-z_0-9]+::)*[A-Za-z_0-9]+)',src):
        t=resolve((par.split('::') if par else [])+mm.group(1).split('::'))
        if t and t!=mod: g[mod].add(t)
for a in list(g):
    g[a]={b for b in g[a] if not (a=='' or b.startswith(a+'::'))}
idx={};low={};st=[];on=set();res=[];c=[0]
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in g[v]:
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: res.append(comp)
for v in list(m):
    if v not in idx: sc(v)
for comp in res:
    s=set(comp); print(len(comp),sorted(comp))
    for a in sorted(comp): print('  ',a,'->',sorted(b for b in g[a] if b in s))

sys.exit(1 if res else 0)
