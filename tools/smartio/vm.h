/* SPDX-License-Identifier: MIT */
/* smartio vm: shared between vm.c (run, list, stop, stats) and vm_hotplug.c. */
#ifndef SMARTIO_CLI_VM_H
#define SMARTIO_CLI_VM_H

#include <stdbool.h>
#include <sys/types.h>

/* Empty PCIe root ports every VM gets for devices hot-added later. */
#define VM_SPARE_PORTS 2

/* Each running VM recorded in DIR/vms: fn(pid of vm run, host, name, arg); a
 * non-zero return stops the walk and is returned. Stale records go. */
int cli_vm_each(const char *dir, int (*fn)(pid_t, unsigned, const char *, void *), void *arg);
/* Is the VM (pid of vm run, name) the one what names (its NAME or PID)? */
bool cli_vm_is(const char *what, pid_t pid, const char *name);
/* Find the running VM what names: > 0 found (*pid, *host if host), 0 none, < 0 -errno. */
int cli_vm_find(const char *dir, const char *what, pid_t *pid, unsigned *host);
/* smartio vm hot-add|hot-remove (argv[0] is the subcommand). */
int cli_vm_hotplug(int argc, char **argv, bool add);
/* smartio vm migrate (argv[0] "migrate"): stop, then vm run on another host. */
int cli_vm_migrate(int argc, char **argv);
/* smartio vm console (argv[0] "console"): the terminal on a VM's serial console. */
int cli_vm_console(int argc, char **argv);
int cmd_vm(int argc, char **argv);

#endif
