// SPDX-License-Identifier: MIT
/*
 * smartio web: a live view of the cluster in a browser (docs/web.md), served
 * by libmicrohttpd.
 *
 * One collector thread polls the daemons (observe.h) every 250 ms while a
 * browser watches (an open /events stream, or a request in the last 10 s)
 * and every 5 s otherwise, so an idle server costs next to nothing. Requests
 * never talk to a daemon for reading: they get the last snapshot. Only the
 * borrow and return actions call a daemon, on the request's own thread
 * (libmicrohttpd runs a thread per connection), and then wake the collector.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "observe.h"
#include "web.h"

#define FAST_MS        250       /* poll period while someone watches */
#define IDLE_MS        5000      /* ... and while nobody does */
#define WATCH_MS       10000     /* a plain request keeps the fast rate this long */
#define KEEPALIVE_MS   5000      /* SSE comment when nothing changed */
#define MAX_BODY       4096
#define MAX_CONN       64

struct web {
	char dir[PATH_MAX];
	char token[33];
	char token_path[PATH_MAX + 16];
	char host_ok[4][96];          /* accepted Host headers (DNS rebinding guard) */
	bool allow_remote;
	pthread_mutex_t mu;
	pthread_cond_t cv;            /* snapshot changed, or the collector is woken */
	struct obs_tracker *trk;
	struct json_object *snap;     /* the last snapshot (under mu) */
	char *snap_str, *snap_key;    /* its text; its text without the ever-changing fields */
	uint64_t ver;                 /* bumped when snap_key changes */
	int sse_clients;
	int64_t last_req_ms;
	bool wake, stop, missing;
};

static void ts_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* ---------- the collector ---------- */

/* The snapshot without what changes on every pass (time, ages, uptimes). */
static char *stable_key(struct json_object *snap)
{
	static const char *const per[][2] = { { "hosts", "uptime_s" },
					      { "devices", "lease_age_s" } };
	struct json_object *c = NULL, *arr;
	char *key;

	if (json_object_deep_copy(snap, &c, NULL))
		return NULL;
	json_object_object_del(c, "time_ms");
	for (size_t k = 0; k < 2; k++)
		if (json_object_object_get_ex(c, per[k][0], &arr) &&
		    json_object_is_type(arr, json_type_array))
			for (size_t i = 0; i < json_object_array_length(arr); i++)
				json_object_object_del(json_object_array_get_idx(arr, i), per[k][1]);
	key = strdup(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN));
	json_object_put(c);
	return key;
}

static void publish(struct web *w, struct json_object *snap)
{
	char *key, *str;

	if (obs_track(w->trk, snap)) {
		json_object_put(snap);
		return;
	}
	key = stable_key(snap);
	str = strdup(json_object_to_json_string_ext(snap, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE));
	if (!key || !str) {
		free(key);
		free(str);
		json_object_put(snap);
		return;
	}
	json_object_put(w->snap);
	w->snap = snap;
	free(w->snap_str);
	w->snap_str = str;
	if (!w->snap_key || strcmp(key, w->snap_key)) {
		free(w->snap_key);
		w->snap_key = key;
		w->ver++;
		pthread_cond_broadcast(&w->cv);
	} else {
		free(key);
	}
}

