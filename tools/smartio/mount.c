// SPDX-License-Identifier: MIT
/*
 * smartio mount --host N DIR: host N's NVMe namespaces (of every controller
 * its NVMe driver has, local or borrowed) as files DIR/nvme<K>n<NSID>
 * through FUSE, so that dd, fio and mkfs + mount -o loop work on them.
 * smartio umount DIR undoes it and waits for the server to exit.
 *
 * The files have the namespace's size and cannot change it. Any offset and
 * length can be read and written (partial blocks are read-modify-written by
 * mount_io.c); fsync and close issue an NVMe Flush. By default the server
 * detaches once the mount is in place (a ready pipe, as cluster up does).
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cli.h"
#include "mount.h"

#define READY_TIMEOUT_MS   30000   /* mounting is local: this only bounds a hang */
#define UMOUNT_WAIT_MS     10000   /* for the server to exit after the unmount */
#define FSTYPE             "fuse.smartio"

static bool log_syslog;

void mnt_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(LOG_ERR, fmt, ap);
	} else {
		fputs("smartio mount: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

static void mount_usage(FILE *f)
{
	fprintf(f,
		"usage: smartio mount [--host N] [--dir CLUSTER] [--dev BDF|NAME]... [-f]\n"
		"                     [-o OPT[,OPT]] [--log FILE] MOUNTPOINT\n"
		"       smartio umount MOUNTPOINT\n\n"
		"Shows host N's NVMe namespaces as files MOUNTPOINT/nvme<K>n<NSID> through FUSE:\n"
		"one per namespace of every controller the host's NVMe driver has (local or\n"
		"borrowed), K counting them in 'smartio nvme list' order. A file has the\n"
		"namespace's size (blocks x LBA size) and can be read and written at any offset\n"
		"and length; fsync, and close after writing, send an NVMe Flush. Use it like a\n"
		"disk image: dd conv=notrunc, fio --ioengine=psync, mkfs.ext4 + mount -o loop.\n"
		"  --host N         the host (default $SMARTIO_HOST)\n"
		"  --dir CLUSTER    cluster directory\n"
		"  --dev BDF|NAME   only this controller (repeatable; K counts them in the\n"
		"                   order given)\n"
		"  -f, --foreground stay in the foreground, log to stderr (default: detach\n"
		"                   once the mount is ready, log to --log FILE or syslog)\n"
		"  -o OPTS          FUSE mount options (e.g. allow_other)\n"
		"  --log FILE       when detached, append log lines (I/O errors) to FILE\n"
		"umount unmounts (as 'fusermount3 -u MOUNTPOINT' does) and waits for the\n"
		"server to exit. Needs FUSE: /dev/fuse and, without root, fusermount3\n"
		"(Debian: apt-get install fuse3).\n"
		"Exits 0 on success, 1 on a failure, 2 on a usage error.\n");
}

/* ---------- FUSE operations ---------- */

static struct mnt_ctx *ctx(void)
{
	return fuse_get_context()->private_data;
}

static struct mnt_ns *ns_of(const char *path, const struct fuse_file_info *fi)
{
	struct mnt_ctx *m = ctx();

	if (fi && fi->fh < m->nns)
		return &m->ns[fi->fh];
	if (path[0] == '/')
		for (unsigned i = 0; i < m->nns; i++)
			if (!strcmp(path + 1, m->ns[i].name))
				return &m->ns[i];
	return NULL;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Sizes only change with the topology: cache names and attributes briefly. */
	cfg->entry_timeout = 1.0;
	cfg->attr_timeout = 1.0;
	cfg->negative_timeout = 1.0;
	cfg->kernel_cache = 0;
	cfg->direct_io = 0;          /* page-cache I/O: loop devices and mmap work */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;   /* O_TRUNC reaches open: ignored */
	return ctx();
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct mnt_ns *ns;

	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_atim = st->st_mtim = st->st_ctim = ctx()->t0;
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	ns = ns_of(path, fi);
	if (!ns)
		return -ENOENT;
	st->st_mode = S_IFREG | 0644;
	st->st_nlink = 1;
	st->st_size = (off_t)ns->bytes;
	st->st_blocks = (blkcnt_t)(ns->bytes / 512);
	st->st_blksize = SMIO_NVME_MAX_DATA;
	return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct mnt_ctx *m = ctx();

	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (unsigned i = 0; i < m->nns; i++)
		if (fill(buf, m->ns[i].name, NULL, 0, 0))
			break;
	return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	struct mnt_ns *ns = ns_of(path, NULL);

	if (!ns)
		return -ENOENT;
	/* O_TRUNC is ignored, as on a block device; O_CREAT of an existing file is fine. */
	fi->fh = (uint64_t)(ns - ctx()->ns);
	return 0;
}

static int op_read(const char *path, char *buf, size_t len, off_t off,
		   struct fuse_file_info *fi)
{
	struct mnt_ns *ns = ns_of(path, fi);

	if (!ns)
		return -ENOENT;
	if (off < 0)
		return -EINVAL;
	return (int)mio_read(ctx(), ns, buf, len, (uint64_t)off);
}

static int op_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	struct mnt_ns *ns = ns_of(path, fi);

	if (!ns)
		return -ENOENT;
	if (off < 0)
		return -EINVAL;
	return (int)mio_write(ctx(), ns, buf, len, (uint64_t)off);
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct mnt_ns *ns = ns_of(path, fi);

	(void)datasync;
	return ns ? mio_flush(ctx(), ns) : -ENOENT;
}

/* close(): a file that was open for writing is flushed, as close of a block device does. */
static int op_flush(const char *path, struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		return 0;
	return op_fsync(path, 0, fi);
}

/* A namespace has a fixed size: only "truncating" to it succeeds. */
static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct mnt_ns *ns = ns_of(path, fi);

	if (!ns)
		return -ENOENT;
	return size >= 0 && (uint64_t)size == ns->bytes ? 0 : -EINVAL;
}

