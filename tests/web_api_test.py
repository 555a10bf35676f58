#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""smartio web's endpoints and smartio top without a browser (docs/web.md).

On the default 3-host cluster: usage errors exit 2 and a non-loopback --listen
is refused; the token file is 0600; / is the page, /api/state the snapshot
(3 hosts, 5 devices), /metrics strict Prometheus text; POST without or with a
wrong token is 403, with it a borrow shows up as a lease in the snapshot;
NVMe I/O moves the device's counters in /api/state and /metrics (interrupts
per vector as a vector="N" label); a borrow made by the CLI shows its driver
(the borrower's daemon reports it); /events pushes a link going down within
1 s and the daemon's own link-down event follows; a foreign Host header is refused;
an idle server uses almost no CPU; SIGTERM ends it and removes the token.
TAP output."""
import json
import os
import queue
import stat
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webtest_lib import Cluster, Tap, http, parse_prometheus, state, wait_for  # noqa: E402

NVME_A = "0x00080400"
GPU_A = "0x00080500"
CABLE0 = "h0.ntb0-mxs0"


def sse_reader(url, q, stop):
    """Snapshots from /events onto q until stop is set."""
    try:
        with urllib.request.urlopen(url + "events", timeout=30) as r:
            data = []
            for raw in r:
                if stop.is_set():
                    return
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    data.append(line[6:])
                elif not line and data:
                    q.put((time.time(), json.loads("".join(data))))
                    data = []
    except Exception as e:  # noqa: BLE001 (the test reports what the reader saw)
        q.put((time.time(), {"error": str(e)}))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    t = Tap()
    c = Cluster()
    try:
        for args, why in ((["web", "--bogus"], "unknown option"), (["web", "extra"], "extra argument"),
                          (["web", "--listen", "nonsense"], "--listen without a port"),
                          (["top", "--interval", "soon"], "bad --interval")):
            r = c.run(*args)
            t.ok(r.returncode == 2, "usage error exits 2: " + why, r.stdout + r.stderr)
        r = c.run("web", "--help")
        t.ok(r.returncode == 0 and "--listen" in r.stdout, "web --help", r.stderr)
        r = c.run("top", "--help")
        t.ok(r.returncode == 0 and "--once" in r.stdout, "top --help", r.stderr)
        r = c.run("web")
        t.ok(r.returncode == 1 and "cluster up" in r.stderr, "web without a cluster says so", r.stderr)

        c.up()
        r = c.run("web", "--listen", "192.0.2.1:8080")
        t.ok(r.returncode == 2 and "loopback" in r.stderr and "--allow-remote" in r.stderr,
             "a non-loopback --listen is refused with the reason", r.stderr)

        r = c.run("top", "--once")
        t.ok(r.returncode == 0 and r.stdout.count(" up ") >= 3 and "0x000c0300" in r.stdout and
             "\033[" not in r.stdout, "top --once: hosts, pool, no escapes", r.stdout + r.stderr)
        r = c.run("top", "--once", "--json")
        try:
            snap = json.loads(r.stdout)
            t.ok(len(snap["hosts"]) == 3 and len(snap["devices"]) == 5 and snap["events"],
                 "top --once --json: the snapshot", r.stdout[:500])
        except ValueError as e:
            t.ok(False, "top --once --json: the snapshot", "%s\n%s" % (e, r.stdout[:500]))

        url, token = c.start_web()
        path = os.path.join(c.dir, "web-token")
        st = os.stat(path)
        t.ok(stat.S_IMODE(st.st_mode) == 0o600 and open(path).read().strip() == token,
             "token written 0600 in the cluster dir", oct(st.st_mode))

        code, ctype, body = http(url)
        t.ok(code == 200 and ctype.startswith("text/html") and "<svg" in body and
             "http://" not in body.replace('xmlns="http://www.w3.org/2000/svg"', "")
             .replace('"http://www.w3.org/2000/svg"', ""),
             "/ is the self-contained page", "%s %s" % (code, ctype))
        s = wait_for(lambda: state(url), 10)
        t.ok(len(s["hosts"]) == 3 and all(h["state"] == "up" for h in s["hosts"]) and
             len(s["devices"]) == 5 and any(x["id"] == CABLE0 for x in s["cables"]),
             "/api/state: 3 hosts up, 5 devices, the cables", json.dumps(s)[:600])

        code, ctype, body = http(url + "metrics")
        try:
            m = parse_prometheus(body)
            good = (code == 200 and ctype.startswith("text/plain; version=0.0.4") and
                    len(m["smartio_host_up"]["samples"]) == 3 and
                    m["smartio_host_iommu_faults_total"]["type"] == "counter" and
                    all(n.startswith("smartio_") and v["type"] and v["help"] for n, v in m.items()) and
                    any(sm[0].get("fdid") == NVME_A for sm in m["smartio_device_info"]["samples"]))
            t.ok(good, "/metrics is strict Prometheus text with smartio_* metrics", body[:800])
        except (ValueError, KeyError) as e:
            t.ok(False, "/metrics is strict Prometheus text with smartio_* metrics", "%s\n%s" % (e, body[:800]))

        code, _, body = http(url + "api/borrow", {"fdid": NVME_A, "host": "0"})
        t.ok(code == 403, "POST without a token: 403", "%s %s" % (code, body))
        code, _, body = http(url + "api/borrow", {"fdid": NVME_A, "host": "0"},
                             {"Authorization": "Bearer " + "0" * len(token)})
        t.ok(code == 403, "POST with a wrong token: 403", "%s %s" % (code, body))
        code, _, body = http(url + "api/borrow", method="GET")
        t.ok(code == 405, "GET of an action: 405", "%s %s" % (code, body))
        code, _, body = http(url + "nothing")
        t.ok(code == 404, "unknown path: 404", "%s %s" % (code, body))
        code, _, body = http(url + "api/state", headers={"Host": "attacker.example:80"})
        t.ok(code == 403, "a foreign Host header is refused (DNS rebinding)", "%s %s" % (code, body))

        code, _, body = http(url + "api/borrow", {"fdid": NVME_A, "host": "0"},
                             {"Authorization": "Bearer " + token})
        t.ok(code == 200 and json.loads(body).get("driver") == "nvme", "borrow with the token", body)
        lent = wait_for(lambda: [d for d in state(url)["devices"]
                                 if d["fdid"] == NVME_A and d["state"] == "lent" and d["driver"]], 3)
        t.ok(lent and lent[0]["borrower"] == 0 and lent[0]["driver"] == "nvme" and
             lent[0]["lease_since_ms"] and lent[0]["path_state"] == "up" and CABLE0 in lent[0]["path"],
             "the lease appears with borrower, driver, age and path", json.dumps(lent))
        ev = state(url)["events"]
        t.ok(any(e["kind"] == "borrow" and NVME_A in e["text"] for e in ev), "a borrow event", json.dumps(ev))
        t.ok(any(e["kind"] == "borrow" and e.get("source") == "daemon" and e.get("fdid") == NVME_A
                 for e in ev) and
             sum(e["kind"] == "borrow" and e.get("fdid") == NVME_A for e in ev) == 1,
             "the borrow is the daemons' event, once (lender's and borrower's record merged)",
             json.dumps(ev))

        def dev_counters():
            return [d.get("counters", {}) for d in state(url)["devices"] if d["fdid"] == NVME_A][0]
        before = dev_counters()
        r = c.run("nvme", "write", "--host", "0", "--dev", "nvme0", "--lba", "0",
                  "--pattern", "0x5a", "--count", "8")
        after = wait_for(lambda: (lambda x: x if x.get("writes_total", 0) > before.get("writes_total", 0)
                                  else None)(dev_counters()), 3)
        t.ok(r.returncode == 0 and after and after["io_total"] == before["io_total"] + 1 and
             after["written_bytes_total"] == before["written_bytes_total"] + 4096 and
             sum(after["interrupts_total"].values()) > sum(before["interrupts_total"].values()),
             "NVMe I/O moves the device's counters in /api/state",
             "%s\nbefore %s\nafter %s" % (r.stderr, before, after))
        code, _, body = http(url + "metrics")
        try:
            m = parse_prometheus(body)
            io = [v for lb, v in m["smartio_device_io_total"]["samples"] if lb.get("fdid") == NVME_A]
            vec = [lb for lb, v in m["smartio_device_interrupts_total"]["samples"]
                   if lb.get("fdid") == NVME_A]
            t.ok(io and io[0] >= 1 and m["smartio_device_io_total"]["type"] == "counter" and
                 vec and all(lb.get("vector", "").isdigit() or lb.get("vector") == "other" for lb in vec) and
                 m["smartio_adapter_link_errors_total"]["type"] == "counter" and
                 all(n.endswith("_total") for n, v in m.items() if v["type"] == "counter"),
                 "/metrics: the device's I/O counter, interrupts by vector label, counters end in _total",
                 body[:1500])
        except (ValueError, KeyError, IndexError) as e:
            t.ok(False, "/metrics: the device's I/O counter", "%s\n%s" % (e, body[:1500]))

        r = c.run("borrow", GPU_A, "--host", "0")
        drv = wait_for(lambda: [d for d in state(url)["devices"]
                                if d["fdid"] == GPU_A and d["state"] == "lent" and d["driver"]], 3)
        t.ok(r.returncode == 0 and drv and drv[0]["driver"] == "smartio-accel" and drv[0]["holders"] == 0,
             "a borrow made by the CLI shows its bound driver (the borrower's daemon says)",
             r.stderr + json.dumps(drv))
        c.run("return", GPU_A, "--host", "0", "--unbind")

        q, stop = queue.Queue(), threading.Event()
        threading.Thread(target=sse_reader, args=(url, q, stop), daemon=True).start()
        first = q.get(timeout=10)[1]
        t.ok("hosts" in first, "/events sends the snapshot at once", json.dumps(first)[:300])
        r = c.run("ntb", "--host", "0", "link", "down")
        t0 = time.time()
        seen = None
        while time.time() < t0 + 5 and not seen:
            try:
                when, s = q.get(timeout=t0 + 5 - time.time())
            except queue.Empty:
                break
            cab = [x for x in s.get("cables", []) if x["id"] == CABLE0]
            dev = [d for d in s.get("devices") or [] if d["fdid"] == NVME_A]
            if cab and cab[0]["state"] == "down" and dev and dev[0]["path_state"] == "down":
                seen = when - t0
        t.ok(r.returncode == 0 and seen is not None and seen < 1.0,
             "/events pushes the link down (cable and lease path) within 1 s (%s s)" %
             ("%.2f" % seen if seen is not None else "never"), r.stderr)
        stop.set()
        ev = wait_for(lambda: [e for e in state(url)["events"]
                               if e["kind"] == "link-down" and e.get("source") == "daemon"], 3)
        t.ok(ev and ev[0]["host"] == 0 and ev[0]["adapter"] == 0, "a link-down event from host 0's daemon",
             json.dumps(state(url)["events"]))
        c.run("ntb", "--host", "0", "link", "up")

        # A restarted daemon numbers its events from 1 again: the server starts over with it.
        pid2 = [h["pid"] for h in state(url)["hosts"] if h["id"] == 2][0]
        r1 = c.run("fault", "crash", "--host", "2")
        r2 = c.run("cluster", "restart", "--host", "2")
        ev = wait_for(lambda: [e for e in state(url)["events"] if e["kind"] == "start" and
                               e.get("host") == 2 and e.get("pid") not in (None, pid2)], 5)
        t.ok(r1.returncode == 0 and r2.returncode == 0 and ev and ev[0]["daemon_seq"] == 1,
             "a restarted daemon's log is read from its start", r1.stderr + r2.stderr + json.dumps(ev))
        code, _, body = http(url + "api/return", {"fdid": NVME_A, "host": "0", "unbind": "1", "token": token})
        t.ok(code == 200, "return with the token as a form field", body)
        back = wait_for(lambda: [d for d in state(url)["devices"]
                                 if d["fdid"] == NVME_A and d["state"] == "available"], 3)
        t.ok(back and back[0]["lease_since_ms"] is None and back[0]["driver"] is None,
             "the lease is gone", json.dumps(back))

        time.sleep(11)                      # past the fast-poll window of our requests
        c0 = cpu_seconds(c.web.pid)
        time.sleep(5)
        used = cpu_seconds(c.web.pid) - c0
        t.ok(used < 0.25, "idle: %.2f s of CPU in 5 s" % used)

        rc = c.stop_web()
        t.ok(rc == 0 and not os.path.exists(path), "SIGTERM: exit 0, token removed", str(rc))
    finally:
        c.close()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
