// SPDX-License-Identifier: MIT
/*
 * smartio lspci: a host's PCI functions in lspci's own formats.
 *
 * The terse listing and the hex dumps are produced here with libpci's name
 * database; the tree (-t) and the decoded views (-v...) are left to the real
 * lspci, fed with a -xxxx dump of the host's config spaces (lspci -F).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pci/pci.h>

#include "cli.h"

#define CFG_HDR_SIZE 64
#define CFG_LEGACY   256

struct ls_func {
	uint16_t bdf;
	uint8_t cfg[SMIO_CFG_SPACE];
};

struct ls_host {
	uint32_t n;
	struct ls_func *f;
};

struct ls_opts {
	const char *host, *dir, *slot, *dump;
	int tree, verbose, hex, numeric;
};

static const char *const lspci_paths[] = { "/usr/bin/lspci", "/usr/sbin/lspci", "/sbin/lspci",
					   "/bin/lspci" };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio lspci [--host N] [--dir DIR] [-t] [-v|-vv|-vvv] [-x|-xxx|-xxxx]\n"
		"                     [-n|-nn] [-s [[BUS]:][SLOT][.[FUNC]]] [--dump FILE]\n\n"
		"Lists host N's PCI functions (default: $SMARTIO_HOST) exactly as lspci does.\n"
		"  -n, -nn     numeric IDs only / names and numeric IDs\n"
		"  -x, -xxx, -xxxx  hex dump of 64 / 256 / 4096 bytes of config space\n"
		"  -s SLOT     only functions matching lspci's slot syntax\n"
		"  -t, -v...   tree and decoded capabilities: runs the real lspci (pciutils)\n"
		"              on a dump of the host's config spaces (lspci -F)\n"
		"  --dump FILE write that dump (lspci -xxxx format) to FILE, for 'lspci -F FILE'\n"
		"Short flags combine as in lspci (-tv, -vvv, -nnxxx).\n");
}

static int cmp_func(const void *a, const void *b)
{
	const struct ls_func *x = a, *y = b;

	return (int)x->bdf - (int)y->bdf;
}

/* Fetch the function list and every function's 4 KiB config space. */
static int fetch_host(const char *dir, uint32_t host, struct ls_host *hs)
{
	struct smio_func_list *fl = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen;
	int fd, rc;

	hs->n = 0;
	hs->f = NULL;
	if (!fl)
		return -ENOMEM;
	fd = cli_connect(dir, host, SMIO_ROLE_CLIENT);
	if (fd < 0) {
		free(fl);
		return fd;
	}
	rc = smio_call(fd, SMIO_FUNC_LIST, NULL, 0, fl, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (!rc && (rlen < sizeof(*fl) || fl->n > SMIO_MAX_FUNCS ||
		    rlen != sizeof(*fl) + fl->n * sizeof(fl->f[0])))
		rc = -EPROTO;
	if (!rc && fl->n) {
		hs->f = calloc(fl->n, sizeof(*hs->f));
		if (!hs->f)
			rc = -ENOMEM;
	}
	for (uint32_t i = 0; !rc && i < fl->n; i++) {
		struct smio_bdf req = { .bdf = fl->f[i].bdf };
		struct ls_func *lf = &hs->f[hs->n];

		lf->bdf = req.bdf;
		rc = smio_call(fd, SMIO_CFG_DUMP, &req, sizeof(req), lf->cfg, sizeof(lf->cfg),
			       &rlen, NULL, CLI_TIMEOUT_MS);
		if (rc == -ENODEV) {
			rc = 0;         /* gone since the list was taken */
			continue;
		}
		if (!rc && rlen != SMIO_CFG_SPACE)
			rc = -EPROTO;
		if (!rc)
			hs->n++;
	}
	close(fd);
	free(fl);
	if (rc) {
		free(hs->f);
		hs->f = NULL;
		hs->n = 0;
		return rc;
	}
	if (hs->n)
		qsort(hs->f, hs->n, sizeof(*hs->f), cmp_func);
	return 0;
}

static uint16_t cfg16(const struct ls_func *f, unsigned off)
{
	return (uint16_t)(f->cfg[off] | (f->cfg[off + 1] << 8));
}

/* lspci's terse line: "BB:DD.F Class: Vendor Device (rev XX)". */
static void print_terse(FILE *out, struct pci_access *pacc, const struct ls_func *f)
{
	char cls[256], dev[256];
	uint16_t vendor = cfg16(f, PCI_VENDOR_ID), device = cfg16(f, PCI_DEVICE_ID);
	uint16_t class = cfg16(f, PCI_CLASS_DEVICE);
	uint8_t rev = f->cfg[PCI_REVISION_ID];

	fprintf(out, "%02x:%02x.%d %s: %s", f->bdf >> 8, (f->bdf >> 3) & 0x1f, f->bdf & 7,
		pci_lookup_name(pacc, cls, sizeof(cls), PCI_LOOKUP_CLASS | PCI_LOOKUP_NO_HWDB, class),
		pci_lookup_name(pacc, dev, sizeof(dev), PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE |
				PCI_LOOKUP_NO_HWDB,
				vendor, device));
	if (rev)
		fprintf(out, " (rev %02x)", rev);
	fputc('\n', out);
}

/* lspci's hex dump: "%02x:" offsets (three digits past 0xff), lowercase bytes. */
static void print_hex(FILE *out, const struct ls_func *f, unsigned cnt)
{
	for (unsigned i = 0; i < cnt; i++) {
		if (!(i & 15))
			fprintf(out, "%02x:", i);
		fprintf(out, " %02x", f->cfg[i]);
		if ((i & 15) == 15)
			fputc('\n', out);
	}
}

static unsigned hex_bytes(int hex)
{
	if (hex >= 4)
		return SMIO_CFG_SPACE;
	return hex == 3 ? CFG_LEGACY : CFG_HDR_SIZE;
}

static int write_dump(FILE *out, struct pci_access *pacc, const struct ls_host *hs)
{
	for (uint32_t i = 0; i < hs->n; i++) {
		print_terse(out, pacc, &hs->f[i]);
		print_hex(out, &hs->f[i], SMIO_CFG_SPACE);
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

static bool slot_match(const struct pci_filter *flt, uint16_t bdf)
{
	return (flt->domain < 0 || flt->domain == 0) &&
	       (flt->bus < 0 || flt->bus == bdf >> 8) &&
	       (flt->slot < 0 || flt->slot == ((bdf >> 3) & 0x1f)) &&
	       (flt->func < 0 || flt->func == (bdf & 7));
}

static int list_terse(struct pci_access *pacc, const struct ls_host *hs,
		      const struct ls_opts *o)
{
	struct pci_filter flt;

	pci_filter_init(pacc, &flt);
	if (o->slot) {
		char *s = strdup(o->slot), *msg;

		if (!s)
			return 1;
		msg = pci_filter_parse_slot(&flt, s);
		free(s);
		if (msg) {
			cli_err("-s %s: %s", o->slot, msg);
			return 2;
		}
	}
	for (uint32_t i = 0; i < hs->n; i++) {
		if (!slot_match(&flt, hs->f[i].bdf))
			continue;
		print_terse(stdout, pacc, &hs->f[i]);
		if (o->hex) {
			print_hex(stdout, &hs->f[i], hex_bytes(o->hex));
			putchar('\n');
		}
	}
	return fflush(stdout) ? 1 : 0;
}

static const char *find_lspci(void)
{
	for (size_t i = 0; i < sizeof(lspci_paths) / sizeof(lspci_paths[0]); i++)
		if (!access(lspci_paths[i], X_OK))
			return lspci_paths[i];
	return NULL;
}

/* Rebuild the user's lspci flags for the real lspci. */
static void lspci_argv(const char *prog, const char *file, const struct ls_opts *o,
		       char **av, char *flags, size_t flen)
{
	size_t n = 0, k = 0;

	av[k++] = (char *)prog;
	av[k++] = "-F";
	av[k++] = (char *)file;
	flags[n++] = '-';
	if (o->tree)
		flags[n++] = 't';
	for (int i = 0; i < o->verbose && i < 3 && n < flen - 1; i++)
		flags[n++] = 'v';
	for (int i = 0; i < o->hex && i < 4 && n < flen - 1; i++)
		flags[n++] = 'x';
	for (int i = 0; i < o->numeric && i < 2 && n < flen - 1; i++)
		flags[n++] = 'n';
	flags[n] = '\0';
	av[k++] = flags;
	if (o->slot) {
		av[k++] = "-s";
		av[k++] = (char *)o->slot;
	}
	av[k] = NULL;
}

/*
 * Copy the child's stderr, leaving out libkmod's complaint: an emulated host
 * has no kernel modules to show, and lspci -v tries to load them anyway.
 */
static void filter_stderr(int fd)
{
	FILE *f = fdopen(fd, "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f) {
		close(fd);
		return;
	}
	while (getline(&line, &cap, f) > 0)
		if (!strstr(line, "libkmod"))
			fputs(line, stderr);
	free(line);
	fclose(f);
}

static int run_lspci(const char *prog, const char *file, const struct ls_opts *o)
{
	char *av[8], flags[16];
	int status, err[2];
	pid_t pid;

	lspci_argv(prog, file, o, av, flags, sizeof(flags));
	if (fflush(stdout) || pipe2(err, O_CLOEXEC)) {
		cli_err("cannot run %s: %s", prog, strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		cli_err("fork: %s", strerror(errno));
		close(err[0]);
		close(err[1]);
		return 1;
	}
	if (pid == 0) {
		if (dup2(err[1], 2) < 0)
			_exit(127);
		execv(prog, av);
		fprintf(stderr, "smartio: cannot run %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	close(err[1]);
	filter_stderr(err[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			cli_err("waitpid: %s", strerror(errno));
			return 1;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int dump_to_fd(int fd, struct pci_access *pacc, const struct ls_host *hs)
{
	FILE *f = fdopen(fd, "w");
	int rc;

	if (!f) {
		close(fd);
		return -errno;
	}
	rc = write_dump(f, pacc, hs);
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

static int list_verbose(struct pci_access *pacc, const struct ls_host *hs,
			const struct ls_opts *o)
{
	const char *tmpdir = getenv("TMPDIR"), *prog = find_lspci();
	char path[PATH_MAX];
	int fd, rc;

	if (!prog) {
		cli_err("install pciutils (apt-get install pciutils) for -t/-v");
		return 1;
	}
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	snprintf(path, sizeof(path), "%s/smartio-lspci-XXXXXX", tmpdir);
	fd = mkstemp(path);
	if (fd < 0) {
		cli_err("cannot create a temporary file in %s: %s (set TMPDIR)", tmpdir,
			strerror(errno));
		return 1;
	}
	rc = dump_to_fd(fd, pacc, hs);
	if (rc) {
		cli_err("cannot write %s: %s", path, strerror(-rc));
		unlink(path);
		return 1;
	}
	rc = run_lspci(prog, path, o);
	unlink(path);
	return rc;
}

static int dump_file(struct pci_access *pacc, const struct ls_host *hs, const char *file,
		     uint32_t host)
{
	FILE *f = fopen(file, "w");
	int rc;

	if (!f) {
		cli_err("cannot create %s: %s", file, strerror(errno));
		return 1;
	}
	rc = write_dump(f, pacc, hs);
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc) {
		cli_err("cannot write %s: %s", file, strerror(-rc));
		return 1;
	}
	printf("host %u: %u functions written to %s (read it with 'lspci -F %s -vvv')\n",
	       host, hs->n, file, file);
	return 0;
}

static int parse_opts(int argc, char **argv, struct ls_opts *o)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "dump", required_argument, NULL, 'D' }, { "help", no_argument, NULL, 'h' },
		{ 0 } };
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "tvxns:h", opts, NULL)) != -1) {
		switch (c) {
		case 'H': o->host = optarg; break;
		case 'd': o->dir = optarg; break;
		case 'D': o->dump = optarg; break;
		case 't': o->tree++; break;
		case 'v': o->verbose++; break;
		case 'x': o->hex++; break;
		case 'n': o->numeric++; break;
		case 's': o->slot = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		cli_err("lspci: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	return -1;
}

static struct pci_access *names_open(int numeric)
{
	struct pci_access *pacc = pci_alloc();

	if (!pacc)
		return NULL;
	/* An empty dump: libpci never probes this machine's real buses. */
	pacc->method = PCI_ACCESS_DUMP;
	if (pci_set_param(pacc, "dump.name", "/dev/null")) {
		pci_cleanup(pacc);
		return NULL;
	}
	pacc->numeric_ids = numeric;
	pci_init(pacc);
	return pacc;
}

int cmd_lspci(int argc, char **argv)
{
	struct ls_opts o = { 0 };
	struct ls_host hs = { 0 };
	struct pci_access *pacc;
	char dir[PATH_MAX];
	uint32_t host;
	int rc = parse_opts(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (cli_host_arg(o.host, &host))
		return 2;
	if (cli_cluster_dir(o.dir, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	rc = fetch_host(dir, host, &hs);
	if (rc) {
		cli_err("host %u in %s: %s", host, dir, cli_strerror(rc));
		return 1;
	}
	pacc = names_open(o.numeric);
	if (!pacc) {
		free(hs.f);
		return cli_err("libpci: cannot initialise"), 1;
	}
	if (o.dump)
		rc = dump_file(pacc, &hs, o.dump, host);
	else if (o.tree || o.verbose)
		rc = list_verbose(pacc, &hs, &o);
	else
		rc = list_terse(pacc, &hs, &o);
	pci_cleanup(pacc);
	free(hs.f);
	return rc;
}
