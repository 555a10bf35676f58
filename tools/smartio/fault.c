// SPDX-License-Identifier: MIT
/*
 * smartio fault: inject a fault into the running cluster, now or at a given
 * time, and log it (DIR/faults.log for people, DIR/faults.jsonl for
 * programs such as bench/faults) with both clocks, so that what a workload
 * saw can be lined up with what was done.
 *
 * Faults: an NTB cable's link down/up/flap (fault_link.c); a host crash
 * (SIGKILL of its daemon and its processes), a hang (SIGSTOP, SIGCONT after
 * --for or on 'resume'), a daemon restart (cluster.c does it as 'cluster
 * restart' does); a Function Level Reset of a device on its host (a config
 * write of Device Control's Initiate FLR, src/fabric/flr.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fault.h"
#include "util/cli_conv.h"
#include "hostproc.h"
#include "util/smio_time.h"

#define FLR_WAIT_NS   100000000ull   /* PCIe Base spec 6.6.2: 100 ms after an FLR */
#define KILL_WAIT_MS  5000
#define STOP_WAIT_MS  1000

void fault_stamp(struct fault_ev *ev)
{
	ev->mono_ns = smio_clock_ns(CLOCK_MONOTONIC);
	ev->real_ns = smio_clock_ns(CLOCK_REALTIME);
}

/* Sleep until abs_ns on clock c; a countdown on a terminal, one line otherwise. */
static void wait_until(clockid_t c, uint64_t abs_ns, const char *what)
{
	bool tty = isatty(2);
	uint64_t now = smio_clock_ns(c);

	if (abs_ns <= now)
		return;
	if (!tty)
		fprintf(stderr, "smartio fault: %s in %.3f s\n", what, (double)(abs_ns - now) / 1e9);
	while ((now = smio_clock_ns(c)) < abs_ns) {
		uint64_t left = abs_ns - now, step = left % 1000000000ull;
		uint64_t until = now + (step ? step : 1000000000ull);
		struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ull),
				       .tv_nsec = (long)(until % 1000000000ull) };

		if (tty)
			fprintf(stderr, "\r%s in %llu s ", what,
				(unsigned long long)((left + 999999999ull) / 1000000000ull));
		/* The time the user asked for: a wait, not polling for an event. */
		clock_nanosleep(c, TIMER_ABSTIME, &ts, NULL);
	}
	if (tty)
		fprintf(stderr, "\r%*s\r", 40, "");
}

void fault_wait_ns(uint64_t ns, const char *what)
{
	wait_until(CLOCK_MONOTONIC, smio_clock_ns(CLOCK_MONOTONIC) + ns, what);
}

static struct json_object *ev_json(const struct fault_ev *ev)
{
	struct json_object *o = json_object_new_object(), *h = json_object_new_array();
	bool bad = !o || !h;

	for (uint32_t i = 0; !bad && i < ev->nhosts; i++)
		bad = json_object_array_add(h, json_object_new_int64(ev->hosts[i])) != 0;
	if (bad || smio_json_add_uint(o, "real_ns", ev->real_ns) ||
	    smio_json_add_uint(o, "mono_ns", ev->mono_ns) ||
	    smio_json_add_str(o, "fault", ev->kind) || smio_json_add_str(o, "target", ev->target) ||
	    smio_json_add(o, "hosts", h) ||
	    (ev->pid_old >= 0 && smio_json_add_int(o, "pid", ev->pid_old)) ||
	    (ev->pid_new >= 0 && smio_json_add_int(o, "new_pid", ev->pid_new)) ||
	    smio_json_add_uint(o, "procs", ev->procs) ||
	    smio_json_add_str(o, "detail", ev->detail)) {
		if (bad)
			json_object_put(h);
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* One line, one write(2) on an O_APPEND file: concurrent injectors do not interleave. */
static int append(const char *dir, const char *file, const char *line)
{
	char path[PATH_MAX + 32];
	size_t len = strlen(line);
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, len) != (ssize_t)len)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc)
		cli_err("cannot append to %s: %s", path, strerror(-rc));
	return rc;
}

