#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU time of a command and of a cluster's daemons while it runs.

    cpu_share.py CLUSTER_DIR OUT_FILE COMMAND [ARGS...]

Runs COMMAND (stdout to OUT_FILE) and prints one JSON object: the wall time,
the command's own CPU time (getrusage of the child: user + system), and the
CPU time every daemon of the cluster (DIR/host-N.pid) spent meanwhile,
thread by thread from /proc/PID/task/TID/schedstat (nanoseconds; /stat's
clock ticks where schedstat is missing). Threads named "dev:..." are the
emulated hardware (a device model's thread, an NTB's DMA engine): "device";
every other thread is the host's software: "host". Processes a daemon
reaped meanwhile (an accelerator's kernel context, smartio-accel-ctx) are
device too: the daemon's cutime + cstime. host_pct is (command + host) as a
percentage of the wall time (tests/accel_kernel_test.sh, docs/devices.md).

run_pct leaves out the command's start-up: its CPU until it first sleeps
(exec, dynamic linking, reading its arguments and files, sending its
request), found by watching /proc/PID/stat every 2 ms - what the host spends
while the work runs, which is what a longer run would show; host_pct keeps
it in.
"""
import json
import os
import subprocess
import sys
import time

TCK = os.sysconf("SC_CLK_TCK")


def stat_fields(path):
    return open(path).read().rsplit(")", 1)[1].split()


def cpu_ns(task):
    try:
        return int(open(task + "/schedstat").read().split()[0])
    except (OSError, ValueError, IndexError):
        f = stat_fields(task + "/stat")
        return (int(f[11]) + int(f[12])) * 10**9 // TCK   # utime + stime


def sample(pids):
    threads, reaped = {}, 0
    for pid in pids:
        try:
            f = stat_fields("/proc/%d/stat" % pid)
            reaped += (int(f[13]) + int(f[14])) * 10**9 // TCK   # cutime + cstime
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            t = "/proc/%d/task/%s" % (pid, tid)
            try:
                threads[t] = (open(t + "/comm").read().strip(), cpu_ns(t))
            except OSError:
                pass           # ended meanwhile
    return threads, reaped


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: cpu_share.py CLUSTER_DIR OUT_FILE COMMAND [ARGS...]")
    cluster, out, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    pids = [int(open(os.path.join(cluster, f)).read()) for f in sorted(os.listdir(cluster))
            if f.startswith("host-") and f.endswith(".pid")]
    before, reaped0 = sample(pids)
    t0 = time.monotonic()
    with open(out, "w") as o:
        # meson test sets MALLOC_PERTURB_, which has glibc fill every
        # allocation: ten times the command's own start-up CPU, not its cost.
        env = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
        p = subprocess.Popen(argv, stdout=o, env=env)
        startup = None          # the command's CPU when first seen asleep
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if startup is None:
                try:
                    f = stat_fields("/proc/%d/stat" % p.pid)
                    if f[0] == "S":
                        tasks = "/proc/%d/task" % p.pid
                        startup = sum(cpu_ns(os.path.join(tasks, t))
                                      for t in os.listdir(tasks)) / 1e9
                except OSError:
                    pass
            time.sleep(0.002)
    wall = time.monotonic() - t0
    after, reaped1 = sample(pids)
    host = dev = 0
    by_name = {}
    for t, (comm, ns) in after.items():
        d = ns - before.get(t, (comm, 0))[1]
        if comm.startswith("dev:"):
            dev += d
        else:
            host += d
            by_name[comm] = by_name.get(comm, 0) + d
    cmd = ru.ru_utime + ru.ru_stime
    run = max(0.0, cmd - (startup if startup is not None else 0.0))
    print(json.dumps({
        "status": os.waitstatus_to_exitcode(status), "wall_s": round(wall, 4),
        "command_cpu_s": round(cmd, 6), "daemon_host_cpu_s": round(host / 1e9, 6),
        "daemon_device_cpu_s": round(dev / 1e9, 6),
        "reaped_device_cpu_s": round((reaped1 - reaped0) / 1e9, 3),
        "host_pct": round(100 * (cmd + host / 1e9) / wall, 3),
        "command_startup_cpu_s": None if startup is None else round(startup, 6),
        "run_pct": round(100 * (run + host / 1e9) / wall, 3),
        "host_threads_s": {k: round(v / 1e9, 6) for k, v in sorted(by_name.items())}}))


if __name__ == "__main__":
    main()
