"""Starts the built mamtelemetryd on a free loopback port with a throw-away data directory,
and talks to it over HTTP (urllib: no extra dependency)."""

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


class Daemon:
    def __init__(self, binary):
        self.binary = binary
        self.workdir = tempfile.mkdtemp(prefix="mamtd-console-")
        self.data = os.path.join(self.workdir, "data")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = None
        self.admin = None

    def start(self):
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID")}
        self.log = open(os.path.join(self.workdir, "daemon.log"), "wb")
        self.process = subprocess.Popen(
            [self.binary, "--data-dir", self.data, "--listen", f"127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mamtelemetryd exited with {self.process.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(self.base + "/readyz", timeout=2) as r:
                    if r.status == 200 and os.path.exists(os.path.join(self.data, "admin.token")):
                        break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("mamtelemetryd did not become ready within 30 s")
        with open(os.path.join(self.data, "admin.token")) as f:
            self.admin = f.read().strip()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def request(self, method, path, body=None, token=None, content_type="application/json", accept=None):
        data = body if isinstance(body, (bytes, type(None))) else body.encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {token or self.admin}")
        if data is not None:
            req.add_header("Content-Type", content_type)
        if accept:
            req.add_header("Accept", accept)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def post_json(self, path, obj, content_type="application/json"):
        status, body = self.request("POST", path, json.dumps(obj), content_type=content_type)
        assert 200 <= status < 300, f"POST {path}: HTTP {status} {body[:300]!r}"
        return json.loads(body)

    def post_ndjson(self, path, records):
        body = "\n".join(json.dumps(r) for r in records)
        status, answer = self.request("POST", path, body, content_type="application/x-ndjson")
        assert status == 200, f"POST {path}: HTTP {status} {answer[:300]!r}"
        return json.loads(answer)

    def token(self, name, scopes):
        return self.post_json("/v1/tokens", {"name": name, "scopes": scopes})["token"]
