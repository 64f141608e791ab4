#!/usr/bin/env python3
"""t4write.py - an independent t410trace log writer, written from
docs/FORMAT.md alone (Python 3 standard library + the `zstd` command line).

It exists to prove that FORMAT.md is complete, and to make the logs a
decoder must survive. Two recordings:

The default one (no option below but --triggers/--per-chunk/--grid/
--empty-chunks): a small synthetic recording whose every value follows a formula (see
ref_values / ret_values), with delta coding for domain 0 and scheduler 0,
absolute coding (abs = 1) for domain 5000 (IDs >= 4096 must be absolute),
one packet of an unknown type, and a status packet at the end. The test
suite checks it with `t410trace info --json` and the C reader; its bytes
never change. With --grid it is what the in-kernel trigger path records
instead (FORMAT.md 4.1 and 6): the session says BPF_TRIGGER and ref_clock
CLOCK_MONOTONIC (the appended field), reference packets sit exactly on the
grid with mono_ns = ref_ns, and trigger IDs are grid indexes: each ID with
overruns 1 (t % 50 == 0) follows a gap, the grid point the scheduler missed
(no reference or return packet for ID t - 1).

The realistic one (any option below): Tegra410-like domains (PCIE, CMEM
latency, UCF, a software domain clocked by the reference clock) whose
clocks run at a known rate (nominal Hz and a ppm offset) and whose counters
count at known rates per bookmark phase; every return is read at a true
instant inside its read window, its local_clock is the clock event's raw
value then, and its counts are deltas against the domain's last LOGGED
return (FORMAT.md 4.7). The first trigger is each domain's baseline (FIRST,
counts 0). What the recorder and the file can do to it:

  --drop-returns F  a return dropped at a full ring (fraction F of them):
                    carried by the domain's next return, counted in the
                    status packet's `dropped`
  --drop-refs F     a reference packet dropped at a full ring (counted)
  --late F          a monitor skipped a trigger: carried, not counted
  --read-failures F a return flagged READ_FAILED (counts 0; the next good
                    read carries), counted in the status packet
  --duplicate F     a reference or return packet written twice (the copy a
                    few packets later, possibly in the next chunk)
  --reorder N       the reference and return packets of each chunk shuffled
                    within a window of N packets; chunks are cut every
                    --chunk-packets packets, so the packets of one trigger
                    may land in different chunks
  --damage K        after writing, corrupt the zstd frame of chunk K (its
                    CRC fails: its counts are lost); repeatable
  --truncate B      cut the last B bytes off the file
  --damage-magic K  after writing, flip a bit of chunk K's magic (its header
                    is damaged: a reader resynchronises, at the start of the
                    file too); repeatable
  --copies          write format 1.1: the session packet carries a session ID
                    (from the seed), every chunk header its tag, and every
                    chunk opens with copies (type 8) of the previous chunk's
                    metadata packets, and every 8th chunk with the whole
                    description (session, domains, events, latest bookmark)
                    as well, as FORMAT.md 4.8 describes
  --second-seed S   append a second recording, the same but with seed S
                    (two logs concatenated: FORMAT.md 7; the truth is the
                    first's, with "next_recording": the offset of the second)
  --schedulers 2    per-socket: two schedulers; each domain answers the
                    trigger IDs of its own (domain packets carry sched_id)
  --large-ids       domain IDs 5000 and 4294967295, a scheduler ID 4242 and
                    bookmark IDs up to 4294967295 (abs = 1 coding)
  --bookmarks       phases warmup, load, short (shorter than one period),
                    store, load again: bookmark packets with set_ns (4.4)
  --odd-names       the PCIE domain is named `pcie "rc,1"` (a comma and
                    quotes), its PMU `nvidia;pcie` (a semicolon)
  --hostile-names   names that attack an HTML page: the CMEM domain is
                    named `</script><script>alert(1)</script>`, the
                    bookmark "load" is `load\xff<b>&` (not UTF-8, markup)
                    and the host `</style><img src=x onerror=alert(2)>`
  --truth FILE      write what the log can deliver as JSON: per domain and
                    event the exact total of its counts ("total"), what a
                    reader of the surviving chunks gets ("delivered": the
                    counts of every return with a copy in an intact chunk,
                    but the first one read, which only starts the timeline)
                    and what damage and truncation lost ("lost"); per domain
                    the unanswered triggers between the returns read whose
                    counts the next return carries ("carried") or that
                    damage lost ("lost_triggers"), returns read twice, failed
                    reads too ("duplicates"), the triggers of its scheduler
                    without a return read ("unanswered": t410trace info's
                    UNANSWERED); the log's dropped packets, triggers
                    without a reference packet ("refs_missing"), bookmarks
                    (with set_ns; "lost" when its packet was), the first
                    trigger's time ("origin_ns")
  --seed S, --chunk-packets N, --period-ns P

usage: t4write.py OUT [--triggers N] [--per-chunk K] [--empty-chunks N]
                  [--grid | options above]
"""
import argparse
import json
import random
import struct
import subprocess
import sys

MAGIC = b"T4TRACE\x1a"
MASK64 = (1 << 64) - 1

PKT_SESSION, PKT_DOMAIN, PKT_EVENT, PKT_BOOKMARK, PKT_STATUS = 1, 2, 3, 4, 5
PKT_COPY = 8
FULL_COPY_EVERY = 8  # chunks between copies of the whole description (4.8)
PKT_REF, PKT_RET = 16, 17
SESSION_SIMULATED, SESSION_BPF_TRIGGER = 1, 2
REFCLK_MONOTONIC = 1
REF_PERIODIC = 1
RET_MULTIPLEXED = 2
DOM_SOFTWARE, DOM_PCIE = 1, 4
MAX_DELTA_KEY = 4096  # keys at or above: abs = 1 (FORMAT.md section 5)


# ---- primitives (FORMAT.md section 3) -------------------------------------

def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ CRC_TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def varint(v):
    assert 0 <= v <= MASK64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zz(diff):
    """Zigzag of a difference taken modulo 2^64, read as signed 64-bit."""
    n = diff & MASK64
    if n >= 1 << 63:
        n -= 1 << 64
    return varint(((n << 1) ^ (n >> 63)) & MASK64)


def string(s, max_len):
    b = s if isinstance(s, bytes) else s.encode()
    assert len(b) <= max_len and b"\0" not in b
    return varint(len(b)) + b


def f64(d):
    return struct.pack("<d", d)


def packet(ptype, body):
    return varint(ptype) + varint(len(body)) + body


# ---- packets (FORMAT.md section 4) ------------------------------------------

