// SPDX-License-Identifier: MIT
/*
 * libsisci: interrupts and data interrupts.
 *
 * The daemon keeps the interrupt (host/intr.c) and hands its creator the
 * interrupt's eventfd; a wait is a poll() on it, with no daemon in the wait
 * path. A trigger is one INTR_TRIGGER call: the local daemon fires the
 * owner's interrupt (PEER_INTR_FIRE across the NTB control channel), and the
 * owner's daemon adds to the eventfd. A data interrupt's message waits in the
 * owner daemon's bounded queue until the woken process fetches it
 * (INTR_RECEIVE).
 *
 * Removal cancels waiters: every interrupt has a second eventfd of ours that
 * becomes readable once SCIRemove*Interrupt starts, waiters see it next to
 * the daemon's and leave with SCI_ERR_CANCELLED, and the removal waits for
 * them to be gone before freeing anything.
 *
 * With SCI_FLAG_USE_CALLBACK a thread per interrupt waits and calls back
 * until the callback returns SCI_CALLBACK_CANCEL or the interrupt is removed
 * (also from inside the callback). Callback threads call the daemon on the
 * descriptor's connection too; sisci_call serialises them.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sisci_priv.h"
#include "util/smio_time.h"

/* A local interrupt of either kind. */
struct lintr {
	struct sci_desc *sd;
	unsigned int intno;
	bool data;
	bool counting;              /* SCI_FLAG_COUNTING_INT: one wait per trigger */
	int efd;                    /* the daemon's eventfd of this interrupt */
	int cancel_fd;              /* ours: readable once removal has begun */
	pthread_mutex_t lock;
	pthread_cond_t idle;        /* signalled when the last waiter leaves */
	unsigned int waiters;
	bool removing;
	uint64_t pending;           /* counted triggers not waited for yet */
	uint8_t *held;              /* a message too long for its waiter's buffer */
	uint32_t held_len;
	bool has_held;
	/* SCI_FLAG_USE_CALLBACK */
	bool cb_active;             /* the thread delivers; waits are refused */
	bool has_thread;
	bool free_on_exit;          /* removed from its own callback: the thread frees */
	pthread_t thread;
	sci_cb_interrupt_t cb;
	sci_cb_data_interrupt_t dcb;
	void *arg;
};

struct sci_local_interrupt {
	struct lintr l;
};

struct sci_local_data_interrupt {
	struct lintr l;
};

/* A connection to an interrupt of any node. */
struct rintr {
	struct sci_desc *sd;
	uint32_t handle;
	bool data;
};

struct sci_remote_interrupt {
	struct rintr r;
};

struct sci_remote_data_interrupt {
	struct rintr r;
};

_Static_assert(SMIO_INTR_MAX_DATA <= UINT_MAX, "lengths are unsigned int");

/* What the daemon's answers mean for interrupts. */
static sci_error_t intr_errno(int rc)
{
	switch (rc) {
	case -ENOENT: return SCI_ERR_NO_SUCH_INTNO;
	case -EEXIST: return SCI_ERR_INTNO_USED;
	case -EAGAIN: return SCI_ERR_BUSY;          /* a data interrupt's queue is full */
	case -EMSGSIZE: return SCI_ERR_OUT_OF_RANGE;
	case -ENODEV: return SCI_ERR_NO_SUCH_ADAPTERNO;
	case -EHOSTUNREACH: return SCI_ERR_NO_SUCH_NODEID;
	case -EHOSTDOWN: return SCI_ERR_NODE_NOT_RESPONDING;
	case -ENOLINK: return SCI_ERR_NO_LINK_ACCESS;
	default: return sisci_errno(rc);
	}
}

/* Absolute deadline for a SISCI timeout; -1: none. */
static int64_t deadline_of(unsigned int timeout)
{
	return smio_deadline(timeout == SCI_INFINITE_TIMEOUT ? -1 : (int64_t)timeout);
}

/*
 * Wait until the interrupt's eventfd counts something and take the count
 * (*count: a plain interrupt's triggers since the last read; 1 for a data
 * interrupt, whose eventfd is a semaphore). SCI_ERR_TIMEOUT at the deadline,
 * SCI_ERR_CANCELLED once removal has begun.
 */
