#!/usr/bin/env python3
"""Searches small Boolean circuits for the 16 Serpent boxes (S0..S7 and
their inverses, numbered as BOXES in lanes.rs: box 8 + i is S_i^-1) and
prints circuits.rs, which the and/or/xor/andnot lanes types evaluate.

Every signal is a 16-bit truth table (bit v: the value on input nibble v,
input bit i of v is x_i). Gates: and, or, xor, andnot(a, b) = !a & b (the
Lanes trait's, one instruction on SSE2/AVX2) and not (an xor with all-ones
on SSE2/AVX2, so it counts as a gate like the others).

The search is a randomized greedy one with restarts:
1. a target output that one gate yields from the signals so far is added;
2. else the gate after which the most targets are one gate away (through
   it) is added, ties broken by the number of targets two gates away plus
   some random noise (which makes the restarts differ).
Gates no output depends on are then dropped, and the smallest circuit
found per box is kept. Each is checked on all 16 inputs before printing.

Run: python3 gen_circuits.py [tries per box] [seed] > circuits.rs
(deterministic for given arguments).
"""
import os
import random
import re
import sys

M = 0xFFFF
HERE = os.path.dirname(os.path.abspath(__file__))


def load_boxes():
    src = open(os.path.join(HERE, "lanes.rs")).read()
    body = src[src.index("const SBOX: [[u8; 16]; 8]"):]
    body = body[body.index("= [") + 3:]
    body = body[:body.index("];")]
    rows = re.findall(r"\[([0-9, ]+)\]", body)
    sbox = [[int(v) for v in r.split(",")] for r in rows]
    assert len(sbox) == 8 and all(sorted(r) == list(range(16)) for r in sbox)
    inv = [[r.index(y) for y in range(16)] for r in sbox]
    return sbox + inv


INPUTS = [sum(1 << v for v in range(16) if (v >> i) & 1) for i in range(4)]


def targets(box):
    return [sum(1 << v for v in range(16) if (box[v] >> i) & 1) for i in range(4)]


def apply(op, a, b):
    if op == "xor":
        return a ^ b
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "andnot":
        return ~a & b & M
    return ~a & M  # not


def one_gate(vals, known):
    """Every signal one gate away: value -> (op, i, j)."""
    out = {}
    n = len(vals)
    for i in range(n):
        a = vals[i]
        v = ~a & M
        if v not in known:
            out.setdefault(v, ("not", i, i))
        for j in range(i + 1, n):
            b = vals[j]
            for op, x, y in (("xor", i, j), ("and", i, j), ("or", i, j),
                             ("andnot", i, j), ("andnot", j, i)):
                v = apply(op, vals[x], vals[y])
                if v not in known:
                    out.setdefault(v, (op, x, y))
    return out


class Near:
    """Signals grouped by how they can meet target t in one and/or/andnot
    gate: supersets of t, subsets of t, and those disjoint from t."""

    def __init__(self, t, sigs):
        self.t = t
        self.sup = [s for s in sigs if s & t == t]
        self.sub = [s for s in sigs if s | t == t]
        self.disj = [s for s in sigs if s & t == 0]
        self.all = set(sigs)

    def meets(self, g):
        """Whether t is one gate from g and one of the grouped signals."""
        t = self.t
        if t ^ g in self.all:
            return True
        if g & t == t:
            for s in self.sup:
                if s & g == t:
                    return True
            for s in self.disj:
                if ~s & g & M == t:
                    return True
        if g | t == t:
            for s in self.sub:
                if s | g == t:
                    return True
        if g & t == 0:
            for s in self.sup:
                if ~g & s & M == t:
                    return True
        return False


def search(tg, rng):
    vals = list(INPUTS)
    gates = []  # (op, i, j) producing vals[4 + k]
    known = set(vals)
    todo = [t for t in tg if t not in known]
    while todo:
        n1 = one_gate(vals, known)
        hit = [t for t in todo if t in n1 or ~t & M in known]
        if hit:
            t = rng.choice(hit)
            pick = t
            if t not in n1:
                n1[t] = ("not", vals.index(~t & M), 0)
        else:
            # Score each gate: targets one gate after it (through it), then
            # targets two gates after it (through it and one more gate).
            near1 = [Near(t, vals) for t in todo]
            near2 = [Near(t, list(n1) + vals) for t in todo]
            best, picks = None, []
            for g in n1:
                k1 = sum(1 for n in near1 if n.meets(g) or n.t == ~g & M)
                k2 = sum(1 for n in near2 if n.meets(g))
                sc = (k1, k2 + rng.random() * 1.5)
                if best is None or sc > best:
                    best, picks = sc, [g]
            pick = picks[0]
        gates.append(n1[pick])
        vals.append(pick)
        known.add(pick)
        todo = [t for t in todo if t not in known]
        if len(gates) > 60:
            return None
    return prune(vals, gates, tg)


