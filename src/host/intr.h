/* SPDX-License-Identifier: MIT */
/*
 * SISCI interrupts of one host: the kernel's table of interrupts its
 * processes created, which other hosts (and the host itself) trigger.
 *
 * On real hardware a trigger is a doorbell write through the NTB (plus
 * message registers for a data interrupt) that the owner's driver turns into
 * a wake-up of the waiting process. Here every interrupt has an eventfd: a
 * trigger adds to its counter, and the owning process, which holds a copy of
 * the eventfd, waits on it with poll() - no daemon in the wait path.
 *
 * Plain and data interrupts have separate number spaces, as in SISCI. A data
 * interrupt queues up to INTR_QUEUE messages of up to INTR_MAX_DATA bytes;
 * its eventfd is a semaphore (one count per queued message), a plain
 * interrupt's is not (triggers coalesce into one wake-up, and the count says
 * how many there were).
 *
 * Every creation gets a serial number, unique over the table's life and
 * never 0: whoever connected to an interrupt names it by (number, serial), so
 * a trigger never reaches a later interrupt that reuses the number.
 *
 * Owners are opaque non-zero tokens (the daemon uses connection ids).
 * Locking: none of its own; the daemon calls with the host lock held.
 */
#ifndef SMARTIO_HOST_INTR_H
#define SMARTIO_HOST_INTR_H

#include <stdbool.h>
#include <stdint.h>

#define INTR_NO_AUTO      0xffffffffu
#define INTR_AUTO_FIRST   0x80000000u   /* automatic numbers come from the upper half */
#define INTR_MAX          256u          /* interrupts per host (both kinds) */
#define INTR_QUEUE        16u           /* messages queued per data interrupt */
#define INTR_MAX_DATA     4096u         /* bytes per message */

struct intr {
	uint32_t intno;
	uint32_t serial;
	uint32_t owner;
	bool data;
	int efd;                   /* the eventfd triggers signal (the table's copy) */
	uint64_t triggers;         /* accepted over its life */
};

struct intr_table;

int intr_table_create(uint32_t first_serial, struct intr_table **out);
/* Closes every eventfd and drops every queued message. */
void intr_table_destroy(struct intr_table *t);

/*
 * Create an interrupt for owner; intno INTR_NO_AUTO picks a free number.
 * -EINVAL owner 0, -EEXIST number in use (for that kind), -ENOSPC table full
 * or no free automatic number, -EMFILE/-ENOMEM no eventfd. *out stays valid
 * until the next call that changes the table.
 */
int intr_create(struct intr_table *t, uint32_t owner, uint32_t intno, bool data,
		const struct intr **out);
/* The interrupt of that kind and number, or NULL. */
const struct intr *intr_lookup(const struct intr_table *t, uint32_t intno, bool data);
/* -ENOENT unknown, -EPERM not the owner. Queued messages are dropped. */
int intr_remove(struct intr_table *t, uint32_t owner, uint32_t intno, bool data);

/*
 * Trigger: signal the eventfd; a data interrupt queues msg (len bytes) first.
 * -ENOENT no such interrupt, or serial (if not 0) names an earlier one;
 * -EINVAL a message for a plain interrupt, -EMSGSIZE len > INTR_MAX_DATA,
 * -EAGAIN the queue is full (nothing queued), -ENOMEM.
 */
int intr_fire(struct intr_table *t, uint32_t intno, bool data, uint32_t serial,
	      const void *msg, uint32_t len);
/*
 * Take the oldest message of owner's data interrupt into buf (cap bytes, at
 * least INTR_MAX_DATA). -ENOENT, -EPERM, -ENOMSG the queue is empty.
 */
int intr_receive(struct intr_table *t, uint32_t owner, uint32_t intno, void *buf,
		 uint32_t cap, uint32_t *len);
/* The owner is gone: remove all its interrupts. Returns how many. */
unsigned intr_owner_gone(struct intr_table *t, uint32_t owner);

/* Statistics: interrupts, messages queued in all of them. */
unsigned intr_count(const struct intr_table *t);
unsigned intr_queued(const struct intr_table *t);

#endif
