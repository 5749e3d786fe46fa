#!/usr/bin/env python3
"""Derives the tower-field constants behind the bitsliced AES S-box in
`sbox.rs` and prints the straight-line linear maps used there.

Facts used: the AES field is GF(2)[x]/(x^8+x^4+x^3+x+1) (0x11b) and the
S-box is the affine map A(v) = v ^ rotl(v,1) ^ rotl(v,2) ^ rotl(v,3) ^
rotl(v,4) ^ 0x63 applied to the field inverse (0 -> 0).

Construction (derived here, not transcribed): GF(16) = GF(2)[z]/(z^4+z+1)
in polynomial basis, GF(256) = GF(16)[Y]/(Y^2+Y+lam) with Tr(lam) = 1.
An element a1*Y + a0 has inverse (a1*Y + (a0+a1)) * D^-1 with
D = lam*a1^2 + a1*a0 + a0^2 (product with its conjugate, Y -> Y+1).
The isomorphism maps z to a root zeta of z^4+z+1 in the AES field and Y to
a root beta of Y^2+Y+lam(zeta). We search all choices for the fewest XORs.

Run: python3 gen_tower.py  (prints the Rust bodies; `sbox.rs` has them)
"""

def amul(a, b):
    r = 0
    for i in range(8):
        if b >> i & 1:
            r ^= a << i
    for i in range(14, 7, -1):
        if r >> i & 1:
            r ^= 0x11b << (i - 8)
    return r

def gmul(a, b):
    r = 0
    for i in range(4):
        if b >> i & 1:
            r ^= a << i
    for i in range(6, 3, -1):
        if r >> i & 1:
            r ^= 0x13 << (i - 4)
    return r

def apow(a, e):
    r = 1
    for _ in range(e):
        r = amul(r, a)
    return r

def ainv(a):
    return apow(a, 254) if a else 0

def affine(v):
    rot = lambda v, n: ((v << n) | (v >> (8 - n))) & 0xff
    return v ^ rot(v, 1) ^ rot(v, 2) ^ rot(v, 3) ^ rot(v, 4) ^ 0x63

SBOX = [affine(ainv(v)) for v in range(256)]

def gtrace(a):
    t, s = 0, a
    for _ in range(4):
        t ^= s
        s = gmul(s, s)
    return t

def mat_apply(cols, v):
    r = 0
    for i, c in enumerate(cols):
        if v >> i & 1:
            r ^= c
    return r

def mat_inv(cols, n=8):
    # columns -> table of images; invert by brute force
    table = {mat_apply(cols, v): v for v in range(1 << n)}
    assert len(table) == 1 << n
    return [table[1 << i] for i in range(n)]

def rows_of(cols, n=8, m=8):
    """row i as a bitmask of inputs j (for output bit i)."""
    return [sum(((cols[j] >> i) & 1) << j for j in range(n)) for i in range(m)]

def cost(cols):
    return sum(max(bin(r).count("1") - 1, 0) for r in rows_of(cols))

A_cols = [affine(1 << i) ^ 0x63 for i in range(8)]
A_inv = mat_inv(A_cols)

best = None
zetas = [z for z in range(256) if apow(z, 4) ^ z ^ 1 == 0]
for zeta in zetas:
    emb = lambda g: mat_apply([apow(zeta, j) for j in range(4)], g)
    for lam in range(16):
        if gtrace(lam) != 1:
            continue
        laml = emb(lam)
        for beta in range(256):
            if amul(beta, beta) ^ beta ^ laml:
                continue
            # tower bit t: t<4 -> a0 bit t (zeta^t); t>=4 -> a1 bit t-4 (beta*zeta^(t-4))
            T = [apow(zeta, t) for t in range(4)] + [amul(beta, apow(zeta, t)) for t in range(4)]
            Tin = mat_inv(T)  # AES -> tower
            enc_in = Tin
            enc_out = [mat_apply(A_cols, c) for c in T]
            dec_in = [mat_apply(Tin, c) for c in A_inv]
            dec_out = T
            # lam*a1^2 + a0^2 as a 8->4 linear map
            sq = [gmul(1 << t, 1 << t) for t in range(4)]
            lsq = sq + [gmul(lam, s) for s in sq]
            c = cost(enc_in) + cost(enc_out) + cost(dec_in) + cost(dec_out)
            c += sum(max(bin(r).count("1") - 1, 0) for r in rows_of(lsq, 8, 4))
            if best is None or c < best[0]:
                best = (c, zeta, lam, beta, enc_in, enc_out, dec_in, dec_out, lsq)

c, zeta, lam, beta, enc_in, enc_out, dec_in, dec_out, lsq = best

# check the construction reproduces the S-box in scalar form
def ginv(a):
    r = 1
    for _ in range(14):
        r = gmul(r, a)
    return r if a else 0

def tower_inv(t):
    a0, a1 = t & 15, t >> 4
    d = gmul(lam, gmul(a1, a1)) ^ gmul(a1, a0) ^ gmul(a0, a0)
    di = ginv(d)
    return gmul(a0 ^ a1, di) | (gmul(a1, di) << 4)

for v in range(256):
    assert mat_apply(enc_out, tower_inv(mat_apply(enc_in, v))) ^ 0x63 == SBOX[v]
    assert mat_apply(dec_out, tower_inv(mat_apply(dec_in, v ^ 0x63))) == SBOX.index(v)

def emit(name, cols, n=8, m=8):
    print(f"// {name}: {cost(cols) if m == 8 else ''} XORs")
    for i, r in enumerate(rows_of(cols, n, m)):
        terms = [f"x[{j}]" for j in range(n) if r >> j & 1]
        expr = terms[0] + "".join(f".xor({t})" for t in terms[1:])
        print(f"    {expr},")

# GF(16) inverse as algebraic normal form, one polynomial per output bit
def anf(f):
    a = list(f)
    for i in range(4):
        for v in range(16):
            if v >> i & 1:
                a[v] ^= a[v ^ (1 << i)]
    return a

print(f"// zeta = {zeta:#04x}, lam = {lam:#x}, beta = {beta:#04x}, total linear cost {c}")
emit("ENC_IN (AES -> tower)", enc_in)
emit("ENC_OUT (tower -> AES, then affine without 0x63)", enc_out)
emit("DEC_IN (inverse affine without 0x63, then AES -> tower)", dec_in)
emit("DEC_OUT (tower -> AES)", dec_out)
emit("LSQ (lam*a1^2 + a0^2)", lsq, 8, 4)
for bit in range(4):
    coeffs = anf([ginv(v) >> bit & 1 for v in range(16)])
    mons = ["&".join(f"x{j}" for j in range(4) if m >> j & 1) or "1" for m in range(16) if coeffs[m]]
    print(f"// inv bit {bit} = " + " ^ ".join(mons))
