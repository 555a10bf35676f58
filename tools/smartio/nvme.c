// SPDX-License-Identifier: MIT
/*
 * smartio nvme: a host's NVMe controllers through its in-kernel driver
 * (SMIO_NVME_ADMIN / SMIO_NVME_IO), as /dev/nvmeN and nvme-cli would:
 *
 *   list                                  NVMe functions and their driver state
 *   identify [--ns N] [--json]            controller and namespace summary
 *   read  --lba L --count C [-o FILE]     blocks to FILE (default stdout)
 *   write --lba L (-i FILE | --pattern B --count C)
 *
 * Transfers of any size are cut into SMIO_NVME_MAX_DATA messages; long ones
 * show a progress line on a terminal. identify and list are in nvme_info.c,
 * copy in nvme_copy.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <nvme/types.h>

#include "cli.h"
#include "nvme_copy.h"
#include "nvme_priv.h"
#include "util/fd_io.h"
#include "util/cli_conv.h"
#include "util/smio_time.h"


void nvme_bdf_str(char *buf, size_t len, uint16_t bdf)
{
	snprintf(buf, len, "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
}

static void nvme_usage(FILE *f)
{
	fprintf(f,
		"usage: smartio nvme list     [--host N] [--json]\n"
		"       smartio nvme identify [--host N] [--dev BDF|NAME] [--ns N] [--json]\n"
		"       smartio nvme read     [--host N] [--dev BDF|NAME] [--ns N] --lba L --count C\n"
		"                             [-o FILE]\n"
		"       smartio nvme write    [--host N] [--dev BDF|NAME] [--ns N] --lba L\n"
		"                             (-i FILE [--count C] | --pattern BYTE --count C)\n"
		"       smartio nvme dd       [--host N] [--dev BDF|NAME] [--ns N] if=SRC of=DST\n"
		"                             [bs=BYTES] [count=N] [skip=N] [seek=N]\n"
		"       smartio nvme copy     [--host N] [--dev BDF|NAME] [--ns N] --lba L --count C\n"
		"                             --to BDF|NAME [--to-ns N] [--to-lba L]\n"
		"                             [--buffer host|p2pmem|p2pmem,fallback] [--json]\n\n"
		"Uses host N's NVMe driver, as /dev/nvmeN does on Linux. The device is a BDF or\n"
		"a function name (e.g. nvme0); without --dev, the host's first NVMe function.\n"
		"Devices registered for lending (topology 'lendable: true', the default) have\n"
		"no local driver: give them 'lendable: false' to use them here.\n"
		"  --ns N        namespace (default 1)\n"
		"  --lba L       first logical block\n"
		"  --count C     blocks (write -i: default the whole file, the last block\n"
		"                padded with zeroes)\n"
		"  -o FILE       read: write the blocks to FILE (default stdout)\n"
		"  -i FILE       write: read the data from FILE ('-' for stdin)\n"
		"  --pattern B   write: every byte is B (0..255)\n"
		"  --json        list/identify/copy: JSON instead of text\n"
		"  dd            like dd(1) with the namespace as 'nvme': one of if=/of= is\n"
		"                'nvme', the other a file (if=/dev/zero writes zeroes); bs\n"
		"                (default 64K) is a multiple of the block size; count, skip\n"
		"                (if=nvme) and seek (of=nvme) count bs-sized blocks; without\n"
		"                count, reading copies to the end of the namespace and writing\n"
		"                copies the whole file\n"
		"  copy          C blocks from --dev to --to (default: the same namespace and\n"
		"                LBA there); --buffer p2pmem moves them through p2pmem the\n"
		"                P2PDMA orchestrator picks near both controllers, never through\n"
		"                host RAM (fails when none is reachable; p2pmem,fallback: host\n"
		"                memory then); default host: the driver's buffers in RAM\n"
		"  --dir DIR     cluster directory\n"
		"Exits 0 on success, 1 on a failure (device or NVMe status), 2 on a usage error.\n");
}

/* ---------- transport ---------- */

static int nconn_open(struct nconn *c)
{
	c->fd = -1;
	c->req = malloc(SMIO_MAX_PAYLOAD);
	c->rep = malloc(SMIO_MAX_PAYLOAD);
	if (!c->req || !c->rep)
		return -ENOMEM;
	c->fd = cli_open_host(c->host_opt, c->dir_opt, SMIO_ROLE_CLIENT, &c->host, c->dir,
			      sizeof(c->dir));
	return c->fd < 0 ? c->fd : 0;
}

