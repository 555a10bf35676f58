// SPDX-License-Identifier: MIT
/* smartio mount/umount when built without libfuse3: say how to get them. */
#include "cli.h"

static int no_fuse(void)
{
	cli_err("this smartio was built without FUSE: install fuse3 and libfuse3-dev "
		"(Debian: apt-get install fuse3 libfuse3-dev) and rebuild");
	return 1;
}

int cmd_mount(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return no_fuse();
}

int cmd_umount(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return no_fuse();
}