static int op_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	struct mnt_ns *ns = ns_of(path, fi);

	if (!ns)
		return -ENOENT;
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return mio_zero(ctx(), ns, (uint64_t)off, (uint64_t)len);
	/* Every block is already there; the file cannot grow. */
	if (!(mode & FALLOC_FL_KEEP_SIZE) && (uint64_t)off + (uint64_t)len > ns->bytes)
		return -ENOSPC;
	return 0;
}

static int op_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	(void)tv;
	return strcmp(path, "/") && !ns_of(path, fi) ? -ENOENT : 0;
}

static int op_statfs(const char *path, struct statvfs *sv)
{
	struct mnt_ctx *m = ctx();
	uint64_t bytes = 0;

	(void)path;
	for (unsigned i = 0; i < m->nns; i++)
		bytes += m->ns[i].bytes;
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = sv->f_frsize = 4096;
	sv->f_blocks = bytes / 4096;
	sv->f_files = m->nns;
	sv->f_namemax = MNT_NAME_MAX - 1;
	return 0;
}

static const struct fuse_operations mount_ops = {
	.init = op_init,
	.getattr = op_getattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.fsync = op_fsync,
	.truncate = op_truncate,
	.fallocate = op_fallocate,
	.utimens = op_utimens,
	.statfs = op_statfs,
};

/* ---------- finding a mount ---------- */

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/*
 * The server pid of the smartio mount at mnt (from its fsname; the topmost if
 * several are stacked), 0 if none is there.
 */
static pid_t find_mount(const char *mnt)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	pid_t pid = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		char point[PATH_MAX], fstype[64], source[128], *sep = strstr(line, " - ");
		unsigned host;
		int p;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(sep + 3, "%63s %127s", fstype, source) != 2)
			continue;
		unescape(point);
		if (!strcmp(point, mnt) && !strcmp(fstype, FSTYPE) &&
		    sscanf(source, "smartio:host%u:%d", &host, &p) == 2 && p > 0)
			pid = p;
	}
	free(line);
	fclose(f);
	return pid;
}

/* ---------- mounting ---------- */

struct mount_opts {
	const char *host_opt, *dir_opt, *fuse_opts, *log;
	const char *dev[MNT_MAX_DEVS];
	unsigned ndev;
	char mnt[PATH_MAX];
	int log_fd;                /* --log FILE, opened before detaching; else -1 */
	bool foreground;
};

