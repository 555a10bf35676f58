// SPDX-License-Identifier: MIT
/*
 * The host's interrupt table (intr.h). A small array with linear scans, as
 * for segments: a host has tens of interrupts, and INTR_MAX bounds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "intr.h"

struct intr_msg {
	uint32_t len;
	uint8_t *buf;              /* NULL when len is 0 */
};

struct intr_ent {
	struct intr pub;
	struct intr_msg q[INTR_QUEUE];   /* ring: head, count */
	unsigned head, count;
};

struct intr_table {
	struct intr_ent *ents;
	unsigned n, cap;
	uint32_t next_auto;
	uint32_t next_serial;
};

int intr_table_create(uint32_t first_serial, struct intr_table **out)
{
	struct intr_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->next_auto = INTR_AUTO_FIRST;
	t->next_serial = first_serial ? first_serial - 1 : 0;
	*out = t;
	return 0;
}

static void drop_queue(struct intr_ent *e)
{
	while (e->count) {
		free(e->q[e->head].buf);
		e->q[e->head] = (struct intr_msg){ 0 };
		e->head = (e->head + 1) % INTR_QUEUE;
		e->count--;
	}
}

static void ent_free(struct intr_ent *e)
{
	drop_queue(e);
	close(e->pub.efd);
}

void intr_table_destroy(struct intr_table *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->n; i++)
		ent_free(&t->ents[i]);
	free(t->ents);
	free(t);
}

static struct intr_ent *find(const struct intr_table *t, uint32_t intno, bool data)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->ents[i].pub.intno == intno && t->ents[i].pub.data == data)
			return &t->ents[i];
	return NULL;
}

const struct intr *intr_lookup(const struct intr_table *t, uint32_t intno, bool data)
{
	const struct intr_ent *e = find(t, intno, data);

	return e ? &e->pub : NULL;
}

/* The next free number of the upper half, or -ENOSPC (never with INTR_MAX). */
static int pick_auto(struct intr_table *t, bool data, uint32_t *intno)
{
	for (uint32_t tries = 0; tries < INTR_MAX + 1; tries++) {
		uint32_t n = t->next_auto;

		t->next_auto = n + 1 == INTR_NO_AUTO ? INTR_AUTO_FIRST : n + 1;
		if (!find(t, n, data)) {
			*intno = n;
			return 0;
		}
	}
	return -ENOSPC;
}

static uint32_t new_serial(struct intr_table *t)
{
	if (++t->next_serial == 0)
		t->next_serial = 1;
	return t->next_serial;
}

int intr_create(struct intr_table *t, uint32_t owner, uint32_t intno, bool data,
		const struct intr **out)
{
	struct intr_ent *e;
	int rc, efd;

	if (!owner)
		return -EINVAL;
	if (t->n >= INTR_MAX)
		return -ENOSPC;
	if (intno == INTR_NO_AUTO) {
		rc = pick_auto(t, data, &intno);
		if (rc)
			return rc;
	} else if (find(t, intno, data)) {
		return -EEXIST;
	}
	if (t->n == t->cap) {
		unsigned cap = t->cap ? 2 * t->cap : 8;
		struct intr_ent *v = realloc(t->ents, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->ents = v;
		t->cap = cap;
	}
	/* Non-blocking: a writer never stalls, a reader polls first. A data
	 * interrupt counts messages one by one. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | (data ? EFD_SEMAPHORE : 0));
	if (efd < 0)
		return -errno;
	e = &t->ents[t->n++];
	memset(e, 0, sizeof(*e));
	e->pub = (struct intr){ .intno = intno, .serial = new_serial(t), .owner = owner,
				.data = data, .efd = efd };
	*out = &e->pub;
	return 0;
}

static void unlink_ent(struct intr_table *t, struct intr_ent *e)
{
	ent_free(e);
	*e = t->ents[--t->n];
}

int intr_remove(struct intr_table *t, uint32_t owner, uint32_t intno, bool data)
{
	struct intr_ent *e = find(t, intno, data);

	if (!e)
		return -ENOENT;
	if (e->pub.owner != owner)
		return -EPERM;
	unlink_ent(t, e);
	return 0;
}

int intr_fire(struct intr_table *t, uint32_t intno, bool data, uint32_t serial,
	      const void *msg, uint32_t len)
{
	struct intr_ent *e = find(t, intno, data);
	struct intr_msg m = { .len = len };
	uint64_t one = 1;

	if (!e || (serial && e->pub.serial != serial))
		return -ENOENT;
	if (!data && len)
		return -EINVAL;
	if (len > INTR_MAX_DATA)
		return -EMSGSIZE;
	if (data) {
		if (e->count == INTR_QUEUE)
			return -EAGAIN;
		if (len) {
			m.buf = malloc(len);
			if (!m.buf)
				return -ENOMEM;
			memcpy(m.buf, msg, len);
		}
	}
	/* Only a counter at 2^64 - 2 refuses an add: never, with this use. */
	if (write(e->pub.efd, &one, sizeof(one)) != sizeof(one)) {
		free(m.buf);
		return -EAGAIN;
	}
	if (data) {
		e->q[(e->head + e->count) % INTR_QUEUE] = m;
		e->count++;
	}
	e->pub.triggers++;
	return 0;
}

int intr_receive(struct intr_table *t, uint32_t owner, uint32_t intno, void *buf,
		 uint32_t cap, uint32_t *len)
{
	struct intr_ent *e = find(t, intno, true);
	struct intr_msg *m;

	if (!e)
		return -ENOENT;
	if (e->pub.owner != owner)
		return -EPERM;
	if (!e->count)
		return -ENOMSG;
	m = &e->q[e->head];
	if (m->len > cap)
		return -EMSGSIZE;
	if (m->len)
		memcpy(buf, m->buf, m->len);
	*len = m->len;
	free(m->buf);
	*m = (struct intr_msg){ 0 };
	e->head = (e->head + 1) % INTR_QUEUE;
	e->count--;
	return 0;
}

unsigned intr_owner_gone(struct intr_table *t, uint32_t owner)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->n;) {
		if (t->ents[i].pub.owner == owner) {
			unlink_ent(t, &t->ents[i]);
			n++;
		} else {
			i++;
		}
	}
	return n;
}

unsigned intr_count(const struct intr_table *t)
{
	return t->n;
}

unsigned intr_queued(const struct intr_table *t)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->n; i++)
		n += t->ents[i].count;
	return n;
}