def session_pkt(period_ns, grid=False):
    body = (string("pyhost", 63) + string("6.0.0-python", 127) + string("t4write.py", 31)
            + string("tools/t4write.py (independent writer)", 2047)
            + varint(5_000_000_000) + varint(1_700_000_000_000_000_000)
            + varint(period_ns))
    if grid:  # flags, then the appended ref_clock
        body += varint(SESSION_SIMULATED | SESSION_BPF_TRIGGER) + varint(REFCLK_MONOTONIC)
    else:
        body += varint(SESSION_SIMULATED)
    return packet(PKT_SESSION, body)


def domain_pkt(dom_id, kind, cpu, clock_event, hz, name, sched_id=None):
    body = (varint(dom_id) + varint(kind) + zz(cpu) + zz(clock_event) + varint(hz)
            + string(name, 63))
    if sched_id is not None:  # the optional field appended to the body (4.2)
        body += varint(sched_id)
    return packet(PKT_DOMAIN, body)


def event_pkt(dom_id, index, pmu, name, unit="", perf_type=1):
    body = (varint(dom_id) + varint(index) + varint(perf_type) + varint(0) + varint(index)
            + varint(0) + varint(0) + f64(1.0) + string(pmu, 63) + string(name, 63)
            + string(f"{pmu}/{name}/", 255) + string(unit, 31))
    return packet(PKT_EVENT, body)


def bookmark_pkt(bm_id, first_trigger, name, set_ns=None):
    body = varint(bm_id) + varint(first_trigger) + string(name, 63)
    if set_ns is not None:  # the optional field appended to the body (4.4)
        body += varint(set_ns)
    return packet(PKT_BOOKMARK, body)


def status_pkt(triggers, overruns, dropped, read_failures, ref_ns):
    body = b"".join(varint(v) for v in (triggers, overruns, dropped, read_failures, ref_ns))
    return packet(PKT_STATUS, body)


class DeltaState:
    """Per-chunk delta state (FORMAT.md section 5): all zero at chunk start."""

    def __init__(self):
        self.ref = {}
        self.ret = {}

    def ref_prev(self, key):
        return self.ref.get(key, dict(trigger_id=0, ref_ns=0, mono_off=0, real_off=0,
                                      local_clock=0))

    def ret_prev(self, key):
        return self.ret.get(key, dict(trigger_id=0, local_clock=0, read_begin_ns=0,
                                      counts=[]))


def ref_pkt(st, r):
    key = r["sched_id"]
    absolute = key >= MAX_DELTA_KEY
    prev = st.ref_prev(-1) if absolute else st.ref_prev(key)
    mono_off = (r["mono_ns"] - r["ref_ns"]) & MASK64
    real_off = (r["real_ns"] - r["ref_ns"]) & MASK64
    body = (varint(r["flags"] << 1 | absolute) + varint(key)
            + zz(r["trigger_id"] - prev["trigger_id"] - 1) + varint(r["bookmark_id"])
            + zz(r["ref_ns"] - prev["ref_ns"]) + zz(mono_off - prev["mono_off"])
            + zz(real_off - prev["real_off"]) + zz(r["local_clock"] - prev["local_clock"])
            + varint(r["overruns"]))
    if not absolute:
        st.ref[key] = dict(trigger_id=r["trigger_id"], ref_ns=r["ref_ns"],
                           mono_off=mono_off, real_off=real_off,
                           local_clock=r["local_clock"])
    return packet(PKT_REF, body)


def ret_pkt(st, r):
    key = r["domain_id"]
    absolute = key >= MAX_DELTA_KEY
    prev = st.ret_prev(-1) if absolute else st.ret_prev(key)
    counts = r["counts"]
    body = bytearray()
    body += varint(r["flags"] << 1 | absolute) + varint(key) + varint(len(counts))
    body += zz(r["trigger_id"] - prev["trigger_id"] - 1)
    body += zz(r["local_clock"] - prev["local_clock"])
    body += zz(r["read_begin_ns"] - prev["read_begin_ns"])
    body += varint((r["read_end_ns"] - r["read_begin_ns"]) & MASK64)
    if r["flags"] & RET_MULTIPLEXED:
        body += varint(r["enabled_delta"]) + varint(r["running_delta"])
    for i, c in enumerate(counts):
        base = prev["counts"][i] if i < len(prev["counts"]) else 0
        body += zz(c - base)
    if not absolute:
        st.ret[key] = dict(trigger_id=r["trigger_id"], local_clock=r["local_clock"],
                           read_begin_ns=r["read_begin_ns"], counts=list(counts))
    return packet(PKT_RET, bytes(body))


# ---- format 2: trigger packets in batches (FORMAT.md section 5a) ------------

PKT_BATCH = 20
BATCH_CLOSE = 30720   # bytes of bits after which the writer closes a batch (5a.7)
ESC = 12              # 1 bits of an escape (5a.2)


def bitlen(v):
    return v.bit_length()


def unsigned(x):
    return x & MASK64


def zz64(x):
    """zz() of 5a.2: the signed 64-bit reading of x, zigzagged."""
    n = unsigned(x)
    if n >= 1 << 63:
        n -= 1 << 64
    return ((n << 1) ^ (n >> 63)) & MASK64


def scale(d, rate):
    return ((unsigned(d) * rate + (1 << 31)) >> 32) & MASK64


def ratio(num, den, otherwise):
    num, den = unsigned(num), unsigned(den)
    if num >= 1 << 32 or den == 0:
        return otherwise
    return (num << 32) // den


class Bits:
    """The bit stream of a batch, least significant bit first (5a.2)."""

    def __init__(self):
        self.out = bytearray()
        self.buf = 0
        self.n = 0

    def put(self, v, k):
        assert 0 <= v < (1 << k) or k == 0 and v == 0
        self.buf |= v << self.n
        self.n += k
        while self.n >= 8:
            self.out.append(self.buf & 0xFF)
            self.buf >>= 8
            self.n -= 8

    def raw(self, v):
        self.put(bitlen(v), 7)
        self.put(v, bitlen(v))

    def done(self):
        if self.n:
            self.out.append(self.buf & 0xFF)
        return bytes(self.out)


class Rice:
    def __init__(self):
        self.m = 0
        self.has = False

    def k(self):
        b = bitlen(self.m)
        return 0 if not self.has or b <= 3 else min(56, b - 3)

    def feed(self, u):
        u = min(u, 1 << 56)
        if self.has:
            self.m = self.m - self.m // 4 + u
        else:
            self.m, self.has = 4 * u, True


def put_res(bits, st, r, s):
    """res(st, s) of 5a.2, as a writer writes it."""
    z = zz64(r)
    v = z >> s
    k = st.k()
    if unsigned(r) % (1 << s) == 0 and (v >> k) < ESC:
        q = v >> k
        bits.put((1 << q) - 1, q + 1)  # q 1-bits, then a 0 bit
        bits.put(v & ((1 << k) - 1), k)
    else:
        bits.put((1 << ESC) - 1, ESC)
        bits.raw(z)
    st.feed(v)


