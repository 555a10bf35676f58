// SPDX-License-Identifier: MIT
/* smartio web without libmicrohttpd: say how to get it (tools/smartio/meson.build). */
#include "cli.h"

int cmd_web(int argc, char **argv)
{
	(void)argc, (void)argv;
	cli_err("web: this smartio was built without libmicrohttpd; install it "
		"(apt-get install libmicrohttpd-dev, or 'make deps') and rebuild");
	return 1;
}