static void nconn_close(struct nconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->req);
	free(c->rep);
}

const char *nvme_errstr(int rc)
{
	switch (rc) {
	case -ENODEV:
		return "no NVMe driver bound (the device may be registered for lending: "
		       "'lendable: false' in the topology keeps it for the host)";
	case -EPERM:
		return "command refused: it would take the controller from the driver";
	case -ENXIO:
		return "no such namespace";
	case -ERANGE:
		return "LBA range beyond the namespace";
	case -ETIMEDOUT:
		return "the command timed out (the controller is reset on the next use)";
	default:
		return cli_strerror(rc);
	}
}

/* One admin command; data (len bytes) in or out. Returns 0, 1 (NVMe error) or -errno. */
int nvme_admin(struct nconn *c, uint8_t opcode,
		 uint32_t nsid, uint32_t cdw10, void *data, uint32_t len, uint16_t *status)
{
	struct smio_nvme_cpl *r = (void *)c->rep;
	uint32_t rlen, qlen = nvme_msg_admin(c->req, c->bdf, opcode, nsid, cdw10, len);
	int rc;

	rc = smio_call(c->fd, SMIO_NVME_ADMIN, c->req, qlen, r, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       NVME_IO_TIMEOUT_MS);
	if (rc)
		return rc;
	*status = r->status;
	if (r->status)
		return 1;
	if (len)
		memcpy(data, r->data, r->data_len < len ? r->data_len : len);
	return 0;
}