static sci_error_t wait_efd(struct lintr *l, int64_t deadline, uint64_t *count)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = l->efd, .events = POLLIN },
				       { .fd = l->cancel_fd, .events = POLLIN } };
		int rc = poll(p, 2, smio_ms_left(deadline));
		ssize_t n;

		if (rc < 0 && errno != EINTR)
			return SCI_ERR_SYSTEM;
		if (rc > 0 && p[1].revents)
			return SCI_ERR_CANCELLED;
		if (rc > 0 && (p[0].revents & (POLLERR | POLLNVAL)))
			return SCI_ERR_SYSTEM;
		if (rc > 0 && (p[0].revents & POLLIN)) {
			n = read(l->efd, count, sizeof(*count));
			if (n == sizeof(*count))
				return SCI_ERR_OK;
			/* Another waiter took it first: wait on. */
			if (n >= 0 || (errno != EAGAIN && errno != EINTR))
				return SCI_ERR_SYSTEM;
		}
		if (smio_expired(deadline))
			return SCI_ERR_TIMEOUT;
	}
}

/* The oldest message of a data interrupt, from the owning daemon. */
static int receive(struct lintr *l, struct smio_intr_data *msg, uint32_t *len)
{
	struct smio_intr_id m = { .intno = l->intno, .data = 1 };
	uint32_t rlen;
	int rc;

	rc = sisci_call(l->sd, SMIO_INTR_RECEIVE, &m, sizeof(m), msg,
			sizeof(*msg) + SMIO_INTR_MAX_DATA, &rlen, NULL);
	if (rc)
		return rc;
	if (rlen != sizeof(*msg) + msg->len || msg->intno != l->intno)
		return -EPROTO;
	*len = msg->len;
	return 0;
}

static void lintr_free(struct lintr *l)
{
	close(l->efd);
	close(l->cancel_fd);
	free(l->held);
	pthread_cond_destroy(&l->idle);
	pthread_mutex_destroy(&l->lock);
	free(l);                    /* l is the first member of the handle */
}

/* Has removal asked the callback thread to free the interrupt? */
static bool cb_continue(struct lintr *l, sci_callback_action_t act)
{
	bool go;

	pthread_mutex_lock(&l->lock);
	go = act != SCI_CALLBACK_CANCEL && !l->free_on_exit && !l->removing;
	pthread_mutex_unlock(&l->lock);
	return go;
}

static void *cb_thread(void *arg)
{
	struct lintr *l = arg;
	struct smio_intr_data *msg = malloc(sizeof(*msg) + SMIO_INTR_MAX_DATA);
	sci_callback_action_t act = SCI_CALLBACK_CONTINUE;
	bool self_free;

	while (msg && act != SCI_CALLBACK_CANCEL) {
		uint64_t count = 0;
		uint32_t len = 0;
		sci_error_t e = wait_efd(l, -1, &count);
		int rc;

		if (e == SCI_ERR_CANCELLED)
			break;
		if (l->data) {
			rc = e ? 0 : receive(l, msg, &len);
			if (rc == -ENOMSG)
				continue;
			if (rc && !cb_continue(l, SCI_CALLBACK_CONTINUE))
				break;      /* removed meanwhile: nobody to tell */
			if (rc && !e)
				e = intr_errno(rc);
			act = l->dcb(l->arg, (sci_local_data_interrupt_t)l, e ? NULL : msg->data,
				     e ? 0 : len, e);
		} else {
			uint64_t n = l->counting && !e ? count : 1;

			for (uint64_t i = 0; i < n && act != SCI_CALLBACK_CANCEL; i++) {
				act = l->cb(l->arg, (sci_local_interrupt_t)l, e);
				if (!cb_continue(l, act))
					break;
			}
		}
		if (!cb_continue(l, act) || e)
			break;
	}
	free(msg);
	pthread_mutex_lock(&l->lock);
	l->cb_active = false;       /* waits are allowed again after a cancel */
	self_free = l->free_on_exit;
	pthread_mutex_unlock(&l->lock);
	if (self_free) {
		pthread_detach(pthread_self());
		lintr_free(l);
	}
	return NULL;
}

