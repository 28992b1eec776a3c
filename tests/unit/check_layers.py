#!/usr/bin/env python3
"""Holds the core to its layers, from what the compiled objects really call.

usage: check_layers.py LIBHDCORE.a SOURCE_ROOT

Every object of the server library is a node; A -> B when A uses a symbol
(function or data) that B defines, as `nm` shows them. Two rules:

1. Layers: httpd/base, httpd/config, httpd/http, httpd/server, in that
   order, then modules/. An object may use its own layer and those before
   it, never a later one (base never calls the request path, the request
   path never calls the MPM support, no core file calls a module).
2. No cycles: no two source files use each other, directly or through
   others (a cycle means neither can be read, tested or replaced alone).

The generated module registry (hd_modules.c) is the one sanctioned way up:
it names every module so the core can run their hooks without naming them.
It is left out of the graph, and so are uses of a module's own struct
(hd_x_module), which only carry its index.
"""

import os
import re
import subprocess
import sys

LAYERS = ["base", "config", "http", "server"]


def objects(archive):
    """{member: (defined symbols, undefined symbols)} from nm."""
    out = subprocess.run(["nm", "-A", "--defined-only", archive], capture_output=True,
                         text=True, check=True).stdout
    defined = {}
    for line in out.splitlines():
        m = re.match(r"^[^:]+:([^:]+):\s*[0-9a-fA-F]*\s+([A-Za-z])\s+(\S+)$", line)
        if m and m.group(2).isupper():
            defined.setdefault(m.group(1), set()).add(m.group(3))
    out = subprocess.run(["nm", "-A", "--undefined-only", archive], capture_output=True,
                         text=True, check=True).stdout
    used = {}
    for line in out.splitlines():
        m = re.match(r"^[^:]+:([^:]+):\s+U\s+(\S+)$", line)
        if m:
            used.setdefault(m.group(1), set()).add(m.group(2))
    members = set(defined) | set(used)
    return {o: (defined.get(o, set()), used.get(o, set())) for o in members}


def source_layers(root):
    """{object name: (layer index, source path)} for the sources under root."""
    where = {}
    for i, layer in enumerate(LAYERS):
        d = os.path.join(root, "httpd", layer)
        for f in os.listdir(d):
            if f.endswith(".c"):
                where[f + ".o"] = (i, "httpd/%s/%s" % (layer, f))
    mods = os.path.join(root, "modules")
    for m in os.listdir(mods):
        d = os.path.join(mods, m)
        if os.path.isdir(d):
            for f in os.listdir(d):
                if f.endswith(".c"):
                    where[f + ".o"] = (len(LAYERS), "modules/%s/%s" % (m, f))
    return where


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    archive, root = sys.argv[1], sys.argv[2]
    objs = objects(archive)
    where = source_layers(root)
    missing = [o for o in objs if o not in where and o != "hd_modules.c.o"]
    if missing or len(objs) < 40:
        print("check_layers: objects without a source under httpd/<layer>/ or modules/: %s "
              "(%d objects)" % (", ".join(sorted(missing)), len(objs)))
        return 1
    owner = {}
    for o, (defs, _) in objs.items():
        for sym in defs:
            owner[sym] = o
    module_struct = re.compile(r"^hd_\w+_module$")
    graph = {o: set() for o in objs if o != "hd_modules.c.o"}
    edges = {}
    for o in graph:
        for sym in objs[o][1]:
            target = owner.get(sym)
            if target is None or target == o or target == "hd_modules.c.o":
                continue
            if module_struct.match(sym):
                continue
            graph[o].add(target)
            edges.setdefault((o, target), []).append(sym)

    problems = []
    for (a, b), syms in sorted(edges.items()):
        la, lb = where[a][0], where[b][0]
        if lb > la:
            names = LAYERS + ["modules"]
            problems.append("%s (%s) uses %s (%s): %s" % (where[a][1], names[la], where[b][1],
                                                           names[lb], ", ".join(sorted(syms)[:4])))
    for comp in cycles(graph):
        path = " <-> ".join(where[o][1] for o in comp)
        detail = "; ".join("%s uses %s" % (a, ",".join(sorted(edges[(a, b)])[:3]))
                           for a in comp for b in comp if (a, b) in edges)
        problems.append("cycle: %s (%s)" % (path, detail))
    if problems:
        print("layering problems:")
        for p in problems:
            print("  " + p)
        return 1
    print("layers: %d objects, %d uses, no upward use and no cycle" %
          (len(graph), sum(len(v) for v in graph.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