int nvme_func_list(struct nconn *c, struct smio_func_list **out)
{
	struct smio_func_list *l = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen;
	int rc;

	if (!l)
		return -ENOMEM;
	rc = smio_call(c->fd, SMIO_FUNC_LIST, NULL, 0, l, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (rc) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int nvme_func_class(struct nconn *c, uint16_t bdf, uint32_t *cls)
{
	struct smio_cfg q = { .bdf = bdf, .off = 8, .size = 4 }, r;
	uint32_t rlen;
	int rc = smio_call(c->fd, SMIO_CFG_READ, &q, sizeof(q), &r, sizeof(r), &rlen, NULL,
			   CLI_TIMEOUT_MS);

	if (!rc)
		*cls = r.value >> 8;
	return rc;
}

/* --dev, or the host's first NVMe function. */
static int pick_dev(struct nconn *c)
{
	struct smio_func_list *l;
	int rc;

	if (c->dev_opt)
		return cli_parse_func(c->fd, c->dev_opt, &c->bdf) ? -EINVAL : 0;
	rc = nvme_func_list(c, &l);
	if (rc) {
		cli_err("host %u: %s", c->host, cli_strerror(rc));
		return rc;
	}
	rc = -ENODEV;
	for (uint32_t i = 0; i < l->n && rc; i++) {
		uint32_t cls;

		if (!nvme_func_class(c, l->f[i].bdf, &cls) && cls == NVME_CLASS) {
			c->bdf = l->f[i].bdf;
			rc = 0;
		}
	}
	free(l);
	if (rc)
		cli_err("host %u has no NVMe function; 'smartio nvme list' shows them", c->host);
	return rc;
}

/* ---------- read / write ---------- */

struct progress {
	uint64_t total, last_ns, start_ns;
	bool on;
};

static void progress_init(struct progress *p, uint64_t total)
{
	p->total = total;
	p->start_ns = p->last_ns = smio_now_ns();
	p->on = total >= PROGRESS_MIN && isatty(STDERR_FILENO);
}

static void progress_show(struct progress *p, uint64_t done, bool final)
{
	uint64_t now = smio_now_ns();
	double s;

	if (!p->on || (!final && now - p->last_ns < 250000000ull))
		return;
	p->last_ns = now;
	s = (double)(now - p->start_ns) / 1e9;
	fprintf(stderr, "\r%" PRIu64 " / %" PRIu64 " MiB (%3.0f%%), %.1f MB/s%s", done >> 20,
		p->total >> 20, 100.0 * (double)done / (double)p->total,
		s > 0 ? (double)done / s / 1e6 : 0.0, final ? "\n" : "");
}

static int block_shift(struct nconn *c, uint32_t nsid, uint64_t *nsze, unsigned *shift)
{
	struct nvme_id_ns *ns = calloc(1, sizeof(*ns));
	int rc;

	if (!ns)
		return -ENOMEM;
	rc = nvme_get_ns(c, nsid, ns);
	if (!rc) {
		*shift = nvme_ns_lba_shift(ns);
		*nsze = ns->nsze;
		if (!*nsze) {
			cli_err("namespace %u is not active", nsid);
			rc = -ENXIO;
		}
	}
	free(ns);
	return rc;
}

/* One SMIO_NVME_IO; returns 0, 1 (NVMe status, printed) or -errno (printed). */
static int io_call(struct nconn *c, uint8_t op, uint32_t nsid, uint64_t slba, uint32_t nlb,
		   const void *wdata, uint32_t wlen, void *rdata)
{
	struct smio_nvme_cpl *r = (void *)c->rep;
	uint32_t rlen, qlen = nvme_msg_io(c->req, c->bdf, op, nsid, slba, nlb, wdata, wlen);
	int rc;

	rc = smio_call(c->fd, SMIO_NVME_IO, c->req, qlen, r, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       NVME_IO_TIMEOUT_MS);
	if (rc) {
		cli_err("LBA %" PRIu64 ": %s", slba, nvme_errstr(rc));
		return rc;
	}
	if (r->status) {
		cli_err("LBA %" PRIu64 ": NVMe status 0x%03x (SCT %u, SC 0x%02x)%s", slba, r->status,
			(r->status >> 8) & 7u, r->status & 0xff,
			(r->status & 0xff) == NVME_SC_LBA_RANGE && !((r->status >> 8) & 7)
				? ": LBA out of range" : "");
		return 1;
	}
	if (rdata)
		memcpy(rdata, r->data, r->data_len);
	return 0;
}

/* Read up to n bytes (less only at end of file). */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static int check_range(uint32_t nsid, uint64_t lba, uint64_t count, uint64_t nsze)
{
	if (lba >= nsze || count > nsze - lba) {
		cli_err("LBA %" PRIu64 " + %" PRIu64 " blocks is beyond namespace %u (%" PRIu64
			" blocks)", lba, count, nsid, nsze);
		return -ERANGE;
	}
	return 0;
}

static int do_read(struct nconn *c, uint32_t nsid, uint64_t lba, uint64_t count,
		   const char *out)
{
	uint8_t *buf = malloc(SMIO_NVME_MAX_DATA);
	struct progress p;
	uint64_t nsze, done = 0;
	unsigned shift;
	int fd = STDOUT_FILENO, rc;

	if (!buf)
		return -ENOMEM;
	rc = block_shift(c, nsid, &nsze, &shift);
	if (!rc)
		rc = check_range(nsid, lba, count, nsze);
	if (rc)
		goto out;
	if (out && strcmp(out, "-")) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			rc = -errno;
			cli_err("%s: %s", out, strerror(errno));
			goto out;
		}
	}
	progress_init(&p, count << shift);
	while (done < count) {
		uint64_t per = SMIO_NVME_MAX_DATA >> shift, n = count - done < per ? count - done : per;

		rc = io_call(c, SMIO_NVME_READ, nsid, lba + done, (uint32_t)n, NULL, 0, buf);
		if (rc)
			break;
		rc = smio_write_all(fd, buf, (size_t)(n << shift));
		if (rc) {
			cli_err("%s: %s", out ? out : "stdout", strerror(-rc));
			break;
		}
		done += n;
		progress_show(&p, done << shift, false);
	}
	if (!rc)
		progress_show(&p, done << shift, true);
	if (fd != STDOUT_FILENO && close(fd) && !rc) {
		rc = -errno;
		cli_err("%s: %s", out, strerror(errno));
	}
out:
	free(buf);
	return rc;
}

