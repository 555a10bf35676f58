// SPDX-License-Identifier: MIT
/*
 * smartio vm hot-add | hot-remove VM --device FDID (docs/vm.md): a
 * smartio-mdev device into or out of a running VM through QEMU's monitor
 * (QMP, DIR/vms/<pid>.qmp): device_add into a spare PCIe root port, which
 * QEMU's q35 announces to the guest as a hot-plug event (ACPI hot-plug by
 * default); device_del asks the guest to eject it, after which QEMU
 * unrealizes the device, closing its connection, and the MDEV parent
 * returns it to its lender.
 *
 * smartio vm migrate VM --to-host M: cold migration (the papers' "shut
 * down, start elsewhere, keep the devices"): the VM's vm run recorded its
 * options (DIR/vms/<pid>.args); the VM is stopped (its devices go back to
 * their lenders as QEMU ends), then started on host M with the same
 * devices, which host M's daemon borrows for it. Data on the devices stays.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "vm.h"

#define QMP_TIMEOUT_MS 10000

struct find { const char *what; pid_t pid; unsigned host; };

/* One line from QEMU's monitor (JSON objects end with a newline). */
static int qmp_line(int s, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, QMP_TIMEOUT_MS) <= 0)
			return -ETIMEDOUT;
		r = read(s, buf + n, 1);
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return 0;
		}
		n++;
	}
	return -E2BIG;
}

/* Send a command; the answer ("return" or "error", events skipped) into buf. */
static int qmp_cmd(int s, const char *cmd, char *buf, size_t cap)
{
	size_t len = strlen(cmd);
	int rc;

	if (write(s, cmd, len) != (ssize_t)len)
		return -EIO;
	do {
		rc = qmp_line(s, buf, cap);
	} while (!rc && !strstr(buf, "\"return\"") && !strstr(buf, "\"error\""));
	return rc;
}

static int qmp_open(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[4096];
	int s, rc;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = -errno;
		close(s);
		return rc;
	}
	rc = qmp_line(s, buf, sizeof(buf));            /* the greeting */
	if (!rc)
		rc = qmp_cmd(s, "{\"execute\":\"qmp_capabilities\"}\n", buf, sizeof(buf));
	if (!rc && !strstr(buf, "\"return\""))
		rc = -EPROTO;
	if (rc) {
		close(s);
		return rc;
	}
	return s;
}

/* The "desc" of a QMP error, for the user. */
static const char *qmp_desc(char *buf)
{
	char *p = strstr(buf, "\"desc\": \""), *e;

	if (!p)
		return buf;
	p += 9;
	e = strchr(p, '"');
	if (e)
		*e = 0;
	return p;
}

int cli_vm_hotplug(int argc, char **argv, bool add)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'D' }, { "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	const char *dev = NULL, *dir_opt = NULL, *sub = add ? "hot-add" : "hot-remove";
	char dir[PATH_MAX], path[PATH_MAX + 32], cmd[PATH_MAX + 256], buf[4096];
	struct find f = { 0 };
	uint32_t fdid;
	int c, s, rc = -ENOSPC;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'D')
			dev = optarg;
		else if (c == 'd')
			dir_opt = optarg;
		else if (c == 'h')
			return printf("usage: smartio vm %s NAME|PID --device FDID [--dir DIR]\n\n"
				      "%s a borrowed device %s a running VM (PCIe hot-plug).\n",
				      sub, add ? "Adds" : "Removes", add ? "to" : "from"), 0;
		else
			return 2;
	}
	if (optind != argc - 1 || !dev)
		return cli_err("usage: smartio vm %s NAME|PID --device FDID", sub), 2;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	f.what = argv[optind];
	if (cli_vm_find(dir, f.what, &f.pid, &f.host) <= 0)
		return cli_err("no running VM '%s' in %s ('smartio vm list')", f.what, dir), 1;
	if (cli_resolve_fdid(dev, dir_opt, -1, &fdid))
		return 2;
	snprintf(path, sizeof(path), "%s/vms/%d.qmp", dir, (int)f.pid);
	s = qmp_open(path);
	if (s < 0)
		return cli_err("VM '%s': its monitor %s: %s", f.what, path, strerror(-s)), 1;
	if (!add) {
		snprintf(cmd, sizeof(cmd), "{\"execute\":\"device_del\",\"arguments\":"
			 "{\"id\":\"dev%08x\"}}\n", fdid);
		rc = qmp_cmd(s, cmd, buf, sizeof(buf));
		if (!rc && strstr(buf, "\"error\"")) {
			cli_err("VM '%s': hot-remove of 0x%08x: %s", f.what, fdid, qmp_desc(buf));
			close(s);
			return 1;
		}
	} else {
		/* The first spare root port that takes it. */
		for (unsigned port = 0; port < 8 + VM_SPARE_PORTS; port++) {
			snprintf(cmd, sizeof(cmd), "{\"execute\":\"device_add\",\"arguments\":"
				 "{\"driver\":\"smartio-mdev\",\"bus\":\"rp%u\",\"id\":\"dev%08x\","
				 "\"socket\":\"%s/host-%u.sock\",\"host\":%u,\"fdid\":%u}}\n",
				 port, fdid, dir, f.host, f.host, fdid);
			rc = qmp_cmd(s, cmd, buf, sizeof(buf));
			if (rc || strstr(buf, "\"return\""))
				break;
			/* An occupied or missing port: try the next; anything else is final. */
			if (!strstr(buf, "rp") || strstr(buf, "smartio-mdev")) {
				cli_err("VM '%s': hot-add of 0x%08x: %s", f.what, fdid, qmp_desc(buf));
				close(s);
				return 1;
			}
			rc = -ENOSPC;
		}
	}
	close(s);
	if (rc)
		return cli_err("VM '%s': %s of 0x%08x: %s", f.what, sub, fdid,
			       rc == -ENOSPC ? "no free PCIe slot" : strerror(-rc)), 1;
	return 0;
}