static sci_error_t lintr_create(struct lintr *l, sci_desc_t sd, bool data,
				unsigned int adapter, unsigned int *intno, void *cb, void *arg,
				unsigned int flags)
{
	unsigned int legal = SCI_FLAG_USE_CALLBACK | SCI_FLAG_FIXED_INTNO | SCI_FLAG_SHARED_INT |
			     (data ? 0 : SCI_FLAG_COUNTING_INT);
	struct smio_intr_create m = { .intno = SMIO_INTNO_AUTO, .data = data };
	struct smio_intr_info info;
	sci_error_t e;
	uint32_t rlen;
	int rc, efd = -1;

	e = sisci_check_init();
	if (e)
		return e;
	if (!sd || !intno)
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (flags & ~legal)
		return SCI_ERR_ILLEGAL_FLAG;
	if (flags & SCI_FLAG_SHARED_INT)
		return SCI_ERR_FLAG_NOT_IMPLEMENTED;
	if ((flags & SCI_FLAG_USE_CALLBACK) && !cb)
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (adapter >= sisci_adapters())
		return SCI_ERR_NO_SUCH_ADAPTERNO;
	if (flags & SCI_FLAG_FIXED_INTNO) {
		if (*intno == SMIO_INTNO_AUTO)
			return SCI_ERR_ILLEGAL_PARAMETER;   /* reserved on the wire */
		m.intno = *intno;
	}
	l->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->cancel_fd < 0)
		return SCI_ERR_NOSPC;
	rc = sisci_call(sd, SMIO_INTR_CREATE, &m, sizeof(m), &info, sizeof(info), &rlen, &efd);
	if (!rc && (efd < 0 || rlen != sizeof(info) || info.data != data ||
		    ((flags & SCI_FLAG_FIXED_INTNO) && info.intno != m.intno))) {
		struct smio_intr_id rm = { .intno = info.intno, .data = data };

		/* A daemon that does not keep the protocol: undo, as far as it lets us. */
		if (rlen == sizeof(info))
			sisci_call(sd, SMIO_INTR_REMOVE, &rm, sizeof(rm), NULL, 0, NULL, NULL);
		rc = -EPROTO;
	}
	if (rc) {
		if (efd >= 0)
			close(efd);
		close(l->cancel_fd);
		return intr_errno(rc);
	}
	l->sd = sd;
	l->intno = info.intno;
	l->data = data;
	l->counting = flags & SCI_FLAG_COUNTING_INT;
	l->efd = efd;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->idle, NULL);
	if (flags & SCI_FLAG_USE_CALLBACK) {
		if (data)
			l->dcb = (sci_cb_data_interrupt_t)cb;
		else
			l->cb = (sci_cb_interrupt_t)cb;
		l->arg = arg;
		l->cb_active = true;
		l->has_thread = true;
		if (pthread_create(&l->thread, NULL, cb_thread, l)) {
			struct smio_intr_id rm = { .intno = l->intno, .data = data };

			sisci_call(sd, SMIO_INTR_REMOVE, &rm, sizeof(rm), NULL, 0, NULL, NULL);
			pthread_cond_destroy(&l->idle);
			pthread_mutex_destroy(&l->lock);
			close(efd);
			close(l->cancel_fd);
			return SCI_ERR_NOSPC;
		}
	}
	__atomic_fetch_add(&sd->objects, 1, __ATOMIC_ACQ_REL);
	*intno = l->intno;
	return SCI_ERR_OK;
}