static int do_write(struct nconn *c, uint32_t nsid, uint64_t lba, uint64_t count, bool have_count,
		    const char *in, int pattern)
{
	uint8_t *buf = malloc(SMIO_NVME_MAX_DATA);
	struct progress p;
	uint64_t nsze, done = 0;
	unsigned shift;
	int fd = -1, rc;

	if (!buf)
		return -ENOMEM;
	rc = block_shift(c, nsid, &nsze, &shift);
	if (rc)
		goto out;
	if (in) {
		struct stat stt;

		fd = strcmp(in, "-") ? open(in, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
		if (fd < 0 || fstat(fd, &stt)) {
			rc = -errno;
			cli_err("%s: %s", in, strerror(errno));
			goto out;
		}
		if (!have_count) {
			if (!S_ISREG(stt.st_mode)) {
				cli_err("-i %s is not a regular file: give --count", in);
				rc = -EINVAL;
				goto out;
			}
			count = ((uint64_t)stt.st_size + (1u << shift) - 1) >> shift;
			if (!count) {
				cli_err("%s is empty: nothing to write", in);
				rc = -EINVAL;
				goto out;
			}
		}
	}
	rc = check_range(nsid, lba, count, nsze);
	if (rc)
		goto out;
	if (!in)
		memset(buf, pattern, SMIO_NVME_MAX_DATA);
	progress_init(&p, count << shift);
	while (done < count) {
		uint64_t per = SMIO_NVME_MAX_DATA >> shift, n = count - done < per ? count - done : per;
		size_t bytes = (size_t)(n << shift);

		if (in) {
			ssize_t got = read_full(fd, buf, bytes);

			if (got < 0) {
				rc = (int)got;
				cli_err("%s: %s", in, strerror(-rc));
				break;
			}
			if ((size_t)got < bytes) {
				/* The file ended: pad the last block, or stop at a block edge. */
				if (have_count && got == 0) {
					cli_err("%s ended after %" PRIu64 " of %" PRIu64 " blocks", in,
						done, count);
					rc = -EIO;
					break;
				}
				memset(buf + got, 0, bytes - (size_t)got);
				n = ((uint64_t)got + (1u << shift) - 1) >> shift;
				bytes = (size_t)(n << shift);
				count = done + n;
			}
		}
		rc = io_call(c, SMIO_NVME_WRITE, nsid, lba + done, (uint32_t)n, buf, (uint32_t)bytes,
			     NULL);
		if (rc)
			break;
		done += n;
		progress_show(&p, done << shift, false);
	}
	if (!rc) {
		progress_show(&p, done << shift, true);
		fprintf(stderr, "wrote %" PRIu64 " blocks (%" PRIu64 " bytes) at LBA %" PRIu64
			" of namespace %u\n", done, done << shift, lba, nsid);
	}
out:
	if (fd > STDIN_FILENO)
		close(fd);
	free(buf);
	return rc;
}

/* dd(1)-style operands, mapped onto read and write. */
struct dd_args {
	const char *in, *out;
	uint64_t bs, count, skip, seek;
	bool have_count, have_skip, have_seek;
};

static int dd_parse(int argc, char **argv, struct dd_args *a)
{
	a->bs = 64 * 1024;
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		uint64_t v = 0;

		if (!eq) {
			cli_err("nvme dd: '%s' is not an operand (if=, of=, bs=, count=, skip=, seek=)",
				argv[i]);
			return -EINVAL;
		}
		*eq = '\0';
		if (!strcmp(argv[i], "if")) {
			a->in = eq + 1;
			continue;
		}
		if (!strcmp(argv[i], "of")) {
			a->out = eq + 1;
			continue;
		}
		if (cli_parse_u64(eq + 1, &v)) {
			cli_err("nvme dd: %s=%s is not a number", argv[i], eq + 1);
			return -EINVAL;
		}
		if (!strcmp(argv[i], "bs"))
			a->bs = v;
		else if (!strcmp(argv[i], "count"))
			a->count = v, a->have_count = true;
		else if (!strcmp(argv[i], "skip"))
			a->skip = v, a->have_skip = true;
		else if (!strcmp(argv[i], "seek"))
			a->seek = v, a->have_seek = true;
		else {
			cli_err("nvme dd: unknown operand '%s'", argv[i]);
			return -EINVAL;
		}
	}
	if (!a->in || !a->out || (!strcmp(a->in, "nvme")) == (!strcmp(a->out, "nvme"))) {
		cli_err("nvme dd: give if= and of=, exactly one of them 'nvme'");
		return -EINVAL;
	}
	if (!a->bs || (!strcmp(a->in, "nvme") && a->have_seek) ||
	    (!strcmp(a->out, "nvme") && a->have_skip)) {
		cli_err("nvme dd: bs must be > 0; skip= applies to if=nvme, seek= to of=nvme");
		return -EINVAL;
	}
	return 0;
}

