// SPDX-License-Identifier: MIT
/*
 * cZodiac's IOPort RID and MMIO tables (czodiac_ioport.h, docs/czodiac.md).
 * The hardware uses CAMs for the USER-side look-ups and a RAM indexed by the
 * OID for the other direction; here a scan of N entries and an index.
 */
#include <errno.h>
#include <string.h>

#include "czodiac_ioport.h"

void cz_iop_init(struct cz_iop *t, uint16_t oid_base)
{
	memset(t, 0, sizeof(*t));
	t->oid_base = oid_base;
}

static struct cz_iop_fn *by_oid(struct cz_iop *t, uint16_t oid)
{
	unsigned int i = (uint16_t)(oid - t->oid_base);

	return i < CZ_IOP_FUNCS ? &t->fn[i] : NULL;
}

/* The CAM: the entry of (user, uid), or NULL. */
static const struct cz_iop_fn *by_uid(const struct cz_iop *t, uint16_t user, uint16_t uid)
{
	for (unsigned int i = 0; i < CZ_IOP_FUNCS; i++)
		if (t->fn[i].used && t->fn[i].user == user && t->fn[i].uid == uid)
			return &t->fn[i];
	return NULL;
}

int cz_iop_bind(struct cz_iop *t, uint16_t oid, uint16_t uid, uint16_t user)
{
	struct cz_iop_fn *f = by_oid(t, oid);

	if (!f)
		return -ERANGE;
	if (f->used || by_uid(t, user, uid))
		return -EEXIST;
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->oid = oid;
	f->uid = uid;
	f->user = user;
	return 0;
}

static bool overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

int cz_iop_set_bar(struct cz_iop *t, uint16_t oid, unsigned bar, uint64_t obar, uint64_t ubar,
		   uint64_t size)
{
	struct cz_iop_fn *f = by_oid(t, oid);

	if (!f || !f->used)
		return -ENOENT;
	if (bar >= CZ_IOP_BARS || !size || (size & (size - 1)) || (obar | ubar) & (size - 1))
		return -EINVAL;
	/* A USER address must select one BAR of one function. */
	for (unsigned int i = 0; i < CZ_IOP_FUNCS; i++)
		for (unsigned int j = 0; j < CZ_IOP_BARS; j++) {
			const struct cz_iop_fn *g = &t->fn[i];

			if (!g->used || (g == f && j == bar) || !g->bar[j].size)
				continue;
			if (g->user == f->user &&
			    overlaps(g->bar[j].ubar, g->bar[j].size, ubar, size))
				return -EEXIST;
		}
	f->bar[bar] = (struct cz_iop_bar){ .obar = obar, .ubar = ubar, .size = size };
	return 0;
}

int cz_iop_unbind(struct cz_iop *t, uint16_t oid)
{
	struct cz_iop_fn *f = by_oid(t, oid);

	if (!f || !f->used)
		return -ENOENT;
	memset(f, 0, sizeof(*f));
	return 0;
}

int cz_iop_user_request(const struct cz_iop *t, uint16_t user, uint16_t uid, uint64_t addr,
			uint16_t *oid, uint64_t *oaddr)
{
	const struct cz_iop_fn *f = by_uid(t, user, uid);

	if (!f)
		return -ENOENT;
	for (unsigned int j = 0; j < CZ_IOP_BARS; j++) {
		const struct cz_iop_bar *b = &f->bar[j];

		if (b->size && addr >= b->ubar && addr - b->ubar < b->size) {
			*oid = f->oid;
			*oaddr = b->obar + (addr - b->ubar);
			return 0;
		}
	}
	return -ENOENT;
}

int cz_iop_user_mmio(const struct cz_iop *t, uint16_t user, uint64_t addr, uint16_t *oid,
		     uint64_t *oaddr, uint64_t *left)
{
	for (unsigned int i = 0; i < CZ_IOP_FUNCS; i++) {
		const struct cz_iop_fn *f = &t->fn[i];

		if (!f->used || f->user != user)
			continue;
		for (unsigned int j = 0; j < CZ_IOP_BARS; j++) {
			const struct cz_iop_bar *b = &f->bar[j];

			if (!b->size || addr < b->ubar || addr - b->ubar >= b->size)
				continue;
			*oid = f->oid;
			*oaddr = b->obar + (addr - b->ubar);
			*left = b->size - (addr - b->ubar);
			return 0;
		}
	}
	return -ENOENT;
}

int cz_iop_user_completion(const struct cz_iop *t, uint16_t user, uint16_t uid, uint16_t *oid)
{
	const struct cz_iop_fn *f = by_uid(t, user, uid);

	if (!f)
		return -ENOENT;
	*oid = f->oid;
	return 0;
}

int cz_iop_device_to_user(const struct cz_iop *t, uint16_t oid, uint16_t *uid, uint16_t *user)
{
	unsigned int i = (uint16_t)(oid - t->oid_base);

	if (i >= CZ_IOP_FUNCS || !t->fn[i].used)
		return -ENOENT;
	*uid = t->fn[i].uid;
	*user = t->fn[i].user;
	return 0;
}