static sci_error_t lintr_remove(struct lintr *l, unsigned int flags)
{
	struct smio_intr_id m;
	uint64_t one = 1;
	struct sci_desc *sd;
	bool self;
	int rc;

	if (!l)
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (flags)
		return SCI_ERR_ILLEGAL_FLAG;
	m = (struct smio_intr_id){ .intno = l->intno, .data = l->data };
	sd = l->sd;
	rc = sisci_call(sd, SMIO_INTR_REMOVE, &m, sizeof(m), NULL, 0, NULL, NULL);
	/* No answer: it may still exist, and the handle stays valid for a retry.
	 * Any other outcome means the daemon has no such interrupt now (a lost
	 * connection took it along). */
	if (rc == -ETIMEDOUT)
		return SCI_ERR_TIMEOUT;
	pthread_mutex_lock(&l->lock);
	l->removing = true;
	if (write(l->cancel_fd, &one, sizeof(one)) != sizeof(one)) {
		/* Cannot happen for a counter at 0; waiters then time out. */
	}
	while (l->waiters)
		pthread_cond_wait(&l->idle, &l->lock);
	self = l->has_thread && pthread_equal(l->thread, pthread_self());
	if (self)
		l->free_on_exit = true;
	pthread_mutex_unlock(&l->lock);
	__atomic_fetch_sub(&sd->objects, 1, __ATOMIC_ACQ_REL);
	if (self)
		return SCI_ERR_OK;  /* the callback thread frees it when the callback returns */
	if (l->has_thread)
		pthread_join(l->thread, NULL);
	lintr_free(l);
	return SCI_ERR_OK;
}

/* Become a waiter: refused while callbacks deliver or removal runs. */
static sci_error_t waiter_enter(struct lintr *l)
{
	sci_error_t e = SCI_ERR_OK;

	pthread_mutex_lock(&l->lock);
	if (l->removing)
		e = SCI_ERR_CANCELLED;
	else if (l->cb_active)
		e = SCI_ERR_ILLEGAL_OPERATION;
	else
		l->waiters++;
	pthread_mutex_unlock(&l->lock);
	return e;
}

static void waiter_leave(struct lintr *l)
{
	pthread_mutex_lock(&l->lock);
	if (--l->waiters == 0 && l->removing)
		pthread_cond_broadcast(&l->idle);
	pthread_mutex_unlock(&l->lock);
}

static sci_error_t rintr_connect(struct rintr *r, sci_desc_t sd, bool data, unsigned int node_id,
				 unsigned int adapter, unsigned int intno, unsigned int timeout,
				 unsigned int flags)
{
	struct smio_intr_connect m = { .intno = intno, .adapter = adapter, .data = data };
	struct smio_intr_conn o;
	int64_t deadline;
	uint32_t rlen;
	int rc, delay = 1;
	sci_error_t e = sisci_check_init();

	if (e)
		return e;
	if (!sd)
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (flags)
		return SCI_ERR_ILLEGAL_FLAG;
	if (adapter >= sisci_adapters())
		return SCI_ERR_NO_SUCH_ADAPTERNO;
	if (node_id == SCI_LOCAL_HOST)
		node_id = sisci.node_id;
	if (sisci_node_host(node_id) < 0)
		return SCI_ERR_NO_SUCH_NODEID;
	if (intno == SMIO_INTNO_AUTO)
		return SCI_ERR_NO_SUCH_INTNO;
	m.node_id = node_id;
	/* The interrupt may not exist yet: ask again until the timeout. */
	deadline = deadline_of(timeout);
	for (;;) {
		rc = sisci_call(sd, SMIO_INTR_CONNECT, &m, sizeof(m), &o, sizeof(o), &rlen, NULL);
		if (rc != -ENOENT || !smio_ms_left(deadline))
			break;
		/* Short, growing pauses: 1 ms .. 50 ms, never past the deadline. */
		poll(NULL, 0, deadline < 0 || smio_ms_left(deadline) > delay ? delay : smio_ms_left(deadline));
		delay = delay < 50 ? 2 * delay : 50;
	}
	if (!rc && rlen != sizeof(o))
		rc = -EPROTO;
	if (rc)
		return intr_errno(rc);
	r->sd = sd;
	r->handle = o.handle;
	r->data = data;
	__atomic_fetch_add(&sd->objects, 1, __ATOMIC_ACQ_REL);
	return SCI_ERR_OK;
}

