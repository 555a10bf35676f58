// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("smartio: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *cli_strerror(int rc)
{
	switch (rc) {
	case -ENOENT:
	case -ECONNREFUSED:
		return "no daemon answers (is the cluster up? try 'smartio cluster status')";
	case -ETIMEDOUT:
		return "the daemon did not answer in time";
	case -EPERM:
		return "not allowed for this role";
	case -ENODEV:
		return "no such device or function";
	case -ENXIO:
		return "the cluster has no such host ('smartio cluster status' lists them)";
	case -EXDEV:
		return "this is a process of another host ('smartio exec --host N' made it one): "
		       "it may use that host's daemon only";
	case -EACCES:
		return "refused: the admin role is the cluster owner's (the user who ran "
		       "'smartio cluster up'), and a process that 'smartio exec' bound to another "
		       "host may not take it";
	case -EUSERS:
		return "the daemon serves as many connections of this kind as it allows; "
		       "try again when some have closed";
	default:
		return strerror(rc < 0 ? -rc : rc);
	}
}

int cli_cluster_dir(const char *opt, char *buf, size_t len)
{
	if (opt) {
		if (strlen(opt) >= len)
			return -ENAMETOOLONG;
		strcpy(buf, opt);
		return 0;
	}
	return smio_cluster_dir(buf, len);
}

int cli_cluster_topo(const char *dir, struct topo **t)
{
	char path[PATH_MAX + 16], err[512];
	int rc;

	snprintf(path, sizeof(path), "%s/topology.yaml", dir);
	if (access(path, R_OK) != 0) {
		cli_err("no cluster in %s (start one with 'smartio cluster up')", dir);
		return -ENOENT;
	}
	rc = topo_load_file(path, t, err, sizeof(err));
	if (rc)
		cli_err("%s", err);
	return rc;
}

int cli_connect(const char *dir, uint32_t host, uint32_t role)
{
	struct smio_hello hello = { .role = role, .host = host, .pid = (uint32_t)getpid(),
				    .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	uint32_t rlen;
	int fd = smio_connect(dir, host, 0), rc;

	if (fd < 0) {
		char path[PATH_MAX + 16], err[256];
		struct topo *t;

		/* Tell "no such host" apart from "host not running". */
		snprintf(path, sizeof(path), "%s/topology.yaml", dir);
		if (!topo_load_file(path, &t, err, sizeof(err))) {
			if (topo_host_index(t, host) < 0)
				fd = -ENXIO;
			topo_free(t);
		}
		return fd;
	}
	rc = smio_call(fd, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int cli_host_arg(const char *opt, uint32_t *host)
{
	if (opt) {
		uint64_t v;

		if (cli_parse_u64(opt, &v) || v > 65535) {
			cli_err("--host wants a host id, not '%s'", opt);
			return -EINVAL;
		}
		*host = (uint32_t)v;
		return 0;
	}
	switch (smio_env_host(host)) {
	case 0:
		return 0;
	case -ENOENT:
		cli_err("which host? give --host N (or run under 'smartio exec --host N')");
		break;
	default:
		cli_err("SMARTIO_HOST='%s' is not a host id; give --host N", getenv("SMARTIO_HOST"));
	}
	return -EINVAL;
}

int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	/* Decimal or 0x hex; a leading zero is not octal here. */
	*v = strtoull(s, &end, (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10);
	if (errno)
		return -EINVAL;
	if (*end)
		return topo_parse_size(s, v) ? -EINVAL : 0;
	return 0;
}

int cli_parse_bdf(const char *s, uint16_t *bdf)
{
	unsigned dom = 0, bus, dev, fn;
	char tail;

	if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
		if (dom != 0)
			return -EINVAL;
	} else if (sscanf(s, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3) {
		return -EINVAL;
	}
	if (bus > 255 || dev > 31 || fn > 7)
		return -EINVAL;
	*bdf = (uint16_t)((bus << 8) | (dev << 3) | fn);
	return 0;
}

int cli_open_host(const char *host_opt, const char *dir_opt, uint32_t role, uint32_t *host,
		  char *dir, size_t dirlen)
{
	int fd;

	if (cli_host_arg(host_opt, host))
		return -EINVAL;
	if (cli_cluster_dir(dir_opt, dir, dirlen)) {
		cli_err("cluster directory path too long");
		return -ENAMETOOLONG;
	}
	fd = cli_connect(dir, *host, role);
	if ((fd == -ENOENT || fd == -ECONNREFUSED) && cli_cluster_running(dir))
		cli_err("host %u in %s is down (its daemon does not answer); start it again with "
			"'smartio cluster restart --host %u'%s", *host, dir, *host,
			host_opt ? "" : " (SMARTIO_HOST chose it)");
	else if (fd < 0)
		cli_err("host %u in %s: %s", *host, dir, cli_strerror(fd));
	return fd;
}

bool cli_cluster_running(const char *dir)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/topology.yaml", dir);
	return access(path, F_OK) == 0;
}

int cli_open_any(const char *host_opt, const char *dir_opt, uint32_t role, bool verbose,
		 uint32_t *host, char *dir, size_t dirlen)
{
	struct topo *t;
	int fd = -ENOENT;

	if (host_opt || getenv("SMARTIO_HOST"))
		return cli_open_host(host_opt, dir_opt, role, host, dir, dirlen);
	if (cli_cluster_dir(dir_opt, dir, dirlen)) {
		cli_err("cluster directory path too long");
		return -ENAMETOOLONG;
	}
	if (cli_cluster_topo(dir, &t))
		return -ENOENT;
	/* The first host in the topology's order whose daemon answers. */
	for (uint32_t i = 0; i < t->nhosts && fd < 0; i++) {
		fd = cli_connect(dir, t->hosts[i].id, role);
		if (fd >= 0) {
			*host = t->hosts[i].id;
			if (verbose && i)
				fprintf(stderr, "smartio: host %u answered (host %u is down)\n",
					*host, t->hosts[0].id);
		}
	}
	if (fd < 0)
		cli_err("no host of the cluster in %s answers (%s)", dir, cli_strerror(fd));
	topo_free(t);
	return fd;
}

int cli_json_print(struct json_object *o)
{
	int rc = smio_json_print(stdout, o);

	if (rc == -ENOMEM)
		cli_err("out of memory");
	else if (rc)
		cli_err("writing the output: %s", strerror(errno));
	return rc;
}