#define VM_MIGRATE_MAX_ARGS 64

int cli_vm_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to-host", required_argument, NULL, 'H' }, { "cmd", required_argument, NULL, 'C' },
		{ "console", required_argument, NULL, 'o' }, { "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	const char *to = NULL, *cmd = NULL, *console = NULL, *dir_opt = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 32], line[PATH_MAX], name[128];
	char *nargv[VM_MIGRATE_MAX_ARGS + 1];
	struct find f = { 0 };
	struct pollfd p;
	int c, n = 0, pfd, rc;
	FILE *fp;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'H')
			to = optarg;
		else if (c == 'C')
			cmd = optarg;
		else if (c == 'o')
			console = optarg;
		else if (c == 'd')
			dir_opt = optarg;
		else if (c == 'h')
			return printf("usage: smartio vm migrate NAME|PID --to-host M [--cmd CMD] "
				      "[--console FILE] [--dir DIR]\n\nStops the VM and starts it on "
				      "host M with the same devices (cold migration).\n"), 0;
		else
			return 2;
	}
	if (optind != argc - 1 || !to)
		return cli_err("usage: smartio vm migrate NAME|PID --to-host M"), 2;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	f.what = argv[optind];
	if (cli_vm_find(dir, f.what, &f.pid, &f.host) <= 0)
		return cli_err("no running VM '%s' in %s ('smartio vm list')", f.what, dir), 1;
	snprintf(name, sizeof(name), "%s", f.what);
	snprintf(path, sizeof(path), "%s/vms/%d.args", dir, (int)f.pid);
	fp = fopen(path, "r");
	if (!fp)
		return cli_err("VM '%s': no record of its options (%s)", f.what, path), 1;
	nargv[n++] = strdup("vm");
	nargv[n++] = strdup("run");
	nargv[n++] = strdup("--host");
	nargv[n++] = strdup(to);
	nargv[n++] = strdup("--dir");
	nargv[n++] = strdup(dir);
	nargv[n++] = strdup("--name");
	nargv[n++] = strdup(name);
	while (n < VM_MIGRATE_MAX_ARGS - 6 && fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = 0;
		nargv[n++] = strdup(line);
	}
	fclose(fp);
	if (!(n % 2)) {     /* "vm" "run" and option/value pairs: the file was read whole */
		if (cmd) {
			nargv[n++] = strdup("--cmd");
			nargv[n++] = strdup(cmd);
		}
		if (console) {
			nargv[n++] = strdup("--console");
			nargv[n++] = strdup(console);
		}
	}
	nargv[n] = NULL;
	/* Stop it and wait for its end: its devices go back to their lenders. */
	pfd = (int)syscall(SYS_pidfd_open, f.pid, 0);
	if (kill(f.pid, SIGTERM) < 0 && errno != ESRCH) {
		rc = -errno;
		cli_err("VM '%s': cannot stop it: %s", f.what, strerror(-rc));
		goto out;
	}
	if (pfd >= 0) {
		p = (struct pollfd){ .fd = pfd, .events = POLLIN };
		if (poll(&p, 1, 30000) <= 0)
			cli_err("VM '%s' did not end within 30 s", f.what);
		close(pfd);
	}
	/* Its old host returns the devices as QEMU's connections close (on a worker):
	 * wait until the pool has them back, so that host M can borrow them. */
	for (int i = 0; i + 1 < n; i++) {
		uint32_t fdid;

		if (strcmp(nargv[i], "--device") || cli_resolve_fdid(nargv[i + 1], dir_opt, -1, &fdid))
			continue;
		for (int t = 0; t < 200; t++) {
			struct smio_lend_pool *pool = NULL;
			bool back = false;

			if (!cli_lend_pool(NULL, dir, false, &pool))
				for (uint32_t k = 0; k < pool->n; k++)
					back |= pool->e[k].fdid == fdid &&
						pool->e[k].state == SMIO_LEND_AVAILABLE;
			free(pool);
			if (back)
				break;
			usleep(50 * 1000);
		}
	}
	fprintf(stderr, "smartio: VM '%s' stopped on host %u; starting it on host %s\n", name,
		f.host, to);
	rc = cmd_vm(n, nargv);
	for (int i = 0; i < n; i++)
		free(nargv[i]);
	return rc;
out:
	if (pfd >= 0)
		close(pfd);
	for (int i = 0; i < n; i++)
		free(nargv[i]);
	return 1;
}