static int do_dd(struct nconn *c, uint32_t nsid, const struct dd_args *a)
{
	uint64_t nsze, per, lba, count;
	unsigned shift;
	int rc = block_shift(c, nsid, &nsze, &shift);

	if (rc)
		return rc;
	if (a->bs & ((1ull << shift) - 1)) {
		cli_err("nvme dd: bs=%" PRIu64 " is not a multiple of the %u-byte blocks", a->bs,
			1u << shift);
		return -EINVAL;
	}
	per = a->bs >> shift;
	if (!strcmp(a->in, "nvme")) {
		lba = a->skip * per;
		if (lba > nsze)
			return check_range(nsid, lba, 1, nsze);
		count = a->have_count ? a->count * per : nsze - lba;
		return do_read(c, nsid, lba, count, a->out);
	}
	lba = a->seek * per;
	if (!strcmp(a->in, "/dev/zero")) {
		if (!a->have_count) {
			cli_err("nvme dd: if=/dev/zero needs count=");
			return -EINVAL;
		}
		return do_write(c, nsid, lba, a->count * per, true, NULL, 0);
	}
	return do_write(c, nsid, lba, a->count * per, a->have_count, a->in, -1);
}

/* ---------- entry ---------- */

/* copy: --to names the destination on the same host. */
static int do_copy(struct nconn *c, uint32_t ns, uint64_t to_ns, uint64_t lba, uint64_t to_lba,
		   uint64_t count, const char *to, const char *buffer, bool json)
{
	struct smio_nvme_copy m = { .src_bdf = c->bdf, .src_nsid = ns,
				    .dst_nsid = to_ns ? (uint32_t)to_ns : ns, .src_slba = lba,
				    .dst_slba = to_lba, .nlb = (uint32_t)count };

	if (cli_parse_func(c->fd, to, &m.dst_bdf))
		return -EINVAL;
	if (buffer && !strncmp(buffer, "p2pmem", 6))
		m.flags = SMIO_NVME_COPY_F_P2PMEM |
			  (buffer[6] ? SMIO_NVME_COPY_F_FALLBACK : 0);
	return nvme_copy_run(c->fd, &m, json);
}

