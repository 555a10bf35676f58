// SPDX-License-Identifier: MIT
/*
 * The world's cZodiac IOPorts (czodiac_route.h): finding and creating them,
 * and the two look-ups route.c makes (USER MMIO by address, device requests
 * by OID).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "czodiac_route.h"
#include "ntb.h"

/* ---------- the sequence lock (czodiac_route.h) ---------- */

#define SEQ_COUNT(v) ((uint32_t)(v))
#define SEQ_PID(v)   ((pid_t)((v) >> 32))

/*
 * A writer's odd count that has lasted: if its process is gone (or none is
 * recorded), count past it (the half-made change is then what the tables
 * hold; its daemon's next start clears its IOPort). One waiter wins the CAS.
 */
static void past_dead_writer(struct fab_cz_state *s, uint64_t v)
{
	pid_t pid = SEQ_PID(v);

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		__atomic_compare_exchange_n(&s->seq, &v, (uint64_t)(SEQ_COUNT(v) + 1), false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* An odd count seen: yield (the writer only stores); now and then, ask if it lives. */
static void odd_wait(struct fab_cz_state *s, uint64_t v, unsigned *spins)
{
	if (++*spins % 1024 == 0)
		past_dead_writer(s, v);
	sched_yield();
}

void fab_cz_write_begin(struct fab_cz_state *s)
{
	uint64_t me = (uint64_t)(uint32_t)getpid() << 32;
	unsigned spins = 0;

	for (;;) {
		uint64_t v = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

		if (v & 1) {
			odd_wait(s, v, &spins);
			continue;
		}
		if (__atomic_compare_exchange_n(&s->seq, &v, me | (SEQ_COUNT(v) + 1), false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	/* The odd count is seen before any of the stores that follow. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void fab_cz_write_end(struct fab_cz_state *s)
{
	uint64_t v = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&s->seq, (uint64_t)(SEQ_COUNT(v) + 1), __ATOMIC_RELEASE);
}

uint64_t fab_cz_read_begin(struct fab_cz_state *s)
{
	unsigned spins = 0;

	for (;;) {
		uint64_t v = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (!(v & 1))
			return v;
		odd_wait(s, v, &spins);
	}
}

bool fab_cz_read_retry(const struct fab_cz_state *s, uint64_t v)
{
	/* The table loads above are done before the count is read again. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->seq, __ATOMIC_RELAXED) != v;
}

int fab_cz_host_port(const struct fab_host *h, uint32_t cswitch)
{
	for (uint32_t i = 0; i < h->nntbs; i++) {
		const struct topo_ntb *t = h->ntbs[i]->t;

		if (t->peer_kind == TOPO_PEER_CSWITCH && t->peer_cswitch == cswitch)
			return (int)i;
	}
	return -1;
}

static int ntb_on_switch(const struct topo_host *h, const struct topo_ntb *ntb, uint32_t index,
			 void *arg)
{
	(void)h;
	(void)index;
	return ntb->peer_kind == TOPO_PEER_CSWITCH && ntb->peer_cswitch == *(uint32_t *)arg;
}

bool fab_cz_host_on_switch(const struct topo *t, uint32_t cswitch, uint32_t host)
{
	int hi = topo_host_index(t, host);

	return hi >= 0 && topo_for_each_ntb(&t->hosts[hi], ntb_on_switch, &cswitch) > 0;
}

struct cz_iop *fab_cz_ioport(struct fab_world *w, uint32_t cswitch, uint32_t owner,
			     uint16_t oid_base, int *rc)
{
	struct fab_cz_ioport *free_slot = NULL;

	if (!w->cz) {
		*rc = -ENODEV;
		return NULL;
	}
	if (cswitch >= w->topo->ncswitches || !w->topo->cswitches[cswitch].czodiac ||
	    !fab_cz_host_on_switch(w->topo, cswitch, owner)) {
		*rc = -EINVAL;
		return NULL;
	}
	for (unsigned i = 0; i < FAB_CZ_MAX_IOPORTS; i++) {
		struct fab_cz_ioport *p = &w->cz->port[i];

		if (p->used && p->cswitch == cswitch && p->owner == owner)
			return &p->t;
		if (!p->used && !free_slot)
			free_slot = p;
	}
	if (!free_slot) {
		*rc = -ENOSPC;
		return NULL;
	}
	free_slot->used = true;
	free_slot->cswitch = cswitch;
	free_slot->owner = owner;
	cz_iop_init(&free_slot->t, oid_base);
	return &free_slot->t;
}

void fab_cz_changed(struct fab_world *w)
{
	__atomic_add_fetch(&w->epoch, 1, __ATOMIC_ACQ_REL);
}

/* The look-ups below read once, then again if a writer changed the tables meanwhile. */

static int user_mmio(const struct fab_cz_state *s, uint32_t cswitch, uint32_t user, uint64_t a,
		     uint32_t *owner, uint16_t *oid, uint64_t *oaddr, uint64_t *left)
{
	for (unsigned i = 0; i < FAB_CZ_MAX_IOPORTS; i++) {
		const struct fab_cz_ioport *p = &s->port[i];

		if (!p->used || p->cswitch != cswitch)
			continue;
		if (!cz_iop_user_mmio(&p->t, (uint16_t)user, a, oid, oaddr, left)) {
			*owner = p->owner;
			return 0;
		}
	}
	return -ENOENT;
}

int fab_cz_user_mmio(const struct fab_world *w, uint32_t cswitch, uint32_t user, uint64_t a,
		     uint32_t *owner, uint16_t *oid, uint64_t *oaddr, uint64_t *left)
{
	uint64_t v;
	int rc;

	if (!w->cz)
		return -ENOENT;
	do {
		v = fab_cz_read_begin(w->cz);
		rc = user_mmio(w->cz, cswitch, user, a, owner, oid, oaddr, left);
	} while (fab_cz_read_retry(w->cz, v));
	return rc;
}

static int device(const struct fab_cz_state *s, uint32_t owner, uint16_t oid, uint32_t *cswitch,
		  uint16_t *uid, uint32_t *user)
{
	for (unsigned i = 0; i < FAB_CZ_MAX_IOPORTS; i++) {
		const struct fab_cz_ioport *p = &s->port[i];
		uint16_t u;

		if (!p->used || p->owner != owner || cz_iop_device_to_user(&p->t, oid, uid, &u))
			continue;
		*cswitch = p->cswitch;
		*user = u;
		return 0;
	}
	return -ENOENT;
}

int fab_cz_device(const struct fab_world *w, uint32_t owner, uint16_t oid, uint32_t *cswitch,
		  uint16_t *uid, uint32_t *user)
{
	uint64_t v;
	int rc;

	if (!w->cz)
		return -ENOENT;
	do {
		v = fab_cz_read_begin(w->cz);
		rc = device(w->cz, owner, oid, cswitch, uid, user);
	} while (fab_cz_read_retry(w->cz, v));
	return rc;
}

static uint64_t user_top(const struct fab_cz_state *s, uint32_t cswitch, uint32_t user)
{
	uint64_t top = 0;

	for (unsigned i = 0; i < FAB_CZ_MAX_IOPORTS; i++) {
		const struct fab_cz_ioport *p = &s->port[i];

		for (unsigned f = 0; p->used && p->cswitch == cswitch && f < CZ_IOP_FUNCS; f++)
			for (unsigned b = 0; p->t.fn[f].used && p->t.fn[f].user == user &&
			     b < CZ_IOP_BARS; b++) {
				const struct cz_iop_bar *bar = &p->t.fn[f].bar[b];

				if (bar->size && bar->ubar + bar->size > top)
					top = bar->ubar + bar->size;
			}
	}
	return top;
}

uint64_t fab_cz_user_top(const struct fab_world *w, uint32_t cswitch, uint32_t user)
{
	uint64_t v, top;

	if (!w->cz)
		return 0;
	do {
		v = fab_cz_read_begin(w->cz);
		top = user_top(w->cz, cswitch, user);
	} while (fab_cz_read_retry(w->cz, v));
	return top;
}
