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
Gates no output depends on are then dropped, and every NOT is folded away: any
gate fed by complemented signals is one and/or/xor/andnot gate with a
complemented result, so complements only pile up at the outputs, which the
cipher absorbs into its round keys (FLIP in circuits.rs; the XORs with the
keys and the linear transformation commute with them). The circuit with the
fewest gates per box is kept. Each is checked on all 16 inputs before
printing.

Run: python3 gen_circuits.py [tries per box] [seed] > circuits.rs
(deterministic for given arguments), or
python3 gen_circuits.py --fold OLD.rs > circuits.rs to fold the NOTs out of
the circuits of an earlier circuits.rs without searching again.
"""
import multiprocessing
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
    return fold_nots(*prune(vals, gates, tg))


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


def fold_nots(gates, outs):
    """The same circuit without NOT gates: returns (gates, outs, flip) where
    output k comes out complemented when bit k of flip is set."""
    A, B = 0b1100, 0b1010  # every combination of two inputs
    sig = [(i, 0) for i in range(4)]  # old signal -> (new signal, complemented)
    kept = []
    for op, i, j in gates:
        if op == "not":
            sig.append((sig[i][0], sig[i][1] ^ 1))
            continue
        (a, pa), (b, pb) = sig[i], sig[j]
        if a == b:
            return None  # a signal with its own complement: a wasted gate
        want = apply(op, A ^ (0xF * pa), B ^ (0xF * pb)) & 0xF
        for new, x, y in (("xor", a, b), ("and", a, b), ("or", a, b),
                          ("andnot", a, b), ("andnot", b, a)):
            got = apply(new, A if x == a else B, B if y == b else A) & 0xF
            if got in (want, want ^ 0xF):
                break
        else:
            raise AssertionError("no gate for %s" % op)
        kept.append((new, x, y))
        sig.append((3 + len(kept), int(got != want)))
    flip = sum(sig[o][1] << k for k, o in enumerate(outs))
    return kept, [sig[o][0] for o in outs], flip


def evaluate(circ, inputs):
    gates, outs, flip = circ
    v = list(inputs)
    for op, i, j in gates:
        v.append(apply(op, v[i], v[j]))
    return [v[o] ^ (M if flip >> k & 1 else 0) for k, o in enumerate(outs)]


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
    gates, outs, _ = circ
    name = lambda i: "x%d" % i if i < 4 else "t%d" % (i - 4)
    kind = "S%d" % s if s < 8 else "S%d^-1" % (s - 8)
    lines = ["/// Box %d (%s), %d gates, outputs FLIP[%d] complemented." % (s, kind, len(gates), s),
             "#[inline(always)]",
             "fn b%d<V: Lanes>(x: [V; 4]) -> [V; 4] {" % s,
             "    let [x0, x1, x2, x3] = x;"]
    for k, (op, i, j) in enumerate(gates):
        rhs = "%s.not()" % name(i) if op == "not" else "%s.%s(%s)" % (name(i), op, name(j))
        lines.append("    let %s = %s;" % (name(4 + k), rhs))
    lines.append("    [%s]" % ", ".join(name(o) for o in outs))
    lines.append("}")
    return "\n".join(lines)


def parse_circuits(path):
    """The circuits of an earlier circuits.rs, NOTs folded away."""
    idx = lambda n: int(n[1:]) + (4 if n[0] == "t" else 0)
    found = []
    for body in open(path).read().split("\nfn b")[1:]:
        gates = []
        for x, op, y in re.findall(r"= (\w+)\.(\w+)\((\w*)\);", body):
            gates.append((op, idx(x), idx(y) if y else 0))
        outs = re.search(r"\[(t\d+|x\d), (\w+), (\w+), (\w+)\]\n}", body).groups()
        found.append(fold_nots(gates, [idx(o) for o in outs]))
    return found


def best_circuit(s, box, tries, seed):
    """The smallest circuit (NOTs folded away) of `tries` searches."""
    rng = random.Random(1000 * seed + s)  # each box on its own stream
    tg = targets(box)
    best = None
    for _ in range(tries):
        c = search(tg, rng)
        if c and (best is None or len(c[0]) < len(best[0])):
            best = c
    return best


def main():
    boxes = load_boxes()
    if sys.argv[1:2] == ["--fold"]:
        found = parse_circuits(sys.argv[2])
        how = "--fold on the output of gen_circuits.py 1000 1"
    else:
        tries = int(sys.argv[1]) if len(sys.argv) > 1 else 300
        seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
        with multiprocessing.Pool() as pool:
            jobs = [(s, box, tries, seed) for s, box in enumerate(boxes)]
            found = pool.starmap(best_circuit, jobs)
        how = "%d %d" % (tries, seed)
    for s, (box, best) in enumerate(zip(boxes, found)):
        tg = targets(box)
        assert evaluate(best, INPUTS) == tg, s
        for v in range(16):  # the same check, one input at a time
            bits = evaluate(best, [M if (v >> i) & 1 else 0 for i in range(4)])
            assert sum((b & 1) << i for i, b in enumerate(bits)) == box[v], (s, v)
        print("box %2d: %d gates (anf %d)" % (s, len(best[0]), anf_cost(box)), file=sys.stderr)
    print("//! Generated by gen_circuits.py (python3 gen_circuits.py %s);" % how)
    print("//! do not edit. Serpent's boxes as and/or/xor/andnot circuits found by a")
    print("//! randomized greedy search, each checked on all 16 inputs there and by")
    print("//! the tests of lanes.rs. Box 8 + i is S_i^-1, as in `lanes::BOXES`.")
    print("//! Output k of box s comes out complemented where bit k of `FLIP[s]` is")
    print("//! set: the round keys absorb that (`lanes::fold_keys`), so no NOT is run.")
    print()
    print("use super::lanes::Lanes;")
    print()
    print("/// Per box, the outputs its circuit gives complemented (bit k: output k).")
    print("pub(crate) const FLIP: [u8; 16] = [%s];" % ", ".join(str(c[2]) for c in found))
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