static sci_error_t rintr_trigger(struct rintr *r, const void *data, unsigned int length,
				 unsigned int flags)
{
	struct smio_intr_trigger *m;
	int rc;

	if (!r || (length && !data))
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (flags)
		return SCI_ERR_ILLEGAL_FLAG;
	if (length > SMIO_INTR_MAX_DATA)
		return SCI_ERR_OUT_OF_RANGE;
	m = malloc(sizeof(*m) + length);
	if (!m)
		return SCI_ERR_NOSPC;
	*m = (struct smio_intr_trigger){ .handle = r->handle, .len = length };
	if (length)
		memcpy(m->data, data, length);
	rc = sisci_call(r->sd, SMIO_INTR_TRIGGER, m, (uint32_t)(sizeof(*m) + length), NULL, 0,
			NULL, NULL);
	free(m);
	return intr_errno(rc);
}

static sci_error_t rintr_disconnect(struct rintr *r, unsigned int flags)
{
	struct smio_intr_conn_ref m;
	int rc;

	if (!r)
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (flags)
		return SCI_ERR_ILLEGAL_FLAG;
	m = (struct smio_intr_conn_ref){ .handle = r->handle };
	rc = sisci_call(r->sd, SMIO_INTR_DISCONNECT, &m, sizeof(m), NULL, 0, NULL, NULL);
	if (rc == -ETIMEDOUT)
		return SCI_ERR_TIMEOUT;     /* still connected, as far as we know */
	__atomic_fetch_sub(&r->sd->objects, 1, __ATOMIC_ACQ_REL);
	free(r);                    /* r is the first member of the handle */
	return SCI_ERR_OK;
}

/* ---------- interrupts ---------- */

void SCICreateInterrupt(sci_desc_t sd, sci_local_interrupt_t *interrupt,
			unsigned int localAdapterNo, unsigned int *interruptNo,
			sci_cb_interrupt_t callback, void *callbackArg, unsigned int flags,
			sci_error_t *error)
{
	struct sci_local_interrupt *h;

	if (!interrupt) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	*error = lintr_create(&h->l, sd, false, localAdapterNo, interruptNo, (void *)callback,
			      callbackArg, flags);
	if (*error) {
		free(h);
		return;
	}
	*interrupt = h;
}

void SCIConnectInterrupt(sci_desc_t sd, sci_remote_interrupt_t *interrupt, unsigned int nodeId,
			 unsigned int localAdapterNo, unsigned int interruptNo,
			 unsigned int timeout, unsigned int flags, sci_error_t *error)
{
	struct sci_remote_interrupt *h;

	if (!interrupt) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	*error = rintr_connect(&h->r, sd, false, nodeId, localAdapterNo, interruptNo, timeout,
			       flags);
	if (*error) {
		free(h);
		return;
	}
	*interrupt = h;
}

void SCITriggerInterrupt(sci_remote_interrupt_t interrupt, unsigned int flags,
			 sci_error_t *error)
{
	*error = rintr_trigger(interrupt ? &interrupt->r : NULL, NULL, 0, flags);
}

void SCIWaitForInterrupt(sci_local_interrupt_t interrupt, unsigned int timeout,
			 unsigned int flags, sci_error_t *error)
{
	struct lintr *l;
	uint64_t count = 0;

	if (!interrupt) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	l = &interrupt->l;
	*error = waiter_enter(l);
	if (*error)
		return;
	pthread_mutex_lock(&l->lock);
	if (l->pending) {
		l->pending--;
		pthread_mutex_unlock(&l->lock);
		waiter_leave(l);
		return;
	}
	pthread_mutex_unlock(&l->lock);
	*error = wait_efd(l, deadline_of(timeout), &count);
	if (!*error && l->counting && count > 1) {
		pthread_mutex_lock(&l->lock);
		l->pending += count - 1;
		pthread_mutex_unlock(&l->lock);
	}
	waiter_leave(l);
}

void SCIRemoveInterrupt(sci_local_interrupt_t interrupt, unsigned int flags, sci_error_t *error)
{
	*error = lintr_remove(interrupt ? &interrupt->l : NULL, flags);
}

void SCIDisconnectInterrupt(sci_remote_interrupt_t interrupt, unsigned int flags,
			    sci_error_t *error)
{
	*error = rintr_disconnect(interrupt ? &interrupt->r : NULL, flags);
}

/* ---------- data interrupts ---------- */