def put_field(bits, n, st, r):
    if n < 2:
        bits.raw(zz64(r))
    else:
        put_res(bits, st, r, 0)


def put_quiet(bits, quiet, n, st, r):
    """A field of a record (format 3, 5a.8): nothing when it is quiet."""
    if not quiet:
        put_field(bits, n, st, r)


def new_ret_state():
    return dict(n=0, flags=0, n_counts=0, trigger=0, begin=0, width=0, local=0, enabled=0,
                running=0, step=0, rate=0, dlocal=0, qclk=0, qcnt=0,
                rt=Rice(), rb=Rice(), rw=Rice(), rl=Rice(), re=Rice(), rr=Rice(),
                ev=[dict(count=0, rice=Rice(), pred=0, shift=0, cost=[0, 0], orv=0)
                    for _ in range(64)])


def new_ref_state():
    return dict(n=0, flags=0, bookmark=0, trigger=0, ref=0, mono_off=0, real_off=0, local=0,
                step=0, rate=0, qclk=0, rt=Rice(), rref=Rice(), rmono=Rice(), rreal=Rice(),
                rl=Rice())


class Format2:
    """A chunk's state (5a.3) and its open batch, for the writer; v3: format
    3's quiet records and seeded first records (5a.8)."""

    def __init__(self, v3=False):
        self.ret = {}
        self.ref = {}
        self.next = {}
        self.prev = None
        self.bits = None
        self.count = 0
        self.v3 = v3
        self.seed = (0, 0, 0)  # the chunk's latest trigger_id, time, step

    def state(self, table, key, new, time):
        if key < MAX_DELTA_KEY and key in table:
            return table[key]
        st = new()
        if self.v3:  # 5a.8: a first record against the chunk's latest
            st.update(trigger=self.seed[0], local=self.seed[1], step=self.seed[2],
                      rate=1 << 32)
            st[time] = self.seed[1]
        if key < MAX_DELTA_KEY:
            table[key] = st  # else no state: forgotten after the record
        return st

    def predicted(self, kind, key):
        return self.prev is not None and self.prev[1] < MAX_DELTA_KEY and \
            self.next.get(self.prev) == (kind, key)

    def commit_key(self, kind, key):
        if self.prev is not None and self.prev[1] < MAX_DELTA_KEY:
            self.next[self.prev] = (kind, key)
        self.prev = (kind, key)

    def key(self, kind, key):
        b = self.bits
        if self.predicted(kind, key):
            b.put(1, 1)
        else:
            b.put(0, 1)
            b.put(kind, 1)
            b.raw(key)
        self.commit_key(kind, key)

    def head(self, kind, key, quiet, same, shape):
        """A record's quiet bit (format 3), key and shape."""
        b = self.bits
        if self.v3:
            b.put(1 if quiet else 0, 1)
        if quiet:
            self.commit_key(kind, key)
            return
        self.key(kind, key)
        if same:
            b.put(1, 1)
        else:
            if shape[0]:
                b.put(0, 1)
            for v in shape[1:]:
                b.raw(v)

    def open(self):
        if self.bits is None:
            self.bits = Bits()
            self.count = 0
        elif len(self.bits.out) > BATCH_CLOSE:
            raise AssertionError("flush first")

    def add_ref(self, r):
        self.open()
        b = self.bits
        key = r["sched_id"]
        R = self.state(self.ref, key, new_ref_state, "ref")
        n = R["n"]
        same = n and r["flags"] == R["flags"] and r["bookmark_id"] == R["bookmark"] \
            and not r["overruns"]
        dt = unsigned(r["trigger_id"] - R["trigger"])
        mono_off = unsigned(r["mono_ns"] - r["ref_ns"])
        real_off = unsigned(r["real_ns"] - r["ref_ns"])
        pl = R["local"] + scale(r["ref_ns"] - R["ref"], R["rate"])
        f = [unsigned(x) for x in (dt - 1, r["ref_ns"] - (R["ref"] + R["step"] * dt),
                                   mono_off - R["mono_off"], real_off - R["real_off"],
                                   r["local_clock"] - pl)]
        quiet = self.v3 and n >= 2 and same and self.predicted(0, key) and \
            not any(f[i] and R["qclk"] >> i & 1 for i in range(5))
        self.head(0, key, quiet, same, (n, r["flags"], r["bookmark_id"], r["overruns"]))
        qc = R["qclk"] if quiet else 0
        for i, st in enumerate(("rt", "rref", "rmono", "rreal", "rl")):
            put_quiet(b, qc >> i & 1, n, R[st], f[i])
        R["qclk"] = sum(1 << i for i in range(5) if f[i] == 0)
        if n:
            dr, dl = unsigned(r["ref_ns"] - R["ref"]), unsigned(r["local_clock"] - R["local"])
            if dt == 1:
                R["step"] = dr
            R["rate"] = ratio(dl, dr, 0)
        R.update(trigger=r["trigger_id"], ref=r["ref_ns"], mono_off=mono_off,
                 real_off=real_off, local=r["local_clock"], flags=r["flags"],
                 bookmark=r["bookmark_id"], n=n + 1)
        self.seed = (r["trigger_id"], r["ref_ns"], R["step"])
        self.count += 1

    def add_ret(self, r):
        self.open()
        b = self.bits
        key = r["domain_id"]
        S = self.state(self.ret, key, new_ret_state, "begin")
        counts = r["counts"]
        nc = len(counts)
        n = S["n"]
        same = n and r["flags"] == S["flags"] and nc == S["n_counts"]
        dt = unsigned(r["trigger_id"] - S["trigger"])
        width = unsigned(r["read_end_ns"] - r["read_begin_ns"])
        pl = S["local"] + scale(r["read_begin_ns"] - S["begin"], S["rate"])
        mux = r["flags"] & RET_MULTIPLEXED
        f = [unsigned(x) for x in (
            dt - 1, r["read_begin_ns"] - (S["begin"] + S["step"] * dt), width - S["width"],
            r["local_clock"] - pl, r["enabled_delta"] - S["enabled"] if mux else 0,
            r["running_delta"] - S["running"] if mux else 0)]
        rc = ratio(r["local_clock"] - S["local"], S["dlocal"], 1 << 32)
        block = n >= 2 and (n - 2) % 16 == 0
        moved = []
        if block:  # block header, chosen as 5a.7 says
            for i in range(nc):
                e = S["ev"][i]
                pred = 1 if e["cost"][1] <= e["cost"][0] else 0
                shift = min((e["orv"] & -e["orv"]).bit_length() - 1, 63) if e["orv"] \
                    else e["shift"]
                moved.append(shift != e["shift"])
                if pred != e["pred"] or shift != e["shift"]:
                    e["rice"] = Rice()
                e.update(pred=pred, shift=shift, cost=[0, 0], orv=0)
        res = []
        for i, c in enumerate(counts):
            e = S["ev"][i]
            prev = e["count"] if i < S["n_counts"] else 0
            e["orv"] |= c
            if n < 2:
                p = prev
            else:
                s = e["shift"]
                p = scale(prev, rc) if e["pred"] else prev
                if s:
                    p = (p + (1 << (s - 1))) & ~((1 << s) - 1) & MASK64
            res.append(unsigned(c - p))
            if n >= 1 and (n + 2) % 16 < 4:  # the block's last 4 records (5a.7)
                e["cost"][0] += bitlen(zz64(c - prev))
                e["cost"][1] += bitlen(zz64(c - scale(prev, rc)))
        quiet = self.v3 and n >= 2 and same and self.predicted(1, key) and \
            not any(f[i] and S["qclk"] >> i & 1 for i in range(6)) and \
            not any(res[i] and S["qcnt"] >> i & 1 for i in range(nc))
        self.head(1, key, quiet, same, (n, r["flags"], nc))
        qc = S["qclk"] if quiet else 0
        for i, st in enumerate(("rt", "rb", "rw", "rl", "re", "rr")):
            if i < 4 or mux:
                put_quiet(b, qc >> i & 1, n, S[st], f[i])
        for i in range(nc if block else 0):
            b.put(S["ev"][i]["pred"], 1)
            if moved[i]:
                b.put(0, 1)
                b.put(S["ev"][i]["shift"], 6)
            else:
                b.put(1, 1)
        for i in range(nc):
            if quiet and S["qcnt"] >> i & 1:
                continue
            if n < 2:
                b.raw(zz64(res[i]))
            else:
                put_res(b, S["ev"][i]["rice"], res[i], S["ev"][i]["shift"])
        S["qclk"] = sum(1 << i for i in range(6) if f[i] == 0)
        S["qcnt"] = sum(1 << i for i in range(nc) if res[i] == 0)
        if n:
            db = unsigned(r["read_begin_ns"] - S["begin"])
            dl = unsigned(r["local_clock"] - S["local"])
            if dt == 1:
                S["step"] = db
            S["rate"] = ratio(dl, db, 0)
            S["dlocal"] = dl
        S.update(trigger=r["trigger_id"], begin=r["read_begin_ns"], width=width,
                 local=r["local_clock"], enabled=r["enabled_delta"],
                 running=r["running_delta"], flags=r["flags"], n_counts=nc, n=n + 1)
        for i, c in enumerate(counts):
            S["ev"][i]["count"] = c
        self.seed = (r["trigger_id"], r["read_begin_ns"], S["step"])
        self.count += 1

    def full(self):
        return self.bits is not None and len(self.bits.out) > BATCH_CLOSE

    def close(self):
        """The open batch as a packet of type 20 (b"" when none)."""
        if self.bits is None:
            return b""
        body = varint(self.count) + self.bits.done()
        self.bits = None
        return packet(PKT_BATCH, body)


