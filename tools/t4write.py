#!/usr/bin/env python3
"""t4write.py - an independent t410trace log writer, written from
docs/FORMAT.md alone (Python 3 standard library + the `zstd` command line).

It exists to prove that FORMAT.md is complete: the test suite runs it and
checks the log with `t410trace info --json` and the C reader. It writes a
small synthetic recording whose every value follows a formula (see
ref_values / ret_values), with delta coding for domain 0 and scheduler 0,
absolute coding (abs = 1) for domain 5000 (IDs >= 4096 must be absolute),
one packet of an unknown type, and a status packet at the end.

With --grid it writes what the in-kernel trigger path records instead
(FORMAT.md 4.1 and 6): the session says BPF_TRIGGER and ref_clock
CLOCK_MONOTONIC (appended field), reference packets sit exactly on the grid
with mono_ns = ref_ns, and trigger IDs are grid indexes: each ID with
overruns 1 (t % 50 == 0) follows a gap, the grid point the scheduler missed
(no reference or return packet for ID t - 1).

usage: t4write.py OUT [--triggers N] [--per-chunk K] [--grid]
"""
import argparse
import struct
import subprocess
import sys

MAGIC = b"T4TRACE\x1a"
MASK64 = (1 << 64) - 1

PKT_SESSION, PKT_DOMAIN, PKT_EVENT, PKT_BOOKMARK, PKT_STATUS = 1, 2, 3, 4, 5
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
    b = s.encode()
    assert len(b) <= max_len and b"\0" not in b
    return varint(len(b)) + b


def f64(d):
    return struct.pack("<d", d)


def packet(ptype, body):
    return varint(ptype) + varint(len(body)) + body


# ---- packets (FORMAT.md section 4) ------------------------------------------

def session_pkt(period_ns, grid):
    body = (string("pyhost", 63) + string("6.0.0-python", 127) + string("t4write.py", 31)
            + string("tools/t4write.py (independent writer)", 2047)
            + varint(5_000_000_000) + varint(1_700_000_000_000_000_000)
            + varint(period_ns))
    if grid:  # flags, then the appended ref_clock
        body += varint(SESSION_SIMULATED | SESSION_BPF_TRIGGER) + varint(REFCLK_MONOTONIC)
    else:
        body += varint(SESSION_SIMULATED)
    return packet(PKT_SESSION, body)


def domain_pkt(dom_id, kind, cpu, clock_event, hz, name):
    body = (varint(dom_id) + varint(kind) + zz(cpu) + zz(clock_event) + varint(hz)
            + string(name, 63))
    return packet(PKT_DOMAIN, body)


def event_pkt(dom_id, index, pmu, name):
    body = (varint(dom_id) + varint(index) + varint(1) + varint(0) + varint(index)
            + varint(0) + varint(0) + f64(1.0) + string(pmu, 63) + string(name, 63)
            + string(f"{pmu}/{name}/", 255) + string("", 31))
    return packet(PKT_EVENT, body)


def bookmark_pkt(bm_id, first_trigger, name):
    return packet(PKT_BOOKMARK, varint(bm_id) + varint(first_trigger) + string(name, 63))


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


# ---- chunks (FORMAT.md section 2) -------------------------------------------

class LogWriter:
    def __init__(self, f):
        self.f = f
        self.seq = 0
        self.new_chunk()

    def new_chunk(self):
        self.payload = bytearray()
        self.packets = 0
        self.first = MASK64
        self.last = 0
        self.state = DeltaState()

    def add(self, encoded, trigger_id=None):
        self.payload += encoded
        self.packets += 1
        if trigger_id is not None:
            self.first = min(self.first, trigger_id)
            self.last = max(self.last, trigger_id)

    def flush(self):
        raw = bytes(self.payload)
        frame = subprocess.run(["zstd", "-q", "-c", "-3", f"--stream-size={len(raw)}"],
                               input=raw, stdout=subprocess.PIPE, check=True).stdout
        hdr = bytearray(MAGIC)
        hdr += struct.pack("<HHIQQQIIIII", 1, 64, 0, self.seq, self.first, self.last,
                           len(raw), len(frame), self.packets, crc32c(frame), 0)
        hdr += struct.pack("<I", crc32c(bytes(hdr[:60])))
        assert len(hdr) == 64
        self.f.write(bytes(hdr) + frame)
        self.seq += 1
        self.new_chunk()


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--triggers", type=int, default=250)
    ap.add_argument("--per-chunk", type=int, default=100)
    ap.add_argument("--grid", action="store_true")
    args = ap.parse_args()
    written = 0

    with open(args.out, "wb") as f:
        w = LogWriter(f)
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
                w.add(ref_pkt(w.state, r), t)
                for dom, _, _, n in DOMAINS:
                    w.add(ret_pkt(w.state, ret_values(t, dom, n, r["ref_ns"])), t)
                written += 1
            if (t + 1) % args.per_chunk == 0 and t + 1 < args.triggers:
                w.flush()
        last_ref = ref_values(args.triggers - 1, args.grid)["ref_ns"] if args.triggers else 0
        w.add(status_pkt(written, 5, 2, 0, last_ref))
        w.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
