// SPDX-License-Identifier: MIT
/*
 * smartio cluster logs [--host N] [--follow] [--dir DIR]: the daemons' logs
 * (DIR/host-N.log), which outlive the cluster until the user removes them.
 *
 * Every host's lines, each prefixed "host N: ", merged in time order: a
 * daemon's line starts with its UTC time (util/log.h), and a line without
 * one (a message from outside the log module) keeps its place after the
 * line before it in its own file. 'cluster up' and 'restart' mark each start
 * with a line in the same format.
 * --follow then prints what the daemons append, as 'tail -f' would.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define FOLLOW_POLL_MS 200
#define STAMP_LEN      24          /* "2026-11-25T20:30:01.123Z" */

struct log_line {
	char key[STAMP_LEN + 1];   /* its time, or the time of the line before it */
	uint32_t host;
	size_t seq;                /* order within the host's file: keeps a sort stable */
	char *text;
};

struct log_file {
	uint32_t host;
	FILE *f;
};

static bool stamped(const char *s)
{
	return strlen(s) > STAMP_LEN && s[4] == '-' && s[10] == 'T' && s[STAMP_LEN - 1] == 'Z';
}

static int line_cmp(const void *a, const void *b)
{
	const struct log_line *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int host_cmp(const void *a, const void *b)
{
	const struct log_file *x = a, *y = b;

	return x->host < y->host ? -1 : x->host > y->host;
}

/* DIR/host-N.log files (all, or host's); opened, sorted by host. */
static int open_logs(const char *dir, int host, struct log_file **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct log_file *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[PATH_MAX + 300], tail;
		unsigned h;

		if (sscanf(e->d_name, "host-%u.lo%c", &h, &tail) != 2 || tail != 'g' ||
		    strcmp(strrchr(e->d_name, '.'), ".log") || (host >= 0 && h != (unsigned)host))
			continue;
		if (*n == cap) {
			struct log_file *nv = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		v[*n].f = fopen(path, "re");
		v[*n].host = h;
		if (v[*n].f)
			(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), host_cmp);
	*out = v;
	return 0;
}

/* Read what each file has from where it stands, merge by time, print. */
static int print_new(struct log_file *files, size_t nf)
{
	struct log_line *l = NULL;
	size_t n = 0, cap = 0;
	char *buf = NULL;
	size_t blen = 0;
	int rc = 0;

	for (size_t i = 0; i < nf && !rc; i++) {
		char key[STAMP_LEN + 1] = "";
		ssize_t len;

		clearerr(files[i].f);
		while ((len = getline(&buf, &blen, files[i].f)) > 0) {
			if (n == cap) {
				struct log_line *nl = realloc(l, (cap = cap ? 2 * cap : 256) *
								 sizeof(*l));

				if (!nl) {
					rc = -ENOMEM;
					break;
				}
				l = nl;
			}
			if (stamped(buf))
				snprintf(key, sizeof(key), "%.*s", STAMP_LEN, buf);
			l[n] = (struct log_line){ .host = files[i].host, .seq = n };
			memcpy(l[n].key, key, sizeof(key));
			l[n].text = strdup(buf);
			if (!l[n].text) {
				rc = -ENOMEM;
				break;
			}
			n++;
		}
	}
	free(buf);
	if (!rc && n)
		qsort(l, n, sizeof(*l), line_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t tl = strlen(l[i].text);

		if (!rc)
			printf("host %u: %s%s", l[i].host, l[i].text,
			       tl && l[i].text[tl - 1] == '\n' ? "" : "\n");
		free(l[i].text);
	}
	free(l);
	fflush(stdout);
	if (rc)
		cli_err("cluster logs: out of memory");
	return rc;
}

static void logs_usage(FILE *f)
{
	fprintf(f, "usage: smartio cluster logs [--host N] [--follow] [--dir DIR]\n\n"
		   "Prints the daemons' logs (DIR/host-N.log), every line prefixed 'host N: ',\n"
		   "all hosts merged in time order (each line starts with its UTC time).\n"
		   "The logs outlive 'cluster down' and are appended to by the next 'cluster up'\n"
		   "or 'cluster restart' (a 'TIME ---- ... ----' line marks each start);\n"
		   "they stay until you remove them.\n"
		   "  --host N   only host N's log\n"
		   "  --follow   keep printing what the daemons append (Ctrl-C stops)\n");
}

int cmd_cluster_logs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "host", required_argument, NULL, 'H' },
		{ "follow", no_argument, NULL, 'f' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	const char *dir_opt = NULL, *host_opt = NULL;
	char dir[PATH_MAX];
	struct log_file *files = NULL;
	size_t nf = 0;
	bool follow = false;
	int c, host = -1, rc;
	uint32_t h;

	optind = 1;
	while ((c = getopt_long(argc, argv, "hf", opts, NULL)) != -1) {
		if (c == 'd')
			dir_opt = optarg;
		else if (c == 'H')
			host_opt = optarg;
		else if (c == 'f')
			follow = true;
		else if (c == 'h')
			return logs_usage(stdout), 0;
		else
			return logs_usage(stderr), 2;
	}
	if (optind < argc) {
		cli_err("cluster logs: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (host_opt) {
		if (cli_host_arg(host_opt, &h))
			return 2;
		host = (int)h;
	}
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	rc = open_logs(dir, host, &files, &nf);
	if (rc || !nf) {
		if (host >= 0)
			cli_err("no log of host %d in %s", host, dir);
		else
			cli_err("no logs in %s (%s)", dir, rc ? strerror(-rc) :
				"no cluster has run there, or its logs were removed");
		free(files);
		return 1;
	}
	rc = print_new(files, nf);
	while (!rc && follow) {
		poll(NULL, 0, FOLLOW_POLL_MS);   /* a log file cannot be poll()ed for growth */
		rc = print_new(files, nf);
	}
	for (size_t i = 0; i < nf; i++)
		fclose(files[i].f);
	free(files);
	return rc ? 1 : 0;
}
