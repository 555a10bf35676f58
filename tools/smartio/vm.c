// SPDX-License-Identifier: MIT
/*
 * smartio vm run | list | stop: virtual machines on a host of the cluster
 * (docs/vm.md).
 *
 * `vm run` starts QEMU (the build with smartio's own device compiled in,
 * tools/qemu/build-qemu.sh) as a process of host N through `smartio exec`
 * (so the daemons know it as host N's): q35, TCG, guest RAM taken from host
 * N's RAM (memory-backend-smartio: VM_MEM, docs/vm.md), the serial console
 * on the terminal or in a file, the guest image of
 * tools/vm/build-image.sh, and per --device a PCIe root port with a
 * smartio-mdev device connected to host N's daemon. --cmd runs a shell
 * command in the guest; with --console the exit status of `vm run` is that
 * command's (the image's init prints "SMARTIO-EXIT <status>").
 *
 * Running VMs are recorded in DIR/vms/<pid of vm run> ("host name"): `vm
 * list` shows those whose process lives, `vm stop` signals one (exec passes
 * SIGTERM on to QEMU, which powers the guest off).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "util/cli_conv.h"
#include "vm.h"

#define VM_MAX_DEVS 8
#define VM_MAX_ARGS (64 + 4 * VM_MAX_DEVS)

static void usage(FILE *f)
{
	fprintf(f, "usage: smartio vm run --host N [--mem SIZE] [--low SIZE] [--cpus C]\n"
		"                     [--device FDID]... [--append ARGS] [--cmd 'SHELL COMMAND']\n"
		"                     [--console FILE]\n"
		"                     [--name NAME] [--qemu PATH] [--image DIR] [--dir DIR]\n"
		"       smartio vm list [--dir DIR]\n"
		"       smartio vm stats --host N [--json] [--dir DIR]\n"
		"       smartio vm hot-add|hot-remove NAME|PID --device FDID [--dir DIR]\n"
		"       smartio vm migrate NAME|PID --to-host M [--cmd CMD] [--console FILE]\n"
		"       smartio vm console NAME|PID [--dir DIR]\n"
		"       smartio vm stop NAME|PID [--dir DIR]\n\n"
		"run: starts a QEMU virtual machine (q35, TCG, RAM from host N's) as a process of host N\n"
		"with the guest image of 'make vm-image'; --cmd runs a command in the guest, which\n"
		"then powers off (with --console FILE the exit status is the command's). QEMU\n"
		"is 'make vm-qemu's build ($SMARTIO_QEMU or ~/.cache/smartio/qemu-system-x86_64);\n"
		"each --device becomes a smartio-mdev device behind a PCIe root port.\n"
		"--mem up to 64G: q35 puts what does not fit below its PCI hole at 4 GiB;\n"
		"--low SIZE (QEMU's max-ram-below-4g) moves that split down.\n"
		"list: the cluster's running VMs. stop: power one off. stats: host N's VM\n"
		"devices, the messages each needed of the MDEV parent (all at start: guest\n"
		"BAR accesses and interrupts need none) and the interrupts relayed. See\n"
		"docs/vm.md. hot-add / hot-remove: a device into / out of a running VM\n"
		"(PCI hot-plug into one of the VM's %d spare PCIe slots). migrate: cold\n"
		"migration: stop the VM and start it on host M with the same devices.\n"
		"console: the terminal on the serial console of a VM run with --console FILE\n"
		"(Ctrl-] detaches; from a pipe, stdin goes to the guest until the VM ends).\n",
		VM_SPARE_PORTS);
}

/* ${XDG_CACHE_HOME:-$HOME/.cache}/smartio/NAME */
static int cache_path(const char *name, char *buf, size_t len)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (x && *x)
		n = snprintf(buf, len, "%s/smartio/%s", x, name);
	else
		n = snprintf(buf, len, "%s/.cache/smartio/%s", home ? home : "/", name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static char *base64(const char *s)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), o = 0;
	char *out = malloc(4 * (n / 3 + 1) + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = 0;
	return out;
}

