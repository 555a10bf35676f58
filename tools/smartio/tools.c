// SPDX-License-Identifier: MIT
/*
 * Where smartio's sibling programs are: smartiod for `cluster up`, and
 * smartio-nvme for `smartio exec` when PATH does not have it.
 *
 * Installed, they share a directory (PREFIX/bin), so "next to our own
 * executable" finds them whatever PATH says. In a build tree each lives in
 * its own directory, at a fixed place relative to tools/smartio/smartio; that
 * is the second guess, so the build tree works without installing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Where each tool is in a build tree, relative to tools/smartio/. */
static const struct { const char *name, *build_path; } build_tree[] = {
	{ "smartiod", "../../src/daemon/smartiod" },
	{ "smartio-nvme", "../smartio-nvme/smartio-nvme" },
	{ "smartio", "smartio" },
};

int cli_find_tool(const char *name, char *buf, size_t len)
{
	char self[PATH_MAX], *slash;
	ssize_t n;
	size_t i;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", self, name) < len && !access(buf, X_OK))
		return 0;
	for (i = 0; i < sizeof(build_tree) / sizeof(build_tree[0]); i++) {
		if (strcmp(build_tree[i].name, name))
			continue;
		if ((size_t)snprintf(buf, len, "%s/%s", self, build_tree[i].build_path) < len &&
		    !access(buf, X_OK))
			return 0;
	}
	return -ENOENT;
}
