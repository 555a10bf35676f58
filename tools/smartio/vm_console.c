// SPDX-License-Identifier: MIT
/*
 * smartio vm console NAME|PID: the terminal attached to a running VM's
 * serial console (docs/vm.md). `vm run --console FILE` gives QEMU's serial
 * port a Unix socket, DIR/vms/<pid of vm run>.console, besides the FILE it
 * logs to; this command relays between that socket and stdin/stdout. On a
 * terminal it is raw (the guest's line discipline echoes and edits) and
 * Ctrl-] detaches; on a pipe, stdin's lines go to the guest and the output
 * is relayed until the VM ends (or a signal), so a script can drive a guest
 * shell: printf 'echo hi\npoweroff -f\n' | smartio vm console VM.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "util/fd_io.h"
#include "util/cli_conv.h"
#include "vm.h"

#define ESCAPE_KEY 0x1d     /* Ctrl-] */

struct find { const char *what; pid_t pid; };

/* Relay until the VM's end (0), the escape key (0) or an error (-errno). */
static int relay(int s, bool tty)
{
	struct pollfd p[2] = { { .fd = s, .events = POLLIN }, { .fd = 0, .events = POLLIN } };
	char buf[4096];
	bool in_open = true;

	for (;;) {
		ssize_t n;

		if (poll(p, in_open ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[0].revents) {
			n = read(s, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return n < 0 ? -errno : 0;     /* QEMU closed it: the VM ended */
			if (smio_write_all(1, buf, (size_t)n))
				return -EPIPE;
		}
		if (in_open && p[1].revents) {
			char *esc;

			n = read(0, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			/*
			 * End of a piped stdin: keep relaying the guest's output (no
			 * shutdown of our half: QEMU takes EOF as the client leaving).
			 */
			if (n <= 0) {
				in_open = false;
				continue;
			}
			esc = tty ? memchr(buf, ESCAPE_KEY, (size_t)n) : NULL;
			if (esc)
				n = esc - buf;
			if (n && smio_write_all(s, buf, (size_t)n))
				return -EPIPE;
			if (esc)
				return 0;
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: smartio vm console NAME|PID [--dir DIR]\n\n"
		"Attaches the terminal to a running VM's serial console (a VM started with\n"
		"'vm run --console FILE'; the FILE keeps logging). On a terminal the input is\n"
		"raw and Ctrl-] detaches; from a pipe, stdin goes to the guest and its output\n"
		"is relayed until the VM ends.\n");
}

int cli_vm_console(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' },
		{ 0 } };
	const char *dir_opt = NULL;
	char dir[PATH_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct termios saved, raw;
	struct find f = { 0 };
	bool tty = isatty(0);
	int c, s, rc, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			dir_opt = optarg;
		else if (c == 'h')
			return usage(stdout), 0;
		else
			return 2;
	}
	if (optind != argc - 1)
		return cli_err("vm console needs one VM: its NAME or PID ('smartio vm list')"), 2;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	f.what = argv[optind];
	if (cli_vm_find(dir, f.what, &f.pid, NULL) <= 0)
		return cli_err("no running VM '%s' in %s ('smartio vm list')", f.what, dir), 1;
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/vms/%d.console", dir, (int)f.pid);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return cli_err("console socket path too long (%s)", dir), 1;
	if (access(sa.sun_path, F_OK))
		return cli_err("VM '%s' has no console socket: its console is vm run's terminal "
			       "(vm run --console FILE gives it one)", f.what), 1;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return cli_err("socket: %s", strerror(errno)), 1;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = errno;
		close(s);
		return cli_err("VM '%s': cannot reach its console (%s): %s%s", f.what, sa.sun_path,
			       strerror(rc), rc == ECONNREFUSED ? " (is another vm console attached?)"
			       : ""), 1;
	}
	if (tty) {
		fprintf(stderr, "Connected to VM %s's console. Escape character is '^]'.\r\n",
			f.what);
		if (tcgetattr(0, &saved) == 0) {
			raw = saved;
			cfmakeraw(&raw);
			tcsetattr(0, TCSANOW, &raw);
		} else {
			tty = false;
		}
	}
	rc = relay(s, tty);
	if (tty) {
		tcsetattr(0, TCSANOW, &saved);
		fprintf(stderr, "\nDetached from VM %s's console.\n", f.what);
	}
	close(s);
	if (rc)
		return cli_err("vm console %s: %s", f.what, strerror(-rc)), 1;
	return 0;
}
