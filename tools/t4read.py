#!/usr/bin/env python3
"""t4read.py - an independent reader of t410trace logs, written from
docs/FORMAT.md alone (not from the C sources), to prove that the page is
enough to read every log t410trace writes: formats 1 (1.0, 1.1), 2 and 3.

  t4read.py dump LOG     one JSON object per packet, every field decoded
                         (a batch's records one by one, as the packets they
                         stand for), then one per warning ("type": "warning")
  t4read.py totals LOG   one JSON object: chunks read and damaged, packets
                         (as the chunk headers count them), reference, return,
                         copy and unknown packets, values, the first and last
                         trigger ID, the origin (6.1: the smallest ref_ns),
                         return packets per domain, duplicates
                         (section 6), implausible reference packets (7 step
                         8: not counted as references), and per
                         "domain/index" the sum of the
                         counts (unsigned 64-bit deltas summed without
                         wrapping, a duplicate's left out), or for a gauge
                         (4.3, listed in "gauges") its last level

Design: one pass over the file as section 7 says (resynchronise after a bad
header, skip a chunk whose payload fails its CRC or zstd, stop at a
truncated tail or another recording); the file is read whole. Each
chunk's payload is decoded by a packet loop (section 4) whose reference and
return packets come from a per-chunk delta state (section 5) or, in a
version-2 or -3 chunk, from batches (section 5a). Metadata is decoded but
not interpreted beyond what counting needs: copies (4.8) are counted
apart, so that no count is taken twice. The zstd frame is decompressed by the
`zstandard` module when it is importable, else by the `zstd` command line.
Python standard library otherwise; speed is not a goal (a tool for tests).
"""
import collections
import json
import struct
import subprocess
import sys

MAGIC = b"T4TRACE\x1a"
M64 = (1 << 64) - 1
READER_VERSION = 3
MAX_RAW = 16 * 1024 * 1024
MAX_KEY = 4096
FIRST_SCAN = 4096 + MAX_RAW + 131072 + 512

NAMES = {1: "session", 2: "domain", 3: "event", 4: "bookmark", 5: "status", 6: "task",
         7: "gpu_context", 8: "copy", 9: "host", 16: "reference", 17: "return",
         18: "cpu_slice", 19: "gpu_slice", 20: "batch"}
COPYABLE = (1, 2, 3, 4, 6, 7)


class Malformed(Exception):
    """A packet that does not decode: the rest of its chunk is damaged."""


# ---- primitive encodings (section 3) -------------------------------------

def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    """CRC32C (section 2), a byte at a time through a table."""
    crc = 0xFFFFFFFF
    t = CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def unzz(v):
    """Zigzag back to a signed value, then to its unsigned 64-bit reading."""
    return ((v >> 1) ^ -(v & 1)) & M64


def signed(v):
    return v - (1 << 64) if v >> 63 else v


class Body:
    """A cursor over one packet body (or the whole payload)."""

    def __init__(self, data, pos=0, end=None):
        self.data, self.pos = data, pos
        self.end = len(data) if end is None else end

    def left(self):
        return self.end - self.pos

    def varint(self):
        v = 0
        for i in range(10):
            if self.pos >= self.end:
                raise Malformed("varint runs past the end")
            b = self.data[self.pos]
            self.pos += 1
            if i == 9 and b > 1:
                raise Malformed("varint above 2^64-1")
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return v
        raise Malformed("varint longer than 10 bytes")

    def u32(self):
        v = self.varint()
        if v > 0xFFFFFFFF:
            raise Malformed("u32 field above 2^32-1")
        return v

    def zz(self):
        return unzz(self.varint())

    def i32(self):
        v = signed(self.zz())
        if not -(1 << 31) <= v < (1 << 31):
            raise Malformed("i32 field out of range")
        return v

    def string(self, maxlen):
        n = self.varint()
        if n > maxlen or n > self.left():
            raise Malformed("string too long")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        if b"\0" in s:
            raise Malformed("NUL in a string")
        return s.decode("utf-8", "replace")

    def f64(self):
        if self.left() < 8:
            raise Malformed("f64 runs past the end")
        v = struct.unpack_from("<d", self.data, self.pos)[0]
        self.pos += 8
        return v

    def more(self):
        """Whether an optional trailing field is present."""
        return self.pos < self.end


# ---- metadata packets (section 4) -----------------------------------------

