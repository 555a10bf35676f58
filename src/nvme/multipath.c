// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme multipath: a backup queue pair per queue pair through a
 * second NTB adapter, set up in advance; failover on a link event of the
 * primary path (the primary BAR connection's SISCI callback) or a command
 * timeout, by submitting every command not yet completed again on the
 * backup; and the move back, to new queues on the primary path, once it
 * works again (docs/nvme-driver.md, "Failover").
 */
#include <errno.h>
#include <string.h>

#include "snv_priv.h"

#define SNV_MP_DWELL_NS   (500ull * 1000000)  /* on the backup at least this long */
#define SNV_MP_RETRY_NS   (500ull * 1000000)  /* between attempts to go back */

/* The primary doorbell connection's path events (watcher thread). */
static sci_callback_action_t path_event(void *arg, sci_remote_segment_t seg,
					sci_segment_cb_reason_t reason, sci_error_t status)
{
	struct snv_client *c = arg;

	(void)seg;
	(void)status;
	__atomic_store_n(&c->pdown, reason != SCI_CB_OPERATIONAL, __ATOMIC_RELEASE);
	__atomic_add_fetch(&c->pevents, 1, __ATOMIC_ACQ_REL);
	return SCI_CALLBACK_CONTINUE;
}

/* Map BAR0 through adapter a (primary: with the path callback). */
static int map_bar(struct snv_client *c, unsigned a, bool cb, sci_remote_segment_t *rs,
		   sci_map_t *map, volatile uint8_t **bar)
{
	sci_error_t se;

	SCIConnectDeviceSegmentPath(c->dev, rs, 0, SCI_MEMTYPE_BAR, a, cb ? path_event : NULL,
				    cb ? c : NULL, cb ? SCI_FLAG_USE_CALLBACK : 0, &se);
	if (se) {
		*rs = NULL;
		return snv_errno(se);
	}
	*bar = (volatile uint8_t *)SCIMapRemoteSegment(*rs, map, 0, SNV_BAR0_SIZE, NULL,
						       SCI_FLAG_IO_MAP_IOSPACE, &se);
	if (se) {
		*bar = NULL;
		*map = NULL;
		return snv_errno(se);
	}
	return 0;
}

int snv_mp_client_open(struct snv_client *c)
{
	return map_bar(c, c->bk_adapter, false, &c->bk_bar_rs, &c->bk_bar_map, &c->bk_bar);
}

int snv_mp_bar_primary(struct snv_client *c)
{
	return map_bar(c, c->adapter, c->mp, &c->bar_rs, &c->bar_map, &c->bar);
}

void snv_mp_client_close(struct snv_client *c)
{
	sci_error_t se;

	if (c->bk_bar_map)
		SCIUnmapSegment(c->bk_bar_map, 0, &se);
	if (c->bk_bar_rs)
		SCIDisconnectSegment(c->bk_bar_rs, 0, &se);
	c->bk_bar_map = NULL;
	c->bk_bar_rs = NULL;
}

/* Every command on the primary, submitted again on the backup. */
static void failover(struct snv_qpair *q)
{
	uint64_t t0 = snv_now_ns();

	for (uint16_t s = 0; s < q->depth; s++) {
		struct snv_cmd *cmd = &q->cmds[s];

		if (!q->busy[s] || cmd->on != 0)
			continue;
		if (cmd->buf)
			snv_prp_set(&cmd->sqe, cmd->buf, cmd->off, cmd->len, true);
		cmd->t_ns = t0;
		snv_hwq_ring(q, 1, s);
		q->st.resubmitted++;
	}
	q->hw[0].inflight = 0;              /* abandoned: late completions are ignored */
	q->act = 1;
	q->on_backup_ns = t0;
	q->next_try_ns = t0 + SNV_MP_DWELL_NS;
	q->st.failovers++;
	q->st.last_failover_ns = snv_now_ns() - t0;
}

/*
 * Back to the primary path. Its maps were restored by libsisci, but stores
 * into its SQ and doorbells may have been dropped while it failed, so the
 * controller's view of that queue pair is unknown: it is deleted and created
 * again on the same memory (through the manager, whose channel works again
 * when the path does). Commands on the backup complete there.
 */
static void resume(struct snv_qpair *q)
{
	struct snv_client *c = q->c;
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = snv_hwq_delete(c, &q->hw[0]);
	if (!rc)
		rc = snv_hwq_create(q, 0, q->sp, q->cp);
	pthread_mutex_unlock(&c->lock);
	if (rc) {
		q->next_try_ns = snv_now_ns() + SNV_MP_RETRY_NS;
		return;
	}
	q->act = 0;
	q->st.resumes++;
}

void snv_mp_check(struct snv_qpair *q)
{
	struct snv_client *c = q->c;
	unsigned ev = __atomic_load_n(&c->pevents, __ATOMIC_ACQUIRE);
	bool down = __atomic_load_n(&c->pdown, __ATOMIC_ACQUIRE);

	if (q->act == 0) {
		/*
		 * Down now; or an event (a flap may be over before we look: stores
		 * of ours may have been dropped) or a command timed out (the
		 * caller saw it) with commands on the primary.
		 */
		q->seen_events = ev;
		if (down || q->hw[0].inflight)
			failover(q);
		return;
	}
	q->seen_events = ev;
	if (down || snv_now_ns() < q->next_try_ns)
		return;
	resume(q);
}