static void *collector(void *arg)
{
	struct web *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct json_object *snap = NULL;
		struct timespec ts;
		int rc, period;

		w->wake = false;
		pthread_mutex_unlock(&w->mu);
		rc = obs_collect_with(w->dir, OBS_TIMEOUT_MS, w->trk, &snap);
		pthread_mutex_lock(&w->mu);
		if (!rc) {
			w->missing = false;
			publish(w, snap);
		} else if (!w->missing) {
			w->missing = true;
			obs_track_event(w->trk, "error", "cannot read the cluster in %s: %s", w->dir,
					rc == -ENOENT ? "no cluster there (cluster down?)"
						      : strerror(-rc));
		}
		period = w->sse_clients > 0 || obs_now_ms() - w->last_req_ms < WATCH_MS ? FAST_MS
											  : IDLE_MS;
		ts_after(&ts, period);
		while (!w->stop && !w->wake &&
		       pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Someone looks: poll fast for a while, starting now if we were idle. */
static void watched(struct web *w)
{
	pthread_mutex_lock(&w->mu);
	if (obs_now_ms() - w->last_req_ms >= WATCH_MS && !w->sse_clients) {
		w->wake = true;
		pthread_cond_broadcast(&w->cv);
	}
	w->last_req_ms = obs_now_ms();
	pthread_mutex_unlock(&w->mu);
}

/* ---------- responses ---------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								  MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status,
				  struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	enum MHD_Result rc = reply(c, status, "application/json", s, strlen(s));

	json_object_put(o);
	return rc;
}

static enum MHD_Result reply_err(struct MHD_Connection *c, unsigned status, const char *msg)
{
	struct json_object *o = json_object_new_object();

	if (!o || smio_json_add_bool(o, "ok", false) || smio_json_add_str(o, "error", msg)) {
		json_object_put(o);
		return MHD_NO;
	}
	return reply_json(c, status, o);
}

static enum MHD_Result page(struct MHD_Connection *c)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(web_page_html_len,
								  (void *)web_page_html,
								  MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; script-src 'unsafe-inline'; "
				"style-src 'unsafe-inline'; img-src data:");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result state(struct web *w, struct MHD_Connection *c, bool metrics)
{
	enum MHD_Result rc;
	char *m = NULL;

	watched(w);
	pthread_mutex_lock(&w->mu);
	if (!w->snap) {
		pthread_mutex_unlock(&w->mu);
		return reply_err(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no snapshot yet");
	}
	if (metrics) {
		m = obs_metrics(w->snap);
		pthread_mutex_unlock(&w->mu);
		if (!m)
			return MHD_NO;
		rc = reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", m, strlen(m));
		free(m);
		return rc;
	}
	rc = reply(c, MHD_HTTP_OK, "application/json", w->snap_str, strlen(w->snap_str));
	pthread_mutex_unlock(&w->mu);
	return rc;
}

/* ---------- server-sent events ---------- */

struct sse {
	struct web *w;
	uint64_t ver;                 /* the snapshot version last sent */
	char *buf;
	size_t len, off;
};

static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct sse *s = cls;
	struct web *w = s->w;
	size_t n;

	(void)pos;
	if (s->off == s->len) {
		struct timespec ts;
		char *b = NULL;
		int len;

		ts_after(&ts, KEEPALIVE_MS);
		pthread_mutex_lock(&w->mu);
		while (!w->stop && (s->ver == w->ver || !w->snap_str) &&
		       pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
			;
		if (w->stop) {
			pthread_mutex_unlock(&w->mu);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (s->ver != w->ver && w->snap_str) {
			s->ver = w->ver;
			len = asprintf(&b, "event: state\ndata: %s\n\n", w->snap_str);
		} else {
			len = asprintf(&b, ": keepalive\n\n");
		}
		pthread_mutex_unlock(&w->mu);
		if (len < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		free(s->buf);
		s->buf = b;
		s->len = (size_t)len;
		s->off = 0;
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(out, s->buf + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

static void sse_free(void *cls)
{
	struct sse *s = cls;

	pthread_mutex_lock(&s->w->mu);
	s->w->sse_clients--;
	s->w->last_req_ms = obs_now_ms();
	pthread_mutex_unlock(&s->w->mu);
	free(s->buf);
	free(s);
}

static enum MHD_Result events(struct web *w, struct MHD_Connection *c)
{
	struct sse *s = calloc(1, sizeof(*s));
	struct MHD_Response *r;
	enum MHD_Result rc;

	if (!s)
		return MHD_NO;
	s->w = w;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, sse_read, s, sse_free);
	if (!r) {
		free(s);
		return MHD_NO;
	}
	pthread_mutex_lock(&w->mu);
	w->sse_clients++;
	w->wake = true;               /* a fresh snapshot for the newcomer */
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---------- actions: POST /api/borrow, /api/return ---------- */

struct req {
	struct MHD_PostProcessor *pp;
	size_t body;
	char fdid[32], host[16], token[80], unbind[8];
};

static enum MHD_Result post_field(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *filename, const char *ctype, const char *enc,
				  const char *data, uint64_t off, size_t size)
{
	struct req *q = cls;
	char *dst = NULL;
	size_t cap = 0;

	(void)kind, (void)filename, (void)ctype, (void)enc;
	if (!strcmp(key, "fdid"))
		dst = q->fdid, cap = sizeof(q->fdid);
	else if (!strcmp(key, "host"))
		dst = q->host, cap = sizeof(q->host);
	else if (!strcmp(key, "token"))
		dst = q->token, cap = sizeof(q->token);
	else if (!strcmp(key, "unbind"))
		dst = q->unbind, cap = sizeof(q->unbind);
	if (dst && off + size < cap) {
		memcpy(dst + off, data, size);
		dst[off + size] = 0;
	}
	return MHD_YES;
}

static bool token_ok(const struct web *w, struct MHD_Connection *c, const struct req *q)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *got = q->token[0] ? q->token : NULL;
	unsigned char diff = 0;
	size_t n = strlen(w->token);

	if (auth && !strncmp(auth, "Bearer ", 7))
		got = auth + 7;
	if (!got || strlen(got) != n)
		return false;
	for (size_t i = 0; i < n; i++)     /* constant time: no early exit */
		diff |= (unsigned char)(got[i] ^ w->token[i]);
	return !diff;
}

static const char *action_error(int rc, bool borrow)
{
	switch (rc) {
	case -EBUSY:
		return borrow ? "busy: lent to another host or borrowed through SISCI"
			      : "busy: its driver is bound (return with unbind=1 unbinds it first)";
	case -ENODEV: return "no such device";
	case -ENOENT: return "not borrowed by this host";
	case -EALREADY: return "already borrowed by this host";
	case -EINVAL: return "a host cannot borrow its own device";
	default: return cli_strerror(rc);
	}
}

static enum MHD_Result action(struct web *w, struct MHD_Connection *c, struct req *q, bool borrow)
{
	const char *fs = q->fdid[0] ? q->fdid : MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
									    "fdid");
	const char *hs = q->host[0] ? q->host : MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
									    "host");
	struct smio_lend_req lq = { 0 };
	struct smio_lend_info li;
	struct json_object *o;
	uint64_t fdid, host;
	uint32_t rlen;
	int fd, rc;

	if (!token_ok(w, c, q))
		return reply_err(c, MHD_HTTP_FORBIDDEN, "a valid token is required for actions "
				 "(Authorization: Bearer TOKEN, or a token form field)");
	if (!fs || !hs || cli_parse_u64(fs, &fdid) || fdid > UINT32_MAX ||
	    cli_parse_u64(hs, &host) || host > 65535)
		return reply_err(c, MHD_HTTP_BAD_REQUEST, "want fdid=FDID and host=N");
	lq.fdid = (uint32_t)fdid;
	lq.flags = !borrow && !strcmp(q->unbind, "1") ? SMIO_LEND_F_UNBIND : 0;
	fd = cli_connect(w->dir, (uint32_t)host, SMIO_ROLE_ADMIN);
	rc = fd < 0 ? fd : smio_call(fd, borrow ? SMIO_LEND_BORROW : SMIO_LEND_RETURN, &lq,
				     sizeof(lq), &li, sizeof(li), &rlen, NULL, 3 * CLI_TIMEOUT_MS);
	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&w->mu);
	if (rc) {
		obs_track_event(w->trk, "action", "web: %s 0x%08x for host %u failed: %s",
				borrow ? "borrow" : "return", lq.fdid, (unsigned)host,
				action_error(rc, borrow));
	} else {
		obs_track_event(w->trk, "action", "web: %s 0x%08x for host %u: done%s%s",
				borrow ? "borrow" : "return", lq.fdid, (unsigned)host,
				borrow ? ", driver " : "", borrow ? (li.bound ? li.driver : "none") : "");
		obs_track_driver(w->trk, lq.fdid, borrow && li.bound ? li.driver : NULL);
	}
	w->wake = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (rc)
		return reply_err(c, rc == -ENODEV || rc == -ENXIO ? MHD_HTTP_NOT_FOUND :
				    rc == -EBUSY || rc == -EALREADY || rc == -ENOENT ||
				    rc == -EINVAL ? MHD_HTTP_CONFLICT : MHD_HTTP_BAD_GATEWAY,
				 action_error(rc, borrow));
	o = json_object_new_object();
	if (!o || smio_json_add_bool(o, "ok", true) || smio_json_add_uint(o, "host", host) ||
	    smio_json_add_str(o, "fdid", fs) ||
	    (borrow && smio_json_add_str(o, "driver", li.bound ? li.driver : NULL))) {
		json_object_put(o);
		return MHD_NO;
	}
	return reply_json(c, MHD_HTTP_OK, o);
}

/* ---------- dispatch ---------- */

static bool host_header_ok(const struct web *w, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");

	if (w->allow_remote)
		return true;
	for (size_t i = 0; h && i < 4; i++)
		if (w->host_ok[i][0] && !strcmp(h, w->host_ok[i]))
			return true;
	return false;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *data_size, void **ctx)
{
	struct web *w = cls;
	bool post = !strcmp(method, "POST");
	struct req *q = *ctx;

	(void)version;
	if (!q && post) {
		/* First call, headers only: set up the form reader. */
		q = calloc(1, sizeof(*q));
		if (!q)
			return MHD_NO;
		q->pp = MHD_create_post_processor(c, 1024, post_field, q);
		*ctx = q;
		return MHD_YES;
	}
	if (post && *data_size) {
		q->body += *data_size;
		if (q->body <= MAX_BODY && q->pp)
			MHD_post_process(q->pp, data, *data_size);
		*data_size = 0;
		return MHD_YES;
	}
	if (!host_header_ok(w, c))
		return reply_err(c, MHD_HTTP_FORBIDDEN, "unexpected Host header: this server "
				 "answers to its loopback address only (DNS rebinding guard)");
	if (post) {
		if (q->body > MAX_BODY)
			return reply_err(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
		if (!strcmp(url, "/api/borrow") || !strcmp(url, "/api/return"))
			return action(w, c, q, !strcmp(url, "/api/borrow"));
		return reply_err(c, MHD_HTTP_NOT_FOUND, "no such action");
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_err(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or POST only");
	if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
		return page(c);
	if (!strcmp(url, "/api/state"))
		return state(w, c, false);
	if (!strcmp(url, "/metrics"))
		return state(w, c, true);
	if (!strcmp(url, "/events"))
		return events(w, c);
	if (!strcmp(url, "/api/borrow") || !strcmp(url, "/api/return"))
		return reply_err(c, MHD_HTTP_METHOD_NOT_ALLOWED, "actions are POST requests");
	return reply_err(c, MHD_HTTP_NOT_FOUND, "not found");
}

static void done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode t)
{
	struct req *q = *ctx;

	(void)cls, (void)c, (void)t;
	if (q) {
		if (q->pp)
			MHD_destroy_post_processor(q->pp);
		free(q);
		*ctx = NULL;
	}
}

/* ---------- setup ---------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio web [--listen ADDR:PORT] [--dir DIR] [--token-file F] [--allow-remote]\n\n"
		"Serve a live view of the cluster: its topology with link states, the device\n"
		"pool with leases, adapters, IOMMU faults and an event log, with Borrow and\n"
		"Return buttons (docs/web.md). Endpoints: / (the page), /api/state (JSON),\n"
		"/events (server-sent events), /metrics (Prometheus), POST /api/borrow and\n"
		"/api/return (fdid=FDID host=N; need the token).\n"
		"  --listen ADDR:PORT  where to listen (default %s; port 0: any free one)\n"
		"  --dir DIR           the cluster directory (default: the convention)\n"
		"  --token-file F      write the action token there (default DIR/web-token, 0600)\n"
		"  --allow-remote      accept a --listen address other than loopback: anyone\n"
		"                      who reaches it sees the cluster (actions still need the token)\n",
		WEB_DEFAULT_LISTEN);
}

/* Bind a listening socket to ADDR:PORT ([V6]:PORT too); fd or -errno (said). */
static int listen_on(const char *spec, bool allow_remote, struct web *w, char *url, size_t urllen)
{
	char host[128], port[16], shown[160];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV }, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	bool loop;
	int fd, one = 1, rc;
	unsigned p;

	if (!colon || (size_t)(colon - spec) >= sizeof(host) || strlen(colon + 1) >= sizeof(port) ||
	    !colon[1]) {
		cli_err("web: --listen wants ADDR:PORT, not '%s'", spec);
		return -EINVAL;
	}
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	snprintf(port, sizeof(port), "%s", colon + 1);
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		cli_err("web: --listen %s: %s", spec, gai_strerror(rc));
		return -EINVAL;
	}
	loop = (ai->ai_family == AF_INET &&
		(ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr) >> 24) == 127) ||
	       (ai->ai_family == AF_INET6 &&
		IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr));
	if (!loop && !allow_remote) {
		cli_err("web: %s is not a loopback address: the page shows the whole cluster to "
			"whoever reaches it and /api/state and /metrics need no token; give "
			"--allow-remote if that is what you want", host);
		freeaddrinfo(ai);
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 32) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		rc = -errno;
		cli_err("web: listening on %s: %s", spec, strerror(-rc));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return rc;
	}
	p = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	snprintf(shown, sizeof(shown), ai->ai_family == AF_INET6 ? "[%s]" : "%s", host);
	freeaddrinfo(ai);
	snprintf(url, urllen, "http://%s:%u/", shown, p);
	snprintf(w->host_ok[0], sizeof(w->host_ok[0]), "%s:%u", shown, p);
	snprintf(w->host_ok[1], sizeof(w->host_ok[1]), "127.0.0.1:%u", p);
	snprintf(w->host_ok[2], sizeof(w->host_ok[2]), "localhost:%u", p);
	snprintf(w->host_ok[3], sizeof(w->host_ok[3]), "[::1]:%u", p);
	return fd;
}