def p_session(b):
    p = {"host": b.string(63), "kernel": b.string(127), "version": b.string(31),
         "cmdline": b.string(2047), "start_ref_ns": b.varint(), "start_real_ns": b.varint(),
         "period_ns": b.varint(), "flags": b.u32()}
    p["ref_clock"] = b.u32() if b.more() else 0
    p["session_id"] = b.varint() if b.more() else 0
    return p


def p_domain(b):
    p = {"domain_id": b.u32(), "kind": b.u32(), "cpu": b.i32(), "clock_event": b.i32(),
         "nominal_hz": b.varint(), "name": b.string(63)}
    p["sched_id"] = b.u32() if b.more() else 0
    return p


def p_event(b):
    return {"domain_id": b.u32(), "index": b.u32(), "perf_type": b.u32(), "flags": b.u32(),
            "config": b.varint(), "config1": b.varint(), "config2": b.varint(),
            "scale": b.f64(), "pmu": b.string(63), "name": b.string(63),
            "spec": b.string(255), "unit": b.string(31)}


def p_bookmark(b):
    p = {"bookmark_id": b.u32(), "first_trigger": b.varint(), "name": b.string(63)}
    p["set_ns"] = b.varint() if b.more() else 0
    return p


def p_status(b):
    p = {k: b.varint() for k in ("triggers", "overruns", "dropped", "read_failures", "ref_ns")}
    for k in ("lost_events", "bookmarks_refused", "triggers_refused"):
        p[k] = b.varint() if b.more() else 0
    return p


def p_task(b):
    return {"pid": b.u32(), "tid": b.u32(), "ppid": b.u32(), "mono_ns": b.varint(),
            "name": b.string(63)}


def p_gpu_context(b):
    return {"context": b.varint(), "driver": b.string(63), "timeline": b.string(63)}


def p_host(b):
    return {"ref_ns": b.varint(), "real_ns": b.varint(), "sync_flags": b.u32(),
            "clock_state": b.i32(), "maxerror_us": b.varint(), "esterror_us": b.varint(),
            "rank": b.i32(), "host": b.string(63), "job_id": b.string(31),
            "step": b.string(31), "nodelist": b.string(255)}


def p_cpu_slice(b):
    return {"cpu": b.u32(), "pid": b.u32(), "tid": b.u32(), "start_ns": b.varint(),
            "duration": b.varint(), "flags": b.u32()}


def p_gpu_slice(b):
    return {"context": b.varint(), "seqno": b.varint(), "pid": b.u32(), "tid": b.u32(),
            "start_ns": b.varint(), "duration": b.varint(), "flags": b.u32()}


METADATA = {1: p_session, 2: p_domain, 3: p_event, 4: p_bookmark, 5: p_status,
            6: p_task, 7: p_gpu_context, 9: p_host, 18: p_cpu_slice, 19: p_gpu_slice}


# ---- format 1: reference and return packets with delta state (4.6, 4.7, 5)

def ref_v1(b, state):
    hdr = b.varint()
    flags, absolute = hdr >> 1, hdr & 1
    if flags > 0xFFFFFFFF:
        raise Malformed("reference flags above 32 bits")
    sched = b.u32()
    if not absolute and sched >= MAX_KEY:
        raise Malformed("abs = 0 with a sched_id of 4096 or above")
    prev = (0, 0, 0, 0, 0) if absolute else state.get(sched, (0, 0, 0, 0, 0))
    trig = (prev[0] + 1 + b.zz()) & M64
    bookmark = b.u32()
    ref = (prev[1] + b.zz()) & M64
    mono = (ref + prev[2] + b.zz()) & M64
    real = (ref + prev[3] + b.zz()) & M64
    local = (prev[4] + b.zz()) & M64
    overruns = b.u32()
    if not absolute:
        state[sched] = (trig, ref, (mono - ref) & M64, (real - ref) & M64, local)
    return {"flags": flags, "sched_id": sched, "trigger_id": trig, "bookmark_id": bookmark,
            "ref_ns": ref, "mono_ns": mono, "real_ns": real, "local_clock": local,
            "overruns": overruns}


