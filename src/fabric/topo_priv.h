/* SPDX-License-Identifier: MIT */
/*
 * Private to the topology parser: the state shared between the YAML reader
 * (topo_parse.c), a host's contents (topo_host.c) and the whole-cluster
 * checks (topo_check.c).
 *
 * The reader fills struct topo and, for what can only be checked once every
 * host is known (cables, cascades), leaves a reference with the source line
 * here, so that topo_check.c can report "FILE:LINE:" without the YAML tree.
 */
#ifndef SMARTIO_TOPO_PRIV_H
#define SMARTIO_TOPO_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smartio/topology.h"

#define TOPO_CSW_MAX_PORTS 128  /* physical ports of one cluster switch */

/* One NTB adapter of the cluster, in host order then topo_host_ntb order. */
struct topo_ntbref {
	struct topo_ntb *ntb;
	uint32_t host;          /* index in topo.hosts */
	uint32_t idx;           /* topo_host_ntb index */
	int line;               /* of 'connect' (or of the NTB when absent) */
	int peer;               /* topo_check: index of the other end, or -1 */
};

/* A cascade link as written in one cluster switch's 'cascade' list. */
struct topo_cascref {
	uint32_t from;          /* index in topo.cswitches */
	char to[TOPO_NAME_MAX];
	struct topo_link link;
	int line;
};

struct topo_build {
	struct topo *t;
	const char *source;
	char *err;
	size_t errlen;
	bool failed;            /* err holds the one message we report */

	struct topo_ntbref *ntbs;
	size_t nntbs, ntbcap;
	struct topo_cascref *cas;
	size_t ncas, cascap;
};

/* Read an NTB/host/cluster description: topo_parse.c (tree and values),
 * topo_host.c (a host's port tree), topo_check.c (the cluster as a whole). */

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define TiB (1ull << 40)

#define LATENCY_MAX     1000000u      /* 1 ms: anything larger is a typo */
#define OBJ_MAX_KEYS    12
#define LABEL_MAX       200
#define NAME_CHARS      "_-"          /* allowed in names besides letters, digits */

struct fy_node;

/*
 * One YAML mapping being read into one struct: which of its known keys are
 * present, their values, and a label ("host 'lender-a' port 1") for messages.
 */
struct tp_obj {
	struct topo_build *b;
	char what[LABEL_MAX];
	int line;
	const char *const *keys;
	struct fy_node *val[OBJ_MAX_KEYS];
	int kline[OBJ_MAX_KEYS];      /* line of the key; 0: key absent */
};

static inline bool tp_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int tp_oom(struct topo_build *b);
int tp_line(struct fy_node *n, int fallback);
const char *tp_shown(char *dst, size_t cap, const char *s, size_t len);
const char *tp_peek_name(struct fy_node *n, char *buf, size_t cap);
const char *tp_fmt_size(char *buf, size_t cap, uint64_t v);
int tp_uint(const char *s, size_t len, uint64_t *out);
int tp_no_alias(struct topo_build *b, struct fy_node *n, int line, const char *what);

int tp_open(struct tp_obj *o, struct topo_build *b, struct fy_node *n, int line,
	    const char *const *keys, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
int tp_idx(const struct tp_obj *o, const char *key);
bool tp_has(const struct tp_obj *o, const char *key);
int tp_vline(const struct tp_obj *o, const char *key);

/* Typed reads of key @key: absent keys take @def; values are range checked. */
int tp_u32(struct tp_obj *o, const char *key, uint32_t *out, uint32_t def,
	   uint32_t min, uint32_t max);
int tp_size(struct tp_obj *o, const char *key, uint64_t *out, uint64_t def,
	    uint64_t min, uint64_t max);
int tp_bool(struct tp_obj *o, const char *key, bool *out, bool def);
int tp_str(struct tp_obj *o, const char *key, char *out, size_t cap,
	   const char *def, const char *extra);
int tp_seq(struct tp_obj *o, const char *key, struct fy_node **seq, size_t *n,
	   size_t min, size_t max);
int tp_read_link(struct tp_obj *o, struct topo_link *l, uint8_t gen, uint8_t width);
int tp_link(struct tp_obj *o, const char *key, struct topo_link *l,
	    uint8_t gen, uint8_t width);

/* topo_host.c: host @idx of t->hosts from its YAML mapping @n. */
int topo_parse_host(struct topo_build *b, struct fy_node *n, int line, uint32_t idx);

/* Record the first error as "SOURCE:LINE: ..."; always returns -EINVAL. */
int topo_err(struct topo_build *b, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Resolve cables and cascades, count cluster-switch ports. */
int topo_check(struct topo_build *b);

/* Cluster switches (topo_cswitch.c): entry idx of `cluster_switches`, at n. */
#define TOPO_MAX_CSW    64
int tp_parse_cswitch(struct topo_build *b, struct fy_node *n, int line, uint32_t idx);

#endif
