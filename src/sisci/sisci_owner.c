// SPDX-License-Identifier: MIT
/*
 * libsisci: owner callbacks. A local segment created with
 * SCI_FLAG_USE_CALLBACK gets a watcher thread that waits on the segment's
 * owner events channel (SEG_EVENTS with SMIO_SEG_REF_OWNER: an eventfd the
 * daemon counts up at each connection made to the segment or dropped) and
 * takes the events one by one (SEG_OWNER_EVENT), calling
 * callback(arg, segment, SCI_CB_CONNECT or SCI_CB_DISCONNECT, nodeId, 0,
 * SCI_ERR_OK) for each, in order. SCI_CALLBACK_CANCEL stops the calls.
 * SCIRemoveSegment ends the watcher (from the callback itself too).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sisci_seg.h"

static __thread const struct sci_local_segment *owner_of;   /* in a watcher: its segment */

static void *owatch(void *arg)
{
	struct sci_local_segment *s = arg;
	struct pollfd p[2] = { { .fd = s->oefd, .events = POLLIN },
			       { .fd = s->ocancel_fd, .events = POLLIN } };
	struct smio_seg_id q = { .segid = s->id };
	struct smio_seg_owner_ev ev;
	uint64_t count;
	uint32_t rlen;

	owner_of = s;
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[1].revents || !(p[0].revents & POLLIN))
			return NULL;        /* SCIRemoveSegment, or nothing more will come */
		if (read(s->oefd, &count, sizeof(count)) != sizeof(count))
			continue;
		for (;;) {
			sci_callback_action_t act;

			rlen = 0;
			if (sisci_call(s->sd, SMIO_SEG_OWNER_EVENT, &q, sizeof(q), &ev, sizeof(ev),
				       &rlen, NULL) || rlen != sizeof(ev))
				return NULL;    /* the segment is gone */
			if (ev.reason == SMIO_SEG_OWNER_NONE)
				break;
			if (s->ocancelled)
				continue;       /* drained, not told */
			act = s->cb(s->cb_arg, s, ev.reason == SMIO_SEG_OWNER_CONNECT ?
				    SCI_CB_CONNECT : SCI_CB_DISCONNECT,
				    sisci_host_node(ev.host), 0, SCI_ERR_OK);
			if (owner_of != s)
				return NULL;    /* the callback removed the segment */
			if (act == SCI_CALLBACK_CANCEL)
				s->ocancelled = true;
		}
	}
}

sci_error_t sisci_lseg_watch(struct sci_local_segment *s)
{
	struct smio_seg_conn_ref q = { .conn = s->id, .flags = SMIO_SEG_REF_OWNER };
	pthread_attr_t attr;
	int rc;

	s->oefd = -1;
	s->ocancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ocancel_fd < 0)
		return SCI_ERR_NOSPC;
	rc = sisci_call(s->sd, SMIO_SEG_EVENTS, &q, sizeof(q), NULL, 0, NULL, &s->oefd);
	if (!rc && s->oefd < 0)
		rc = -EPROTO;
	if (!rc && pthread_attr_init(&attr))
		rc = -ENOMEM;
	if (!rc) {
		pthread_attr_setstacksize(&attr, 256 * 1024);  /* a poll loop and a callback */
		if (pthread_create(&s->owatcher, &attr, owatch, s))
			rc = -ENOMEM;
		pthread_attr_destroy(&attr);
	}
	if (rc) {
		if (s->oefd >= 0)
			close(s->oefd);
		close(s->ocancel_fd);
		s->oefd = s->ocancel_fd = -1;
		return rc == -ENOMEM ? SCI_ERR_NOSPC : sisci_seg_errno(rc);
	}
	s->owatching = true;
	return SCI_ERR_OK;
}

void sisci_lseg_unwatch(struct sci_local_segment *s)
{
	uint64_t one = 1;

	if (!s->owatching)
		return;
	if (owner_of == s) {
		/* From its own callback: the watcher ends when the callback returns. */
		owner_of = NULL;
		pthread_detach(s->owatcher);
	} else {
		if (write(s->ocancel_fd, &one, sizeof(one)) != sizeof(one))
			abort();        /* an eventfd of ours with a count of 0 */
		pthread_join(s->owatcher, NULL);
	}
	close(s->oefd);
	close(s->ocancel_fd);
	s->owatching = false;
}
