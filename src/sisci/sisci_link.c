// SPDX-License-Identifier: MIT
/*
 * libsisci: what a connection's path does to the program. The daemon says
 * (SEG_EVENTS eventfd, SEG_STATE) when the route from this host's CPU
 * through a connection's window stops working (NOT_OPERATIONAL: a link on
 * the path is down), works again (CONNECTED), or is gone for good (LOST:
 * the owner's host; DISCONNECTED: the owner process). One watcher thread per
 * connection that is mapped or has a callback acts on it:
 *
 *  - the maps of the connection behave as PCIe does while the path fails:
 *    each is replaced in place (mmap MAP_FIXED, same address) by a private
 *    mapping of an all-ones object, so loads return all-ones and stores never
 *    reach the owner; when the path works again each map is asked for again
 *    (SEG_MAP_REMOTE: the route walked anew) and put back at the same address;
 *  - then the connection's callback hears SCI_CB_NOT_OPERATIONAL,
 *    SCI_CB_OPERATIONAL, SCI_CB_LOST or SCI_CB_DISCONNECT.
 *
 * Sequences (SCIStartSequence/SCICheckSequence) ask the daemon directly, so
 * they are exact where the watcher is a few microseconds late.
 *
 * Residual differences from hardware (docs/sisci.md): between the link's
 * change and the watcher's remap (microseconds), stores still land and loads
 * still see the memory; a store into a failed map is kept in the process's
 * private copy, so a later load of the same bytes returns it instead of
 * all-ones.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sisci_seg.h"
#include "util/allones.h"
#include "util/log.h"

/* ---------- maps ---------- */

static int map_prot(const struct sci_map *m)
{
	return PROT_READ | ((m->flags & SCI_FLAG_READONLY_MAP) ? 0 : PROT_WRITE);
}

/* Every map of r reads all-ones and drops stores from now on (lock held). */
static void maps_fail(struct sci_remote_segment *r)
{
	for (struct sisci_obj *o = sisci_obj_first(SISCI_OBJ_MAP); o;
	     o = sisci_obj_next(o, SISCI_OBJ_MAP)) {
		struct sci_map *m = (struct sci_map *)o;
		int fd;

		if (m->rseg != r || m->failed)
			continue;
		fd = smio_allones_fd(m->maplen);
		/*
		 * One mmap replaces the pages atomically: a load sees the memory
		 * or all-ones, never a hole. MAP_PRIVATE: stores stay here.
		 */
		if (fd < 0 || mmap(m->base, m->maplen, map_prot(m), MAP_PRIVATE | MAP_FIXED, fd, 0) ==
			      MAP_FAILED) {
			smio_error("cannot fail a map of segment %#x: %s", r->segid,
					strerror(fd < 0 ? -fd : errno));
			continue;
		}
		m->failed = true;
	}
}

/* The maps of r work again: each put back where it was (lock held). */
static void maps_restore(struct sci_remote_segment *r)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	for (struct sisci_obj *o = sisci_obj_first(SISCI_OBJ_MAP); o;
	     o = sisci_obj_next(o, SISCI_OBJ_MAP)) {
		struct sci_map *m = (struct sci_map *)o;
		struct smio_seg_map req = { .conn = r->conn, .offset = m->offset,
					    .size = m->size };
		struct smio_map_reply mr;
		uint64_t delta = (uint64_t)((const char *)m->addr - (const char *)m->base);
		uint32_t rlen = 0;
		int fd = -1, rc;

		if (m->rseg != r || !m->failed)
			continue;
		rc = sisci_call(r->sd, SMIO_SEG_MAP_REMOTE, &req, sizeof(req), &mr, sizeof(mr),
				&rlen, &fd);
		/* The same translation, or the program's pointer would be wrong. */
		if (!rc && (fd < 0 || rlen != sizeof(mr) || mr.offset > mr.fd_size ||
			    m->size > mr.fd_size - mr.offset || mr.offset % page != delta))
			rc = -EPROTO;
		if (!rc && mmap(m->base, m->maplen, map_prot(m), MAP_SHARED | MAP_FIXED, fd,
				(off_t)(mr.offset - delta)) == MAP_FAILED)
			rc = -errno;
		if (fd >= 0)
			close(fd);
		if (rc) {
			smio_error("map of segment %#x stays failed: %s", r->segid,
					strerror(-rc));
			continue;
		}
		m->host = mr.host;
		m->failed = false;
	}
}

/* ---------- the watcher ---------- */

static __thread const struct sci_remote_segment *watcher_of;   /* in a watcher: its r */