/* FUSE needs /dev/fuse, and fusermount3 unless we are root. */
static int fuse_available(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (access("/dev/fuse", R_OK | W_OK)) {
		cli_err("FUSE is not available (/dev/fuse: %s): install fuse3 (Debian: "
			"apt-get install fuse3) and load the fuse module", strerror(errno));
		return -ENODEV;
	}
	if (!geteuid())
		return 0;
	while (path && *path) {
		const char *end = strchrnul(path, ':');

		snprintf(buf, sizeof(buf), "%.*s/fusermount3", (int)(end - path), path);
		if (!access(buf, X_OK))
			return 0;
		path = *end ? end + 1 : end;
	}
	cli_err("fusermount3 not found: install fuse3 (Debian: apt-get install fuse3), or "
		"mount as root");
	return -ENOENT;
}

/* After the mount is in place: tell the parent, detach from the terminal. */
static void detach(int ready, int lfd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (lfd < 0) {
		openlog("smartio-mount", LOG_PID, LOG_DAEMON);
		log_syslog = true;
	}
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(lfd >= 0 ? lfd : null, STDERR_FILENO);
		close(null);
	}
	if (lfd >= 0)
		close(lfd);
	setsid();
	if (chdir("/"))
		mnt_log("chdir /: %s", strerror(errno));
	if (write(ready, "ok\n", 3) != 3)
		mnt_log("ready pipe: %s", strerror(errno));
	close(ready);
}

/* Mount and serve until unmounted; ready >= 0: detach and report on it. Returns 0 or 1. */
/*
 * Say on a connection kept open while we serve that we hold each controller
 * we serve: 'smartio return' of a borrowed one is then refused at the
 * daemon (unless --force) and names this mount. The hold ends with the
 * connection, however the server ends. -1 if the daemon would not hear it.
 */
static int hold_devices(const struct mnt_ctx *m, const char *mnt)
{
	int fd = cli_connect(m->dir, m->host, SMIO_ROLE_CLIENT);

	if (fd < 0)
		return -1;
	for (unsigned i = 0; i < m->nns; i++) {
		struct smio_lend_hold h = { .bdf = m->ns[i].bdf };
		uint32_t rlen;
		bool seen = false;

		for (unsigned j = 0; j < i; j++)
			seen |= m->ns[j].bdf == h.bdf;
		if (seen)
			continue;
		snprintf(h.what, sizeof(h.what), "smartio mount %s", mnt);
		if (smio_call(fd, SMIO_LEND_HOLD, &h, sizeof(h), NULL, 0, &rlen, NULL,
			      CLI_TIMEOUT_MS))
			mnt_log("cannot hold %02x:%02x.%x: 'smartio return' will not know this "
				"mount uses it", h.bdf >> 8, (h.bdf >> 3) & 0x1f, h.bdf & 7);
	}
	return fd;
}

static int serve(struct mnt_ctx *m, const struct mount_opts *o, int ready)
{
	struct fuse_loop_config lc = { .clone_fd = 0, .max_idle_threads = 8 };
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char opts[512];
	struct fuse *f;
	int rc = 1, hold;

	snprintf(opts, sizeof(opts), "fsname=smartio:host%u:%d,subtype=smartio%s%s", m->host,
		 (int)getpid(), o->fuse_opts ? "," : "", o->fuse_opts ? o->fuse_opts : "");
	if (fuse_opt_add_arg(&args, "smartio") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, opts)) {
		cli_err("out of memory");
		goto out_args;
	}
	f = fuse_new(&args, &mount_ops, sizeof(mount_ops), m);
	if (!f) {
		cli_err("mount: bad FUSE options '%s'", o->fuse_opts ? o->fuse_opts : "");
		goto out_args;
	}
	if (fuse_mount(f, o->mnt)) {
		cli_err("mount %s failed (see the FUSE message above); is FUSE installed "
			"(Debian: apt-get install fuse3) and the directory not already mounted?",
			o->mnt);
		goto out_new;
	}
	if (fuse_set_signal_handlers(fuse_get_session(f))) {
		cli_err("mount: cannot set signal handlers");
		goto out_mount;
	}
	hold = hold_devices(m, o->mnt);
	if (ready >= 0)
		detach(ready, o->log_fd);
	else
		fprintf(stderr, "smartio: mounted on %s ('smartio umount %s' or Ctrl-C ends it)\n",
			o->mnt, o->mnt);
	rc = fuse_loop_mt(f, &lc) ? 1 : 0;
	if (hold >= 0)
		close(hold);
	fuse_remove_signal_handlers(fuse_get_session(f));