/* The guest command's status from the console log, or -1 if it never ended. */
static int guest_status(const char *console)
{
	char line[512];
	int st = -1, v;
	FILE *f = fopen(console, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "SMARTIO-EXIT ");

		if (p && sscanf(p, "SMARTIO-EXIT %d", &v) == 1)
			st = v;
	}
	fclose(f);
	return st;
}

static int record(const char *dir, uint32_t host, const char *name, char *path, size_t len)
{
	char d[PATH_MAX + 8];
	FILE *f;

	snprintf(d, sizeof(d), "%s/vms", dir);
	if (mkdir(d, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, len, "%s/%d", d, (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%u %s\n", host, name);
	return fclose(f) ? -errno : 0;
}

struct args {
	char *v[VM_MAX_ARGS];
	int n;
	char bufs[VM_MAX_ARGS][PATH_MAX + 64];
};

static void add(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct args *a, const char *fmt, ...)
{
	va_list ap;

	if (a->n >= VM_MAX_ARGS - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(a->bufs[a->n], sizeof(a->bufs[a->n]), fmt, ap);
	va_end(ap);
	a->v[a->n] = a->bufs[a->n];
	a->n++;
	a->v[a->n] = NULL;
}

static int vm_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "mem", required_argument, NULL, 'm' }, { "cpus", required_argument, NULL, 'c' },
		{ "device", required_argument, NULL, 'D' }, { "append", required_argument, NULL, 'a' },
		{ "cmd", required_argument, NULL, 'C' }, { "console", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'n' }, { "qemu", required_argument, NULL, 'q' },
		{ "image", required_argument, NULL, 'i' }, { "help", no_argument, NULL, 'h' },
		{ "low", required_argument, NULL, 'l' },
		{ 0 } };
	const char *host_opt = NULL, *dir_opt = NULL, *append = "", *cmd = NULL;
	const char *console = NULL, *name = NULL, *qemu = getenv("SMARTIO_QEMU"), *image = NULL;
	char dir[PATH_MAX], qbuf[PATH_MAX], ibuf[PATH_MAX], rec[PATH_MAX + 32], hostbuf[16];
	const char *devs[VM_MAX_DEVS];
	uint64_t mem = 512ull << 20, cpus = 1, low = 0;
	unsigned ndevs = 0;
	struct args *a;
	uint32_t host;
	char *b64 = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'H': host_opt = optarg; break;
		case 'd': dir_opt = optarg; break;
		case 'm':
			if (cli_parse_u64(optarg, &mem) || mem < (64ull << 20) ||
			    mem > SMIO_VM_MEM_MAX || mem % SMIO_VM_MEM_ALIGN)
				return cli_err("--mem: a multiple of 2M from 64M to 64G"), 2;
			break;
		case 'l':
			/* q35's max-ram-below-4g: the rest of the RAM goes to 4 GiB. */
			if (cli_parse_u64(optarg, &low) || (low && low < (64ull << 20)) ||
			    low > (2ull << 30) || low % SMIO_VM_MEM_ALIGN)
				return cli_err("--low: a multiple of 2M from 64M to 2G"), 2;
			break;
		case 'c':
			if (cli_parse_u64(optarg, &cpus) || !cpus || cpus > 64)
				return cli_err("--cpus: 1 to 64"), 2;
			break;
		case 'D':
			if (ndevs >= VM_MAX_DEVS)
				return cli_err("at most %d --device", VM_MAX_DEVS), 2;
			devs[ndevs++] = optarg;
			break;
		case 'a': append = optarg; break;
		case 'C': cmd = optarg; break;
		case 'o': console = optarg; break;
		case 'n': name = optarg; break;
		case 'q': qemu = optarg; break;
		case 'i': image = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind < argc)
		return cli_err("vm run: unexpected argument '%s'", argv[optind]), 2;
	if (low >= mem)
		low = 0;            /* all of it below 4 GiB anyway */
	if (cli_host_arg(host_opt, &host))
		return 2;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	if (!qemu || !*qemu) {
		if (cache_path("qemu-system-x86_64", qbuf, sizeof(qbuf)))
			return cli_err("cache path too long"), 1;
		qemu = qbuf;
	}
	if (access(qemu, X_OK))
		return cli_err("no QEMU with smartio's device at %s: run 'make vm-qemu' "
			       "(docs/vm.md)", qemu), 1;
	if (!image) {
		if (cache_path("image", ibuf, sizeof(ibuf)))
			return cli_err("cache path too long"), 1;
		image = ibuf;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return cli_err("out of memory"), 1;
	snprintf(hostbuf, sizeof(hostbuf), "%u", host);
	add(a, "exec");
	add(a, "--host");
	add(a, "%s", hostbuf);
	add(a, "--dir");
	add(a, "%s", dir);
	add(a, "--");
	add(a, "%s", qemu);
	add(a, "-name");
	add(a, "%s", name ? name : "vm");
	add(a, "-machine");
	if (low)
		add(a, "q35,memory-backend=mem,max-ram-below-4g=%llu", (unsigned long long)low);
	else
		add(a, "q35,memory-backend=mem");
	add(a, "-accel");
	add(a, "tcg");
	add(a, "-m");
	add(a, "%llu", (unsigned long long)(mem >> 20));
	add(a, "-object");
	/* The guest's RAM is host N's RAM (VM_MEM), where borrowed devices' DMA lands. */
	add(a, "memory-backend-smartio,id=mem,size=%llu,socket=%s/host-%u.sock,host=%u",
	    (unsigned long long)mem, dir, host, host);
	add(a, "-smp");
	add(a, "%llu", (unsigned long long)cpus);
	add(a, "-L");
	add(a, "/usr/share/qemu");
	add(a, "-L");
	add(a, "/usr/share/seabios");
	add(a, "-nic");
	add(a, "none");
	add(a, "-display");
	add(a, "none");
	add(a, "-monitor");
	add(a, "none");
	add(a, "-no-reboot");
	/*
	 * Only the kernel boots: the firmware (SeaBIOS) then leaves a borrowed
	 * NVMe alone instead of enabling it (and so borrowing it, docs/vm.md)
	 * to look for something to boot on it.
	 */
	add(a, "-boot");
	add(a, "strict=on");
	/* QEMU's monitor (QMP) for vm hot-add / hot-remove (vm_hotplug.c). */
	add(a, "-qmp");
	add(a, "unix:%s/vms/%d.qmp,server=on,wait=off", dir, (int)getpid());
	/*
	 * With --console FILE the serial port is a socket that `vm console`
	 * attaches to (vm_console.c), logging to FILE all the while.
	 */
	if (console) {
		add(a, "-chardev");
		add(a, "socket,id=ser0,path=%s/vms/%d.console,server=on,wait=off,logfile=%s", dir,
		    (int)getpid(), console);
		add(a, "-serial");
		add(a, "chardev:ser0");
	} else {
		add(a, "-serial");
		add(a, "stdio");
	}
	add(a, "-kernel");
	add(a, "%s/vmlinuz", image);
	add(a, "-initrd");
	add(a, "%s/initrd.img", image);
	if (cmd) {
		b64 = base64(cmd);
		if (!b64) {
			free(a);
			return cli_err("out of memory"), 1;
		}
	}
	add(a, "-append");
	add(a, "console=ttyS0 panic=-1 %s%s %s", b64 ? "smartio.cmd=" : "", b64 ? b64 : "",
	    append);
	free(b64);
	for (unsigned i = 0; i < ndevs; i++) {
		uint32_t fdid;

		if (cli_resolve_fdid(devs[i], dir_opt, -1, &fdid)) {
			free(a);
			return 2;
		}
		add(a, "-device");
		add(a, "pcie-root-port,id=rp%u,chassis=%u,slot=%u", i, i + 1, i + 1);
		add(a, "-device");
		add(a, "smartio-mdev,bus=rp%u,socket=%s/host-%u.sock,host=%u,fdid=0x%08x,id=dev%08x",
		    i, dir, host, host, fdid, fdid);
	}
	/* Empty PCIe slots for devices hot-added later (the guest's PCI hot-plug sees them). */
	for (unsigned i = ndevs; i < ndevs + VM_SPARE_PORTS; i++) {
		add(a, "-device");
		add(a, "pcie-root-port,id=rp%u,chassis=%u,slot=%u", i, i + 1, i + 1);
	}
	for (unsigned i = 0; i < 2; i++) {
		char p[PATH_MAX + 16];

		snprintf(p, sizeof(p), "%s/%s", image, i ? "initrd.img" : "vmlinuz");
		if (access(p, R_OK)) {
			free(a);
			return cli_err("no guest image at %s: run 'make vm-image' (docs/vm.md)",
				       image), 1;
		}
	}
	rc = record(dir, host, name ? name : "vm", rec, sizeof(rec));
	if (!rc) {
		/* What vm migrate needs to start it again elsewhere (vm_hotplug.c). */
		const char *opt[] = { "--mem", "--cpus", "--append", "--qemu", "--image", "--low" };
		char val[6][32], path[PATH_MAX + 32];
		const char *vals[6] = { val[0], val[1], append, qemu, image, val[5] };
		FILE *f;

		snprintf(val[0], sizeof(val[0]), "%llu", (unsigned long long)mem);
		snprintf(val[1], sizeof(val[1]), "%llu", (unsigned long long)cpus);
		snprintf(val[5], sizeof(val[5]), "%llu", (unsigned long long)low);
		snprintf(path, sizeof(path), "%s.args", rec);
		f = fopen(path, "w");
		if (!f)
			rc = -errno;
		for (unsigned i = 0; f && i < 6; i++)
			fprintf(f, "%s\n%s\n", opt[i], vals[i]);
		for (unsigned i = 0; f && i < ndevs; i++)
			fprintf(f, "--device\n%s\n", devs[i]);
		if (f && fclose(f))
			rc = -errno;
	}
	if (rc) {
		free(a);
		return cli_err("cannot record the VM in %s/vms: %s", dir, strerror(-rc)), 1;
	}
	if (console)
		unlink(console);
	rc = cmd_exec(a->n, a->v);
	unlink(rec);
	strcat(rec, ".args");
	unlink(rec);
	snprintf(rec, sizeof(rec), "%s/vms/%d.qmp", dir, (int)getpid());
	unlink(rec);
	snprintf(rec, sizeof(rec), "%s/vms/%d.console", dir, (int)getpid());
	unlink(rec);
	/* The last VM leaves no directory behind (cluster down leaves only logs). */
	snprintf(rec, sizeof(rec), "%s/vms", dir);
	rmdir(rec);
	free(a);
	if (console && cmd) {
		int st = guest_status(console);

		if (st < 0) {
			cli_err("the guest did not report its command's status (console: %s)",
				console);
			return rc ? rc : 1;
		}
		return st;
	}
	return rc;
}

static bool alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

int cli_vm_each(const char *dir, int (*fn)(pid_t, unsigned, const char *, void *), void *arg)
{
	char d[PATH_MAX + 8], p[PATH_MAX + 300], name[128];
	struct dirent *e;
	unsigned host;
	DIR *dp;
	int rc = 0;

	snprintf(d, sizeof(d), "%s/vms", dir);
	dp = opendir(d);
	if (!dp)
		return 0;
	while (!rc && (e = readdir(dp))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		FILE *f;

		if (pid <= 0 || strchr(e->d_name, '.'))
			continue;
		snprintf(p, sizeof(p), "%s/%s", d, e->d_name);
		if (!alive(pid)) {
			unlink(p);
			snprintf(p, sizeof(p), "%s/%s.qmp", d, e->d_name);
			unlink(p);
			snprintf(p, sizeof(p), "%s/%s.args", d, e->d_name);
			unlink(p);
			snprintf(p, sizeof(p), "%s/%s.console", d, e->d_name);
			unlink(p);
			continue;
		}
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%u %127s", &host, name) == 2)
			rc = fn(pid, host, name, arg);
		fclose(f);
	}
	closedir(dp);
	return rc;
}

bool cli_vm_is(const char *what, pid_t pid, const char *name)
{
	char pb[16];

	snprintf(pb, sizeof(pb), "%d", (int)pid);
	return !strcmp(what, name) || !strcmp(what, pb);
}

struct vm_find { const char *what; pid_t pid; unsigned host; };

static int find_one(pid_t pid, unsigned host, const char *name, void *arg)
{
	struct vm_find *f = arg;

	if (!cli_vm_is(f->what, pid, name))
		return 0;
	f->pid = pid;
	f->host = host;
	return 1;
}

int cli_vm_find(const char *dir, const char *what, pid_t *pid, unsigned *host)
{
	struct vm_find f = { .what = what };
	int rc = cli_vm_each(dir, find_one, &f);

	if (rc > 0) {
		*pid = f.pid;
		if (host)
			*host = f.host;
	}
	return rc;
}

/* The parent of a process (QEMU's is its vm run), or -1. */
static pid_t parent_of(pid_t pid)
{
	char p[64], buf[512], *e;
	FILE *f;
	int pp = -1;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (e = strrchr(buf, ')')) && sscanf(e + 1, " %*c %d", &pp) != 1)
		pp = -1;
	fclose(f);
	return (pid_t)pp;
}

