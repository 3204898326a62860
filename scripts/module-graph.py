#!/usr/bin/env python3
"""The crate's module graph from `use crate::…` / `super::` / `self::` paths in src/ (code only:
comments and `#[cfg(test)] mod tests` bodies are left out). Prints every file-level 2-cycle
(`cycle A <-> B`), every import from a lower layer to a higher one (`up A -> B`) and the
top-level edges; exits 1 when it printed a cycle or an `up` line. tests/layers.rs runs the same
check in `cargo test`. Run from the repository root."""
import re,os,sys
mods={}
for dp,dn,fn in os.walk('src'):
    for f in fn:
        if not f.endswith('.rs'): continue
        p=os.path.join(dp,f)[4:-3]; parts=p.split('/')
        if parts[-1] in('mod','lib','main'): parts=parts[:-1]
        mods['::'.join(parts)]=os.path.join(dp,f)
def resolve(path):
    segs=path.split('::')
    for i in range(len(segs),0,-1):
        m='::'.join(segs[:i])
        if m in mods: return m
def expand(s):
    # expand a use tree string into paths
    s=s.replace(' ','').replace('\n','')
    out=[]
    def rec(prefix,t):
        # split top-level commas
        depth=0;cur='';items=[]
        for ch in t:
            if ch=='{':depth+=1
            if ch=='}':depth-=1
            if ch==',' and depth==0: items.append(cur);cur=''
            else: cur+=ch
        if cur: items.append(cur)
        for it in items:
            if '{' in it:
                i=it.index('{'); j=it.rfind('}'); rec(prefix+it[:i], it[i+1:j if j>=0 else len(it)])
            else: out.append(prefix+it)
    rec('',s); return out
edges={}
for m,f in mods.items():
    src=open(f).read()
    src=re.split(r'#\[cfg\(test\)\]\s*mod tests',src)[0]
    # Code only: comments (doc links included) are not dependencies.
    src='\n'.join(l.split('//')[0] for l in src.split('\n'))
    ismod=f.endswith('mod.rs') or f.endswith('lib.rs')
    base=m.split('::') if ismod else m.split('::')[:-1]
    paths=[]
    for u in re.finditer(r'\buse\s+([^;]+);',src,re.S): paths+=expand(u.group(1))
    paths+=re.findall(r'(?:crate|super|self)::[a-z_0-9]+(?:::[a-z_0-9]+)*',src)
    deps=set()
    for p in paths:
        segs=p.split('::')
        if segs[0]=='crate': full=segs[1:]
        elif segs[0]=='super':
            b=m.split('::'); 
            while segs and segs[0]=='super': b=b[:-1]; segs=segs[1:]
            full=b+segs
        elif segs[0]=='self': full=m.split('::')+segs[1:]
        else: continue
        r=resolve('::'.join(full)) if full else None
        if r is not None and r!=m and not m.startswith(r+'::') and r!='' : deps.add(r)
    edges[m]=deps
seen=set()
for a,ds in sorted(edges.items()):
    for b in sorted(ds):
        if a in edges.get(b,()) and (b,a) not in seen:
            seen.add((a,b)); print('cycle',a,'<->',b); bad=True
# layer violations: lower layers importing higher
# Lowest first. decode reads bytes only; source (files, live capture) tags records with decode's
# LinkType; analyze (filter, nccl, correlate beside) reads decoded frames; output prints;
# pipeline runs; tui and cli on top. generate and synth stand apart.
order=['decode','source','analyze','filter','nccl','correlate','output','pipeline','tui','cli']
bad=False
for a,ds in sorted(edges.items()):
    for b in ds:
        ta=a.split('::')[0]; tb=b.split('::')[0]
        if ta in order and tb in order and order.index(tb)>order.index(ta): print('up',a,'->',b); bad=True
print('--- top-level edges')
top={}
for a,ds in edges.items():
    for b in ds:
        ta=a.split('::')[0]; tb=b.split('::')[0]
        if ta!=tb: top.setdefault(ta,set()).add(tb)
for a in sorted(top): print(a,'->',sorted(top[a]))
sys.exit(1 if bad else 0)
