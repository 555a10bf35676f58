// SPDX-License-Identifier: MIT
/* smartio cluster up|down|status. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util/cli_conv.h"
#include "cluster_view.h"
#include "hostproc.h"
#include "util/smio_time.h"

#define UP_TIMEOUT_MS(n)  (20000 + 200 * (int)(n))
#define DOWN_TIMEOUT_MS   5000

/* $SMARTIOD, else smartiod beside us (installed) or in the build tree, else PATH. */
static int find_daemon(char *buf, size_t len)
{
	const char *env = getenv("SMARTIOD");

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, X_OK) ? -errno : 0;
	}
	if (!cli_find_tool("smartiod", buf, len))
		return 0;
	snprintf(buf, len, "smartiod");
	return 0;   /* execvp searches PATH */
}

static int write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (!f)
		return -errno;
	if (fwrite(data, 1, len, f) != len)
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

static int read_whole(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (n + 4096 > cap) {
			char *nb;

			if (cap > (64u << 20)) {
				free(buf);
				fclose(f);
				return -EFBIG;
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n, f);

		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

/* The socket and pid file. The log stays until the user removes it: it is
 * what explains a crash, after the fact ('smartio cluster logs'). */
static void remove_host_files(const char *dir, uint32_t host)
{
	const char *sfx[] = { "sock", "pid" };
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/host-%u.%s", dir, host, sfx[i]);
		unlink(path);
	}
}

/* A line in host's log saying what starts a new daemon there: logs are appended to. */
static void log_separator(const char *dir, uint32_t host, const char *what)
{
	char path[PATH_MAX + 32], when[64];
	struct timespec ts;
	struct tm tm;
	FILE *log;

	snprintf(path, sizeof(path), "%s/host-%u.log", dir, host);
	/* The daemons' own time format (util/log.c): 'cluster logs' merges by it. */
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	log = fopen(path, "a");
	if (log) {
		fprintf(log, "%s.%03ldZ ---- %s ----\n", when, ts.tv_nsec / 1000000, what);
		fclose(log);
	}
}

enum stop_result { STOP_FAILED, STOP_STOPPED, STOP_KILLED, STOP_WAS_DEAD };

/* Stop one host's daemon: ask (unless hard), then insist. */
static enum stop_result stop_host(const char *dir, uint32_t host, bool hard)
{
	pid_t pid = cli_daemon_alive(dir, host);
	int fd;

	if (!pid)
		return STOP_WAS_DEAD;
	if (cli_proc_state(pid) == 'T')
		kill(pid, SIGCONT);     /* a hung host ('smartio fault hang') cannot hear us */
	fd = hard ? -1 : cli_connect(dir, host, SMIO_ROLE_ADMIN);
	if (fd >= 0) {
		uint32_t rlen;

		smio_call(fd, SMIO_SHUTDOWN, NULL, 0, NULL, 0, &rlen, NULL, 2000);
		close(fd);
	} else if (!hard) {
		kill(pid, SIGTERM);
	}
	if (!hard && cli_wait_exit(pid, DOWN_TIMEOUT_MS))
		return STOP_STOPPED;
	kill(pid, SIGKILL);
	return cli_wait_exit(pid, DOWN_TIMEOUT_MS) ? STOP_KILLED : STOP_FAILED;
}

static void tail_log(const char *dir, uint32_t host)
{
	char path[PATH_MAX + 32], line[512], last[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/host-%u.log", dir, host);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	if (last[0])
		fprintf(stderr, "  host %u: %s", host, last);
}

static pid_t spawn(const char *daemon, const char *dir, uint32_t host, int ready_w)
{
	char log[PATH_MAX + 32], hostbuf[16];
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* Child: detach from the terminal and the CLI's session. */
	snprintf(log, sizeof(log), "%s/host-%u.log", dir, host);
	snprintf(hostbuf, sizeof(hostbuf), "%u", host);
	int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (lfd < 0 || nfd < 0)
		_exit(126);
	dup2(nfd, 0);
	dup2(lfd, 1);
	dup2(lfd, 2);
	if (dup2(ready_w, 3) < 0)
		_exit(126);
	setsid();
	execlp(daemon, "smartiod", "--cluster", dir, "--host", hostbuf, "--ready-fd", "3",
	       (char *)NULL);
	fprintf(stderr, "smartiod: cannot run %s: %s\n", daemon, strerror(errno));
	_exit(127);
}

/* How many of t's hosts have a live daemon; *first_dead: one that has not. */
static uint32_t count_alive(const char *dir, const struct topo *t, int *first_dead)
{
	uint32_t n = 0;

	*first_dead = -1;
	for (uint32_t i = 0; i < t->nhosts; i++) {
		if (cli_daemon_alive(dir, t->hosts[i].id))
			n++;
		else if (*first_dead < 0)
			*first_dead = (int)t->hosts[i].id;
	}
	return n;
}

/*
 * Start the daemons of hosts idx[0..n) of t and return once each has said
 * it is ready on its pipe (one line once its socket answers; EOF without it
 * means it died). pids[] gets their pids (0 for one not started). Each
 * daemon appends to its host's log. 0, or -1 after saying what failed; the
 * caller stops what was started.
 */
static int start_hosts(const char *dir, const struct topo *t, const uint32_t *idx, uint32_t n,
		       pid_t *pids)
{
	char daemon[PATH_MAX + 32];
	int rfd[TOPO_MAX_HOSTS], rc = -1;
	uint32_t ready = 0, started = 0;
	bool tty = isatty(2) && n > 1;
	double t0 = smio_now_s();

	if (n > TOPO_MAX_HOSTS)
		return -1;
	find_daemon(daemon, sizeof(daemon));
	for (uint32_t k = 0; k < n; k++) {
		int p[2];

		pids[k] = 0;
		rfd[k] = -1;
		if (pipe2(p, O_CLOEXEC)) {
			cli_err("pipe: %s", strerror(errno));
			goto out;
		}
		pids[k] = spawn(daemon, dir, t->hosts[idx[k]].id, p[1]);
		close(p[1]);
		rfd[k] = p[0];
		started = k + 1;
		if (pids[k] < 0) {
			pids[k] = 0;
			cli_err("fork: %s", strerror(errno));
			goto out;
		}
	}
	while (ready < n) {
		struct pollfd pfd[TOPO_MAX_HOSTS];
		uint32_t map[TOPO_MAX_HOSTS], np = 0;
		int left = UP_TIMEOUT_MS(n) - (int)((smio_now_s() - t0) * 1000);

		for (uint32_t k = 0; k < n; k++)
			if (rfd[k] >= 0) {
				map[np] = k;
				pfd[np++] = (struct pollfd){ .fd = rfd[k], .events = POLLIN };
			}
		if (left <= 0 || poll(pfd, np, left) <= 0) {
			cli_err("hosts did not come up within %d s", UP_TIMEOUT_MS(n) / 1000);
			goto out;
		}
		for (uint32_t j = 0; j < np; j++) {
			const struct topo_host *h = &t->hosts[idx[map[j]]];
			char buf[16];

			if (!pfd[j].revents)
				continue;
			if (read(rfd[map[j]], buf, sizeof(buf)) <= 0) {
				cli_err("host %u (%s) failed to start:", h->id, h->name);
				tail_log(dir, h->id);
				goto out;
			}
			close(rfd[map[j]]);
			rfd[map[j]] = -1;
			ready++;
			if (tty)
				fprintf(stderr, "\rstarting hosts: %u/%u", ready, n);
		}
	}
	if (tty)
		fputc('\n', stderr);
	rc = 0;
out:
	for (uint32_t k = 0; k < started; k++)
		if (rfd[k] >= 0)
			close(rfd[k]);
	return rc;
}

static void up_usage(FILE *f)
{
	fprintf(f, "usage: smartio cluster up [TOPOLOGY.yaml] [--dir DIR] [--timing faithful|fast]\n\n"
		   "Starts one smartiod per host of TOPOLOGY (default: the built-in 3-host\n"
		   "cluster) and returns when every host is up. Errors in the topology are\n"
		   "reported with file:line and nothing is started. --timing overrides the\n"
		   "topology's timing: key (faithful: devices answer with the timing model's\n"
		   "latencies; fast: as fast as the emulation goes).\n");
}

static int cluster_up(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "timing", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	const char *dir_opt = NULL, *file = NULL, *timing = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 32], err[512];
	struct topo *t = NULL, *old = NULL;
	char *yaml = NULL;
	size_t ylen = 0;
	pid_t *pids = NULL;
	uint32_t *idx = NULL;
	int rc, c, status = 1;
	double t0 = smio_now_s();

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			dir_opt = optarg;
		else if (c == 't' && (!strcmp(optarg, "faithful") || !strcmp(optarg, "fast")))
			timing = optarg;
		else if (c == 't')
			return cli_err("--timing is 'faithful' or 'fast', not '%s'", optarg), 2;
		else if (c == 'h')
			return up_usage(stdout), 0;
		else
			return up_usage(stderr), 2;
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc) {
		cli_err("cluster up takes one topology file, not '%s'", argv[optind]);
		return 2;
	}
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	if (file) {
		rc = read_whole(file, &yaml, &ylen);
		if (rc)
			return cli_err("cannot read %s: %s", file, strerror(-rc)), 1;
		rc = topo_load_string(yaml, ylen, file, &t, err, sizeof(err));
	} else {
		yaml = strdup(topo_default_yaml());
		ylen = yaml ? strlen(yaml) : 0;
		rc = yaml ? topo_load_default(&t, err, sizeof(err)) : -ENOMEM;
	}
	/* The file the daemons read gets the mode, checked as any topology is. */
	if (!rc && timing) {
		topo_free(t);
		t = NULL;
		rc = cli_topo_set_timing(&yaml, &ylen, timing);
		if (!rc)
			rc = topo_load_string(yaml, ylen, file ? file : "default", &t, err,
					      sizeof(err));
	}
	if (rc) {
		cli_err("%s", err[0] ? err : strerror(-rc));
		cli_err("nothing was started");
		free(yaml);
		return 1;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		cli_err("cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/topology.yaml", dir);
	if (!access(path, F_OK) && !topo_load_file(path, &old, err, sizeof(err))) {
		int dead;
		uint32_t alive = count_alive(dir, old, &dead);

		if (alive && dead >= 0) {
			cli_err("the cluster in %s is partly running: %u of %u hosts up; start a "
				"dead host with 'smartio cluster restart --host %d' (or stop all "
				"with 'smartio cluster down')", dir, alive, old->nhosts, dead);
			goto out;
		}
		if (alive) {
			cli_err("a cluster is already running in %s; stop it with 'smartio "
				"cluster down' or use --dir", dir);
			goto out;
		}
	}
	rc = write_file(path, yaml, ylen);
	if (rc) {
		cli_err("cannot write %s: %s", path, strerror(-rc));
		goto out;
	}
	pids = calloc(t->nhosts, sizeof(*pids));
	idx = calloc(t->nhosts, sizeof(*idx));
	if (!pids || !idx)
		goto out;
	snprintf(err, sizeof(err), "smartio cluster up: cluster '%s'", t->name);
	for (uint32_t i = 0; i < t->nhosts; i++) {
		idx[i] = i;
		remove_host_files(dir, t->hosts[i].id);
		log_separator(dir, t->hosts[i].id, err);   /* an old log is kept, appended to */
	}
	if (start_hosts(dir, t, idx, t->nhosts, pids))
		goto fail;
	printf("cluster '%s' up in %s: %u hosts in %.2f s\n", t->name, dir, t->nhosts,
	       smio_now_s() - t0);
	status = 0;
	goto out;
fail:
	for (uint32_t i = 0; i < t->nhosts; i++) {
		if (pids[i] > 0) {
			kill(pids[i], SIGTERM);
			waitpid(pids[i], NULL, 0);
		}
		remove_host_files(dir, t->hosts[i].id);
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/mcast.regs", dir);
	unlink(path);
	rmdir(dir);
	cli_err("nothing is left running");
out:
	free(idx);
	free(pids);
	free(yaml);
	topo_free(old);
	topo_free(t);
	return status;
}

static int cluster_down(const char *dir)
{
	char path[PATH_MAX + 32];
	struct topo *t;
	uint32_t stopped = 0, dead = 0, kept = 0;
	int status = 0;

	if (cli_cluster_topo(dir, &t))
		return 1;
	for (uint32_t i = 0; i < t->nhosts; i++) {
		uint32_t id = t->hosts[i].id;
		bool keep = false;

		switch (stop_host(dir, id, false)) {
		case STOP_FAILED:
			cli_err("host %u does not stop; it is left running", id);
			status = 1;
			continue;
		case STOP_STOPPED:
			stopped++;
			break;
		case STOP_KILLED:
			stopped++;
			keep = true;
			break;
		case STOP_WAS_DEAD:
			dead++;
			keep = true;
			break;
		}
		/* A host that died or had to be killed: its log says why. */
		snprintf(path, sizeof(path), "%s/host-%u.log", dir, id);
		if (keep && access(path, F_OK) == 0) {
			if (!kept++)
				printf("kept the log of a host that had died or would not stop:"
				       " %s\n", path);
			else
				printf("kept %s\n", path);
		}
		remove_host_files(dir, id);
	}
	if (!status) {
		cli_exec_records_clear(dir);   /* what killed 'smartio exec's left behind */
		snprintf(path, sizeof(path), "%s/topology.yaml", dir);
		unlink(path);
		/* The cluster switches' multicast registers (smartiod's h_mcast.c). */
		snprintf(path, sizeof(path), "%s/mcast.regs", dir);
		unlink(path);
		rmdir(dir);     /* fails while logs or the user's files are there */
		if (dead)
			printf("cluster '%s' down: %u hosts stopped, %u not running any more\n",
			       t->name, stopped, dead);
		else
			printf("cluster '%s' down: %u hosts stopped\n", t->name, stopped);
		if (!access(dir, F_OK))
			printf("logs kept in %s/host-N.log ('smartio cluster logs' shows them; "
			       "remove them when done)\n", dir);
	}
	topo_free(t);
	return status;
}

/* What cluster status shows of one host. */
struct host_probe {
	pid_t pid;
	const char *state;           /* up, dead (a pid file but no answer), stopped, down */
	struct smio_status st;       /* zero unless up */
};

static void probe_host(const char *dir, const struct topo_host *h, struct host_probe *p)
{
	uint32_t rlen = 0;
	int fd = -1;

	memset(p, 0, sizeof(*p));
	p->pid = cli_daemon_pid(dir, h->id);
	p->state = "down";
	if (p->pid && cli_daemon_alive(dir, h->id) && cli_proc_state(p->pid) == 'T') {
		p->state = "stopped";   /* SIGSTOP ('smartio fault hang'): it cannot answer */
		return;
	}
	if (p->pid && cli_daemon_alive(dir, h->id))
		fd = cli_connect(dir, h->id, SMIO_ROLE_ADMIN);
	if (fd >= 0 && smio_call(fd, SMIO_STATUS, NULL, 0, &p->st, sizeof(p->st), &rlen, NULL,
				 CLI_TIMEOUT_MS) == 0 && rlen == sizeof(p->st))
		p->state = "up";
	else if (p->pid)
		p->state = "dead";
	if (fd >= 0)
		close(fd);
	if (strcmp(p->state, "up"))
		memset(&p->st, 0, sizeof(p->st));
}

static int host_json(struct json_object *hosts, const struct topo_host *h,
		     const struct host_probe *p)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_uint(o, "host", h->id) || smio_json_add_str(o, "name", h->name) ||
	    smio_json_add_uint(o, "node_id", h->node_id) ||
	    (p->pid ? smio_json_add_int(o, "pid", (int)p->pid) : smio_json_add_null(o, "pid")) ||
	    smio_json_add_str(o, "state", p->state) ||
	    smio_json_add_double(o, "uptime_s", (double)p->st.uptime_ns / 1e9, "%.3f") ||
	    smio_json_add_uint(o, "functions", p->st.nfuncs) ||
	    smio_json_add_uint(o, "ntbs", p->st.nntbs) || smio_json_add_bool(o, "iommu", h->iommu) ||
	    smio_json_add_uint(o, "route_hits", p->st.route_hits) ||
	    smio_json_add_uint(o, "route_misses", p->st.route_misses)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(hosts, o);
}

static int cluster_status(const char *dir, bool json)
{
	struct json_object *root = NULL, *hosts = NULL, **stats, **hobj;
	struct topo *t;
	uint32_t up = 0;
	int rc = 0;

	if (cli_cluster_topo(dir, &t))
		return 1;
	stats = calloc(t->nhosts, sizeof(*stats));
	hobj = calloc(t->nhosts, sizeof(*hobj));
	if (!stats || !hobj)
		rc = -ENOMEM;
	if (json) {
		root = json_object_new_object();
		hosts = json_object_new_array();
		if (!root || !hosts || smio_json_add_str(root, "cluster", t->name) ||
		    smio_json_add_str(root, "dir", dir))
			rc = -ENOMEM;
	} else {
		printf("%-5s %-16s %-5s %-8s %-7s %9s %6s %5s %6s\n", "HOST", "NAME", "NODE",
		       "PID", "STATE", "UPTIME", "FUNCS", "NTBS", "IOMMU");
	}
	for (uint32_t i = 0; i < t->nhosts && !rc; i++) {
		const struct topo_host *h = &t->hosts[i];
		struct host_probe p;

		probe_host(dir, h, &p);
		up += !strcmp(p.state, "up");
		if (!strcmp(p.state, "up"))
			stats[i] = cluster_view_stats(dir, h->id);   /* links, for below */
		if (json) {
			rc = host_json(hosts, h, &p);
			hobj[i] = rc ? NULL : json_object_array_get_idx(hosts, i);
		} else
			printf("%-5u %-16s %-5u %-8d %-7s %8.1fs %6u %5u %6s\n", h->id, h->name,
			       h->node_id, (int)p.pid, p.state, (double)p.st.uptime_ns / 1e9,
			       p.st.nfuncs, p.st.nntbs, h->iommu ? "on" : "off");
	}
	if (!json && !rc)
		printf("%u of %u hosts up\n", up, t->nhosts);
	if (!rc)
		rc = cluster_view_links(t, stats, json ? hobj : NULL);
	if (!rc)
		rc = cluster_view_lent(dir, t, stats, root);
	if (json) {
		if (!rc) {
			rc = smio_json_add(root, "hosts", hosts);
			hosts = NULL;           /* root holds it, or it was released */
		}
		if (!rc && (smio_json_add_uint(root, "up", up) ||
			    smio_json_add_uint(root, "total", t->nhosts)))
			rc = -ENOMEM;
		if (!rc)
			rc = cli_json_print(root);
		else
			cli_err("cluster status: %s", strerror(-rc));
		json_object_put(hosts);
		json_object_put(root);
	}
	if (!rc)
		rc = up == t->nhosts ? 0 : 3;
	else
		rc = 1;
	for (uint32_t i = 0; stats && i < t->nhosts; i++)
		json_object_put(stats[i]);
	free(stats);
	free(hobj);
	topo_free(t);
	return rc;
}

int cli_cluster_restart(const char *dir, uint32_t host, bool hard, pid_t *old_pid,
			pid_t *new_pid)
{
	char path[PATH_MAX + 32];
	struct topo *t;
	uint32_t idx;
	int i, rc = 1;

	*old_pid = *new_pid = 0;
	if (cli_cluster_topo(dir, &t))
		return 1;
	i = topo_host_index(t, host);
	if (i < 0) {
		cli_err("the cluster in %s has no host %u ('smartio cluster status' lists them)",
			dir, host);
		goto out;
	}
	idx = (uint32_t)i;
	*old_pid = cli_daemon_alive(dir, host);
	if (stop_host(dir, host, hard) == STOP_FAILED) {
		cli_err("host %u (pid %d) does not stop; nothing was restarted", host,
			(int)*old_pid);
		goto out;
	}
	remove_host_files(dir, host);
	/* The new daemon appends: what the old one wrote may explain its end. */
	snprintf(path, sizeof(path), "smartio cluster restart --host %u%s (old pid %d)", host,
		 hard ? " --kill" : "", (int)*old_pid);
	log_separator(dir, host, path);
	snprintf(path, sizeof(path), "%s/host-%u.log", dir, host);
	if (start_hosts(dir, t, &idx, 1, new_pid)) {
		if (*new_pid > 0) {
			kill(*new_pid, SIGKILL);
			waitpid(*new_pid, NULL, 0);
		}
		remove_host_files(dir, host);
		cli_err("host %u is down (its log: %s)", host, path);
		goto out;
	}
	rc = 0;
out:
	topo_free(t);
	return rc;
}

static int cluster_restart(const char *dir, const char *host_opt, bool hard)
{
	pid_t old_pid, new_pid;
	uint32_t host;
	double t0 = smio_now_s();

	if (!host_opt)
		return cli_err("cluster restart needs --host N"), 2;
	if (cli_host_arg(host_opt, &host))
		return 2;
	if (cli_cluster_restart(dir, host, hard, &old_pid, &new_pid))
		return 1;
	if (old_pid)
		printf("host %u restarted in %.2f s: pid %d -> %d\n", host, smio_now_s() - t0,
		       (int)old_pid, (int)new_pid);
	else
		printf("host %u started in %.2f s (it was not running): pid %d\n", host,
		       smio_now_s() - t0, (int)new_pid);
	return 0;
}

static void cluster_usage(FILE *f)
{
	fprintf(f, "usage: smartio cluster up [TOPOLOGY.yaml] [--dir DIR]\n"
		   "       smartio cluster down [--dir DIR]\n"
		   "       smartio cluster status [--dir DIR] [--json]\n"
		   "       smartio cluster restart --host N [--kill] [--dir DIR]\n"
		   "       smartio cluster logs [--host N] [--follow] [--dir DIR]\n\n"
		   "status shows each host's daemon, each NTB link (a host none of whose links\n"
		   "is up is isolated) and the devices lent (lender -> borrower); it exits 0\n"
		   "when every daemon is up (isolated or not), 3 when any is down, dead or stopped.\n"
		   "restart stops host N's daemon (asks it to shut down; --kill: SIGKILL) and\n"
		   "starts a fresh one for the same host; the running cluster keeps going.\n"
		   "The host's RAM lives in its daemon, so a restart reboots that host's\n"
		   "memory: what was in it (segments, DMA buffers) is gone.\n"
		   "Each host's daemon logs to DIR/host-N.log, a UTC time on every line; up,\n"
		   "restart and down keep the logs (up and restart append) until you remove\n"
		   "them; 'cluster logs' prints them.\n");
}

int cmd_cluster(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "json", no_argument, NULL, 'j' },
		{ "host", required_argument, NULL, 'H' }, { "kill", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	const char *dir_opt = NULL, *host_opt = NULL;
	char dir[PATH_MAX];
	bool json = false, hard = false, restart;
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cluster_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "up"))
		return cluster_up(argc - 1, argv + 1);
	if (!strcmp(argv[1], "logs"))
		return cmd_cluster_logs(argc - 1, argv + 1);   /* cluster_logs.c */
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			dir_opt = optarg;
		else if (c == 'j')
			json = true;
		else if (c == 'H')
			host_opt = optarg;
		else if (c == 'k')
			hard = true;
		else if (c == 'h')
			return cluster_usage(stdout), 0;
		else
			return cluster_usage(stderr), 2;
	}
	if (optind < argc) {
		cli_err("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	restart = !strcmp(argv[1], "restart");
	if (!restart && (host_opt || hard)) {
		cli_err("--host and --kill are options of 'cluster restart'");
		return 2;
	}
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	if (restart)
		return cluster_restart(dir, host_opt, hard);
	if (!strcmp(argv[1], "down"))
		return cluster_down(dir);
	if (!strcmp(argv[1], "status"))
		return cluster_status(dir, json);
	{
		static const char *const subs[] = { "up", "down", "status", "restart", "logs" };

		smio_unknown("smartio cluster", "command", argv[1], subs,
			     sizeof(subs) / sizeof(subs[0]), "up, down, status, restart, logs");
	}
	return 2;
}
