// SPDX-License-Identifier: MIT
/*
 * The host's segment table (segment.h). Small arrays: a host has tens of
 * segments, not millions, and linear scans keep the invariants obvious.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "segment.h"

struct seg_ref {
	uint32_t id;
	uint32_t segid;
	uint32_t holder;
	bool conn;                 /* a connection (seg_ref_get), not the owner's own */
};

struct seg_table {
	struct physmem *pm;
	struct seg *segs;
	unsigned nsegs, segcap;
	struct seg_ref *refs;
	unsigned nrefs, refcap;
	uint32_t next_auto;
	uint32_t next_ref;
	struct seg_hooks hooks;
};

int seg_table_create(struct physmem *pm, struct seg_table **out)
{
	struct seg_table *t;

	if (!pm)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pm = pm;
	t->next_auto = SEG_AUTO_FIRST;
	*out = t;
	return 0;
}

void seg_table_set_hooks(struct seg_table *t, const struct seg_hooks *h)
{
	t->hooks = *h;
}

static void seg_free_mem(struct seg_table *t, const struct seg *s)
{
	if (s->mem == SEG_MEM_NONE || s->mem == SEG_MEM_ALIAS)
		return;     /* nothing, or the backing segment's memory */
	if (t->hooks.unexpose)
		t->hooks.unexpose(t->hooks.arg, s->phys, s->size);
	if (s->mem == SEG_MEM_RAM)
		physmem_free(t->pm, s->phys, s->size);
}

void seg_table_destroy(struct seg_table *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->nsegs; i++)
		seg_free_mem(t, &t->segs[i]);
	free(t->segs);
	free(t->refs);
	free(t);
}

static struct seg *find(const struct seg_table *t, uint32_t id)
{
	for (unsigned i = 0; i < t->nsegs; i++)
		if (t->segs[i].id == id)
			return &t->segs[i];
	return NULL;
}

const struct seg *seg_lookup(const struct seg_table *t, uint32_t id)
{
	return find(t, id);
}

/*
 * Order of the array does not matter: move the last one into the hole. An
 * alias's backing segment, orphaned and waiting only for it, goes too.
 */
static void drop_seg(struct seg_table *t, struct seg *s)
{
	struct seg old = *s;
	struct seg *b;

	*s = t->segs[--t->nsegs];
	seg_free_mem(t, &old);
	if (old.mem != SEG_MEM_ALIAS)
		return;
	b = find(t, old.backing);
	if (b && b->aliases && !--b->aliases && !b->owner && !b->nrefs)
		drop_seg(t, b);
}

static int pick_auto(struct seg_table *t, uint32_t *id)
{
	/* At most nsegs ids can be taken, so nsegs + 1 candidates find a free one. */
	for (unsigned tries = 0; tries <= t->nsegs; tries++) {
		uint32_t cand = t->next_auto;

		t->next_auto = cand >= SEG_ID_AUTO - 1 ? SEG_AUTO_FIRST : cand + 1;
		if (!find(t, cand)) {
			*id = cand;
			return 0;
		}
	}
	return -ENOSPC;
}