def ret_v1(b, state):
    hdr = b.varint()
    flags, absolute = hdr >> 1, hdr & 1
    if flags > 0xFFFFFFFF:
        raise Malformed("return flags above 32 bits")
    dom = b.u32()
    if not absolute and dom >= MAX_KEY:
        raise Malformed("abs = 0 with a domain_id of 4096 or above")
    n = b.varint()
    if n > 64:
        raise Malformed("n_counts above 64")
    prev = (0, 0, 0, []) if absolute else state.get(dom, (0, 0, 0, []))
    trig = (prev[0] + 1 + b.zz()) & M64
    local = (prev[1] + b.zz()) & M64
    begin = (prev[2] + b.zz()) & M64
    end = (begin + b.varint()) & M64
    enabled = running = 0
    if flags & 2:
        enabled, running = b.varint(), b.varint()
    pc = prev[3]
    counts = [((pc[i] if i < len(pc) else 0) + b.zz()) & M64 for i in range(n)]
    if not absolute:
        state[dom] = (trig, local, begin, counts)
    return {"flags": flags, "domain_id": dom, "n_counts": n, "trigger_id": trig,
            "local_clock": local, "read_begin_ns": begin, "read_end_ns": end,
            "enabled_delta": enabled, "running_delta": running, "counts": counts}


# ---- formats 2 and 3: batches (section 5a) --------------------------------

class Bits:
    """The bit stream of a batch, least significant bit first (5a.2)."""

    def __init__(self, data, start, end):
        self.data, self.pos, self.end = data, start * 8, end * 8

    def bits(self, n):
        p = self.pos
        if p + n > self.end:
            raise Malformed("batch records run past the end of its body")
        self.pos = p + n
        if n == 1:
            return (self.data[p >> 3] >> (p & 7)) & 1
        w = int.from_bytes(self.data[p >> 3:((p + n + 7) >> 3)], "little")
        return (w >> (p & 7)) & ((1 << n) - 1)

    def raw(self, limit=64):
        n = self.bits(7)
        if n > 64:
            raise Malformed("raw() length above 64")
        v = self.bits(n)
        if v >> limit:
            raise Malformed("raw() field above its %d bits" % limit)
        return v

    def ones(self, most):
        """Count 1 bits before a 0 bit, at most `most`; consumes the 0 bit."""
        q = 0
        while q < most:
            if not self.bits(1):
                return q
            q += 1
        return q


def bitlen(x):
    return x.bit_length()


class Rice:
    __slots__ = ("m", "has")

    def __init__(self):
        self.m, self.has = 0, 0

    def k(self):
        if not self.has or bitlen(self.m) <= 3:
            return 0
        return min(56, bitlen(self.m) - 3)

    def feed(self, u):
        u = min(u, 1 << 56)
        if self.has:
            self.m = self.m - self.m // 4 + u
        else:
            self.m, self.has = 4 * u, 1


def res(bs, st, s):
    q = bs.ones(12)
    if q < 12:
        k = st.k()
        v = (q << k) + bs.bits(k)
        r = (unzz(v) << s) & M64
    else:
        z = bs.raw()
        r = unzz(z)
        v = z >> s
    st.feed(v)
    return r


def scale(d, rate):
    return ((d * rate + (1 << 31)) >> 32) & M64