/*
 * vm list's DEVICES: those of this VM (its QEMU is vm run's child) on its
 * host's MDEV parent, each with its state (docs/vm.md "Borrowed when
 * enabled"); "?" if the daemon does not answer.
 */
static void vm_devices(pid_t pid, unsigned host, const char *dir, char *out, size_t len)
{
	struct smio_vm_stats *st = malloc(SMIO_MAX_PAYLOAD);
	char hb[16], d[PATH_MAX];
	uint32_t h, rlen = 0;
	size_t n = 0;
	int fd, rc = -ENOMEM;

	snprintf(out, len, "?");
	snprintf(hb, sizeof(hb), "%u", host);
	fd = st ? cli_open_host(hb, dir, SMIO_ROLE_CLIENT, &h, d, sizeof(d)) : -1;
	if (fd >= 0) {
		rc = smio_call(fd, SMIO_VM_STATS, NULL, 0, st, SMIO_MAX_PAYLOAD, &rlen, NULL,
			       CLI_TIMEOUT_MS);
		close(fd);
	}
	if (!rc) {
		out[0] = 0;
		for (uint32_t i = 0; i < st->n && n + 32 < len; i++)
			if (parent_of((pid_t)st->s[i].pid) == pid)
				n += (size_t)snprintf(out + n, len - n, "%s0x%08x:%s", n ? "," : "",
						      st->s[i].fdid, st->s[i].state ==
						      SMIO_VM_BORROWED ? "borrowed" : "reserved");
		if (!n)
			snprintf(out, len, "-");
	}
	free(st);
}