def prune(vals, gates, tg):
    """Drops gates no output needs; renumbers."""
    outs = [vals.index(t) for t in tg]
    need = set(outs)
    for k in range(len(gates) - 1, -1, -1):
        if 4 + k in need:
            _, i, j = gates[k]
            need |= {i, j}
    new = {i: i for i in range(4)}
    kept = []
    for k, (op, i, j) in enumerate(gates):
        if 4 + k in need:
            new[4 + k] = 4 + len(kept)
            kept.append((op, new[i], new[j]))
    return kept, [new[o] for o in outs]


def evaluate(circ, inputs):
    gates, outs = circ
    v = list(inputs)
    for op, i, j in gates:
        v.append(apply(op, v[i], v[j]))
    return [v[o] for o in outs]


def anf_cost(box):
    """Vector operations of lanes.rs's anf_sbox for this box (for the
    report): shared monomials, XOR sums, the x3 terms and NOTs."""
    def anf3(tt):
        a = tt
        for i in range(3):
            for m in range(8):
                if m & (1 << i):
                    a ^= ((a >> (m ^ (1 << i))) & 1) << m
        return a
    used = set()
    ops = 0
    for bit in range(4):
        g = sum(((box[v] >> bit) & 1) << v for v in range(8))
        f = sum(((box[v + 8] >> bit) & 1) << v for v in range(8))
        g, h = anf3(g), anf3(f ^ g)
        terms = 0
        for poly in (g & ~1, h & ~1):
            k = bin(poly).count("1")
            terms += k
            ops += max(k - 1, 0)
            used |= {m for m in range(8) if poly >> m & 1}
        if h not in (0, 1):
            ops += 1  # and / andnot with x3
        if (g & ~1) and h:
            ops += 1
        if g & 1:
            ops += 1
    # x0&x1 (also the base of x0&x1&x2), x0&x2, x1&x2, x0&x1&x2.
    ops += sum(1 for ms in ({3, 7}, {5}, {6}, {7}) if ms & used)
    return ops


def rust(s, circ):
    gates, outs = circ
    name = lambda i: "x%d" % i if i < 4 else "t%d" % (i - 4)
    kind = "S%d" % s if s < 8 else "S%d^-1" % (s - 8)
    lines = ["/// Box %d (%s), %d gates." % (s, kind, len(gates)),
             "#[inline(always)]",
             "fn b%d<V: Lanes>(x: [V; 4]) -> [V; 4] {" % s,
             "    let [x0, x1, x2, x3] = x;"]
    for k, (op, i, j) in enumerate(gates):
        rhs = "%s.not()" % name(i) if op == "not" else "%s.%s(%s)" % (name(i), op, name(j))
        lines.append("    let %s = %s;" % (name(4 + k), rhs))
    lines.append("    [%s]" % ", ".join(name(o) for o in outs))
    lines.append("}")
    return "\n".join(lines)


def main():
    tries = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    boxes = load_boxes()
    found = []
    for s, box in enumerate(boxes):
        rng = random.Random(1000 * seed + s)  # each box on its own stream
        tg = targets(box)
        best = None
        for _ in range(tries):
            c = search(tg, rng)
            if c and (best is None or len(c[0]) < len(best[0])):
                best = c
        assert evaluate(best, INPUTS) == tg, s
        for v in range(16):  # the same check, one input at a time
            bits = evaluate(best, [M if (v >> i) & 1 else 0 for i in range(4)])
            assert sum((b & 1) << i for i, b in enumerate(bits)) == box[v], (s, v)
        print("box %2d: %d gates (anf %d), %d tries" % (s, len(best[0]), anf_cost(box), tries),
              file=sys.stderr)
        found.append(best)
    print("//! Generated by gen_circuits.py (python3 gen_circuits.py %d %d); do not" % (tries, seed))
    print("//! edit. Serpent's boxes as and/or/xor/andnot/not circuits found by a")
    print("//! randomized greedy search, each checked on all 16 inputs there and by")
    print("//! the tests of lanes.rs. Box 8 + i is S_i^-1, as in `lanes::BOXES`.")
    print()
    print("use super::lanes::Lanes;")
    print()
    print("/// Applies box `S` bitsliced, as [`Lanes::sbox`].")
    print("#[inline(always)]")
    print("pub(crate) fn sbox<V: Lanes, const S: usize>(x: [V; 4]) -> [V; 4] {")
    print("    match S {")
    for s in range(15):
        print("        %d => b%d(x)," % (s, s))
    print("        _ => b15(x),")
    print("    }")
    print("}")
    for s, c in enumerate(found):
        print()
        print(rust(s, c))


if __name__ == "__main__":
    main()