def ratio(num, den, otherwise):
    if num < (1 << 32) and den != 0:
        return ((num << 32) // den) & M64
    return otherwise


RET_FIELDS = ("rt", "rb", "rw", "rl", "re", "rr")
REF_FIELDS = ("rt", "rref", "rmono", "rreal", "rl")


class RetState:
    def __init__(self, seed=None):
        self.n = self.flags = self.n_counts = 0
        self.trigger = self.begin = self.width = self.local = 0
        self.enabled = self.running = self.step = self.rate = self.dlocal = 0
        self.rice = {f: Rice() for f in RET_FIELDS}
        self.count = [0] * 64
        self.crice = [Rice() for _ in range(64)]
        self.pred = [0] * 64
        self.shift = [0] * 64
        self.quiet = {f: 0 for f in RET_FIELDS}
        self.cquiet = [0] * 64
        if seed is not None:   # format 3: seeded first record (5a.8)
            self.trigger, self.begin, self.step = seed[0], seed[1], seed[2]
            self.local, self.rate = seed[1], 1 << 32


class RefState:
    def __init__(self, seed=None):
        self.n = self.flags = self.bookmark = 0
        self.trigger = self.ref = self.mono_off = self.real_off = self.local = 0
        self.step = self.rate = 0
        self.rice = {f: Rice() for f in REF_FIELDS}
        self.quiet = {f: 0 for f in REF_FIELDS}
        if seed is not None:
            self.trigger, self.ref, self.step = seed[0], seed[1], seed[2]
            self.local, self.rate = seed[1], 1 << 32


class BatchState:
    """The state of 5a.3 (and 5a.8) for one chunk."""

    def __init__(self, version):
        self.v3 = version >= 3
        self.keys = {}          # (kind, key) -> RetState / RefState, keys < 4096
        self.prev = None
        self.next = {}
        self.seed = (0, 0, 0)

    def state(self, kind, key):
        seed = self.seed if self.v3 else None
        if key >= MAX_KEY:
            return RetState(seed) if kind else RefState(seed)
        st = self.keys.get((kind, key))
        if st is None:
            st = RetState(seed) if kind else RefState(seed)
            self.keys[(kind, key)] = st
        return st


class Field:
    """Reads one predicted field (5a.2 field()), honouring format 3's quiet
    flags, and records its residual for the next record's quiet flags."""

    def __init__(self, bs, st, quiet):
        self.bs, self.st, self.quiet = bs, st, quiet
        self.resid = {}

    def __call__(self, name):
        if self.quiet and self.st.quiet[name]:
            r = 0
        elif self.st.n < 2:
            r = unzz(self.bs.raw())
        else:
            r = res(self.bs, self.st.rice[name], 0)
        self.resid[name] = r
        return r


def next_key(bs, bst, quiet):
    """5a.4 (and 5a.8's Q): the (kind, key) of the next record."""
    if quiet or bs.bits(1):
        if bst.prev is None or bst.prev[1] >= MAX_KEY or bst.prev not in bst.next:
            raise Malformed("predicted key without a prediction")
        kk = bst.next[bst.prev]
    else:
        kind = bs.bits(1)
        kk = (kind, bs.raw(32))
    if bst.prev is not None and bst.prev[1] < MAX_KEY:
        bst.next[bst.prev] = kk
    bst.prev = kk
    return kk


def ret_record(bs, bst, S, dom, quiet):
    """5a.5 (with 5a.8's quiet record): one return record of domain dom."""
    if quiet or (S.n >= 1 and bs.bits(1)):
        flags, n = S.flags, S.n_counts
    else:
        flags, n = bs.raw(32), bs.raw(32)
        if n > 64:
            raise Malformed("n_counts above 64")
    f = Field(bs, S, quiet)
    dt = (1 + f("rt")) & M64
    trig = (S.trigger + dt) & M64
    begin = (S.begin + S.step * dt + f("rb")) & M64
    end = (begin + S.width + f("rw")) & M64
    local = (S.local + scale((begin - S.begin) & M64, S.rate) + f("rl")) & M64
    enabled = running = 0
    f.resid["re"] = f.resid["rr"] = 0   # not coded: residual 0 (5a.8)
    if flags & 2:
        enabled = (S.enabled + f("re")) & M64
        running = (S.running + f("rr")) & M64
    if S.n >= 2 and (S.n - 2) % 16 == 0:
        block_header(bs, S, n)
    counts, cres = ret_counts(bs, S, n, local, quiet)
    commit_ret(S, dt, trig, begin, end, local, enabled, running, flags, n, counts)
    for name in RET_FIELDS:
        S.quiet[name] = int(f.resid[name] == 0)
    S.cquiet = [int(r == 0) for r in cres] + [0] * (64 - n)
    bst.seed = (trig, begin, S.step)
    return {"flags": flags, "domain_id": dom, "n_counts": n, "trigger_id": trig,
            "local_clock": local, "read_begin_ns": begin, "read_end_ns": end,
            "enabled_delta": enabled, "running_delta": running, "counts": counts}


def block_header(bs, S, n):
    """5a.5 row 9: each event's prediction and granularity, event by event."""
    for i in range(n):
        pred = bs.bits(1)
        shift = S.shift[i] if bs.bits(1) else bs.bits(6)
        if pred != S.pred[i] or shift != S.shift[i]:
            S.crice[i] = Rice()
        S.pred[i], S.shift[i] = pred, shift


def ret_counts(bs, S, n, local, quiet):
    """5a.5 row 10: the counts and their residuals (for the quiet flags)."""
    counts, cres = [], []
    rc = ratio((local - S.local) & M64, S.dlocal, 1 << 32) if S.n >= 2 else 0
    for i in range(n):
        prev = S.count[i] if i < S.n_counts else 0
        if S.n < 2:
            p, r = prev, unzz(bs.raw())   # a quiet record has S.n >= 2
        else:
            p = round_pred(scale(prev, rc) if S.pred[i] else prev, S.shift[i])
            r = 0 if quiet and S.cquiet[i] else res(bs, S.crice[i], S.shift[i])
        counts.append((p + r) & M64)
        cres.append(r)
    return counts, cres


def round_pred(p, s):
    """A prediction rounded to its granularity 2^s (5a.5)."""
    if s > 0:
        p = (p + (1 << (s - 1))) & ~((1 << s) - 1) & M64
    return p


def commit_ret(S, dt, trig, begin, end, local, enabled, running, flags, n, counts):
    """5a.5's commit: S takes the record."""
    if S.n >= 1:
        db, dl = (begin - S.begin) & M64, (local - S.local) & M64
        if dt == 1:
            S.step = db
        S.rate = ratio(dl, db, 0)
        S.dlocal = dl
    S.trigger, S.begin, S.width, S.local = trig, begin, (end - begin) & M64, local
    S.enabled, S.running, S.flags = enabled, running, flags
    for i in range(n):
        S.count[i] = counts[i]
    S.n_counts = n
    S.n += 1


def ref_record(bs, bst, R, sched, quiet):
    """5a.6 (with 5a.8's quiet record): one reference record of sched."""
    if quiet or (R.n >= 1 and bs.bits(1)):
        flags, bookmark, overruns = R.flags, R.bookmark, 0
    else:
        flags, bookmark, overruns = bs.raw(32), bs.raw(32), bs.raw(32)
    f = Field(bs, R, quiet)
    dt = (1 + f("rt")) & M64
    trig = (R.trigger + dt) & M64
    ref = (R.ref + R.step * dt + f("rref")) & M64
    mono = (ref + R.mono_off + f("rmono")) & M64
    real = (ref + R.real_off + f("rreal")) & M64
    local = (R.local + scale((ref - R.ref) & M64, R.rate) + f("rl")) & M64
    if R.n >= 1:
        dr, dl = (ref - R.ref) & M64, (local - R.local) & M64
        if dt == 1:
            R.step = dr
        R.rate = ratio(dl, dr, 0)
    R.trigger, R.ref, R.local, R.flags, R.bookmark = trig, ref, local, flags, bookmark
    R.mono_off, R.real_off = (mono - ref) & M64, (real - ref) & M64
    R.n += 1
    for name in REF_FIELDS:
        R.quiet[name] = int(f.resid[name] == 0)
    bst.seed = (trig, ref, R.step)
    return {"flags": flags, "sched_id": sched, "trigger_id": trig, "bookmark_id": bookmark,
            "ref_ns": ref, "mono_ns": mono, "real_ns": real, "local_clock": local,
            "overruns": overruns}


def batch(b, bst):
    """Yields (type, fields) for each record of a batch packet (5a.1)."""
    count = b.varint()
    if count < 1 or count > 8 * b.left():
        raise Malformed("batch count out of range")
    bs = Bits(b.data, b.pos, b.end)
    for _ in range(count):
        quiet = bst.v3 and bs.bits(1)
        kind, key = next_key(bs, bst, quiet)
        st = bst.state(kind, key)
        if quiet and st.n < 2:
            raise Malformed("quiet record of a key with fewer than 2 records")
        if kind:
            yield 17, ret_record(bs, bst, st, key, quiet)
        else:
            yield 16, ref_record(bs, bst, st, key, quiet)


# ---- packets of one chunk (sections 4, 4.8, 7 step 7) ---------------------

def packet(b):
    """(type, Body of its body) of the packet at b, moving b past it."""
    t = b.varint()
    n = b.varint()
    if n > b.left():
        raise Malformed("body runs past the end of the payload")
    body = Body(b.data, b.pos, b.pos + n)
    b.pos += n
    return t, body


def copy_inner(body):
    """The packet a copy holds (4.8): (type, fields) or (type, None) for an
    inner type the reader does not know."""
    t, inner = packet(body)
    if t in COPYABLE:
        return t, METADATA[t](inner)
    if t in NAMES:
        raise Malformed("copy of a packet of type %d" % t)
    return t, None


def chunk_packets(payload, version):
    """Yields (type, fields) for each packet of a payload; raises Malformed
    at the first one that does not decode (those before stay yielded)."""
    b = Body(payload)
    refs, rets = {}, {}
    bst = BatchState(version)
    while b.left():
        t, body = packet(b)
        if t in (16, 17) and version >= 2:
            raise Malformed("type %d in a version-%d chunk" % (t, version))
        if t == 16:
            yield t, ref_v1(body, refs)
        elif t == 17:
            yield t, ret_v1(body, rets)
        elif t == 20 and version >= 2:
            for rec in batch(body, bst):
                yield rec
        elif t == 8:
            it, fields = copy_inner(body)
            yield 8, {"inner_type": it, "inner": fields}
        elif t in METADATA:
            yield t, METADATA[t](body)
        else:   # unknown (type 0 and, in a version-1 chunk, 20 included)
            yield t, None


# ---- zstd -----------------------------------------------------------------

def frame_content_size(frame):
    """The Frame_Content_Size of a zstd frame's header (RFC 8878 3.1.1.1),
    or None when the header lacks it or is not a zstd frame's."""
    if len(frame) < 6 or frame[:4] != b"\x28\xb5\x2f\xfd":
        return None
    fhd = frame[4]
    fcs_flag, single = fhd >> 6, (fhd >> 5) & 1
    did = (0, 1, 2, 4)[fhd & 3]
    pos = 5 + (0 if single else 1) + did
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0 or pos + size > len(frame):
        return None
    v = int.from_bytes(frame[pos:pos + size], "little")
    return v + 256 if size == 2 else v


def decompress(frame, raw_size):
    try:
        import zstandard
        return zstandard.ZstdDecompressor().decompress(frame, max_output_size=raw_size)
    except ImportError:
        pass
    p = subprocess.run(["zstd", "-q", "-d", "-c"], input=frame, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        raise ValueError("zstd failed")
    return p.stdout


def payload_of(frame, raw_size):
    """The payload of a frame that passes section 2's rules, else None."""
    if frame_content_size(frame) != raw_size:
        return None
    try:
        data = decompress(frame, raw_size)
    except Exception:   # zstandard's errors and ours alike: a bad frame
        return None
    return data if len(data) == raw_size else None


# ---- the file (sections 2 and 7) ------------------------------------------

def header(data, off):
    """The header at off as a dict, or None when it is not a valid one (bad
    magic, hdr_crc or limits). A newer version is valid."""
    if len(data) - off < 64 or data[off:off + 8] != MAGIC:
        return None
    (version, hdr_size, flags, seq, first, last, raw, comp, packets, pcrc, tag,
     hcrc) = struct.unpack_from("<HHIQQQIIIIII", data, off + 8)
    if crc32c(data[off:off + 60]) != hcrc:
        return None
    if version < 1 or not 64 <= hdr_size <= 4096 or raw > MAX_RAW:
        return None
    if comp > raw + raw // 128 + 512:
        return None
    return {"offset": off, "version": version, "hdr_size": hdr_size, "seq": seq,
            "first_trigger": first, "last_trigger": last, "raw_size": raw,
            "comp_size": comp, "packets": packets, "payload_crc": pcrc, "tag": tag}


def resync(data, start, stop):
    """The first offset in [start, stop) holding a valid header or a magic
    with fewer than 64 bytes after it (7 step 3), else None."""
    off = data.find(MAGIC, start)
    while off != -1 and off < stop:
        if len(data) - off < 64 or header(data, off):
            return off
        off = data.find(MAGIC, off + 1)
    return None


class Reader:
    """Section 7 over a whole file; packets go to `sink(chunk, type, fields)`."""

    def __init__(self, data, sink):
        self.data, self.sink = data, sink
        self.chunks = self.damaged = 0
        self.warnings = []
        self.tag = 0
        self.session = None
        self.last_seq = None
        self.next_recording = None

    def warn(self, msg):
        self.warnings.append(msg)

    def run(self):
        data = self.data
        if not data:
            raise SystemExit("empty file, not a t410trace log")
        off = 0
        if data[:8] != MAGIC[:min(8, len(data))]:
            off = resync_first(data)
            if off is None:
                raise SystemExit("not a t410trace log (bad magic)")
            self.warn("chunk at offset 0: bad magic, skipped %d bytes to the next chunk "
                      "at offset %d" % (off, off))
            self.damaged += 1
        first = True
        while off < len(data):
            off = self.step(off, first)
            first = False
            if off is None:
                break

    def step(self, off, first):
        """Reads the chunk at off; the offset of the next, or None to stop."""
        data = self.data
        if len(data) - off < 64:
            if MAGIC.startswith(data[off:off + 8]):
                self.warn("chunk at offset %d truncated" % off)
            else:   # garbage: one damaged chunk (7 step 2)
                self.damaged += 1
                self.warn("chunk at offset %d: garbage at the end of the file" % off)
            return None
        h = header(data, off)
        if h is None:
            nxt = resync(data, off + 1, len(data))
            self.damaged += 1
            self.warn("chunk at offset %d: bad header, skipped to %s" % (off, nxt))
            return nxt
        if first and h["version"] > READER_VERSION:
            raise SystemExit("format version %d is newer than this reader supports (%d)"
                             % (h["version"], READER_VERSION))
        if not first and self.other_recording(h):
            return self.next_at(off)
        self.last_seq = h["seq"]
        if h["tag"] and not self.tag:
            self.tag = h["tag"]
        end = off + h["hdr_size"] + h["comp_size"]
        if end > len(data):
            self.warn("chunk at offset %d truncated" % off)
            return None
        if h["version"] > READER_VERSION:   # 7 step 5: damage to this reader
            self.damaged += 1
            self.warn("chunk at offset %d: newer version, skipped" % off)
            return end
        frame = data[off + h["hdr_size"]:end]
        payload = None
        if crc32c(frame) == h["payload_crc"]:
            payload = payload_of(frame, h["raw_size"])
        if payload is None:
            self.damaged += 1
            self.warn("chunk at offset %d: payload CRC mismatch or bad frame, skipped" % off)
            return end
        if self.second_session(payload, h):
            return self.next_at(off)
        self.chunks += 1
        self.packets(payload, h)
        return end

    def next_at(self, off):
        """7 step 3a: reading ends before the next recording, at off."""
        self.next_recording = off
        self.warn("another recording starts at offset %d" % off)
        return None

    def other_recording(self, h):
        """7 step 3a, by the header."""
        if h["tag"] and self.tag and h["tag"] != self.tag:
            return True
        return self.last_seq is not None and h["seq"] < self.last_seq

    def second_session(self, payload, h):
        """7 step 3a, by the chunk's first packet."""
        try:
            for t, p in chunk_packets(payload, h["version"]):
                if t == 8 and p["inner_type"] == 1:
                    return self.session is not None and p["inner"] != self.session
                if t == 1:
                    return self.session is not None
                return False
        except Malformed:
            return False
        return False

    def packets(self, payload, h):
        n = 0
        try:
            for t, p in chunk_packets(payload, h["version"]):
                n += 1
                if t == 1 and self.session is None:
                    self.session = p
                if t == 8 and p["inner_type"] == 1 and self.session is None:
                    self.session = p["inner"]
                self.sink(h, t, p)
        except Malformed as e:
            self.damaged += 1
            self.warn("chunk at offset %d: %s, rest of the chunk skipped" % (h["offset"], e))
            return
        if n != h["packets"]:
            self.damaged += 1
            self.warn("chunk at offset %d: %d packets, header says %d"
                      % (h["offset"], n, h["packets"]))


def resync_first(data):
    """7 step 1: the first valid header at an offset from 1 to FIRST_SCAN."""
    off = data.find(MAGIC, 1)
    while off != -1 and off <= FIRST_SCAN:
        if header(data, off):
            return off
        off = data.find(MAGIC, off + 1)
    return None


# ---- the two outputs ------------------------------------------------------

def cmd_dump(data):
    out = sys.stdout

    def sink(h, t, p):
        rec = {"chunk": h["seq"], "type": NAMES[t] if p is not None else "unknown", "code": t}
        if p is not None:
            rec.update(p)
        out.write(json.dumps(rec, sort_keys=True) + "\n")

    r = Reader(data, sink)
    r.run()
    for w in r.warnings:
        out.write(json.dumps({"type": "warning", "text": w}) + "\n")
    out.write(json.dumps({"type": "end", "chunks": r.chunks, "damaged": r.damaged,
                          "next_recording": r.next_recording}) + "\n")


class Window:
    """Section 6's "latest 64 IDs" of one key: the IDs seen in the 64 up
    to the highest so far (an ID further back is taken as new)."""

    def __init__(self):
        self.top, self.ids = None, set()

    def first(self, t):
        """Whether t is new, marking it seen."""
        if self.top is None or t > self.top:
            self.top = t
            if len(self.ids) > 1024:   # IDs below the window never return to it
                self.ids = {i for i in self.ids if i > t - 64}
        elif self.top - t >= 64:
            return True
        elif t in self.ids:
            return False
        self.ids.add(t)
        return True


class Totals:
    """What `totals` prints: counts of packets and the sums of the counts,
    with section 6's duplicates and 7 step 8's implausible IDs left out."""

    def __init__(self):
        self.packets = self.references = self.returns = self.unknown = self.copies = 0
        self.values = self.duplicates = self.implausible = 0
        self.triggers = []
        self.sums, self.domains = {}, {}
        self.gauges, self.last = set(), {}
        self.windows = {}
        self.scheds = {}        # sched_id -> [last trigger_id, its ref_ns]
        self.period = 0
        self.origin = None      # the smallest ref_ns (6.1: relative times' zero)

    def window(self, *key):
        return self.windows.setdefault(key, Window())

    def totals(self):
        """Per event its sum, or for a gauge its last level (4.3)."""
        return {k: self.last[k] if k in self.gauges else v for k, v in self.sums.items()}

    def plausible(self, p):
        """7 step 8: a trigger ID no further ahead than time allows."""
        t = p["trigger_id"]
        if t > 1 << 62:
            return False
        s = self.scheds.get(p["sched_id"])
        if s is None or t <= s[0]:
            return True
        dt = max(p["ref_ns"] - s[1], 0)
        allowed = dt // self.period * 16 if self.period else dt // 1000
        return t - s[0] <= 4096 + allowed

    def reference(self, p):
        if not self.plausible(p):
            self.implausible += 1
            return
        self.references += 1
        self.triggers.append(p["trigger_id"])
        if p["ref_ns"] and (self.origin is None or p["ref_ns"] < self.origin):
            self.origin = p["ref_ns"]
        s = self.scheds.setdefault(p["sched_id"], [p["trigger_id"], p["ref_ns"]])
        if not self.window("ref", p["sched_id"]).first(p["trigger_id"]):
            self.duplicates += 1
        elif p["trigger_id"] > s[0]:
            s[0], s[1] = p["trigger_id"], p["ref_ns"]

    def ret(self, p):
        self.returns += 1
        self.values += p["n_counts"]
        d, t = p["domain_id"], p["trigger_id"]
        self.domains[str(d)] = self.domains.get(str(d), 0) + 1
        if not self.window("answered", d).first(t):
            self.duplicates += 1
        # a failed read is no sample: a later return of its trigger counts
        if not p["flags"] & 1 and not self.window("counted", d).first(t):
            return
        for i, c in enumerate(p["counts"]):
            k = "%d/%d" % (d, i)
            self.sums[k] = self.sums.get(k, 0) + c
            self.last[k] = c

    def metadata(self, t, p):
        if t == 1 and not self.period:
            self.period = p["period_ns"]
        elif t == 3 and p["flags"] & 1:
            self.gauges.add("%d/%d" % (p["domain_id"], p["index"]))

    def __call__(self, h, t, p):
        self.packets += 1
        if t == 8:
            self.copies += 1
            if p["inner"] is not None:   # it may stand in for a lost original
                self.metadata(p["inner_type"], p["inner"])
        elif t == 16:
            self.reference(p)
        elif t == 17:
            self.ret(p)
        elif p is None:
            self.unknown += 1
        else:
            self.metadata(t, p)


def cmd_totals(data):
    tot = Totals()
    r = Reader(data, tot)
    r.run()
    print(json.dumps({"chunks": r.chunks, "damaged": r.damaged, "packets": tot.packets,
                      "references": tot.references, "returns": tot.returns,
                      "copies": tot.copies, "duplicates": tot.duplicates,
                      "implausible": tot.implausible, "unknown": tot.unknown,
                      "values": tot.values,
                      "first_trigger": min(tot.triggers, default=None),
                      "last_trigger": max(tot.triggers, default=None),
                      "origin_ns": tot.origin,
                      "domain_returns": tot.domains, "totals": tot.totals(),
                      "gauges": sorted(tot.gauges), "next_recording": r.next_recording,
                      "warnings": r.warnings}, sort_keys=True))


def main(argv):
    if len(argv) != 3 or argv[1] not in ("dump", "totals"):
        sys.stderr.write("usage: t4read.py dump|totals LOG\n")
        return 2
    with open(argv[2], "rb") as f:
        data = f.read()
    (cmd_dump if argv[1] == "dump" else cmd_totals)(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