int fault_record(const struct fault_opts *o, const struct fault_ev *ev)
{
	struct json_object *j = ev_json(ev);
	char text[512], *js = NULL;
	int rc = 0;

	snprintf(text, sizeof(text), "%llu.%09llu mono %llu.%09llu %s %s: %s\n",
		 (unsigned long long)(ev->real_ns / 1000000000ull),
		 (unsigned long long)(ev->real_ns % 1000000000ull),
		 (unsigned long long)(ev->mono_ns / 1000000000ull),
		 (unsigned long long)(ev->mono_ns % 1000000000ull), ev->kind, ev->target,
		 ev->detail);
	if (!j || asprintf(&js, "%s\n", json_object_to_json_string_ext(j,
			   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) < 0) {
		json_object_put(j);
		cli_err("out of memory");
		return 1;
	}
	if (append(o->dir, "faults.log", text) || append(o->dir, "faults.jsonl", js))
		rc = 1;
	fputs(o->json ? js : text, stdout);
	fflush(stdout);
	free(js);
	json_object_put(j);
	return rc;
}

/* ---------- host faults ---------- */

static int host_of(const struct fault_opts *o, const char *host_opt, uint32_t *host)
{
	struct topo *t;
	int i;

	if (!host_opt)
		return cli_err("this fault needs --host N"), 2;
	if (cli_host_arg(host_opt, host))
		return 2;
	if (cli_cluster_topo(o->dir, &t))
		return 1;
	i = topo_host_index(t, *host);
	topo_free(t);
	if (i < 0)
		return cli_err("the cluster in %s has no host %u", o->dir, *host), 1;
	return 0;
}

static void host_ev(struct fault_ev *ev, const char *kind, uint32_t host)
{
	*ev = (struct fault_ev){ .kind = kind, .pid_old = -1, .pid_new = -1, .nhosts = 1 };
	ev->hosts[0] = host;
	snprintf(ev->target, sizeof(ev->target), "host %u", host);
}

/* Remove the DIR/procs records of exec processes that are gone now. */
static void drop_records(const char *dir, const struct cli_pids *s)
{
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < s->nrec; i++) {
		snprintf(path, sizeof(path), "%s/procs/%d", dir, (int)s->pid[i]);
		unlink(path);
	}
}

static int fault_crash(const struct fault_opts *o, uint32_t host)
{
	struct cli_pids s = { 0 };
	struct fault_ev ev;
	pid_t daemon;
	int rc;

	host_ev(&ev, "crash", host);
	if (!cli_daemon_alive(o->dir, host)) {
		cli_err("host %u's daemon is not running ('smartio cluster status'; start it "
			"with 'smartio cluster restart --host %u')", host, host);
		return 1;
	}
	fault_stamp(&ev);
	rc = cli_signal_host(o->dir, host, SIGKILL, &daemon, &s);
	if (rc) {
		cli_err("host %u: %s", host, strerror(-rc));
		cli_pids_free(&s);
		return 1;
	}
	/* Done only once the processes are gone (pidfds: no sleeping). */
	if (daemon && !cli_wait_exit(daemon, KILL_WAIT_MS))
		cli_err("host %u's daemon (pid %d) outlived SIGKILL for %d ms", host, (int)daemon,
			KILL_WAIT_MS);
	for (size_t i = 0; i < s.n; i++)
		cli_wait_exit(s.pid[i], KILL_WAIT_MS);
	drop_records(o->dir, &s);
	ev.pid_old = daemon;
	ev.procs = (uint32_t)s.n;
	snprintf(ev.detail, sizeof(ev.detail), "SIGKILL to daemon pid %d and %zu processes",
		 (int)daemon, s.n);
	cli_pids_free(&s);
	return fault_record(o, &ev);
}

/* A stop is not an event we can wait on (the processes are not our children). */
static void wait_stopped(pid_t pid)
{
	uint64_t end = smio_clock_ns(CLOCK_MONOTONIC) + STOP_WAIT_MS * 1000000ull;
	struct timespec ms = { 0, 1000000 };

	while (cli_proc_state(pid) != 'T' && cli_proc_state(pid) &&
	       smio_clock_ns(CLOCK_MONOTONIC) < end)
		nanosleep(&ms, NULL);
}