void SCICreateDataInterrupt(sci_desc_t sd, sci_local_data_interrupt_t *interrupt,
			    unsigned int localAdapterNo, unsigned int *interruptNo,
			    sci_cb_data_interrupt_t callback, void *callbackArg, unsigned int flags,
			    sci_error_t *error)
{
	struct sci_local_data_interrupt *h;

	if (!interrupt) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	*error = lintr_create(&h->l, sd, true, localAdapterNo, interruptNo, (void *)callback,
			      callbackArg, flags);
	if (*error) {
		free(h);
		return;
	}
	*interrupt = h;
}

void SCIConnectDataInterrupt(sci_desc_t sd, sci_remote_data_interrupt_t *interrupt,
			     unsigned int nodeId, unsigned int localAdapterNo,
			     unsigned int interruptNo, unsigned int timeout, unsigned int flags,
			     sci_error_t *error)
{
	struct sci_remote_data_interrupt *h;

	if (!interrupt) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	*error = rintr_connect(&h->r, sd, true, nodeId, localAdapterNo, interruptNo, timeout,
			       flags);
	if (*error) {
		free(h);
		return;
	}
	*interrupt = h;
}

void SCITriggerDataInterrupt(sci_remote_data_interrupt_t interrupt, void *data,
			     unsigned int length, unsigned int flags, sci_error_t *error)
{
	*error = rintr_trigger(interrupt ? &interrupt->r : NULL, data, length, flags);
}

/* Hand a message to a waiter whose buffer holds *length bytes. */
static sci_error_t deliver(const void *msg, uint32_t len, void *data, unsigned int *length)
{
	if (len > *length) {
		*length = len;
		return SCI_ERR_OUT_OF_RANGE;
	}
	if (len)
		memcpy(data, msg, len);
	*length = len;
	return SCI_ERR_OK;
}

void SCIWaitForDataInterrupt(sci_local_data_interrupt_t interrupt, void *data,
			     unsigned int *length, unsigned int timeout, unsigned int flags,
			     sci_error_t *error)
{
	struct smio_intr_data *msg;
	struct lintr *l;
	int64_t deadline = deadline_of(timeout);
	bool entered;
	sci_error_t e;

	if (!interrupt || !length || (!data && *length)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	l = &interrupt->l;
	msg = malloc(sizeof(*msg) + SMIO_INTR_MAX_DATA);
	if (!msg) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	e = waiter_enter(l);
	entered = !e;
	while (!e) {
		uint64_t count;
		uint32_t len;
		int rc;

		/* A message an earlier waiter's buffer was too small for comes first. */
		pthread_mutex_lock(&l->lock);
		if (l->has_held) {
			e = deliver(l->held, l->held_len, data, length);
			if (!e) {
				free(l->held);
				l->held = NULL;
				l->has_held = false;
			}
			pthread_mutex_unlock(&l->lock);
			break;
		}
		pthread_mutex_unlock(&l->lock);
		e = wait_efd(l, deadline, &count);
		if (e)
			break;
		rc = receive(l, msg, &len);
		if (rc == -ENOMSG)
			continue;           /* taken meanwhile: wait for the next one */
		if (rc) {
			e = intr_errno(rc);
			break;
		}
		e = deliver(msg->data, len, data, length);
		if (e == SCI_ERR_OUT_OF_RANGE) {
			/* Keep it for a waiter with a bigger buffer: nothing is lost. */
			pthread_mutex_lock(&l->lock);
			l->held = malloc(len ? len : 1);
			if (l->held) {
				memcpy(l->held, msg->data, len);
				l->held_len = len;
				l->has_held = true;
			}
			pthread_mutex_unlock(&l->lock);
		}
		break;
	}
	if (entered)
		waiter_leave(l);
	free(msg);
	*error = e;
}

void SCIRemoveDataInterrupt(sci_local_data_interrupt_t interrupt, unsigned int flags,
			    sci_error_t *error)
{
	*error = lintr_remove(interrupt ? &interrupt->l : NULL, flags);
}

void SCIDisconnectDataInterrupt(sci_remote_data_interrupt_t interrupt, unsigned int flags,
				sci_error_t *error)
{
	*error = rintr_disconnect(interrupt ? &interrupt->r : NULL, flags);
}