static int print_one(pid_t pid, unsigned host, const char *name, void *arg)
{
	char devs[256];

	vm_devices(pid, host, arg, devs, sizeof(devs));
	printf("%-8d %-4u %-12s %s\n", (int)pid, host, name, devs);
	return 0;
}

struct stop_arg { const char *what; int found; };

static int stop_one(pid_t pid, unsigned host, const char *name, void *arg)
{
	struct stop_arg *s = arg;

	(void)host;
	if (!cli_vm_is(s->what, pid, name))
		return 0;
	s->found++;
	if (kill(pid, SIGTERM) < 0)
		cli_err("cannot stop VM %s (pid %d): %s", name, (int)pid, strerror(errno));
	return 0;
}

static int vm_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	const char *host_opt = NULL, *dir_opt = NULL;
	char dir[PATH_MAX];
	struct smio_vm_stats *st;
	struct json_object *arr;
	bool json = false;
	uint32_t host, rlen = 0;
	int c, fd, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'H')
			host_opt = optarg;
		else if (c == 'd')
			dir_opt = optarg;
		else if (c == 'j')
			json = true;
		else if (c == 'h')
			return usage(stdout), 0;
		else
			return 2;
	}
	if (optind < argc)
		return cli_err("vm stats: unexpected argument '%s'", argv[optind]), 2;
	fd = cli_open_host(host_opt, dir_opt, SMIO_ROLE_CLIENT, &host, dir, sizeof(dir));
	if (fd < 0)
		return fd == -EINVAL ? 2 : 1;
	st = malloc(SMIO_MAX_PAYLOAD);
	if (!st) {
		close(fd);
		return cli_err("out of memory"), 1;
	}
	rc = smio_call(fd, SMIO_VM_STATS, NULL, 0, st, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	close(fd);
	if (rc) {
		free(st);
		return cli_err("vm stats on host %u: %s", host, cli_strerror(rc)), 1;
	}
	if (json) {
		arr = json_object_new_array();
		for (uint32_t i = 0; arr && i < st->n; i++) {
			struct json_object *o = json_object_new_object();
			char id[16];

			snprintf(id, sizeof(id), "0x%08x", st->s[i].fdid);
			json_object_object_add(o, "fdid", json_object_new_string(id));
			json_object_object_add(o, "pid", json_object_new_int64(st->s[i].pid));
			json_object_object_add(o, "vectors", json_object_new_int64(st->s[i].nvec));
			json_object_object_add(o, "bars", json_object_new_int64(st->s[i].nbars));
			json_object_object_add(o, "messages", json_object_new_int64((int64_t)st->s[i].msgs));
			json_object_object_add(o, "interrupts", json_object_new_int64((int64_t)st->s[i].irqs));
			json_object_object_add(o, "state", json_object_new_string(
				st->s[i].state == SMIO_VM_BORROWED ? "borrowed" : "reserved"));
			json_object_object_add(o, "borrows", json_object_new_int64(st->s[i].borrows));
			json_object_array_add(arr, o);
		}
		rc = arr ? cli_json_print(arr) : -ENOMEM;
		json_object_put(arr);
		free(st);
		return rc ? 1 : 0;
	}
	printf("%-10s %-8s %-8s %7s %4s %7s %8s %10s\n", "FDID", "PID", "STATE", "BORROWS",
	       "BARS", "VECTORS", "MESSAGES", "INTERRUPTS");
	for (uint32_t i = 0; i < st->n; i++)
		printf("0x%08x %-8u %-8s %7u %4u %7u %8llu %10llu\n", st->s[i].fdid, st->s[i].pid,
		       st->s[i].state == SMIO_VM_BORROWED ? "borrowed" : "reserved",
		       st->s[i].borrows, st->s[i].nbars, st->s[i].nvec,
		       (unsigned long long)st->s[i].msgs, (unsigned long long)st->s[i].irqs);
	free(st);
	return 0;
}

