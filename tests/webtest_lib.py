# SPDX-License-Identifier: MIT
"""Shared by web_api_test.py and web_test.py: a private cluster, a running
`smartio web`, TAP output and a strict parser of the Prometheus text format."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

BUILD = os.environ.get("SMARTIO_BUILD_DIR", "./build")
SMARTIO = os.path.realpath(os.path.join(BUILD, "tools/smartio/smartio"))


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, detail=""):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, desc), flush=True)
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, desc), flush=True)
            for line in str(detail).splitlines()[:30]:
                print("#   " + line, flush=True)
        return cond

    def done(self):
        print("1..%d" % self.n)
        if self.failed:
            print("# %d of %d checks failed" % (self.failed, self.n))
        return 1 if self.failed else 0


class Cluster:
    """The default 3-host cluster in a temporary directory."""

    def __init__(self):
        if not os.access(SMARTIO, os.X_OK):
            print("Bail out! no smartio binary at %s (set SMARTIO_BUILD_DIR)" % SMARTIO)
            sys.exit(2)
        self.work = tempfile.mkdtemp(prefix="smartio-web-")
        self.dir = os.path.join(self.work, "c")
        self.env = dict(os.environ, SMARTIO_CLUSTER=self.dir)
        self.env.pop("SMARTIO_HOST", None)
        self.web = None

    def run(self, *args, timeout=60):
        return subprocess.run([SMARTIO] + list(args), env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def up(self):
        r = self.run("cluster", "up")
        if r.returncode:
            raise RuntimeError("cluster up failed: " + r.stdout + r.stderr)

    def start_web(self, *extra):
        """Start `smartio web` on a free loopback port; (url, token)."""
        self.web_out = open(os.path.join(self.work, "web.out"), "w+")
        self.web = subprocess.Popen([SMARTIO, "web", "--listen", "127.0.0.1:0"] + list(extra),
                                    env=self.env, stdout=self.web_out, stderr=subprocess.STDOUT,
                                    text=True)
        deadline = time.time() + 20
        while time.time() < deadline:
            self.web_out.seek(0)
            text = self.web_out.read()
            m = re.search(r"the page with it: (http://[^ ]+/)#token=([0-9a-f]+)", text)
            if m:
                return m.group(1), m.group(2)
            if self.web.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("smartio web did not start: " + text)

    def stop_web(self):
        if self.web and self.web.poll() is None:
            self.web.send_signal(signal.SIGTERM)
            try:
                return self.web.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.web.kill()
                self.web.wait()
                return None
        return self.web.returncode if self.web else None

    def close(self):
        self.stop_web()
        if os.path.exists(os.path.join(self.dir, "topology.yaml")):
            self.run("cluster", "down")
        shutil.rmtree(self.work, ignore_errors=True)


def http(url, data=None, headers=None, method=None, timeout=10):
    """(status, content-type, body text) of one request; never raises on HTTP errors."""
    if isinstance(data, dict):
        data = urllib.parse.urlencode(data).encode()
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def state(url):
    return json.loads(http(url + "api/state")[2])


def wait_for(pred, timeout, step=0.05):
    """pred() until true or timeout seconds; its last value."""
    deadline = time.time() + timeout
    while True:
        v = pred()
        if v or time.time() >= deadline:
            return v
        time.sleep(step)


# ---------- Prometheus text exposition format 0.0.4, strictly ----------

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(?:\{((?:%s)(?:,%s)*)?,?\})? (\S+)(?: (-?\d+))?$" % (NAME, LABEL, LABEL))
VALUE = re.compile(r"^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$")


def parse_prometheus(text):
    """{metric: {"type", "help", "samples": [(labels, value)]}}; raises ValueError."""
    metrics, seen_series, done = {}, set(), set()
    current = None
    if text and not text.endswith("\n"):
        raise ValueError("the last line has no newline")
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not re.fullmatch(NAME, name):
                    raise ValueError("line %d: bad metric name %r" % (no, name))
                m = metrics.setdefault(name, {"type": None, "help": None, "samples": []})
                key = parts[1].lower()
                if m[key] is not None:
                    raise ValueError("line %d: second %s for %s" % (no, parts[1], name))
                if m["samples"]:
                    raise ValueError("line %d: %s after samples of %s" % (no, parts[1], name))
                if key == "type":
                    if len(parts) != 4 or parts[3] not in ("counter", "gauge", "histogram",
                                                            "summary", "untyped"):
                        raise ValueError("line %d: bad TYPE %r" % (no, line))
                    m["type"] = parts[3]
                else:
                    m["help"] = parts[3] if len(parts) == 4 else ""
                if current and current != name:
                    done.add(current)
                current = name
            continue
        s = SAMPLE.match(line)
        if not s:
            raise ValueError("line %d: not a sample: %r" % (no, line))
        name, labels, value = s.group(1), s.group(2) or "", s.group(3)
        if not VALUE.match(value):
            raise ValueError("line %d: bad value %r" % (no, value))
        if name in done:
            raise ValueError("line %d: samples of %s are not together" % (no, name))
        if current and current != name:
            done.add(current)
        current = name
        m = metrics.setdefault(name, {"type": None, "help": None, "samples": []})
        if (name, labels) in seen_series:
            raise ValueError("line %d: duplicate series %s{%s}" % (no, name, labels))
        seen_series.add((name, labels))
        pairs = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', labels))
        m["samples"].append((pairs, float(value)))
    return metrics