int cmd_nvme(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "dev", required_argument, NULL, 'D' }, { "ns", required_argument, NULL, 'n' },
		{ "lba", required_argument, NULL, 'l' }, { "count", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' }, { "input", required_argument, NULL, 'i' },
		{ "pattern", required_argument, NULL, 'p' }, { "json", no_argument, NULL, 'j' },
		{ "to", required_argument, NULL, 'T' }, { "to-ns", required_argument, NULL, 'N' },
		{ "to-lba", required_argument, NULL, 'L' }, { "buffer", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	struct nconn c = { .fd = -1 };
	struct dd_args dd = { 0 };
	const char *sub, *out = NULL, *in = NULL, *to = NULL, *buffer = NULL;
	uint64_t ns = 0, lba = 0, count = 0, to_ns = 0, to_lba = 0, v;
	bool have_to_lba = false;
	bool have_lba = false, have_count = false, have_ns = false, json = false;
	int pattern = -1, ch, rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		nvme_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	sub = argv[1];
	if (strcmp(sub, "list") && strcmp(sub, "identify") && strcmp(sub, "read") &&
	    strcmp(sub, "write") && strcmp(sub, "dd") && strcmp(sub, "copy")) {
		static const char *const subs[] = { "list", "identify", "read", "write", "dd",
						    "copy" };

		smio_unknown("smartio nvme", "command", sub, subs, sizeof(subs) / sizeof(subs[0]),
			     "list, identify, read, write, dd, copy");
		return 2;
	}
	optind = 1;
	while ((ch = getopt_long(argc - 1, argv + 1, "ho:i:", opts, NULL)) != -1) {
		switch (ch) {
		case 'H': c.host_opt = optarg; break;
		case 'd': c.dir_opt = optarg; break;
		case 'D': c.dev_opt = optarg; break;
		case 'o': out = optarg; break;
		case 'i': in = optarg; break;
		case 'j': json = true; break;
		case 'T': to = optarg; break;
		case 'B': buffer = optarg; break;
		case 'N':
		case 'L':
			if (cli_parse_u64(optarg, &v) || (ch == 'N' && (v == 0 || v > 0xfffffffeull))) {
				cli_err("nvme %s: bad value '%s' for --%s", sub, optarg,
					ch == 'N' ? "to-ns" : "to-lba");
				return 2;
			}
			if (ch == 'N')
				to_ns = v;
			else
				to_lba = v, have_to_lba = true;
			break;
		case 'n':
		case 'l':
		case 'c':
		case 'p':
			if (cli_parse_u64(optarg, &v) || (ch == 'n' && (v == 0 || v > 0xfffffffeull)) ||
			    (ch == 'p' && v > 255) || (ch == 'c' && v == 0)) {
				cli_err("nvme %s: bad value '%s' for --%s", sub, optarg,
					ch == 'n' ? "ns" : ch == 'l' ? "lba" : ch == 'c' ? "count"
										: "pattern");
				return 2;
			}
			if (ch == 'n') {
				ns = v;
				have_ns = true;
			} else if (ch == 'l') {
				lba = v;
				have_lba = true;
			} else if (ch == 'c') {
				count = v;
				have_count = true;
			} else {
				pattern = (int)v;
			}
			break;
		case 'h': return nvme_usage(stdout), 0;
		default: return nvme_usage(stderr), 2;
		}
	}
	if (!strcmp(sub, "dd")) {
		if (dd_parse(argc - 1 - optind, argv + 1 + optind, &dd))
			return 2;
	} else if (optind < argc - 1) {
		return cli_err("nvme %s: unexpected argument '%s'", sub, argv[optind + 1]), 2;
	}
	if (!strcmp(sub, "read") && (!have_lba || !have_count))
		return cli_err("nvme read needs --lba L and --count C"), 2;
	if (!strcmp(sub, "write")) {
		if (!have_lba)
			return cli_err("nvme write needs --lba L"), 2;
		if (!!in == (pattern >= 0))
			return cli_err("nvme write needs one of -i FILE or --pattern BYTE"), 2;
		if (pattern >= 0 && !have_count)
			return cli_err("nvme write --pattern needs --count C"), 2;
	}
	if ((out && strcmp(sub, "read")) || (in && strcmp(sub, "write")))
		return cli_err("nvme %s: -o is for read, -i for write", sub), 2;
	if (json && strcmp(sub, "list") && strcmp(sub, "identify") && strcmp(sub, "copy"))
		return cli_err("nvme %s: --json is for list, identify and copy", sub), 2;
	if ((to || buffer || to_ns || have_to_lba) && strcmp(sub, "copy"))
		return cli_err("nvme %s: --to, --to-ns, --to-lba and --buffer are for copy", sub), 2;
	if (!strcmp(sub, "copy") && (!to || !have_lba || !have_count))
		return cli_err("nvme copy needs --to DEV, --lba L and --count C"), 2;
	if (!strcmp(sub, "copy") && count > SMIO_NVME_COPY_MAX_NLB)
		return cli_err("nvme copy: at most %u blocks at a time", SMIO_NVME_COPY_MAX_NLB), 2;
	if (buffer && strcmp(buffer, "host") && strcmp(buffer, "p2pmem") &&
	    strcmp(buffer, "p2pmem,fallback"))
		return cli_err("nvme copy: --buffer is host, p2pmem or p2pmem,fallback, not '%s'",
			       buffer), 2;
	rc = nconn_open(&c);
	if (rc) {
		nconn_close(&c);
		return rc == -EINVAL ? 2 : 1;
	}
	if (!strcmp(sub, "list")) {
		rc = nvme_do_list(&c, json);
	} else {
		rc = pick_dev(&c);
		if (rc) {
			nconn_close(&c);
			return rc == -EINVAL ? 2 : 1;
		}
		if (!strcmp(sub, "identify"))
			rc = nvme_do_identify(&c, have_ns ? (uint32_t)ns : 0, json);
		else if (!strcmp(sub, "read"))
			rc = do_read(&c, have_ns ? (uint32_t)ns : 1, lba, count, out);
		else if (!strcmp(sub, "dd"))
			rc = do_dd(&c, have_ns ? (uint32_t)ns : 1, &dd);
		else if (!strcmp(sub, "copy"))
			rc = do_copy(&c, have_ns ? (uint32_t)ns : 1, to_ns, lba,
				     have_to_lba ? to_lba : lba, count, to, buffer, json);
		else
			rc = do_write(&c, have_ns ? (uint32_t)ns : 1, lba, count, have_count, in,
				      pattern);
	}
	nconn_close(&c);
	return rc ? 1 : 0;
}