out_mount:
	fuse_unmount(f);
out_new:
	fuse_destroy(f);
out_args:
	fuse_opt_free_args(&args);
	return rc;
}

/* Parent: wait for the child's "ok" (mount ready) or EOF (it failed and said why). */
static int wait_ready(pid_t pid, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[8] = "";
	ssize_t n = 0;
	int st, rc;

	do
		rc = poll(&p, 1, READY_TIMEOUT_MS);
	while (rc < 0 && errno == EINTR);
	if (rc > 0)
		do
			n = read(fd, buf, sizeof(buf) - 1);
		while (n < 0 && errno == EINTR);
	close(fd);
	if (n >= 2 && !strncmp(buf, "ok", 2))
		return 0;
	if (!rc) {
		cli_err("mount: the server did not get ready in %d s (left running, pid %d)",
			READY_TIMEOUT_MS / 1000, (int)pid);
		return 1;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return 1;
}

static void show(const struct mnt_ctx *m, const char *mnt)
{
	for (unsigned i = 0; i < m->nns; i++) {
		const struct mnt_ns *ns = &m->ns[i];

		printf("%s/%s  %" PRIu64 " bytes (%" PRIu64 " blocks of %u, %02x:%02x.%x ns %u)\n",
		       mnt, ns->name, ns->bytes, ns->nsze, 1u << ns->shift, ns->bdf >> 8,
		       (ns->bdf >> 3) & 0x1f, ns->bdf & 7, ns->nsid);
	}
	fflush(stdout);
}

static int do_mount(struct mount_opts *o)
{
	struct mnt_ctx m = { .nns = 0 };
	uint16_t bdf[MNT_MAX_DEVS];
	char dir[PATH_MAX];
	struct stat st;
	int fd, pfd[2], rc = 1;
	pid_t pid;

	if (stat(o->mnt, &st)) {
		cli_err("mount: %s: %s%s", o->mnt, strerror(errno), errno == ENOTCONN ?
			" (the server of a mount there died: 'smartio umount' it)" : "");
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_err("mount: %s is not a directory", o->mnt);
		return 1;
	}
	if (!realpath(o->mnt, dir) || strlen(dir) >= sizeof(o->mnt)) {
		cli_err("mount: %s: %s", o->mnt, strerror(errno));
		return 1;
	}
	strcpy(o->mnt, dir);
	if (find_mount(o->mnt)) {
		cli_err("mount: %s is already a smartio mount ('smartio umount %s' first)", o->mnt,
			o->mnt);
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &m.t0);
	if (fuse_available())
		return 1;
	fd = cli_open_host(o->host_opt, o->dir_opt, SMIO_ROLE_CLIENT, &m.host, dir, sizeof(dir));
	if (fd < 0)
		return fd == -EINVAL ? 2 : 1;
	for (unsigned i = 0; i < o->ndev; i++)
		if (cli_parse_func(fd, o->dev[i], &bdf[i])) {
			close(fd);
			return 2;
		}
	close(fd);
	if (!realpath(dir, m.dir)) {
		cli_err("mount: cluster directory %s: %s", dir, strerror(errno));
		return 1;
	}
	if (mio_init(&m)) {
		cli_err("mount: out of memory");
		return 1;
	}
	if (mio_discover(&m, bdf, o->ndev))
		goto out;
	if (!m.nns) {
		cli_err("host %u has no NVMe namespace with its NVMe driver ('smartio nvme list "
			"--host %u' shows the controllers; lendable ones have no local driver)",
			m.host, m.host);
		goto out;
	}
	mio_drop_conn(&m);          /* the server's threads connect for themselves */
	if (o->foreground) {
		show(&m, o->mnt);
		rc = serve(&m, o, -1);
		goto out;
	}
	if (o->log) {
		o->log_fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (o->log_fd < 0) {
			cli_err("mount: log file %s: %s", o->log, strerror(errno));
			goto out;
		}
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		cli_err("mount: pipe: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_err("mount: fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		goto out;
	}
	if (!pid) {
		close(pfd[0]);
		rc = serve(&m, o, pfd[1]);
		mio_fini(&m);
		_exit(rc);
	}
	close(pfd[1]);
	rc = wait_ready(pid, pfd[0]);
	if (!rc)
		show(&m, o->mnt);
out:
	mio_fini(&m);
	return rc;
}

int cmd_mount(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "foreground", no_argument, NULL, 'f' }, { "log", required_argument, NULL, 'l' },
		{ "dev", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	struct mount_opts o = { .log_fd = -1, .foreground = false };
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "hfo:", opts, NULL)) != -1) {
		switch (ch) {
		case 'H': o.host_opt = optarg; break;
		case 'd': o.dir_opt = optarg; break;
		case 'f': o.foreground = true; break;
		case 'o': o.fuse_opts = optarg; break;
		case 'l': o.log = optarg; break;
		case 'D':
			if (o.ndev == MNT_MAX_DEVS) {
				cli_err("mount: at most %d --dev", MNT_MAX_DEVS);
				return 2;
			}
			o.dev[o.ndev++] = optarg;
			break;
		case 'h': return mount_usage(stdout), 0;
		default: return mount_usage(stderr), 2;
		}
	}
	if (optind != argc - 1) {
		cli_err("mount: give one MOUNTPOINT (see 'smartio mount --help')");
		return 2;
	}
	if (strlen(argv[optind]) >= sizeof(o.mnt)) {
		cli_err("mount: path too long");
		return 2;
	}
	strcpy(o.mnt, argv[optind]);
	ch = do_mount(&o);
	if (o.log_fd >= 0)
		close(o.log_fd);
	return ch;
}