/*
 * Tell r's callback, unless it asked for no more. false: the callback
 * disconnected r (freed): the watcher must not touch it again.
 */
static bool tell(struct sci_remote_segment *r, sci_segment_cb_reason_t reason)
{
	sci_callback_action_t act;

	if (!r->cb || r->cb_cancelled)
		return true;
	watcher_of = r;
	act = r->cb(r->cb_arg, r, reason, SCI_ERR_OK);
	if (watcher_of != r)
		return false;
	watcher_of = NULL;
	if (act == SCI_CALLBACK_CANCEL)
		r->cb_cancelled = true;
	return true;
}

/* What the daemon says now; a daemon that cannot answer is gone (LOST). */
static void state_now(struct sci_remote_segment *r, struct smio_seg_state *st)
{
	struct smio_seg_conn_ref q = { .conn = r->conn };
	uint32_t rlen = 0;

	if (sisci_call(r->sd, SMIO_SEG_STATE, &q, sizeof(q), st, sizeof(*st), &rlen, NULL) ||
	    rlen != sizeof(*st))
		*st = (struct smio_seg_state){ .conn = r->conn, .state = SMIO_SEG_LOST };
}

/* Act on a new state; false: the watcher ends (final state, or r freed). */
static bool act(struct sci_remote_segment *r, const struct smio_seg_state *st)
{
	bool was_up = r->state == SMIO_SEG_CONNECTED;
	bool bounced = st->changes != r->changes;   /* down and up again since last look */

	switch (st->state) {
	case SMIO_SEG_CONNECTED:
		if (was_up && !bounced)
			return true;
		sisci_lock();
		maps_restore(r);
		r->state = st->state;
		r->changes = st->changes;
		sisci_unlock();
		if (was_up && !tell(r, SCI_CB_NOT_OPERATIONAL))
			return false;
		return tell(r, SCI_CB_OPERATIONAL);
	case SMIO_SEG_NOT_OPERATIONAL:
		sisci_lock();
		maps_fail(r);
		r->state = st->state;
		r->changes = st->changes;
		sisci_unlock();
		return !was_up || tell(r, SCI_CB_NOT_OPERATIONAL);
	default:
		sisci_lock();
		maps_fail(r);
		r->state = st->state;
		sisci_unlock();
		tell(r, st->state == SMIO_SEG_LOST ? SCI_CB_LOST : SCI_CB_DISCONNECT);
		return false;
	}
}

static void *watch(void *arg)
{
	struct sci_remote_segment *r = arg;
	/*
	 * The third: our daemon's socket, polled (never read) for its hang-up,
	 * since a daemon that dies signals no eventfd: its segments are lost
	 * then, as the daemon would have said (maps read all-ones, SCI_CB_LOST).
	 */
	struct pollfd p[3] = { { .fd = r->efd, .events = POLLIN },
			       { .fd = r->cancel_fd, .events = POLLIN },
			       { .fd = r->sd->fd, .events = POLLRDHUP } };
	struct smio_seg_state st;
	uint64_t count;

	for (;;) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[1].revents)
			return NULL;        /* SCIDisconnectSegment */
		if (p[2].revents & POLLNVAL)
			return NULL;        /* the descriptor's socket closed under us: nothing to watch */
		if (p[2].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			st = (struct smio_seg_state){ .conn = r->conn, .state = SMIO_SEG_LOST };
			act(r, &st);
			return NULL;
		}
		if (!(p[0].revents & POLLIN))
			return NULL;        /* not an eventfd any more: nothing will come */
		if (read(r->efd, &count, sizeof(count)) != sizeof(count))
			continue;
		state_now(r, &st);
		if (!act(r, &st))
			return NULL;
	}
}