# ---- chunks (FORMAT.md section 2) -------------------------------------------

class LogWriter:
    def __init__(self, f, tag=0, fmt=1):
        self.f = f
        self.tag = tag  # the recording's tag: low 32 bits of its session ID
        self.fmt = fmt  # the chunks' format version (header field `version`)
        self.seq = 0
        self.offset = 0
        self.chunks = []  # (offset, size in bytes) of every chunk written
        self.new_chunk()

    def new_chunk(self):
        self.payload = bytearray()
        self.packets = 0
        self.first = MASK64
        self.last = 0
        self.state = DeltaState()
        self.f2 = Format2(self.fmt >= 3)

    def note(self, trigger_id):
        self.packets += 1
        self.first = min(self.first, trigger_id)
        self.last = max(self.last, trigger_id)

    def add(self, encoded, trigger_id=None):
        self.payload += self.f2.close()  # a batch ends before any other packet
        self.payload += encoded
        self.packets += 1
        if trigger_id is not None:
            self.first = min(self.first, trigger_id)
            self.last = max(self.last, trigger_id)

    def add_ref(self, r):
        if self.fmt == 1:
            return self.add(ref_pkt(self.state, r), r["trigger_id"])
        if self.f2.full():
            self.payload += self.f2.close()
        self.f2.add_ref(r)
        self.note(r["trigger_id"])

    def add_ret(self, r):
        if self.fmt == 1:
            return self.add(ret_pkt(self.state, r), r["trigger_id"])
        if self.f2.full():
            self.payload += self.f2.close()
        self.f2.add_ret(r)
        self.note(r["trigger_id"])

    def flush(self):
        self.payload += self.f2.close()
        raw = bytes(self.payload)
        frame = subprocess.run(["zstd", "-q", "-c", "-3", f"--stream-size={len(raw)}"],
                               input=raw, stdout=subprocess.PIPE, check=True).stdout
        hdr = bytearray(MAGIC)
        hdr += struct.pack("<HHIQQQIIIII", self.fmt, 64, 0, self.seq, self.first, self.last,
                           len(raw), len(frame), self.packets, crc32c(frame), self.tag)
        hdr += struct.pack("<I", crc32c(bytes(hdr[:60])))
        assert len(hdr) == 64
        self.f.write(bytes(hdr) + frame)
        self.chunks.append((self.offset, len(hdr) + len(frame)))
        self.offset += len(hdr) + len(frame)
        self.seq += 1
        self.new_chunk()

    def empty_chunks(self, n):
        """n chunks of no packets (a zstd frame of nothing), numbered on."""
        frame = subprocess.run(["zstd", "-q", "-c", "--stream-size=0"], input=b"",
                               stdout=subprocess.PIPE, check=True).stdout
        for _ in range(n):
            hdr = bytearray(MAGIC)
            hdr += struct.pack("<HHIQQQIIIII", self.fmt, 64, 0, self.seq, 2**64 - 1, 0,
                               0, len(frame), 0, crc32c(frame), self.tag)
            hdr += struct.pack("<I", crc32c(bytes(hdr[:60])))
            self.f.write(bytes(hdr) + frame)
            self.chunks.append((self.offset, len(hdr) + len(frame)))
            self.offset += len(hdr) + len(frame)
            self.seq += 1


# ---- the synthetic recording ------------------------------------------------

DOMAINS = [(0, DOM_SOFTWARE, "soft", 4), (5000, DOM_PCIE, "pcie0", 3)]