static int fault_resume(const struct fault_opts *o, uint32_t host, const char *how)
{
	struct cli_pids s = { 0 };
	struct fault_ev ev;
	pid_t daemon;
	int rc;

	host_ev(&ev, "resume", host);
	fault_stamp(&ev);
	rc = cli_signal_host(o->dir, host, SIGCONT, &daemon, &s);
	if (rc) {
		cli_err("host %u: %s", host, strerror(-rc));
		cli_pids_free(&s);
		return 1;
	}
	ev.pid_old = daemon;
	ev.procs = (uint32_t)s.n;
	snprintf(ev.detail, sizeof(ev.detail), "SIGCONT to daemon pid %d and %zu processes%s",
		 (int)daemon, s.n, how);
	cli_pids_free(&s);
	return fault_record(o, &ev);
}

static int fault_hang(const struct fault_opts *o, uint32_t host)
{
	struct cli_pids s = { 0 };
	struct fault_ev ev;
	pid_t daemon;
	int rc;

	host_ev(&ev, "hang", host);
	if (!cli_daemon_alive(o->dir, host)) {
		cli_err("host %u's daemon is not running ('smartio cluster status')", host);
		return 1;
	}
	fault_stamp(&ev);
	rc = cli_signal_host(o->dir, host, SIGSTOP, &daemon, &s);
	if (rc) {
		cli_err("host %u: %s", host, strerror(-rc));
		cli_signal_host(o->dir, host, SIGCONT, &daemon, &s);
		cli_pids_free(&s);
		return 1;
	}
	if (daemon)
		wait_stopped(daemon);
	ev.pid_old = daemon;
	ev.procs = (uint32_t)s.n;
	snprintf(ev.detail, sizeof(ev.detail), "SIGSTOP to daemon pid %d and %zu processes%s",
		 (int)daemon, s.n, o->for_ns ? "" : " (until 'smartio fault resume')");
	cli_pids_free(&s);
	rc = fault_record(o, &ev);
	if (!o->for_ns)
		return rc;
	fault_wait_ns(o->for_ns, "resume");
	return fault_resume(o, host, " (end of hang)") | rc;
}

static int fault_restart(const struct fault_opts *o, uint32_t host, bool hard)
{
	struct fault_ev ev;
	pid_t old_pid, new_pid;

	host_ev(&ev, "restart", host);
	fault_stamp(&ev);
	if (cli_cluster_restart(o->dir, host, hard, &old_pid, &new_pid))
		return 1;
	ev.pid_old = old_pid;
	ev.pid_new = new_pid;
	if (old_pid)
		snprintf(ev.detail, sizeof(ev.detail), "daemon pid %d %s, new daemon pid %d ready "
			 "(host RAM starts empty)", (int)old_pid, hard ? "killed" : "stopped",
			 (int)new_pid);
	else
		snprintf(ev.detail, sizeof(ev.detail), "no daemon was running; new daemon pid %d "
			 "ready (host RAM starts empty)", (int)new_pid);
	return fault_record(o, &ev);
}

/* ---------- device reset ---------- */

static int cfg(int fd, int type, uint16_t bdf, uint16_t off, uint8_t size, uint32_t *v)
{
	struct smio_cfg q = { .bdf = bdf, .off = off, .size = size, .value = *v }, r;
	uint32_t rlen;
	int rc = smio_call(fd, (uint16_t)type, &q, sizeof(q), &r, sizeof(r), &rlen, NULL,
			   CLI_TIMEOUT_MS);

	if (!rc && type == SMIO_CFG_READ)
		*v = r.value;
	return rc;
}

/* The PCI Express capability's offset, walking the list as software does. */
static int find_exp(int fd, uint16_t bdf, uint16_t *exp)
{
	uint32_t v = 0;
	int rc = cfg(fd, SMIO_CFG_READ, bdf, PCI_CAPABILITY_LIST, 1, &v);

	for (int n = 0; !rc && v && n < 48; n++) {
		uint32_t hdr = 0;
		uint16_t at = (uint16_t)(v & 0xfc);

		rc = cfg(fd, SMIO_CFG_READ, bdf, at, 2, &hdr);
		if (!rc && (hdr & 0xff) == PCI_CAP_ID_EXP) {
			*exp = at;
			return 0;
		}
		v = hdr >> 8;
	}
	return rc ? rc : -ENOENT;
}