int cmd_vm(int argc, char **argv)
{
	static const char *const subs[] = { "run", "list", "stop", "stats", "hot-add",
					    "hot-remove", "migrate", "console" };
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' },
		{ 0 } };
	const char *dir_opt = NULL;
	char dir[PATH_MAX];
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "run"))
		return vm_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return vm_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "migrate"))
		return cli_vm_migrate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "console"))
		return cli_vm_console(argc - 1, argv + 1);
	if (!strcmp(argv[1], "hot-add") || !strcmp(argv[1], "hot-remove"))
		return cli_vm_hotplug(argc - 1, argv + 1, !strcmp(argv[1], "hot-add"));
	if (strcmp(argv[1], "list") && strcmp(argv[1], "stop")) {
		smio_unknown("smartio vm", "command", argv[1], subs, sizeof(subs) / sizeof(subs[0]),
			     "run, list, stop, stats, hot-add, hot-remove, migrate, console");
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			dir_opt = optarg;
		else if (c == 'h')
			return usage(stdout), 0;
		else
			return 2;
	}
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	if (!strcmp(argv[1], "list")) {
		if (optind < argc)
			return cli_err("vm list takes no arguments"), 2;
		printf("%-8s %-4s %-12s %s\n", "PID", "HOST", "NAME", "DEVICES");
		return cli_vm_each(dir, print_one, dir) ? 1 : 0;
	}
	if (optind != argc - 1)
		return cli_err("vm stop needs one VM: its NAME or PID ('smartio vm list')"), 2;
	{
		struct stop_arg s = { .what = argv[optind] };

		cli_vm_each(dir, stop_one, &s);
		if (!s.found)
			return cli_err("no running VM '%s' in %s ('smartio vm list')",
				       argv[optind], dir), 1;
	}
	return 0;
}