def ref_values(t, grid=False):
    ref = 5_000_000_000 + t * 1_000_000 + (0 if grid else (t * 37) % 1000)
    return dict(trigger_id=t, sched_id=0, bookmark_id=1 if t >= 50 else 0, ref_ns=ref,
                mono_ns=ref if grid else ref + 1000 + t % 3,
                real_ns=ref + 1_700_000_000_000_000_000,
                local_clock=t * 3_000_000, flags=REF_PERIODIC,
                overruns=1 if t % 50 == 0 else 0)


def missed(t, grid):
    """With --grid, the grid point before each overrun has no packets."""
    return grid and t % 50 == 49


def ret_values(t, dom, n_counts, ref_ns):
    mux = dom == 5000 and t % 10 == 0
    begin = ref_ns + 3000 + dom
    counts = [(t * 7 + i * 1000 + dom) % 5000 + ((1 << 40) if i == 0 and t % 50 == 3 else 0)
              for i in range(n_counts)]
    return dict(trigger_id=t, domain_id=dom, flags=RET_MULTIPLEXED if mux else 0,
                local_clock=t * 2_000_000 * (dom + 1), read_begin_ns=begin,
                read_end_ns=begin + 1500 + t % 7, enabled_delta=1_000_000 if mux else 0,
                running_delta=500_000 if mux else 0, counts=counts)


# ---- the realistic recording ------------------------------------------------

REF_COMMAND, REF_FINAL = 4, 8
RET_READ_FAILED, RET_FIRST = 1, 8
DOM_UCF, DOM_CMEM_LAT = 3, 6
KIND_NAMES = {DOM_SOFTWARE: "software", DOM_UCF: "ucf", DOM_PCIE: "pcie",
              DOM_CMEM_LAT: "cmem_lat"}
T0 = 5_000_000_000            # reference clock at the first trigger
REAL_OFF = 1_700_000_000_000_000_000
TSC_HZ = 3_000_000_000        # the scheduler's own clock (reference local_clock)
SCHED_SKEW = 211              # ns between the two schedulers' broadcasts
MASK32 = (1 << 32) - 1

# The domains. Events: (name, unit, counts per second at phase multiplier
# 100 %); an event with rate None is the domain's clock (clock_event), which
# counts at nominal_hz * (1 + ppm / 1e6) in every phase. A domain with
# clock_event -1 is clocked by the reference clock (local_clock is its
# read_begin_ns). "sched": the scheduler index it answers with --schedulers 2.
REAL_DOMAINS = [
    dict(id=2, large_id=5000, kind=DOM_PCIE, name="nvidia_pcie_pmu_0_rc_1", hz=2_548_000_000,
         ppm=23, sched=0, skew=2_000,
         events=[("cycles", "", None), ("rd_bytes", "bytes", 18_000_000_000),
                 ("wr_bytes", "bytes", 13_500_000_000), ("rd_req", "", 280_000_000),
                 ("wr_req", "", 210_000_000), ("rd_cum_outs", "", 560_000_000_000)]),
    dict(id=3, large_id=3, kind=DOM_CMEM_LAT, name="nvidia_cmem_latency_pmu_0", hz=745_000_000,
         ppm=-41, sched=0, skew=6_000,
         events=[("cycles", "", None), ("rd_req", "", 680_000_000),
                 ("rd_cum_outs", "", 111_000_000_000)]),
    dict(id=0, large_id=0, kind=DOM_SOFTWARE, name="software@cpu0", hz=0, ppm=0, sched=0,
         skew=500, clock=-1,
         events=[("cpu-clock", "ns", 350_000_000), ("context-switches", "", 2_000)]),
    dict(id=7, large_id=MASK32, kind=DOM_UCF, name="nvidia_ucf_pmu_1", hz=2_226_000_000,
         ppm=-36, sched=1, skew=9_000,
         events=[("cycles", "", None), ("slc_bytes_rd", "bytes", 52_000_000_000),
                 ("mem_bytes_rd", "bytes", 40_000_000_000),
                 ("mem_bytes_wr", "bytes", 16_000_000_000)]),
]
ODD_NAME = 'pcie "rc,1"'   # quoted in CSV whatever the separator
ODD_PMU = "nvidia;pcie"     # quoted in CSV with -x ';' only
HOSTILE_NAME = "</script><script>alert(1)</script>"
HOSTILE_BOOKMARK = b"load\xff<b>&"
HOSTILE_HOST = "</style><img src=x onerror=alert(2)>"

# Bookmarks (--bookmarks): (name, id, large id, traffic multiplier in %, where
# it is set as a fraction of the recording plus a fraction of a period).
REAL_BOOKMARKS = [
    ("warmup", 1, 1, 40, None),       # set before the first trigger
    ("load", 2, 5000, 200, (0.3, 0.5)),
    ("short", 3, 3, 100, (0.5, 0.3)),  # lasts 0.4 of a period
    ("store", 4, MASK32, 150, (0.5, 0.7)),
    ("load", 2, 5000, 200, (0.8, 0.5)),  # a phase that recurs
]


