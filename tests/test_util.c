// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/util: the log module (levels, SMARTIO_LOG, the prefix,
 * one write per line under threads), the monotonic-time helpers and the JSON
 * output helpers (escaping, number formats, null).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/json_out.h"
#include "util/cli_conv.h"
#include "util/log.h"
#include "util/smio_time.h"

/* ---------- stderr captured in a file ---------- */

struct capture {
	char path[64];
	int saved;
};

static void capture_start(struct capture *c)
{
	int fd;

	snprintf(c->path, sizeof(c->path), "/tmp/smartio-test-log-XXXXXX");
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	/* O_APPEND, as a daemon's host-N.log: concurrent writes never overlap. */
	assert_int_equal(fcntl(fd, F_SETFL, O_APPEND), 0);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
}

/* Restore stderr; the captured text (malloc'd, NUL-terminated). */
static char *capture_end(struct capture *c)
{
	FILE *f;
	char *buf;
	long len;

	assert_true(dup2(c->saved, STDERR_FILENO) >= 0);
	close(c->saved);
	f = fopen(c->path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	unlink(c->path);
	return buf;
}

static int reset(void **state)
{
	(void)state;
	unsetenv(SMIO_LOG_ENV);
	smio_log_set_host(-1);
	smio_log_init("tprog", SMIO_LOG_INFO);
	return 0;
}

/* ---------- log ---------- */

static void test_parse_level(void **state)
{
	enum smio_log_level l;

	(void)state;
	assert_int_equal(smio_log_parse_level("error", &l), 0);
	assert_int_equal(l, SMIO_LOG_ERROR);
	assert_int_equal(smio_log_parse_level("WARN", &l), 0);
	assert_int_equal(l, SMIO_LOG_WARN);
	assert_int_equal(smio_log_parse_level("warning", &l), 0);
	assert_int_equal(l, SMIO_LOG_WARN);
	assert_int_equal(smio_log_parse_level("Info", &l), 0);
	assert_int_equal(l, SMIO_LOG_INFO);
	assert_int_equal(smio_log_parse_level("debug", &l), 0);
	assert_int_equal(l, SMIO_LOG_DEBUG);
	assert_int_equal(smio_log_parse_level("verbose", &l), -EINVAL);
	assert_int_equal(smio_log_parse_level("", &l), -EINVAL);
	assert_int_equal(smio_log_parse_level(NULL, &l), -EINVAL);
}

static void test_prefix_and_levels(void **state)
{
	struct capture c;
	char *out;

	(void)state;
	capture_start(&c);
	smio_error("disk %d gone", 3);
	smio_warn("slow");
	smio_info("up: %s", "ok");
	smio_debug("not shown at info");
	smio_log_set_host(7);
	smio_info("with host");
	smio_log_set_level(SMIO_LOG_DEBUG);
	smio_debug("now shown");
	smio_log_set_level(SMIO_LOG_ERROR);
	smio_warn("hidden");
	smio_error("newline tolerated\n");
	out = capture_end(&c);
	assert_string_equal(out,
		"tprog: error: disk 3 gone\n"
		"tprog: warning: slow\n"
		"tprog: up: ok\n"
		"tprog[host 7]: with host\n"
		"tprog[host 7]: debug: now shown\n"
		"tprog[host 7]: error: newline tolerated\n");
	free(out);
}

static void test_timestamps(void **state)
{
	struct capture c;
	char *out;

	(void)state;
	capture_start(&c);
	smio_log_set_timestamps(true);
	smio_log_set_host(2);
	smio_warn("stamped");
	smio_log_set_timestamps(false);
	smio_info("plain");
	out = capture_end(&c);
	/* "2026-11-25T20:30:01.123Z tprog[host 2]: warning: stamped" */
	assert_true(strlen(out) > 25);
	assert_true(out[4] == '-' && out[10] == 'T' && out[19] == '.' && out[23] == 'Z' &&
		    out[24] == ' ');
	assert_string_equal(out + 25, "tprog[host 2]: warning: stamped\ntprog[host 2]: plain\n");
	free(out);
}

/* ---------- cli_conv: did you mean, --version ---------- */

static void test_suggest(void **state)
{
	static const char *const cmds[] = { "cluster", "borrow", "return", "devices", "status",
					    "dd", "up", "down" };
	char *argv_v[] = { "prog", "cluster", "--version", NULL };
	char *argv_x[] = { "prog", "exec", "--", "tool", "--version", NULL };

	(void)state;
	assert_int_equal(smio_edit_distance("borow", "borrow"), 1);
	assert_int_equal(smio_edit_distance("stauts", "status"), 2);
	assert_int_equal(smio_edit_distance("", "abc"), 3);
	assert_int_equal(smio_edit_distance("kitten", "sitting"), 3);
	assert_string_equal(smio_suggest("borow", cmds, 8), "borrow");
	assert_string_equal(smio_suggest("stauts", cmds, 8), "status");
	assert_string_equal(smio_suggest("stat", cmds, 8), "status");     /* a prefix */
	assert_string_equal(smio_suggest("dwon", cmds, 8), "down");
	assert_null(smio_suggest("xyzzy", cmds, 8));
	assert_null(smio_suggest("q", cmds, 8));
	assert_true(smio_wants_version(3, argv_v));
	assert_false(smio_wants_version(5, argv_x));   /* after "--": another program's */
	assert_true(smio_version()[0] != '\0');
}

static void test_env(void **state)
{
	struct capture c;
	char *out;

	(void)state;
	setenv(SMIO_LOG_ENV, "debug", 1);
	smio_log_init("tprog", SMIO_LOG_ERROR);
	assert_int_equal(smio_log_level(), SMIO_LOG_DEBUG);
	assert_true(smio_log_on(SMIO_LOG_DEBUG));

	setenv(SMIO_LOG_ENV, "ERROR", 1);
	smio_log_init("tprog", SMIO_LOG_INFO);
	assert_int_equal(smio_log_level(), SMIO_LOG_ERROR);
	assert_false(smio_log_on(SMIO_LOG_WARN));

	/* Unset: the process's default (a library's quiet one). */
	unsetenv(SMIO_LOG_ENV);
	smio_log_init("tprog", SMIO_LOG_ERROR);
	assert_int_equal(smio_log_level(), SMIO_LOG_ERROR);

	/* A bad value: said once (even at a quiet default), then the default. */
	setenv(SMIO_LOG_ENV, "loud", 1);
	capture_start(&c);
	smio_log_init("tprog", SMIO_LOG_ERROR);
	smio_log_init("tprog", SMIO_LOG_ERROR);
	smio_warn("not shown");
	out = capture_end(&c);
	assert_string_equal(out, "tprog: warning: SMARTIO_LOG='loud' is not one of error, "
			    "warn, info, debug: using error\n");
	assert_int_equal(smio_log_level(), SMIO_LOG_ERROR);
	free(out);
}

static void test_long_line_and_errno(void **state)
{
	char big[SMIO_LOG_LINE_MAX * 2];
	struct capture c;
	char *out;
	size_t len;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	capture_start(&c);
	errno = ENOSPC;
	smio_error("%s", big);
	assert_int_equal(errno, ENOSPC);
	out = capture_end(&c);
	len = strlen(out);
	assert_int_equal(len, SMIO_LOG_LINE_MAX);
	assert_int_equal(strncmp(out, "tprog: error: xxx", 17), 0);
	assert_string_equal(out + len - 4, "...\n");
	free(out);
}

#define THREADS 8
#define LINES   500

static void *logger(void *arg)
{
	long id = (long)(intptr_t)arg;

	for (int i = 0; i < LINES; i++)
		smio_info("thread %ld line %d %s", id, i,
			  "padding-padding-padding-padding-padding-padding-padding-padding");
	return NULL;
}

/* Lines of concurrent threads are whole: one write per line. */
static void test_threads(void **state)
{
	pthread_t t[THREADS];
	unsigned seen[THREADS] = { 0 }, total = 0;
	struct capture c;
	char *out, *line, *save = NULL;

	(void)state;
	capture_start(&c);
	for (long i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, logger, (void *)(intptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	out = capture_end(&c);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long id;
		int n, end = 0;

		assert_int_equal(sscanf(line, "tprog: thread %ld line %d padding-padding-padding-"
					"padding-padding-padding-padding-padding%n", &id, &n, &end), 2);
		assert_int_equal((size_t)end, strlen(line));
		assert_true(id >= 0 && id < THREADS);
		assert_int_equal(n, (int)seen[id]);       /* in order within a thread */
		seen[id]++;
		total++;
	}
	assert_int_equal(total, THREADS * LINES);
	free(out);
}

/* ---------- time ---------- */

static void test_time(void **state)
{
	uint64_t a = smio_now_ns(), b;
	int64_t d;

	(void)state;
	b = smio_now_ns();
	assert_true(b >= a);
	assert_true(smio_now_ms() >= a / 1000000u);
	assert_int_equal(smio_deadline(-1), SMIO_NO_DEADLINE);
	assert_int_equal(smio_ms_left(SMIO_NO_DEADLINE), -1);
	assert_false(smio_expired(SMIO_NO_DEADLINE));
	d = smio_deadline(0);
	assert_int_equal(smio_ms_left(d), 0);
	assert_true(smio_expired(d));
	d = smio_deadline(60000);
	assert_true(smio_ms_left(d) > 59000 && smio_ms_left(d) <= 60000);
	assert_false(smio_expired(d));
	/* Far away: clamped for poll(). */
	assert_int_equal(smio_ms_left(smio_deadline(INT64_MAX / 2)), INT_MAX);
}

/* ---------- JSON output ---------- */

static char *json_text(struct json_object *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(smio_json_print(f, o), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_json(void **state)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	char *out;

	(void)state;
	assert_non_null(o);
	assert_non_null(a);
	/* Names come from topologies, paths and devices: anything printable, or worse. */
	assert_int_equal(smio_json_add_str(o, "name", "q\"b\\s\t\n\x01/x"), 0);
	assert_int_equal(smio_json_add_str(o, "none", NULL), 0);
	assert_int_equal(smio_json_add_int(o, "neg", -1), 0);
	assert_int_equal(smio_json_add_uint(o, "big", UINT64_MAX), 0);
	assert_int_equal(smio_json_add_bool(o, "yes", true), 0);
	assert_int_equal(smio_json_add_double(o, "f", 1.5, "%.3f"), 0);
	assert_int_equal(smio_json_add_double(o, "whole", 12345.6, "%.0f"), 0);
	assert_int_equal(smio_json_add_double(o, "nan", NAN, "%.1f"), 0);
	assert_int_equal(smio_json_push_double(a, INFINITY, "%.1f"), 0);
	assert_int_equal(smio_json_push_double(a, 2.5, "%.1f"), 0);
	assert_int_equal(smio_json_add(o, "a", a), 0);
	/* A failed constructor is reported, and adds nothing. */
	assert_int_equal(smio_json_add(o, "lost", NULL), -ENOMEM);
	assert_int_equal(smio_json_push(a, NULL), -ENOMEM);
	out = json_text(o);
	assert_string_equal(out, "{\"name\":\"q\\\"b\\\\s\\t\\n\\u0001/x\",\"none\":null,"
			    "\"neg\":-1,\"big\":18446744073709551615,\"yes\":true,\"f\":1.500,"
			    "\"whole\":12346,\"nan\":null,\"a\":[null,2.5]}\n");
	free(out);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_parse_level, reset),
		cmocka_unit_test_setup(test_prefix_and_levels, reset),
		cmocka_unit_test_setup(test_timestamps, reset),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test_setup(test_env, reset),
		cmocka_unit_test_setup(test_long_line_and_errno, reset),
		cmocka_unit_test_setup(test_threads, reset),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