static int fault_reset(const struct fault_opts *o, const char *host_opt, const char *dev)
{
	char dir[PATH_MAX];
	struct fault_ev ev;
	uint32_t host, v = 0, ctl = 0;
	uint16_t bdf, exp = 0;
	int fd, rc;

	if (!host_opt)
		return cli_err("reset needs --host N (the device's own host, its lender)"), 2;
	fd = cli_open_host(host_opt, o->dir, SMIO_ROLE_ADMIN, &host, dir, sizeof(dir));
	if (fd < 0)
		return fd == -EINVAL ? 2 : 1;
	if (cli_parse_func(fd, dev, &bdf)) {
		close(fd);
		return 2;
	}
	if (!bdf) {
		cli_err("'%s': the CPU is not a device to reset", dev);
		close(fd);
		return 2;
	}
	rc = find_exp(fd, bdf, &exp);
	if (!rc)
		rc = cfg(fd, SMIO_CFG_READ, bdf, (uint16_t)(exp + PCI_EXP_DEVCAP), 4, &v);
	if (rc) {
		cli_err("host %u %s: %s", host, dev, rc == -ENOENT ?
			"no PCI Express capability, so no Function Level Reset" :
			cli_strerror(rc));
		close(fd);
		return 1;
	}
	if (!(v & PCI_EXP_DEVCAP_FLR)) {
		cli_err("host %u %s is not FLR capable (Device Capabilities bit 28 is 0; "
			"only functions with a device model are)", host, dev);
		close(fd);
		return 1;
	}
	rc = cfg(fd, SMIO_CFG_READ, bdf, (uint16_t)(exp + PCI_EXP_DEVCTL), 2, &ctl);
	host_ev(&ev, "reset", host);
	snprintf(ev.target, sizeof(ev.target), "host %u %s", host, dev);
	fault_stamp(&ev);
	ctl |= PCI_EXP_DEVCTL_BCR_FLR;
	if (!rc)
		rc = cfg(fd, SMIO_CFG_WRITE, bdf, (uint16_t)(exp + PCI_EXP_DEVCTL), 2, &ctl);
	close(fd);
	if (rc) {
		cli_err("host %u %s: Initiate Function Level Reset: %s", host, dev,
			cli_strerror(rc));
		return 1;
	}
	/* Software waits 100 ms before using the function again; so do we. */
	fault_wait_ns(FLR_WAIT_NS, "FLR complete");
	snprintf(ev.detail, sizeof(ev.detail), "Function Level Reset of %02x:%02x.%x (Device "
		 "Control at 0x%x, bit 15)", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7,
		 exp + PCI_EXP_DEVCTL);
	return fault_record(o, &ev);
}

/* ---------- the command ---------- */

int cli_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 } };
	char *end;
	double v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].u)) {
			if (v * units[i].mul >= 1.8e19)    /* beyond uint64_t */
				return -EINVAL;
			*ns = (uint64_t)(v * units[i].mul + 0.5);
			return 0;
		}
	return -EINVAL;
}

/* --at: "SECONDS[.FRAC]" since the epoch (date +%s.%N), or "mono:SECONDS[.FRAC]". */
static int parse_at(const char *s, clockid_t *c, uint64_t *ns)
{
	*c = CLOCK_REALTIME;
	if (!strncmp(s, "mono:", 5)) {
		*c = CLOCK_MONOTONIC;
		s += 5;
	}
	return strchr(s, 'm') || strchr(s, 'h') || strchr(s, 'u') || strchr(s, 'n') ?
		-EINVAL : cli_parse_duration(s, ns);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio fault [--dir DIR] [--at TIME | --after DURATION] [--json] FAULT\n\n"
		"Faults:\n"
		"  link down|up|flap cable HOST.NTB  the cable of that adapter: both ends\n"
		"                                    (a cluster switch's end has no daemon)\n"
		"  link down|up|flap adapter HOST.NTB  that adapter alone\n"
		"  link down|up|flap port SWITCH:PORT  the adapter cabled to that switch port\n"
		"         [--for DURATION]           flap (or down --for): down, then up again\n"
		"  crash --host N                    SIGKILL to host N's daemon and processes\n"
		"  hang --host N [--for DURATION]    SIGSTOP to them; SIGCONT after DURATION\n"
		"  resume --host N                   SIGCONT to them\n"
		"  restart --host N [--kill]         stop host N's daemon (--kill: SIGKILL) and\n"
		"                                    start a fresh one; its RAM starts empty\n"
		"  reset --host N DEVICE             Function Level Reset of DEVICE (name or BDF)\n"
		"                                    on its own host\n\n"
		"HOST is a host id or name, NTB an adapter name or index (lender-a.ntb0, 1.0).\n"
		"TIME is seconds since the epoch (date +%%s.%%N) or mono:SECONDS (CLOCK_MONOTONIC);\n"
		"DURATION a number with ns, us, ms, s (default), m or h. The fault waits for\n"
		"its time, is injected and logged with both clocks to DIR/faults.log and\n"
		"DIR/faults.jsonl, and printed (one JSON object a line with --json).\n"
		"Exit status: 0 injected, 1 failed (what was done is logged), 2 usage error.\n");
}

