#!/usr/bin/env python3
"""Self-test of kubo_peer.py: kubo <-> kubo on loopback, no syncscope involved.

    interop/kubo/install.sh && python3 interop/kubo/selftest.py [--mib 16] [--quick]

Starts `serve` and `fetch` as separate processes, checks sha256, and prints one
JSON line per case (with timings) and a final "N passed, N failed" line.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "kubo_peer.py")
PY = os.path.join(HERE, ".venv", "bin", "python")

results = []


def run(args, timeout=180):
    t = time.monotonic()
    p = subprocess.run([PY, PEER, *args], capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    events = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return p.returncode, events, p.stderr, int((time.monotonic() - t) * 1000)


class Server:
    def __init__(self, args):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([PY, PEER, "serve", *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        self.ready_ms = int((time.monotonic() - self.t0) * 1000)
        if not line:
            raise RuntimeError("serve exited: " + self.p.stderr.read()[-2000:])
        self.ready = json.loads(line)
        if self.ready.get("event") != "ready":
            raise RuntimeError(f"serve: {self.ready}")

    def addr(self, ws):
        return next(a for a in self.ready["addrs"] if ("/ws/" in a) == ws)

    def stop(self, how="stdin"):
        if how == "stdin":
            self.p.stdin.close()
        else:
            self.p.terminate()
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "killed"
        tail = [json.loads(x) for x in self.p.stdout.read().splitlines() if x.strip()]
        return rc, tail


def case(name, ok, **facts):
    results.append(ok)
    print(json.dumps({"case": name, "ok": bool(ok), **facts}), flush=True)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=16)
    ap.add_argument("--quick", action="store_true", help="tcp/rsa transfer and errors only")
    a = ap.parse_args()
    if not os.path.exists(PY):
        sys.exit(f"run {HERE}/install.sh first")
    tmp = tempfile.mkdtemp(prefix="kubo-selftest-")
    src = os.path.join(tmp, "random.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(a.mib << 20))
    want = sha(src)

    combos = [("tcp", "rsa")] if a.quick else [("tcp", "rsa"), ("ws", "rsa"),
                                                 ("tcp", "ed25519"), ("ws", "ed25519")]
    for transport, key in combos:
        srv = Server(["--file", src, "--key-type", key])
        try:
            out = os.path.join(tmp, f"got-{transport}-{key}.bin")
            rc, ev, err, wall = run(["fetch", "--connect", srv.addr(transport == "ws"),
                                     "--cid", srv.ready["cid"], "--out", out,
                                     "--key-type", key, "--timeout-ms", "60000"])
            fetched = ev[-1] if ev else {}
            ok = rc == 0 and fetched.get("sha256") == want and sha(out) == want
            case(f"fetch-{transport}-{key}", ok, cid=srv.ready["cid"],
                 bytes=fetched.get("bytes"), fetch_ms=fetched.get("ms"),
                 connect_ms=fetched.get("connect_ms"),
                 mib_per_s=round(a.mib / (fetched["ms"] / 1000), 1) if fetched.get("ms") else None,
                 fetch_process_ms=wall, serve_ready_ms=srv.ready_ms,
                 serve_startup_ms=srv.ready.get("startup_ms"), server_peer=srv.ready["peer"],
                 **({} if ok else {"rc": rc, "stderr": err[-1500:]}))
        finally:
            rc, tail = srv.stop("stdin" if transport == "tcp" else "term")
            case(f"serve-stops-on-{'stdin-eof' if transport == 'tcp' else 'sigterm'}",
                 rc == 0 and tail and tail[-1].get("event") == "stopped", rc=rc)
        os.unlink(out)

    if not a.quick:
        car = os.path.join(tmp, "random.car")
        rc, ev, err, wall = run(["car-export", "--file", src, "--out", car])
        exp = ev[-1] if ev else {}
        case("car-export", rc == 0 and exp.get("sha256") == want, root=exp.get("root"),
             blocks=exp.get("blocks"), car_bytes=exp.get("car_bytes"), ms=wall)
        rc, ev, err, wall = run(["car-import", "--car", car])
        imp = ev[-1] if ev else {}
        kr = (imp.get("kubo_read") or [{}])[0]
        case("car-import", rc == 0 and imp.get("roots") == [exp.get("root")]
             and kr.get("sha256") == want, blocks=imp.get("blocks"), ms=wall)

        srv = Server(["--car", car])
        try:
            out = os.path.join(tmp, "got-car.bin")
            rc, ev, err, wall = run(["fetch", "--connect", srv.addr(False),
                                     "--cid", srv.ready["cid"], "--out", out])
            case("serve-car-fetch", rc == 0 and sha(out) == want,
                 fetch_ms=(ev[-1].get("ms") if ev else None))
        finally:
            srv.stop()

        srv = Server(["--file", src, "--kubo-add"])
        try:
            out = os.path.join(tmp, "got-v0.bin")
            rc, ev, err, wall = run(["fetch", "--connect", srv.addr(False),
                                     "--cid", srv.ready["cid"], "--out", out])
            case("serve-kubo-add-v0-fetch", rc == 0 and sha(out) == want
                 and srv.ready["cid"].startswith("Qm"), cid=srv.ready["cid"],
                 fetch_ms=(ev[-1].get("ms") if ev else None))
        finally:
            srv.stop()

    # errors: clear message, non-zero exit
    rc, ev, err, _ = run(["fetch", "--connect", "/ip4/10.0.0.1/tcp/4001/p2p/QmVmp5jN18W1t21PfB6V45h9fA7km8eGUWRpVFN9Yr1Evh",
                          "--cid", "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"])
    case("refuses-non-loopback", rc == 2 and ev and ev[-1]["event"] == "error", rc=rc)
    srv = Server(["--file", src])
    try:
        missing = "bafkreiaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        rc, ev, err, wall = run(["fetch", "--connect", srv.addr(False), "--cid", missing,
                                 "--timeout-ms", "3000"])
        case("timeout-exit-3", rc == 3 and ev and ev[-1]["event"] == "error", rc=rc, ms=wall,
             message=(ev[-1].get("message") if ev else None))
    finally:
        srv.stop()
    rc, ev, err, _ = run(["fetch", "--connect", "/ip4/127.0.0.1/tcp/1/p2p/QmVmp5jN18W1t21PfB6V45h9fA7km8eGUWRpVFN9Yr1Evh",
                          "--cid", "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"])
    case("connect-refused-exit-1", rc == 1 and ev and ev[-1]["event"] == "error", rc=rc,
         message=(ev[-1].get("message") if ev else None))

    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
    main()