/* ---------- unmounting ---------- */

static int run_fusermount(const char *mnt)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (!pid) {
		execlp("fusermount3", "fusermount3", "-u", mnt, (char *)NULL);
		fprintf(stderr, "smartio: fusermount3: %s (Debian: apt-get install fuse3)\n",
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
}

int cmd_umount(int argc, char **argv)
{
	char mnt[PATH_MAX];
	pid_t pid;
	int pfd, rc;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return mount_usage(stdout), 0;
	if (argc != 2 || argv[1][0] == '-') {
		cli_err(argc != 2 ? "umount: give one MOUNTPOINT" : "umount: unknown option '%s'",
			argv[1]);
		return 2;
	}
	if (!realpath(argv[1], mnt)) {
		cli_err("umount: %s: %s", argv[1], strerror(errno));
		return 1;
	}
	pid = find_mount(mnt);
	if (!pid) {
		cli_err("umount: %s is not a smartio mount", mnt);
		return 1;
	}
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (!geteuid()) {
		rc = umount2(mnt, 0) ? -errno : 0;
		if (rc == -EBUSY)
			cli_err("umount: %s is busy: unmount what uses its files first (a loop "
				"mount: umount it; a loop device: losetup -d)", mnt);
		else if (rc)
			cli_err("umount: %s: %s", mnt, strerror(-rc));
	} else {
		rc = run_fusermount(mnt);
		if (rc)
			cli_err("umount: fusermount3 -u %s failed", mnt);
	}
	if (rc) {
		if (pfd >= 0)
			close(pfd);
		return 1;
	}
	/* The server leaves its loop once the kernel ends the session: wait for it. */
	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };

		do
			rc = poll(&p, 1, UMOUNT_WAIT_MS);
		while (rc < 0 && errno == EINTR);
		if (!rc)
			cli_err("umount: unmounted, but server %d has not exited after %d s",
				(int)pid, UMOUNT_WAIT_MS / 1000);
		close(pfd);
	}
	return 0;
}
