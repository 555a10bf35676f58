// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the smartio wire protocol.
 *
 * The input is used twice:
 *  1. as slices for the pure validators: a header + payload as on the wire,
 *     and (message, direction, payload) picked from the first bytes so that
 *     every message's payload checker (all of smio_msg_at()'s list) sees
 *     arbitrary bodies;
 *  2. as a byte stream written into one end of a socketpair (optionally with
 *     an fd attached to the first byte), read back with smio_recv until the
 *     stream ends or framing is lost.
 *
 * Every fd the target creates or receives is closed; a leak aborts the run.
 *
 *   clang -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
 *         -Iinclude -Isrc fuzz/fuzz_proto.c src/proto/proto.c src/proto/proto_dev.c \
 *         src/proto/proto_seg.c src/proto/proto_lend.c src/proto/proto_node.c \
 *         src/proto/client.c -o /tmp/fuzz_proto && /tmp/fuzz_proto -max_total_time=60
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "smartio/proto.h"

/* Whole input must fit one socket buffer: nobody reads while we write. */
#define MAX_STREAM	(96u * 1024u)
#define SMALL_CAP	64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t rxbuf[SMIO_MAX_PAYLOAD];

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		abort();
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

static void check_slices(const uint8_t *data, size_t size)
{
	struct smio_hdr h;
	uint32_t len;

	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		smio_hdr_check(&h);
		len = size - sizeof(h) > UINT32_MAX ? UINT32_MAX : (uint32_t)(size - sizeof(h));
		smio_payload_check(h.type, h.flags & SMIO_F_REPLY, data + sizeof(h), len);
		smio_type_name(h.type);
	}
	if (size >= 2) {
		/* Aim the checker at real messages: the first byte picks a row of
		 * the list (arbitrary numbers come with the header slice above). */
		uint16_t type = smio_msg_at(data[0] % smio_msg_count())->type;
		bool reply = data[1] & 1;

		smio_payload_check(type, reply, data + 2, (uint32_t)(size - 2));
		smio_type_name(type);
	}
	smio_payload_check(SMIO_CFG_READ, false, NULL, 0);
}

/* Write the stream; with an fd attached to the first byte if asked to. */
static void feed(int sock, const uint8_t *data, size_t size, int fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	size_t off = 0;
	int tries;

	/* Each pass writes something or stops: the loop is bounded. */
	for (tries = 0; off < size && tries < 64; tries++) {
		struct iovec iov = { .iov_base = (void *)(data + off), .iov_len = size - off };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (fd >= 0 && off == 0) {
			struct cmsghdr *c;

			memset(&cbuf, 0, sizeof(cbuf));
			mh.msg_control = cbuf.b;
			mh.msg_controllen = sizeof(cbuf.b);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		n = sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* buffer full: the stream is just shorter */
		off += (size_t)n;
	}
}

static void check_stream(const uint8_t *data, size_t size)
{
	struct smio_hdr h;
	uint32_t cap;
	size_t i, max_msgs;
	int sv[2], fd = -1, rfd, ret;
	bool pass_fd;

	if (!size)
		return;
	if (size > MAX_STREAM)
		size = MAX_STREAM;
	/*
	 * Options come from the last byte: the first one is usually the magic
	 * of a valid header, and the options must combine with valid streams.
	 */
	pass_fd = data[size - 1] & 2;
	/* Sometimes a small buffer, to exercise the -EMSGSIZE drain path. */
	cap = (data[size - 1] & 1) ? SMALL_CAP : sizeof(rxbuf);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return;
	if (pass_fd)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	feed(sv[0], data, size, fd);
	if (fd >= 0)
		close(fd);
	shutdown(sv[0], SHUT_WR);	/* EOF after the data: recv never waits */

	/* Each successful recv consumes at least a header. */
	max_msgs = size / sizeof(h) + 2;
	for (i = 0; i < max_msgs; i++) {
		ret = smio_recv(sv[1], &h, rxbuf, cap, &rfd, 0);
		if (rfd >= 0)
			close(rfd);
		if (!ret)
			continue;
		/* These leave the stream in sync; anything else ends it. */
		if (ret != -EINVAL && ret != -EMSGSIZE)
			break;
	}
	close(sv[0]);
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int before = count_fds();

	check_slices(data, size);
	check_stream(data, size);
	if (count_fds() != before)
		abort();	/* an fd leaked */
	return 0;
}