int cmd_fault(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "host", required_argument, NULL, 'H' },
		{ "at", required_argument, NULL, 'a' }, { "after", required_argument, NULL, 'A' },
		{ "for", required_argument, NULL, 'f' }, { "json", no_argument, NULL, 'j' },
		{ "kill", no_argument, NULL, 'k' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	struct fault_opts o = { .json = false };
	const char *dir_opt = NULL, *host_opt = NULL, *kind;
	clockid_t at_clock = CLOCK_MONOTONIC;
	uint64_t at_ns = 0, after = 0;
	bool hard = false, have_at = false;
	uint32_t host = 0;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dir_opt = optarg; break;
		case 'H': host_opt = optarg; break;
		case 'j': o.json = true; break;
		case 'k': hard = true; break;
		case 'a':
			if (parse_at(optarg, &at_clock, &at_ns))
				return cli_err("--at wants seconds since the epoch (date +%%s.%%N) or "
					       "mono:SECONDS, not '%s'", optarg), 2;
			have_at = true;
			break;
		case 'A':
			if (cli_parse_duration(optarg, &after))
				return cli_err("--after wants a duration (500ms, 2s), not '%s'",
					       optarg), 2;
			have_at = true;
			at_clock = CLOCK_MONOTONIC;
			at_ns = smio_clock_ns(CLOCK_MONOTONIC) + after;
			break;
		case 'f':
			if (cli_parse_duration(optarg, &o.for_ns) || !o.for_ns)
				return cli_err("--for wants a duration above 0 (10ms, 1s), not '%s'",
					       optarg), 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	kind = argv[optind++];
	if (cli_cluster_dir(dir_opt, o.dir, sizeof(o.dir)))
		return cli_err("cluster directory path too long"), 2;
	/* Usage checks before any waiting: a mistake is reported now, not at --at. */
	if (!strcmp(kind, "link")) {
		if (host_opt || hard)
			return cli_err("link faults name their adapter (HOST.NTB), not --host"), 2;
	} else if (!strcmp(kind, "crash") || !strcmp(kind, "hang") || !strcmp(kind, "resume") ||
		   !strcmp(kind, "restart")) {
		if (optind < argc)
			return cli_err("unexpected argument '%s'", argv[optind]), 2;
		if ((o.for_ns && strcmp(kind, "hang")) || (hard && strcmp(kind, "restart")))
			return cli_err("%s takes neither --for nor --kill", kind), 2;
		rc = host_of(&o, host_opt, &host);
		if (rc)
			return rc;
	} else if (!strcmp(kind, "reset")) {
		if (optind + 1 != argc)
			return cli_err("usage: smartio fault reset --host N DEVICE"), 2;
		if (o.for_ns || hard)
			return cli_err("reset takes neither --for nor --kill"), 2;
	} else {
		static const char *const kinds[] = { "link", "crash", "hang", "resume", "restart",
						     "reset" };

		smio_unknown("smartio fault", "fault", kind, kinds, sizeof(kinds) / sizeof(kinds[0]),
			     "link, crash, hang, resume, restart, reset");
		return 2;
	}
	if (have_at)
		wait_until(at_clock, at_ns, kind);
	if (!strcmp(kind, "link"))
		return fault_link(&o, argc - optind, argv + optind);
	if (!strcmp(kind, "crash"))
		return fault_crash(&o, host);
	if (!strcmp(kind, "hang"))
		return fault_hang(&o, host);
	if (!strcmp(kind, "resume"))
		return fault_resume(&o, host, "");
	if (!strcmp(kind, "restart"))
		return fault_restart(&o, host, hard);
	return fault_reset(&o, host_opt, argv[optind]);
}