class Real:
    """One realistic recording: its packets in recording order, and the
    truth needed to say what a reader of the written file gets."""

    def __init__(self, args):
        self.a = args
        self.rng = random.Random(args.seed)
        self.P = args.period_ns
        self.N = args.triggers
        ns = args.schedulers
        self.sched_ids = ([4242] if ns == 1 else [0, 4242]) if args.large_ids \
            else list(range(ns))
        self.doms = []
        for spec in REAL_DOMAINS:
            d = dict(spec)
            d["id"] = spec["large_id"] if args.large_ids else spec["id"]
            d["sched"] = spec["sched"] if ns > 1 else 0
            d["clock"] = spec.get("clock", 0)
            d["pmu"] = spec["name"]
            if args.odd_names and spec["kind"] == DOM_PCIE:
                d["name"], d["pmu"] = ODD_NAME, ODD_PMU
            if args.hostile_names and spec["kind"] == DOM_CMEM_LAT:
                d["name"] = HOSTILE_NAME
            d["rate_hz"] = spec["hz"] + spec["hz"] * spec["ppm"] // 1_000_000
            d["base"] = [self.rng.randrange(1 << 44) for _ in spec["events"]]
            self.doms.append(d)
        self.bookmarks = []
        if args.bookmarks:
            for name, bid, big, mult, at in REAL_BOOKMARKS:
                if args.hostile_names and name == "load":
                    name = HOSTILE_BOOKMARK
                if at is None:
                    set_ns = T0 - self.P // 5
                else:
                    set_ns = T0 + int(self.N * at[0]) * self.P + int(self.P * at[1])
                self.bookmarks.append(dict(name=name, id=big if args.large_ids else bid,
                                           mult=mult, set_ns=set_ns))
        # broadcast instants: period grid, a scheduler skew, a little jitter
        self.ref_ns = [[T0 + k * self.P + s * SCHED_SKEW + (self.rng.randrange(2000) if k else 0)
                        for k in range(self.N)] for s in range(ns)]

    # -- the true counters ---------------------------------------------------

    def bookmark_at(self, t):
        """The bookmark in force at reference time t, or None."""
        cur = None
        for b in self.bookmarks:
            if b["set_ns"] <= t:
                cur = b
        return cur

    def value(self, d, e, t):
        """Raw value of event e of domain d at true instant t (exact floor
        of the integral of its rate since T0)."""
        rate = d["events"][e][2]
        if rate is None:
            return d["base"][e] + d["rate_hz"] * (t - T0) // 1_000_000_000
        edges = [(T0, 100)] + [(max(b["set_ns"], T0), b["mult"]) for b in self.bookmarks]
        acc = 0
        for i, (start, mult) in enumerate(edges):
            end = min(edges[i + 1][0] if i + 1 < len(edges) else t, t)
            if end > start:
                acc += rate * mult * (end - start)
        return d["base"][e] + acc // (100 * 1_000_000_000)

    def read_window(self, t):
        """A read window around the true instant t: mostly 0.2-2.4 us, now
        and then a preempted read of 20-100 us."""
        r = self.rng
        if r.random() < 0.02:
            width = r.randrange(20_000, 100_000)
            lo = t - r.randrange(width + 1)
            return lo, lo + width
        return t - r.randrange(100, 1200), t + r.randrange(100, 1200)

    # -- packets in recording order --------------------------------------------

    def build(self):
        a, r = self.a, self.rng
        sid = self.session_id() if a.copies else None
        items = [dict(kind="meta", desc=True, enc=session_pkt_real(
            self.P, sid, HOSTILE_HOST if self.a.hostile_names else "pyhost"))]
        for d in self.doms:
            items.append(dict(kind="meta", desc=True, enc=domain_pkt(
                d["id"], d["kind"], 0, d["clock"], d["hz"], d["name"],
                self.sched_ids[d["sched"]])))
            for i, (name, unit, _) in enumerate(d["events"]):
                items.append(dict(kind="meta", desc=True, enc=event_pkt(
                    d["id"], i, d["pmu"], name, unit, perf_type=40 + d["kind"])))
        self.rets = []     # every return written, in trigger order per domain
        self.refs = []     # every reference written
        self.dropped = self.read_failures = 0
        logged = [None] * len(self.doms)
        for d in self.doms:
            d.update(dropped=0, late=0, read_failed=0)
        bm_next = 0
        for k in range(self.N):
            while bm_next < len(self.bookmarks) and \
                    self.bookmarks[bm_next]["set_ns"] < self.ref_ns[0][k]:
                b = self.bookmarks[bm_next]
                b["first_trigger"] = k
                items.append(dict(kind="bookmark", bm=b, enc=bookmark_pkt(
                    b["id"], k, b["name"], b["set_ns"])))
                bm_next += 1
            edge = k == 0 or k == self.N - 1  # baseline and final: always written
            for s, sid in enumerate(self.sched_ids):
                ref_ns = self.ref_ns[s][k]
                bm = self.bookmark_at(ref_ns)
                ref = dict(trigger_id=k, sched_id=sid, bookmark_id=bm["id"] if bm else 0,
                           ref_ns=ref_ns, mono_ns=ref_ns + 1000 + k % 5,
                           real_ns=ref_ns + REAL_OFF,
                           local_clock=10**12 + (ref_ns - T0) * TSC_HZ // 1_000_000_000,
                           flags=REF_COMMAND if k == 0 else
                           REF_PERIODIC | (REF_FINAL if k == self.N - 1 else 0),
                           overruns=0)
                if not edge and r.random() < a.drop_refs:
                    self.dropped += 1
                else:
                    ref["uid"] = len(self.refs)
                    self.refs.append(ref)
                    items.append(dict(kind="ref", v=ref))
                for di, d in enumerate(self.doms):
                    if d["sched"] != s:
                        continue
                    t = ref_ns + d["skew"] + r.randrange(30_000)  # the true instant
                    lo, hi = self.read_window(t)
                    now = [self.value(d, e, t) for e in range(len(d["events"]))]
                    local = lo if d["clock"] < 0 else now[d["clock"]]
                    fate = "ok"
                    if not edge:
                        x = r.random()
                        for name, frac in (("drop", a.drop_returns), ("late", a.late),
                                           ("fail", a.read_failures)):
                            if x < frac:
                                fate = name
                                break
                            x -= frac
                    if fate == "drop":
                        d["dropped"] += 1
                        self.dropped += 1
                        continue
                    if fate == "late":
                        d["late"] += 1
                        continue
                    ret = dict(trigger_id=k, domain_id=d["id"], flags=0, local_clock=local,
                               read_begin_ns=lo, read_end_ns=hi, enabled_delta=0,
                               running_delta=0, dom=di, uid=len(self.rets))
                    if fate == "fail":
                        d["read_failed"] += 1
                        self.read_failures += 1
                        ret.update(flags=RET_READ_FAILED, local_clock=0, counts=[0] * len(now))
                    elif k == 0:
                        ret.update(flags=RET_FIRST, counts=[0] * len(now))
                        logged[di] = now
                    else:  # deltas against the last value LOGGED
                        ret["counts"] = [(v - p) & MASK64 for v, p in zip(now, logged[di])]
                        logged[di] = now
                    self.rets.append(ret)
                    items.append(dict(kind="ret", v=ret))
        last = self.ref_ns[-1][-1]
        items.append(dict(kind="meta", enc=status_pkt(self.N * len(self.sched_ids), 0,
                                                      self.dropped, self.read_failures, last)))
        return items

    def disorder(self, items):
        """Duplicates, then chunks, then reordering inside each chunk."""
        a, r = self.a, self.rng
        keyed = []
        for i, it in enumerate(items):
            keyed.append((i, 0, it))
            if it["kind"] in ("ref", "ret") and r.random() < a.duplicate:
                keyed.append((i + r.randrange(1, 7), 1, it))  # written again, a bit later
        if keyed and keyed[-1][2]["kind"] == "meta":  # the status packet stays last
            tail = keyed.pop()
            keyed.sort(key=lambda x: (x[0], x[1]))
            keyed.append(tail)
        else:
            keyed.sort(key=lambda x: (x[0], x[1]))
        stream = [it for _, _, it in keyed]
        n = max(1, a.chunk_packets)
        chunks = [stream[i:i + n] for i in range(0, len(stream), n)]
        if a.reorder > 0:
            for c in chunks:
                # each packet moves by less than `reorder` places
                slots = [i for i, it in enumerate(c) if it["kind"] in ("ref", "ret")]
                sub = [c[i] for i in slots]
                order = sorted(range(len(sub)), key=lambda j: j + r.uniform(0, a.reorder))
                for i, j in zip(slots, order):
                    c[i] = sub[j]
        return chunks

    def session_id(self):
        """Format 1.1's session ID: any random u64 whose low 32 bits are not
        0; here a function of the seed, so the bytes stay reproducible."""
        sid = random.Random(f"session {self.a.seed}").getrandbits(64)
        return sid if sid & MASK32 else sid | 1

    def copies(self, chunks, k):
        """The copies that open chunk k (FORMAT.md 4.8): the metadata packets
        of chunk k - 1, then every FULL_COPY_EVERY chunks the whole
        description (the session, every domain and event, the latest
        bookmark) but what the first part already repeats."""
        prev = [it for it in chunks[k - 1] if it.get("desc") or it["kind"] == "bookmark"] \
            if k else []
        out = list(prev)
        if k and k % FULL_COPY_EVERY == 0:
            before = [it for c in chunks[:k] for it in c]
            desc = [it for it in before if it.get("desc")]
            marks = [it for it in before if it["kind"] == "bookmark"]
            out += [it for it in desc + marks[-1:] if not any(it is p for p in prev)]
        return out

    def write(self, path, append=False):
        a = self.a
        chunks = self.disorder(self.build())
        tag = self.session_id() & MASK32 if a.copies else 0
        with open(path, "ab" if append else "wb") as f:
            base = f.tell()
            w = LogWriter(f, tag, a.format)
            for k, c in enumerate(chunks):
                for it in self.copies(chunks, k) if a.copies else ():
                    w.add(packet(PKT_COPY, it["enc"]))
                    it.setdefault("in_chunks", []).append(k)
                for it in c:
                    if it["kind"] == "ref":
                        w.add_ref(it["v"])
                    elif it["kind"] == "ret":
                        w.add_ret(it["v"])
                    else:
                        w.add(it["enc"])
                    it.setdefault("in_chunks", []).append(k)
                w.flush()
            size = w.offset
        if append:
            return
        if any(not 0 <= k < len(w.chunks) for k in a.damage + a.damage_magic):
            sys.exit(f"t4write.py: --damage: chunks are 0..{len(w.chunks) - 1}")
        with open(path, "r+b") as f:
            for k in a.damage:
                off, n = w.chunks[k]
                f.seek(off + 64 + (n - 64) // 2)  # the middle of the zstd frame
                b = f.read(1)
                f.seek(off + 64 + (n - 64) // 2)
                f.write(bytes([b[0] ^ 0xFF]))
            for k in a.damage_magic:
                f.seek(w.chunks[k][0] + 3)  # the magic's 'T': header damaged
                b = f.read(1)
                f.seek(w.chunks[k][0] + 3)
                f.write(bytes([b[0] ^ 0x10]))
            if a.truncate:
                size = max(0, size - a.truncate)
                f.truncate(size)
        damaged = set(a.damage) | set(a.damage_magic)
        intact = [k not in damaged and off + n <= size for k, (off, n) in enumerate(w.chunks)]
        if a.second_seed is not None:
            second = argparse.Namespace(**vars(a))
            second.seed = a.second_seed
            Real(second).write(path, append=True)
        if a.truth:
            with open(a.truth, "w") as f:
                t = self.truth(chunks, intact, w.chunks, size)
                t["next_recording"] = size if a.second_seed is not None else None
                json.dump(t, f, indent=1)
                f.write("\n")

    # -- what a reader of the file gets ------------------------------------------

    def truth(self, chunks, intact, spans, size):
        copies_ret = [0] * len(self.rets)
        copies_ref = [0] * len(self.refs)
        for b in self.bookmarks:
            b["lost"] = True
        for k, c in enumerate(chunks):
            for it in c:
                if it["kind"] == "bookmark" and any(intact[j] for j in it["in_chunks"]):
                    it["bm"]["lost"] = False  # its packet, or a copy of it, survived
                ok = intact[k]
                if ok and it["kind"] == "ret":
                    copies_ret[it["v"]["uid"]] += 1
                elif ok and it["kind"] == "ref":
                    copies_ref[it["v"]["uid"]] += 1
        doms = []
        for di, d in enumerate(self.doms):
            mine = [x for x in self.rets if x["dom"] == di and not x["flags"] & RET_READ_FAILED]
            n_ev = len(d["events"])
            total = [sum(x["counts"][e] for x in mine) for e in range(n_ev)]
            got = [x for x in mine if copies_ret[x["uid"]]]
            delivered = [0] * n_ev
            carried = lost_trig = 0
            # every return read, failed reads too: a copy is no answer
            read = [x for x in self.rets if x["dom"] == di and copies_ret[x["uid"]]]
            dups = sum(copies_ret[x["uid"]] - 1 for x in read)
            answered = {x["trigger_id"] for x in read}
            ids = sorted({x["trigger_id"] for x in self.refs if copies_ref[x["uid"]] and
                          x["sched_id"] == self.sched_ids[d["sched"]]})
            triggers = ids[-1] - ids[0] + 1 if ids else 0
            if answered and ids and min(answered) > ids[0]:
                triggers = min(triggers, max(0, ids[-1] - min(answered) + 1))
            # a first sample that is not the baseline (damage took the chunks
            # before it) has no sample before it: its counts have no start
            unplaced = int(bool(got) and not got[0]["flags"] & RET_FIRST)
            prev = None
            for x in got:
                if prev is None:
                    # the first sample read starts the timeline: a baseline
                    # (FIRST, counts 0), or, after damage, counts that have
                    # no start (lost)
                    prev = x
                    continue
                gap = x["trigger_id"] - prev["trigger_id"] - 1
                # the gap's counts are lost iff a good return inside it was
                # written (x's deltas are against that one), else carried
                if any(prev["trigger_id"] < y["trigger_id"] < x["trigger_id"] for y in mine):
                    lost_trig += gap
                else:
                    carried += gap
                prev = x
                for e in range(n_ev):
                    delivered[e] += x["counts"][e]
            events = [dict(index=e, name=name, unit=unit, total=total[e],
                           delivered=delivered[e], lost=total[e] - delivered[e])
                      for e, (name, unit, _) in enumerate(d["events"])]
            doms.append(dict(
                id=d["id"], name=d["name"], pmu=d["pmu"], kind=KIND_NAMES[d["kind"]],
                sched_id=self.sched_ids[d["sched"]], nominal_hz=d["hz"],
                clock_hz=d["rate_hz"] if d["clock"] >= 0 else None,
                reference_clocked=d["clock"] < 0, returns=len(mine),
                dropped=d["dropped"], late=d["late"], read_failed=d["read_failed"],
                carried=carried, lost_triggers=lost_trig, duplicates=dups, unplaced=unplaced,
                unanswered=max(0, triggers - len(answered)),
                partial=any(ev["lost"] for ev in events), events=events))
        refs_missing = 0
        for sid in self.sched_ids:
            seen = sorted({x["trigger_id"] for x in self.refs
                           if x["sched_id"] == sid and copies_ref[x["uid"]]})
            if seen:
                refs_missing += seen[-1] - seen[0] + 1 - len(seen)
        first = [x["ref_ns"] for x in self.refs if copies_ref[x["uid"]]]
        return dict(
            period_ns=self.P, triggers=self.N, sched_ids=self.sched_ids,
            origin_ns=min(first) if first else None,
            chunks=len(chunks), bytes=size,
            damaged_chunks=sorted(set(self.a.damage) | set(self.a.damage_magic)),
            lost_chunks=[k for k, ok in enumerate(intact) if not ok],
            truncated=size < sum(n for _, n in spans),
            status_present=intact[-1] if intact else False,
            dropped=self.dropped, read_failures=self.read_failures,
            refs_missing=refs_missing,
            partial=any(d["partial"] for d in doms),
            bookmarks=[dict(id=b["id"], set_ns=b["set_ns"],
                            name=b["name"].decode(errors="backslashreplace")
                            if isinstance(b["name"], bytes) else b["name"],
                            first_trigger=b.get("first_trigger"), lost=b["lost"])
                       for b in self.bookmarks],
            domains=doms)


def session_pkt_real(period_ns, session_id=None, host="pyhost"):
    body = (string(host, 63) + string("6.0.0-python", 127) + string("t4write.py", 31)
            + string("tools/t4write.py --realistic (independent writer)", 2047)
            + varint(T0 - 1_000_000) + varint(REAL_OFF + T0) + varint(period_ns)
            + varint(0))
    if session_id is not None:  # format 1.1: ref_clock (0), then the session ID
        body += varint(0) + varint(session_id)
    return packet(PKT_SESSION, body)


def fraction(s):
    v = float(s)
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"{s}: a fraction between 0 and 1")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--triggers", type=int, default=250)
    ap.add_argument("--per-chunk", type=int, default=100)
    ap.add_argument("--empty-chunks", type=int, default=0, metavar="N",
                    help="N chunks of no packets after each chunk but the last (the "
                         "default recording; a decoder must not slow down for them)")
    ap.add_argument("--grid", action="store_true",
                    help="the default recording as the in-kernel trigger path writes it")
    ap.add_argument("--format", type=int, choices=(1, 2, 3), default=1,
                    help="format version of the chunks: 1 (default), 2 (section 5a: "
                         "trigger packets in batches) or 3 (5a.8: quiet records, seeded "
                         "first records)")
    real = ap.add_argument_group("the realistic recording (any of these selects it)")
    real.add_argument("--realistic", action="store_true", help="no damage, defaults")
    real.add_argument("--seed", type=int, default=None)
    real.add_argument("--period-ns", type=int, default=None)
    real.add_argument("--chunk-packets", type=int, default=None)
    real.add_argument("--drop-returns", type=fraction, default=None)
    real.add_argument("--drop-refs", type=fraction, default=None)
    real.add_argument("--late", type=fraction, default=None)
    real.add_argument("--read-failures", type=fraction, default=None)
    real.add_argument("--duplicate", type=fraction, default=None)
    real.add_argument("--reorder", type=int, default=None)
    real.add_argument("--damage", type=int, action="append", default=None)
    real.add_argument("--truncate", type=int, default=None)
    real.add_argument("--damage-magic", type=int, action="append", default=None)
    real.add_argument("--copies", action="store_true", default=None)
    real.add_argument("--second-seed", type=int, default=None)
    real.add_argument("--schedulers", type=int, choices=(1, 2), default=None)
    real.add_argument("--large-ids", action="store_true", default=None)
    real.add_argument("--bookmarks", action="store_true", default=None)
    real.add_argument("--odd-names", action="store_true", default=None)
    real.add_argument("--hostile-names", action="store_true", default=None)
    real.add_argument("--truth", default=None)
    args = ap.parse_args()

    realistic = any(getattr(args, k) not in (None, False) for k in (
        "realistic", "seed", "period_ns", "chunk_packets", "drop_returns", "drop_refs", "late",
        "read_failures", "duplicate", "reorder", "damage", "truncate", "schedulers",
        "large_ids", "bookmarks", "odd_names", "hostile_names", "truth", "damage_magic",
        "copies", "second_seed"))
    if realistic and args.grid:
        ap.error("--grid: only for the default recording")
    if realistic:
        for k, v in dict(seed=1, period_ns=1_000_000, chunk_packets=500, drop_returns=0.0,
                         drop_refs=0.0, late=0.0, read_failures=0.0, duplicate=0.0, reorder=0,
                         damage=[], truncate=0, schedulers=1, large_ids=False,
                         bookmarks=False, odd_names=False, hostile_names=False,
                         damage_magic=[], copies=False).items():
            if getattr(args, k) is None:
                setattr(args, k, v)
        if args.triggers < 2:
            ap.error("--triggers: at least 2 (a baseline and one interval)")
        Real(args).write(args.out)
        return 0
    legacy(args)
    return 0


def legacy(args):
    """The default recording (its bytes are pinned by the info test)."""
    written = 0
    with open(args.out, "wb") as f:
        w = LogWriter(f, fmt=args.format)
        w.add(session_pkt(1_000_000, args.grid))
        for dom, kind, name, n in DOMAINS:
            w.add(domain_pkt(dom, kind, -1, -1, 0, name))
            for i in range(n):
                w.add(event_pkt(dom, i, name, f"ev{i}"))
        w.add(bookmark_pkt(1, 50, "py-phase"))
        w.add(packet(100, b"\x01\x02\x03"))  # a type no reader knows: skipped
        for t in range(args.triggers):
            r = ref_values(t, args.grid)
            if not missed(t, args.grid):
                w.add_ref(r)
                for dom, _, _, n in DOMAINS:
                    w.add_ret(ret_values(t, dom, n, r["ref_ns"]))
                written += 1
            if (t + 1) % args.per_chunk == 0 and t + 1 < args.triggers:
                w.flush()
                w.empty_chunks(args.empty_chunks)
        last_ref = ref_values(args.triggers - 1, args.grid)["ref_ns"] if args.triggers else 0
        w.add(status_pkt(written, 5, 2, 0, last_ref))
        w.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