sci_error_t sisci_rseg_watch(struct sci_remote_segment *r)
{
	struct smio_seg_conn_ref q = { .conn = r->conn };
	pthread_attr_t attr;
	int rc;

	pthread_mutex_lock(&r->watch_mu);
	if (r->watching) {
		pthread_mutex_unlock(&r->watch_mu);
		return SCI_ERR_OK;
	}
	r->efd = -1;
	r->state = SMIO_SEG_CONNECTED;
	r->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->cancel_fd < 0) {
		pthread_mutex_unlock(&r->watch_mu);
		return SCI_ERR_NOSPC;
	}
	rc = sisci_call(r->sd, SMIO_SEG_EVENTS, &q, sizeof(q), NULL, 0, NULL, &r->efd);
	if (!rc && r->efd < 0)
		rc = -EPROTO;
	if (!rc) {
		/* The state the maps were made in: changes count from here. */
		struct smio_seg_state st;

		state_now(r, &st);
		r->changes = st.changes;
	}
	if (!rc && pthread_attr_init(&attr))
		rc = -ENOMEM;
	if (!rc) {
		pthread_attr_setstacksize(&attr, 256 * 1024);  /* a poll loop and a callback */
		if (pthread_create(&r->watcher, &attr, watch, r))
			rc = -ENOMEM;
		pthread_attr_destroy(&attr);
	}
	if (rc) {
		if (r->efd >= 0)
			close(r->efd);
		close(r->cancel_fd);
		r->efd = r->cancel_fd = -1;
		pthread_mutex_unlock(&r->watch_mu);
		return rc == -ENOMEM ? SCI_ERR_NOSPC : sisci_seg_errno(rc);
	}
	r->watching = true;
	pthread_mutex_unlock(&r->watch_mu);
	return SCI_ERR_OK;
}

void sisci_rseg_unwatch(struct sci_remote_segment *r)
{
	uint64_t one = 1;

	if (!r->watching)
		return;
	if (watcher_of == r) {
		/* From r's own callback: the watcher ends when the callback returns. */
		watcher_of = NULL;
		pthread_detach(r->watcher);
	} else {
		if (write(r->cancel_fd, &one, sizeof(one)) != sizeof(one))
			abort();        /* an eventfd of ours with a count of 0 or 1 */
		pthread_join(r->watcher, NULL);
	}
	close(r->efd);
	close(r->cancel_fd);
	r->watching = false;
}

/* ---------- sequences ---------- */

/* The state of seq's map's connection; local maps are always fine. */
static sci_error_t seq_state(sci_sequence_t seq, struct sci_remote_segment **rp,
			     struct smio_seg_state *st)
{
	struct sci_remote_segment *r = NULL;

	sisci_lock();
	if (!sisci_obj_valid(seq, SISCI_OBJ_SEQ)) {
		sisci_unlock();
		return SCI_ERR_ILLEGAL_PARAMETER;
	}
	r = seq->map->rseg;
	sisci_unlock();
	*rp = r;
	*st = (struct smio_seg_state){ .state = SMIO_SEG_CONNECTED };
	if (r)
		state_now(r, st);   /* r cannot go: its map (and seq) hold it */
	return SCI_ERR_OK;
}

static sci_sequence_status_t seq_verdict(const struct smio_seg_state *st, uint32_t since,
					 sci_error_t *error)
{
	switch (st->state) {
	case SMIO_SEG_CONNECTED:
		*error = SCI_ERR_OK;
		/* Down and up again since the start: what was stored may be lost. */
		return st->changes == since ? SCI_SEQ_OK : SCI_SEQ_RETRIABLE;
	case SMIO_SEG_NOT_OPERATIONAL:
		*error = SCI_ERR_NO_LINK_ACCESS;
		return SCI_SEQ_NOT_RETRIABLE;     /* until SCI_CB_OPERATIONAL */
	default:
		*error = SCI_ERR_CONNECTION_REFUSED;
		return SCI_SEQ_NOT_RETRIABLE;
	}
}

sci_sequence_status_t SCIStartSequence(sci_sequence_t sequence, unsigned int flags,
				       sci_error_t *error)
{
	struct sci_remote_segment *r;
	struct smio_seg_state st;
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return SCI_SEQ_NOT_RETRIABLE;
	}
	*error = seq_state(sequence, &r, &st);
	if (*error)
		return SCI_SEQ_NOT_RETRIABLE;
	sisci_lock();
	sequence->changes = st.changes;
	sisci_unlock();
	return seq_verdict(&st, st.changes, error);
}

sci_sequence_status_t SCICheckSequence(sci_sequence_t sequence, unsigned int flags,
				       sci_error_t *error)
{
	struct sci_remote_segment *r;
	struct smio_seg_state st;
	sci_error_t dummy;
	uint32_t since;

	if (!error)
		error = &dummy;
	if (flags & ~(SCI_FLAG_NO_FLUSH | SCI_FLAG_NO_STORE_BARRIER)) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return SCI_SEQ_NOT_RETRIABLE;
	}
	/* The stores so far are out before the path is judged. */
	if (!(flags & SCI_FLAG_NO_STORE_BARRIER))
		sisci_store_fence();
	*error = seq_state(sequence, &r, &st);
	if (*error)
		return SCI_SEQ_NOT_RETRIABLE;
	sisci_lock();
	since = sequence->changes;
	sisci_unlock();
	return seq_verdict(&st, since, error);
}
