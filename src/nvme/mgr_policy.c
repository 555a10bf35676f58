// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme manager: arbitration and priority classes
 * (docs/nvme-driver.md, "Priorities"). The manager selects weighted round
 * robin with urgent class when the controller has it (CAP.AMS), sets the
 * class weights and burst (Set Features Arbitration), and admits the class
 * of each queue pair by its policy: every client node has a class (default
 * medium), which its queue pairs get unless they ask for a lower one; a
 * higher one is refused, not silently downgraded, so a client never runs
 * with a share it did not expect. A policy item may also carry a rate limit
 * per queue pair ("host:3=low@500"), handed to the client with the queue and
 * applied by its library (cooperative: see docs/nvme-driver.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snv_mgr.h"

#define SNV_POLICY_MAX  1024u

static const char *const qprio_names[] = { "urgent", "high", "medium", "low" };

static int class_parse(const char *s, size_t n, uint8_t *out)
{
	for (unsigned p = NVME_QPRIO_URGENT; p <= NVME_QPRIO_LOW; p++) {
		if (strlen(qprio_names[p]) == n && !strncmp(s, qprio_names[p], n)) {
			*out = (uint8_t)p;
			return 0;
		}
	}
	return -EINVAL;
}

const char *snv_mgr_class_name(unsigned qprio)
{
	return qprio <= NVME_QPRIO_LOW ? qprio_names[qprio] : "none";
}

/* One "host:N=CLASS[@IOPS]", "node:N=..." or "default=..." item of length n. */
static int policy_item(struct snv_manager *m, const char *s, size_t n, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', n), *at = memchr(s, '@', n);
	unsigned long v, iops = 0;
	uint8_t cls;
	char *end;

	if (eq && at && at > eq) {
		errno = 0;
		iops = strtoul(at + 1, &end, 10);
		if (errno || end != s + n || !iops || iops > 10000000) {
			snv_seterr(err, errlen, "policy item '%.*s': the rate after @ must be "
				   "1..10000000 commands per second", (int)n, s);
			return -EINVAL;
		}
	} else {
		at = s + n;
	}
	if (!eq || class_parse(eq + 1, (size_t)(at - (eq + 1)), &cls)) {
		snv_seterr(err, errlen, "policy item '%.*s': want host:N=CLASS, node:N=CLASS or "
			   "default=CLASS with CLASS urgent, high, medium or low, optionally "
			   "followed by @IOPS", (int)n, s);
		return -EINVAL;
	}
	if (eq - s == 7 && !strncmp(s, "default", 7)) {
		m->def_prio = cls;
		m->def_iops = (uint32_t)iops;
		return 0;
	}
	if ((eq - s < 6 || (strncmp(s, "host:", 5) && strncmp(s, "node:", 5)))) {
		snv_seterr(err, errlen, "policy item '%.*s': names no host:N, node:N or default",
			   (int)n, s);
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(s + 5, &end, 0);
	if (errno || end != eq || v > 65532 || (s[0] == 'n' && (v == 0 || v % 4))) {
		snv_seterr(err, errlen, "policy item '%.*s': bad %s number", (int)n, s,
			   s[0] == 'h' ? "host" : "node (a nonzero multiple of 4)");
		return -EINVAL;
	}
	if (s[0] == 'h')
		v = 4 * (v + 1);        /* the topology's default node ID of host N */
	if (m->npol == SNV_POLICY_MAX) {
		snv_seterr(err, errlen, "policy: more than %u items", SNV_POLICY_MAX);
		return -E2BIG;
	}
	/* a later item for the same node wins */
	for (unsigned i = 0; i < m->npol; i++) {
		if (m->pol[i].node == v) {
			m->pol[i].qprio = cls;
			m->pol[i].iops = (uint32_t)iops;
			return 0;
		}
	}
	m->pol[m->npol++] = (struct snv_mpolicy){ .node = (uint32_t)v, .qprio = cls,
						  .iops = (uint32_t)iops };
	return 0;
}

static int weight_ok(unsigned *w, unsigned def, const char *name, char *err, size_t errlen)
{
	if (!*w)
		*w = def;
	if (*w > 256) {
		snv_seterr(err, errlen, "weight of the %s class must be 1..256, not %u", name, *w);
		return -EINVAL;
	}
	return 0;
}

int snv_mgr_policy_init(struct snv_manager *m, char *err, size_t errlen)
{
	const char *s = m->o.policy;
	unsigned ab;
	int rc;

	m->def_prio = NVME_QPRIO_MEDIUM;
	if ((rc = weight_ok(&m->o.weight_high, 8, "high", err, errlen)) ||
	    (rc = weight_ok(&m->o.weight_medium, 4, "medium", err, errlen)) ||
	    (rc = weight_ok(&m->o.weight_low, 1, "low", err, errlen)))
		return rc;
	if (!m->o.burst)
		m->o.burst = 8;
	if (m->o.burst == SNV_BURST_UNLIMITED) {
		ab = 7;
	} else {
		for (ab = 0; ab < 7 && (1u << ab) != m->o.burst; ab++)
			;
		if (ab == 7) {
			snv_seterr(err, errlen, "burst must be a power of two 1..64 or unlimited, "
				   "not %u", m->o.burst);
			return -EINVAL;
		}
	}
	m->arb = (m->o.weight_high - 1) << 24 | (m->o.weight_medium - 1) << 16 |
		 (m->o.weight_low - 1) << 8 | ab;
	m->pol = calloc(SNV_POLICY_MAX, sizeof(*m->pol));
	if (!m->pol)
		return -ENOMEM;
	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n && (rc = policy_item(m, s, n, err, errlen)))
			return rc;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* The controller is enabled with CC.AMS from here; after enable, the weights. */
uint32_t snv_mgr_policy_ams(struct snv_manager *m, uint64_t cap)
{
	m->wrr = !m->o.round_robin && (NVME_CAP_AMS(cap) & NVME_CAP_AMS_WRR);
	return m->wrr ? NVME_CC_AMS_WRRU : NVME_CC_AMS_RR;
}

int snv_mgr_policy_apply(struct snv_manager *m, char *err, size_t errlen)
{
	struct nvme_sqe cmd;
	char line[256];
	size_t len = 0;
	int rc;

	if (!m->wrr) {
		snv_mlog(m, "arbitration: round robin (%s); queue pairs have no class",
			 m->o.round_robin ? "as asked" : "the controller has no weighted round robin");
		return 0;
	}
	nvme_sqe_init(&cmd, nvme_admin_set_features, 0, 0);
	cmd.cdw10 = NVME_FEAT_FID_ARBITRATION;
	cmd.cdw11 = m->arb;
	rc = snv_mgr_admin(m, &cmd, NULL);
	if (rc) {
		snv_seterr(err, errlen, "Set Features (Arbitration) failed (%d)", rc);
		return rc < 0 ? rc : -EIO;
	}
	line[0] = 0;
	for (unsigned i = 0; i < m->npol && len < sizeof(line) - 48; i++) {
		len += (size_t)snprintf(line + len, sizeof(line) - len, " node %u %s",
					m->pol[i].node, qprio_names[m->pol[i].qprio]);
		if (m->pol[i].iops)
			len += (size_t)snprintf(line + len, sizeof(line) - len, " @%u IOPS",
						m->pol[i].iops);
		len += (size_t)snprintf(line + len, sizeof(line) - len, ",");
	}
	snv_mlog(m, "arbitration: weighted round robin with urgent class, weights high %u "
		 "medium %u low %u, burst %s%u; policy:%s default %s", m->o.weight_high,
		 m->o.weight_medium, m->o.weight_low, (m->arb & 7) == 7 ? "unlimited " : "",
		 (m->arb & 7) == 7 ? 0 : 1u << (m->arb & 7), line, qprio_names[m->def_prio]);
	return 0;
}

int snv_mgr_admit(const struct snv_manager *m, uint32_t node, uint32_t flags, uint32_t prio,
		  uint32_t *granted, uint32_t *iops, char *why, size_t whylen)
{
	uint8_t allowed = m->def_prio;

	*iops = m->def_iops;
	for (unsigned i = 0; i < m->npol; i++) {
		if (m->pol[i].node == node) {
			allowed = m->pol[i].qprio;
			*iops = m->pol[i].iops;
		}
	}
	if (!m->wrr) {
		*granted = SNV_QP_PRIO_NONE;
		if (flags & SNV_QP_PRIO_POLICY)
			return 0;
		snv_seterr(why, whylen, "class %s asked for, but the manager runs round robin "
			   "(no classes)", qprio_names[prio & 3]);
		return -ENOTSUP;
	}
	if (flags & SNV_QP_PRIO_POLICY) {
		*granted = allowed;
		return 0;
	}
	if (prio < allowed) {           /* lower QPRIO value: higher class */
		snv_seterr(why, whylen, "class %s asked for, node %u may use %s at most (policy)",
			   qprio_names[prio], node, qprio_names[allowed]);
		return -EACCES;
	}
	*granted = prio;
	return 0;
}