/* A fresh random token, written 0600 to path (replacing an older one). */
static int make_token(struct web *w, const char *path)
{
	unsigned char r[16];
	int fd;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		cli_err("web: no random bytes for the token: %s", strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(w->token + 2 * i, 3, "%02x", r[i]);
	snprintf(w->token_path, sizeof(w->token_path), "%s", path);
	unlink(path);               /* O_EXCL below: never write through someone's file */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fchmod(fd, 0600) || dprintf(fd, "%s\n", w->token) < 0) {
		cli_err("web: writing the token to %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	return close(fd) ? -EIO : 0;
}

/* The token dies with the server; a file another server has rewritten since is its own. */
static void drop_token(const struct web *w)
{
	char buf[sizeof(w->token) + 2] = "";
	FILE *f = fopen(w->token_path, "re");

	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && !strncmp(buf, w->token, strlen(w->token)))
		unlink(w->token_path);
	fclose(f);
}

static int serve(struct web *w, int lfd, const char *url)
{
	struct MHD_Daemon *d;
	pthread_condattr_t ca;
	pthread_t col;
	sigset_t set;
	int sig;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&w->mu, NULL);
	/* Signals go to the main thread's sigwait only: block them before any thread starts. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&col, NULL, collector, w)) {
		cli_err("web: cannot start the collector thread");
		return 1;
	}
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, w,
			     MHD_OPTION_LISTEN_SOCKET, lfd, MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned)MAX_CONN, MHD_OPTION_CONNECTION_TIMEOUT, 60u,
			     MHD_OPTION_NOTIFY_COMPLETED, done, w, MHD_OPTION_END);
	if (!d) {
		cli_err("web: libmicrohttpd would not start");
		close(lfd);
	} else {
		printf("smartio web: cluster in %s at %s\n"
		       "action token in %s; the page with it: %s#token=%s\n", w->dir, url,
		       w->token_path, url, w->token);
		fflush(stdout);
		sigwait(&set, &sig);
	}
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (d)
		MHD_stop_daemon(d);
	pthread_join(col, NULL);
	return d ? 0 : 1;
}

int cmd_web(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' }, { "dir", required_argument, NULL, 'D' },
		{ "token-file", required_argument, NULL, 't' },
		{ "allow-remote", no_argument, NULL, 'r' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	const char *listen_opt = WEB_DEFAULT_LISTEN, *dir_opt = NULL, *token_opt = NULL;
	char url[200], tpath[PATH_MAX + 16];
	struct web *w = calloc(1, sizeof(*w));
	struct topo *t;
	int c, lfd, rc = 1;

	if (!w)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l': listen_opt = optarg; break;
		case 'D': dir_opt = optarg; break;
		case 't': token_opt = optarg; break;
		case 'r': w->allow_remote = true; break;
		case 'h': usage(stdout); free(w); return 0;
		default: usage(stderr); free(w); return 2;
		}
	}
	if (optind != argc) {
		cli_err("web: unexpected argument '%s' (see 'smartio web --help')", argv[optind]);
		free(w);
		return 2;
	}
	if (!strrchr(listen_opt, ':') || !strrchr(listen_opt, ':')[1]) {
		cli_err("web: --listen wants ADDR:PORT, not '%s'", listen_opt);
		free(w);
		return 2;
	}
	if (cli_cluster_dir(dir_opt, w->dir, sizeof(w->dir)) || cli_cluster_topo(w->dir, &t)) {
		free(w);
		return 1;
	}
	topo_free(t);
	lfd = listen_on(listen_opt, w->allow_remote, w, url, sizeof(url));
	if (lfd == -EINVAL) {
		free(w);
		return 2;
	}
	snprintf(tpath, sizeof(tpath), "%s/web-token", w->dir);
	if (lfd >= 0 && !make_token(w, token_opt ? token_opt : tpath) && !obs_tracker_new(&w->trk)) {
		rc = serve(w, lfd, url);
		drop_token(w);
	} else if (lfd >= 0) {
		close(lfd);
	}
	obs_tracker_free(w->trk);
	json_object_put(w->snap);
	free(w->snap_str);
	free(w->snap_key);
	free(w);
	return rc;
}