int seg_create(struct seg_table *t, uint32_t owner, uint32_t id, uint64_t size,
	       uint32_t flags, const struct seg **out)
{
	struct seg s = { .flags = flags, .owner = owner,
			 .mem = (flags & SEG_F_EMPTY) ? SEG_MEM_NONE : SEG_MEM_RAM };
	int rc;

	if (!owner || !size || size > (1ull << 40) || (flags & ~SEG_F_EMPTY))
		return -EINVAL;
	s.size = (size + PHYSMEM_PAGE - 1) & ~(PHYSMEM_PAGE - 1);
	if (id == SEG_ID_AUTO) {
		rc = pick_auto(t, &id);
		if (rc)
			return rc;
	} else if (find(t, id)) {
		return -EEXIST;
	}
	s.id = id;
	/* Room first, so that nothing can fail once the memory is taken. */
	if (t->nsegs == t->segcap) {
		unsigned cap = t->segcap ? 2 * t->segcap : 16;
		struct seg *v = realloc(t->segs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->segs = v;
		t->segcap = cap;
	}
	if (!(flags & SEG_F_EMPTY)) {
		rc = physmem_alloc(t->pm, s.size, PHYSMEM_PAGE, UINT64_MAX, &s.phys);
		if (rc)
			return rc;
		rc = t->hooks.expose ? t->hooks.expose(t->hooks.arg, s.phys, s.size) : 0;
		if (rc) {
			physmem_free(t->pm, s.phys, s.size);
			return rc;
		}
	}
	t->segs[t->nsegs] = s;
	*out = &t->segs[t->nsegs++];
	return 0;
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

int seg_attach(struct seg_table *t, uint32_t owner, uint32_t id, enum seg_mem mem,
	       uint64_t addr, uint64_t size, const struct seg **out)
{
	struct seg *s = find(t, id), *b = NULL;
	uint64_t phys = addr;
	int rc;

	if (!s || !s->owner)
		return -ENOENT;
	if (s->owner != owner)
		return -EPERM;
	if (s->mem != SEG_MEM_NONE)
		return -EEXIST;
	if (!size || size > (1ull << 40) || (size & (PHYSMEM_PAGE - 1)) ||
	    (addr & (PHYSMEM_PAGE - 1)) || addr + size < addr)
		return -EINVAL;
	switch (mem) {
	case SEG_MEM_RAM:
		rc = physmem_alloc(t->pm, size, PHYSMEM_PAGE, UINT64_MAX, &phys);
		if (rc)
			return rc;
		break;
	case SEG_MEM_ALIAS:
		/* Only RAM of the owner's own segments (not aliases, not BARs). */
		for (unsigned i = 0; i < t->nsegs && !b; i++)
			if (t->segs[i].owner == owner && t->segs[i].mem == SEG_MEM_RAM &&
			    addr >= t->segs[i].phys &&
			    addr + size <= t->segs[i].phys + t->segs[i].size)
				b = &t->segs[i];
		if (!b)
			return -EACCES;
		break;
	case SEG_MEM_IO:
		for (unsigned i = 0; i < t->nsegs; i++)
			if (t->segs[i].mem == SEG_MEM_IO &&
			    overlaps(addr, size, t->segs[i].phys, t->segs[i].size))
				return -EBUSY;
		break;
	default:
		return -EINVAL;
	}
	if (mem != SEG_MEM_ALIAS && t->hooks.expose) {
		rc = t->hooks.expose(t->hooks.arg, phys, size);
		if (rc) {
			if (mem == SEG_MEM_RAM)
				physmem_free(t->pm, phys, size);
			return rc;
		}
	}
	if (b) {
		b->aliases++;
		s->backing = b->id;
	}
	s->mem = (uint8_t)mem;
	s->flags &= ~SEG_F_EMPTY;
	s->phys = phys;
	s->size = size;
	*out = s;
	return 0;
}

int seg_remove(struct seg_table *t, uint32_t owner, uint32_t id)
{
	struct seg *s = find(t, id);

	if (!s || !s->owner)
		return -ENOENT;
	if (s->owner != owner)
		return -EPERM;
	if (s->nrefs || s->aliases)
		return -EBUSY;      /* SISCI: not while others are connected */
	drop_seg(t, s);
	return 0;
}

int seg_set_available(struct seg_table *t, uint32_t owner, uint32_t id, bool available)
{
	struct seg *s = find(t, id);

	if (!s || !s->owner)
		return -ENOENT;
	if (s->owner != owner)
		return -EPERM;
	if (available && (s->flags & SEG_F_EMPTY))
		return -ENXIO;
	s->available = available;
	return 0;
}

/* owner 0: anyone's available segment; else only owner's, available or not. */
static int ref_get(struct seg_table *t, uint32_t id, uint32_t holder, uint32_t owner,
		   uint32_t *ref, const struct seg **out)
{
	struct seg *s = find(t, id);

	if (!holder)
		return -EINVAL;
	if (!s || !s->owner)
		return -ENOENT;
	if (owner && s->owner != owner)
		return -EPERM;
	if (!owner && !s->available)
		return -ECONNREFUSED;
	if (t->nrefs == t->refcap) {
		unsigned cap = t->refcap ? 2 * t->refcap : 16;
		struct seg_ref *v = realloc(t->refs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->refs = v;
		t->refcap = cap;
	}
	/* Reference ids are never 0 and not reused soon: a stale release misses. */
	if (++t->next_ref == 0)
		t->next_ref = 1;
	t->refs[t->nrefs++] = (struct seg_ref){ .id = t->next_ref, .segid = id,
						.holder = holder, .conn = !owner };
	s->nrefs++;
	*ref = t->next_ref;
	*out = s;
	if (!owner && t->hooks.conn)
		t->hooks.conn(t->hooks.arg, id, holder, true);
	return 0;
}

int seg_ref_get(struct seg_table *t, uint32_t id, uint32_t holder, uint32_t *ref,
		const struct seg **out)
{
	return ref_get(t, id, holder, 0, ref, out);
}

int seg_ref_get_own(struct seg_table *t, uint32_t id, uint32_t owner, uint32_t *ref,
		    const struct seg **out)
{
	return ref_get(t, id, owner, owner, ref, out);
}

int seg_ref_get_for(struct seg_table *t, uint32_t id, uint32_t owner, uint32_t holder,
		    uint32_t *ref, const struct seg **out)
{
	if (!owner)
		return -EINVAL;
	return ref_get(t, id, holder, owner, ref, out);
}

/* Drop refs[i]; frees an orphan whose last reference this was. */
static void put_at(struct seg_table *t, unsigned i)
{
	struct seg *s = find(t, t->refs[i].segid);
	struct seg_ref r = t->refs[i];

	t->refs[i] = t->refs[--t->nrefs];
	if (!s)
		return;     /* cannot happen: a referenced segment is never dropped */
	s->nrefs--;
	if (r.conn && s->owner && t->hooks.conn)
		t->hooks.conn(t->hooks.arg, r.segid, r.holder, false);
	if (!s->owner && !s->nrefs && !s->aliases)
		drop_seg(t, s);
}

int seg_ref_put(struct seg_table *t, uint32_t id, uint32_t ref, uint32_t holder)
{
	for (unsigned i = 0; i < t->nrefs; i++) {
		if (t->refs[i].id != ref)
			continue;
		if (t->refs[i].segid != id || t->refs[i].holder != holder)
			return -ENOENT;
		put_at(t, i);
		return 0;
	}
	return -ENOENT;
}

bool seg_ref_held(const struct seg_table *t, uint32_t id, uint32_t ref, uint32_t holder)
{
	for (unsigned i = 0; i < t->nrefs; i++)
		if (t->refs[i].id == ref)
			return t->refs[i].segid == id && t->refs[i].holder == holder;
	return false;
}

unsigned seg_holder_gone(struct seg_table *t, uint32_t holder)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->nrefs;) {
		if (t->refs[i].holder == holder) {
			put_at(t, i);       /* refs[i] is now another one: look again */
			n++;
		} else {
			i++;
		}
	}
	return n;
}

unsigned seg_owner_refs(const struct seg_table *t, uint32_t owner, struct seg_ref_info **out)
{
	struct seg_ref_info *v;
	unsigned n = 0;

	*out = NULL;
	if (!owner || !t->nrefs)
		return 0;
	v = malloc(t->nrefs * sizeof(*v));
	if (!v)
		return 0;
	for (unsigned i = 0; i < t->nrefs; i++) {
		const struct seg *s = find(t, t->refs[i].segid);

		if (s && s->owner == owner && t->refs[i].holder != owner)
			v[n++] = (struct seg_ref_info){ .segid = t->refs[i].segid,
				.ref = t->refs[i].id, .holder = t->refs[i].holder };
	}
	if (!n) {
		free(v);
		return 0;
	}
	*out = v;
	return n;
}

unsigned seg_owner_gone(struct seg_table *t, uint32_t owner)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->nsegs;) {
		struct seg *s = &t->segs[i];

		if (s->owner != owner) {
			i++;
			continue;
		}
		n++;
		if (s->nrefs || s->aliases) {
			/* Connected peers keep their memory until they let go. */
			s->owner = 0;
			s->available = false;
			i++;
		} else {
			/* May drop an orphaned backing segment too: look again from the start. */
			drop_seg(t, s);
			i = 0;
		}
	}
	return n;
}

int seg_disown(struct seg_table *t, uint32_t owner, uint32_t id)
{
	struct seg *s = find(t, id);

	if (!s || !s->owner)
		return -ENOENT;
	if (s->owner != owner)
		return -EPERM;
	if (s->nrefs || s->aliases) {
		s->owner = 0;           /* lingers until the last reference goes */
		s->available = false;
	} else {
		drop_seg(t, s);
	}
	return 0;
}

unsigned seg_count(const struct seg_table *t)
{
	return t->nsegs;
}

unsigned seg_ref_count(const struct seg_table *t)
{
	return t->nrefs;
}
