/* SPDX-License-Identifier: MIT */
/* iperf3.c - iperf3 wire protocol pieces (see include/linklab/iperf3.h). */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <linux/tcp.h>   /* struct tcp_info with tcpi_snd_wnd (glibc's lacks it) */
#include <linux/udp.h>   /* UDP_SEGMENT, UDP_GRO (Linux 4.18 / 5.0) */
#ifndef SOL_UDP
#define SOL_UDP IPPROTO_UDP   /* glibc defines it only for _GNU_SOURCE builds */
#endif
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "linklab/traffic/iperf3.h"
#include "linklab/traffic/udpstats.h"

const char *iperf3_state_name(int state)
{
	switch (state) {
	case IPERF3_TEST_START: return "TEST_START";
	case IPERF3_TEST_RUNNING: return "TEST_RUNNING";
	case IPERF3_TEST_END: return "TEST_END";
	case IPERF3_PARAM_EXCHANGE: return "PARAM_EXCHANGE";
	case IPERF3_CREATE_STREAMS: return "CREATE_STREAMS";
	case IPERF3_SERVER_TERMINATE: return "SERVER_TERMINATE";
	case IPERF3_CLIENT_TERMINATE: return "CLIENT_TERMINATE";
	case IPERF3_EXCHANGE_RESULTS: return "EXCHANGE_RESULTS";
	case IPERF3_DISPLAY_RESULTS: return "DISPLAY_RESULTS";
	case IPERF3_IPERF_DONE: return "IPERF_DONE";
	case IPERF3_ACCESS_DENIED: return "ACCESS_DENIED";
	case IPERF3_SERVER_ERROR: return "SERVER_ERROR";
	default: return "unknown";
	}
}

const char *iperf3_ierrno_text(int ierrno)
{
	switch (ierrno) {
	case IPERF3_IEDURATION: return "test duration too long (maximum = 86400 seconds)";
	case IPERF3_IENUMSTREAMS: return "number of parallel streams too large (maximum = 128)";
	case IPERF3_IEBLOCKSIZE: return "block size too large (maximum = 1048576 bytes)";
	case IPERF3_IEBUFSIZE: return "socket buffer size too large";
	case IPERF3_IEOMIT: return "bogus value for --omit";
	case IPERF3_IEMSS: return "TCP MSS too large (maximum = 9216 bytes)";
	case IPERF3_IEUNIMP: return "an option you are trying to set is not implemented yet";
	default: return NULL;
	}
}

static const char cookie_chars[] = "abcdefghijklmnopqrstuvwxyz234567";

int iperf3_make_cookie(char cookie[IPERF3_COOKIE_SIZE], struct ll_err *err)
{
	unsigned char rnd[IPERF3_COOKIE_SIZE - 1];
	size_t got = 0;

	while (got < sizeof(rnd)) {
		ssize_t r = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return ll_err_set(err, -errno, "cookie: getrandom: %s",
					  strerror(errno));
		}
		got += (size_t)r;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		cookie[i] = cookie_chars[rnd[i] & 31];
	cookie[IPERF3_COOKIE_SIZE - 1] = '\0';
	return 0;
}

bool iperf3_cookie_valid(const char cookie[IPERF3_COOKIE_SIZE])
{
	for (int i = 0; i < IPERF3_COOKIE_SIZE - 1; i++)
		if (!cookie[i] || !strchr(cookie_chars, cookie[i]))
			return false;
	return cookie[IPERF3_COOKIE_SIZE - 1] == '\0';
}

static int wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	return 0;
}

int iperf3_read_full(int fd, void *buf, size_t n, int timeout_ms,
		     struct ll_err *err)
{
	unsigned char *p = buf;
	size_t got = 0;

	while (got < n) {
		int w = wait_fd(fd, POLLIN, timeout_ms);
		if (w == -ETIMEDOUT)
			return ll_err_set(err, -ETIMEDOUT,
					  "no data from peer within %d ms", timeout_ms);
		if (w < 0)
			return ll_err_set(err, w, "poll: %s", strerror(-w));
		ssize_t r = recv(fd, p + got, n - got, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return ll_err_set(err, -errno, "read: %s", strerror(errno));
		}
		if (r == 0)
			return ll_err_set(err, -ECONNRESET,
					  "peer closed the connection");
		got += (size_t)r;
	}
	return 0;
}

int iperf3_write_full(int fd, const void *buf, size_t n, int timeout_ms,
		      struct ll_err *err)
{
	const unsigned char *p = buf;
	size_t done = 0;

	while (done < n) {
		int w = wait_fd(fd, POLLOUT, timeout_ms);
		if (w == -ETIMEDOUT)
			return ll_err_set(err, -ETIMEDOUT,
					  "peer not reading within %d ms", timeout_ms);
		if (w < 0)
			return ll_err_set(err, w, "poll: %s", strerror(-w));
		ssize_t r = send(fd, p + done, n - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return ll_err_set(err, -errno, "write: %s", strerror(errno));
		}
		done += (size_t)r;
	}
	return 0;
}

int iperf3_send_state(int fd, int state, struct ll_err *err)
{
	signed char b = (signed char)state;
	int r = iperf3_write_full(fd, &b, 1, 10000, err);

	if (r < 0)
		ll_err_prefix(err, "sending %s: ", iperf3_state_name(state));
	return r;
}

int iperf3_recv_state(int fd, int *state, int timeout_ms, struct ll_err *err)
{
	signed char b;
	int r = iperf3_read_full(fd, &b, 1, timeout_ms, err);

	if (r < 0) {
		ll_err_prefix(err, "control connection: ");
		return r;
	}
	*state = b;
	return 0;
}

static uint32_t get_be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static void put_be32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)(v >> 24);
	b[1] = (unsigned char)(v >> 16);
	b[2] = (unsigned char)(v >> 8);
	b[3] = (unsigned char)v;
}

int iperf3_read_server_error(int fd, int timeout_ms, struct ll_err *err)
{
	unsigned char b[8];
	int r = iperf3_read_full(fd, b, sizeof(b), timeout_ms, err);

	if (r < 0) {
		ll_err_prefix(err, "server error (details unreadable): ");
		return r;
	}
	int ie = (int32_t)get_be32(b), en = (int32_t)get_be32(b + 4);
	const char *t = iperf3_ierrno_text(ie);
	char num[32];

	if (!t) {
		snprintf(num, sizeof(num), "iperf3 error %d", ie);
		t = num;
	}
	if (en)
		return ll_err_set(err, -EIO, "server error: %s: %s", t, strerror(en));
	return ll_err_set(err, -EIO, "server error: %s", t);
}

int iperf3_send_server_error(int fd, int ierrno, int err_no, struct ll_err *err)
{
	unsigned char b[9];

	b[0] = (unsigned char)IPERF3_SERVER_ERROR;
	put_be32(b + 1, (uint32_t)ierrno);
	put_be32(b + 5, (uint32_t)err_no);
	return iperf3_write_full(fd, b, sizeof(b), 10000, err);
}

int iperf3_json_write(int fd, const cJSON *j, int timeout_ms,
		      struct ll_err *err)
{
	char *s = cJSON_PrintUnformatted(j);
	if (!s)
		return ll_err_set(err, -ENOMEM, "JSON: out of memory");
	size_t n = strlen(s);
	unsigned char *m = malloc(n + 4);
	if (!m) {
		free(s);
		return ll_err_set(err, -ENOMEM, "JSON: out of memory");
	}
	put_be32(m, (uint32_t)n);
	memcpy(m + 4, s, n);
	free(s);
	int r = iperf3_write_full(fd, m, n + 4, timeout_ms, err);
	free(m);
	if (r < 0)
		ll_err_prefix(err, "sending JSON: ");
	return r;
}

int iperf3_json_read(int fd, cJSON **out, size_t max, int timeout_ms,
		     struct ll_err *err)
{
	unsigned char lb[4];
	int r;

	*out = NULL;
	r = iperf3_read_full(fd, lb, 4, timeout_ms, err);
	if (r < 0) {
		ll_err_prefix(err, "reading JSON length: ");
		return r;
	}
	uint32_t n = get_be32(lb);
	if (n == 0 || n > max)
		return ll_err_set(err, -EMSGSIZE,
				  "JSON message of %u bytes refused (1..%zu)", n, max);
	char *s = malloc((size_t)n + 1);
	if (!s)
		return ll_err_set(err, -ENOMEM, "JSON: out of memory");
	r = iperf3_read_full(fd, s, n, timeout_ms, err);
	if (r < 0) {
		free(s);
		ll_err_prefix(err, "reading JSON body: ");
		return r;
	}
	s[n] = '\0';
	/* like iperf3: the first JSON value counts, trailing bytes ignored */
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithOpts(s, &end, 0);
	if (!j || !cJSON_IsObject(j)) {
		char frag[48];
		snprintf(frag, sizeof(frag), "%.40s", s);
		cJSON_Delete(j);
		free(s);
		return ll_err_set(err, -EPROTO, "peer sent invalid JSON: \"%s\"", frag);
	}
	free(s);
	*out = j;
	return 0;
}

void iperf3_params_init(struct iperf3_params *p)
{
	memset(p, 0, sizeof(*p));
	p->time = 10;
	p->parallel = 1;
	p->len = IPERF3_DEFAULT_TCP_BLKSIZE;
	p->pacing_timer = 1000;
	snprintf(p->client_version, sizeof(p->client_version), "linklab");
}

cJSON *iperf3_params_build(const struct iperf3_params *p)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddTrueToObject(j, p->udp ? "udp" : "tcp");
	cJSON_AddNumberToObject(j, "omit", p->omit);
	cJSON_AddNumberToObject(j, "time", p->time);
	cJSON_AddNumberToObject(j, "num", (double)p->num);
	cJSON_AddNumberToObject(j, "blockcount", (double)p->blockcount);
	if (p->mss)
		cJSON_AddNumberToObject(j, "MSS", p->mss);
	if (p->nodelay)
		cJSON_AddTrueToObject(j, "nodelay");
	if (p->udp_counters_64bit)   /* iperf3 sends these flags as 1 */
		cJSON_AddNumberToObject(j, "udp_counters_64bit", 1);
	cJSON_AddNumberToObject(j, "parallel", p->parallel);
	if (p->reverse)
		cJSON_AddTrueToObject(j, "reverse");
	if (p->bidir)
		cJSON_AddTrueToObject(j, "bidirectional");
	if (p->window)
		cJSON_AddNumberToObject(j, "window", (double)p->window);
	cJSON_AddNumberToObject(j, "len", p->len);
	if (p->bandwidth)
		cJSON_AddNumberToObject(j, "bandwidth", (double)p->bandwidth);
	if (p->pacing_timer)
		cJSON_AddNumberToObject(j, "pacing_timer", p->pacing_timer);
	if (p->congestion[0])
		cJSON_AddStringToObject(j, "congestion", p->congestion);
	if (p->zerocopy)
		cJSON_AddTrueToObject(j, "zerocopy");
	if (p->get_server_output)
		cJSON_AddNumberToObject(j, "get_server_output", 1);
	if (p->live_interval > 0)
		cJSON_AddNumberToObject(j, IPERF3_LINKLAB_LIVE_KEY, p->live_interval);
	if (p->gso)
		cJSON_AddTrueToObject(j, "linklab_gso");
	cJSON_AddStringToObject(j, "client_version", p->client_version);
	return j;
}

static bool flag_present(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	return v && !cJSON_IsFalse(v) && !cJSON_IsNull(v);
}

static int num_key(const cJSON *j, const char *key, double *out,
		   struct ll_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v))
		return ll_err_set(err, -EINVAL,
				  "parameter \"%s\" is not a number", key);
	*out = v->valuedouble;
	return 1;
}

int iperf3_params_parse(const cJSON *j, struct iperf3_params *p,
			struct ll_err *err)
{
	double d = 0;
	int r;

	iperf3_params_init(p);
	p->client_version[0] = '\0';
	if (!cJSON_IsObject(j))
		return ll_err_set(err, -EINVAL, "parameters are not a JSON object");
	p->udp = flag_present(j, "udp");
	p->reverse = flag_present(j, "reverse");
	p->bidir = flag_present(j, "bidirectional");
	p->nodelay = flag_present(j, "nodelay");
	p->udp_counters_64bit = flag_present(j, "udp_counters_64bit");
	p->zerocopy = flag_present(j, "zerocopy");
	p->get_server_output = flag_present(j, "get_server_output");
	p->gso = flag_present(j, "linklab_gso");
#define NUM(key, expr) \
	do { \
		if ((r = num_key(j, key, &d, err)) < 0) \
			return r; \
		if (r) \
			expr; \
	} while (0)
	NUM("omit", p->omit = d);
	NUM("time", p->time = d);
	/* a double at or above 2^64 has no uint64_t value (C11 6.3.1.4):
	 * such counts are taken as the largest */
	NUM("num", p->num = d > 0 ? (d < 18446744073709551616.0 ? (uint64_t)d :
				      UINT64_MAX) : 0);
	NUM("blockcount", p->blockcount = d > 0 ? (d < 18446744073709551616.0 ?
						 (uint64_t)d : UINT64_MAX) : 0);
	NUM("MSS", p->mss = d > 0 ? (d < 1e9 ? (uint32_t)d : 1000000000u) : 0);
	NUM("parallel", p->parallel = d >= -1e9 && d <= 1e9 ? (int)d : -1);
	NUM("window", p->window = d > 0 && d < 1e18 ? (uint64_t)d : 0);
	NUM("len", p->len = d > 0 && d < 4e9 ? (uint32_t)d : 0);
	NUM("bandwidth", p->bandwidth = d > 0 && d < 1.8e19 ? (uint64_t)d : 0);
	NUM("pacing_timer", p->pacing_timer = d > 0 && d < 1e9 ? (int)d : 0);
	/* iperf3 3.21's --gsro asks its server with "gso": 1 */
	NUM("gso", p->gso = p->gso || d > 0);
	NUM(IPERF3_LINKLAB_LIVE_KEY,
	    p->live_interval = d >= 0.1 && d <= 60 ? d : 0);
#undef NUM
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "congestion");
	if (cJSON_IsString(s))
		snprintf(p->congestion, sizeof(p->congestion), "%s", s->valuestring);
	s = cJSON_GetObjectItemCaseSensitive(j, "client_version");
	if (cJSON_IsString(s))
		snprintf(p->client_version, sizeof(p->client_version), "%s",
			 s->valuestring);
	return 0;
}

int iperf3_params_check(const struct iperf3_params *p, struct ll_diag *diag)
{
	int first = 0;
#define BAD(ie, field, ...) \
	do { \
		ll_diag_add(diag, LL_DIAG_ERROR, field, __VA_ARGS__); \
		if (!first) \
			first = ie; \
	} while (0)

	if (p->parallel < 1 || p->parallel > IPERF3_MAX_STREAMS)
		BAD(IPERF3_IENUMSTREAMS, "parallel",
		    "parallel %d out of range 1..%d", p->parallel, IPERF3_MAX_STREAMS);
	if (p->udp) {
		if (p->len < 16 || p->len > 65507)
			BAD(IPERF3_IEBLOCKSIZE, "len",
			    "len %u out of range 16..65507 (UDP)", p->len);
	} else if (p->len < 1 || p->len > IPERF3_MAX_BLOCKSIZE) {
		BAD(IPERF3_IEBLOCKSIZE, "len", "len %u out of range 1..%u bytes",
		    p->len, IPERF3_MAX_BLOCKSIZE);
	}
	if (!(p->time >= 0 && p->time <= IPERF3_MAX_TIME))
		BAD(IPERF3_IEDURATION, "time", "time %g out of range 0..%d s",
		    p->time, IPERF3_MAX_TIME);
	if (p->window > IPERF3_MAX_WINDOW)
		BAD(IPERF3_IEBUFSIZE, "window",
		    "window %llu out of range 0..%u bytes",
		    (unsigned long long)p->window, IPERF3_MAX_WINDOW);
	if (!(p->omit >= 0 && p->omit <= 600))
		BAD(IPERF3_IEOMIT, "omit", "omit %g out of range 0..600 s", p->omit);
	if (p->bidir && p->parallel > IPERF3_MAX_STREAMS / 2)
		BAD(IPERF3_IENUMSTREAMS, "parallel",
		    "parallel %d out of range 1..%d with bidirectional",
		    p->parallel, IPERF3_MAX_STREAMS / 2);
	if (p->mss > 65535)
		BAD(IPERF3_IEMSS, "MSS", "MSS %u out of range 0..65535 bytes", p->mss);
#undef BAD
	return first;
}

int64_t iperf3_json_int(const cJSON *n)
{
	if (!cJSON_IsNumber(n))
		return 0;
	double v = n->valuedouble;
	/* iperf3 3.12 prints int64 -1 via an unsigned format:
	 * 18446744073709551615, which a double rounds to 2^64. */
	if (isnan(v))
		return 0;
	if (v >= 9223372036854775808.0) {
		double neg = 18446744073709551616.0 - v;
		if (neg < 1)
			return -1;
		/* v = 2^63 gives neg = 2^63: not an int64_t */
		if (neg >= 9223372036854775808.0)
			return INT64_MIN;
		return -(int64_t)llround(neg);
	}
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)llround(v);
}

cJSON *iperf3_results_build(const struct iperf3_results *r)
{
	cJSON *j = cJSON_CreateObject(), *arr;
	if (!j)
		return NULL;
	cJSON_AddNumberToObject(j, "cpu_util_total", r->cpu_total);
	cJSON_AddNumberToObject(j, "cpu_util_user", r->cpu_user);
	cJSON_AddNumberToObject(j, "cpu_util_system", r->cpu_system);
	cJSON_AddNumberToObject(j, "sender_has_retransmits",
				r->sender_has_retransmits);
	if (r->congestion_used[0])
		cJSON_AddStringToObject(j, "congestion_used", r->congestion_used);
	arr = cJSON_AddArrayToObject(j, "streams");
	for (int i = 0; arr && i < r->nstreams; i++) {
		const struct iperf3_stream_result *s = &r->s[i];
		cJSON *o = cJSON_CreateObject();
		if (!o)
			break;
		cJSON_AddNumberToObject(o, "id", s->id);
		cJSON_AddNumberToObject(o, "bytes", (double)s->bytes);
		cJSON_AddNumberToObject(o, "retransmits", (double)s->retransmits);
		cJSON_AddNumberToObject(o, "jitter", s->jitter);
		cJSON_AddNumberToObject(o, "errors", (double)s->errors);
		if (s->omitted_errors >= 0)
			cJSON_AddNumberToObject(o, "omitted_errors",
						(double)s->omitted_errors);
		cJSON_AddNumberToObject(o, "packets", (double)s->packets);
		if (s->omitted_packets >= 0)
			cJSON_AddNumberToObject(o, "omitted_packets",
						(double)s->omitted_packets);
		if (s->has_dups)
			cJSON_AddNumberToObject(o, "duplicates", (double)s->dups);
		if (s->has_ooo)
			cJSON_AddNumberToObject(o, "out_of_order", (double)s->ooo);
		if (s->has_times) {
			cJSON_AddNumberToObject(o, "start_time", s->start_time);
			cJSON_AddNumberToObject(o, "end_time", s->end_time);
		}
		cJSON_AddItemToArray(arr, o);
	}
	return j;
}

int iperf3_results_parse(const cJSON *j, struct iperf3_results *r,
			 struct ll_err *err)
{
	static const char *const top[] = { "cpu_util_total", "cpu_util_user",
		"cpu_util_system", "sender_has_retransmits" };
	static const char *const req[] = { "id", "bytes", "retransmits",
		"jitter", "errors", "packets" };
	const cJSON *v;

	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(j))
		return ll_err_set(err, -EINVAL, "results are not a JSON object");
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, top[i])))
			return ll_err_set(err, -EINVAL,
					  "results: \"%s\" missing or not a number", top[i]);
	r->cpu_total = cJSON_GetObjectItemCaseSensitive(j, "cpu_util_total")->valuedouble;
	r->cpu_user = cJSON_GetObjectItemCaseSensitive(j, "cpu_util_user")->valuedouble;
	r->cpu_system = cJSON_GetObjectItemCaseSensitive(j, "cpu_util_system")->valuedouble;
	r->sender_has_retransmits = (int)iperf3_json_int(
		cJSON_GetObjectItemCaseSensitive(j, "sender_has_retransmits"));
	v = cJSON_GetObjectItemCaseSensitive(j, "congestion_used");
	if (cJSON_IsString(v))
		snprintf(r->congestion_used, sizeof(r->congestion_used), "%s",
			 v->valuestring);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "streams");
	if (!cJSON_IsArray(arr))
		return ll_err_set(err, -EINVAL, "results: \"streams\" missing");
	const cJSON *o;
	cJSON_ArrayForEach(o, arr) {
		if (r->nstreams >= IPERF3_MAX_STREAMS)
			return ll_err_set(err, -EINVAL,
					  "results: more than %d streams", IPERF3_MAX_STREAMS);
		struct iperf3_stream_result *s = &r->s[r->nstreams];
		for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
			if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, req[i])))
				return ll_err_set(err, -EINVAL,
						  "results: stream %d: \"%s\" missing or not a number",
						  r->nstreams + 1, req[i]);
		s->id = (int)iperf3_json_int(cJSON_GetObjectItemCaseSensitive(o, "id"));
		int64_t b = iperf3_json_int(cJSON_GetObjectItemCaseSensitive(o, "bytes"));
		s->bytes = b > 0 ? (uint64_t)b : 0;
		s->retransmits = iperf3_json_int(cJSON_GetObjectItemCaseSensitive(o, "retransmits"));
		s->jitter = cJSON_GetObjectItemCaseSensitive(o, "jitter")->valuedouble;
		s->errors = iperf3_json_int(cJSON_GetObjectItemCaseSensitive(o, "errors"));
		s->packets = iperf3_json_int(cJSON_GetObjectItemCaseSensitive(o, "packets"));
		const cJSON *oe = cJSON_GetObjectItemCaseSensitive(o, "omitted_errors");
		const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "omitted_packets");
		if (cJSON_IsNumber(oe) && cJSON_IsNumber(op)) {
			s->omitted_errors = iperf3_json_int(oe);
			s->omitted_packets = iperf3_json_int(op);
		} else {
			s->omitted_errors = s->omitted_packets = -1;
		}
		const cJSON *du = cJSON_GetObjectItemCaseSensitive(o, "duplicates");
		if (cJSON_IsNumber(du) && iperf3_json_int(du) >= 0) {
			s->has_dups = true;
			s->dups = (uint64_t)iperf3_json_int(du);
		}
		du = cJSON_GetObjectItemCaseSensitive(o, "out_of_order");
		if (cJSON_IsNumber(du) && iperf3_json_int(du) >= 0) {
			s->has_ooo = true;
			s->ooo = (uint64_t)iperf3_json_int(du);
		}
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "start_time");
		const cJSON *et = cJSON_GetObjectItemCaseSensitive(o, "end_time");
		if (cJSON_IsNumber(st) && cJSON_IsNumber(et)) {
			s->has_times = true;
			s->start_time = st->valuedouble;
			s->end_time = et->valuedouble;
		}
		r->nstreams++;
	}
	return 0;
}

void iperf3_udp_counted(const struct iperf3_stream_result *r,
			int64_t own_omit_packets, int64_t *packets,
			int64_t *lost)
{
	int64_t pk = r->packets, lo = r->errors;

	if (r->omitted_packets >= 0 && r->omitted_errors >= 0) {
		pk -= r->omitted_packets;
		lo -= r->omitted_errors;
	} else {
		pk -= own_omit_packets;
		if (own_omit_packets > 0 && lo > 0)
			lo = -1;
	}
	if (pk < 0)
		pk = 0;
	if (lo < 0 && lo != -1)
		lo = 0;
	if (lo > pk)
		lo = pk;
	*packets = pk;
	*lost = lo;
}

int iperf3_tcp_info(int fd, struct iperf3_tcpinfo *ti)
{
	struct tcp_info t;
	socklen_t len = sizeof(t);

	ti->total_retrans = ti->snd_cwnd = ti->rtt_us = ti->rttvar_us = -1;
	ti->pmtu = ti->snd_mss = -1;
	ti->snd_wnd = ti->reord_seen = -1;
	memset(&t, 0, sizeof(t));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &t, &len) < 0)
		return -errno;
	ti->total_retrans = t.tcpi_total_retrans;
	ti->snd_mss = t.tcpi_snd_mss;
	ti->snd_cwnd = (int64_t)t.tcpi_snd_cwnd * t.tcpi_snd_mss;
	ti->rtt_us = t.tcpi_rtt;
	ti->rttvar_us = t.tcpi_rttvar;
	ti->pmtu = t.tcpi_pmtu;
	/* newer fields only when the kernel filled them (len tells) */
	if (len >= offsetof(struct tcp_info, tcpi_snd_wnd) + sizeof(t.tcpi_snd_wnd))
		ti->snd_wnd = t.tcpi_snd_wnd;
	if (len >= offsetof(struct tcp_info, tcpi_reord_seen) + sizeof(t.tcpi_reord_seen))
		ti->reord_seen = t.tcpi_reord_seen;
	return 0;
}

int iperf3_stream_id(int index)
{
	return index == 0 ? 1 : index + 2;
}

double iperf3_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void iperf3_cpu_times(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void pace(struct iperf3_stream *s, double t0, uint64_t sent)
{
	/* application-level pacing as iperf3's -b: sleep until the bits sent
	 * so far are due at the target rate */
	double due = t0 + (double)sent * 8.0 / (double)s->rate;
	double now = iperf3_now();

	if (due <= now)
		return;
	if (due - now > 0.005 && s->gate) {
		/* a long gap (TCP -b 10M: 105 ms per 128 KiB block) ends early
		 * when the test stops: iperf3_gate_open() wakes it */
		struct timespec ts;
		ts.tv_sec = (time_t)due;
		ts.tv_nsec = (long)((due - (double)ts.tv_sec) * 1e9);
		pthread_mutex_lock(&s->gate->mu);
		while (!atomic_load_explicit(s->stop, memory_order_relaxed) &&
		       pthread_cond_timedwait(&s->gate->cv, &s->gate->mu, &ts) == 0)
			;
		pthread_mutex_unlock(&s->gate->mu);
		return;
	}
	struct timespec ts;
	double d = due - now;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

void iperf3_stream_end_omit(struct iperf3_stream *s)
{
	s->omit_bytes = atomic_load(&s->bytes);
	s->omit_packets = atomic_load(&s->packets);
	s->omit_lost = atomic_load(&s->lost);
	s->omit_ooo = atomic_load(&s->outoforder);
}

void iperf3_stream_udp_result(const struct iperf3_stream *s,
			      struct iperf3_stream_result *r)
{
	uint64_t pk = atomic_load(&s->packets);

	r->packets = (int64_t)pk;
	r->omitted_packets = (int64_t)s->omit_packets;
	r->errors = r->omitted_errors = 0;
	if (s->sender)
		return;
	int64_t lo = atomic_load(&s->lost), olo = s->omit_lost;
	/* a late datagram may have filled an omitted gap: keep 0 <= counted
	 * <= counted packets, and the totals consistent with it */
	if (olo > lo)
		olo = lo;
	if (lo - olo > r->packets - r->omitted_packets)
		olo = lo - (r->packets - r->omitted_packets);
	r->errors = lo;
	r->omitted_errors = olo;
	r->jitter = iperf3_stream_jitter(s);
	r->has_dups = true;
	r->dups = atomic_load(&s->dups);
	int64_t oo = atomic_load(&s->outoforder) - s->omit_ooo;
	r->has_ooo = true;
	r->ooo = oo > 0 ? (uint64_t)oo : 0;
}

void iperf3_results_fill(const struct iperf3_side *side, struct iperf3_results *res)
{
	double cu, cs, w = side->wall;

	iperf3_cpu_times(&cu, &cs);
	res->cpu_user = w > 0 ? (cu - side->cpu_user0) / w * 100 : 0;
	res->cpu_system = w > 0 ? (cs - side->cpu_sys0) / w * 100 : 0;
	res->cpu_total = res->cpu_user + res->cpu_system;
	res->sender_has_retransmits = side->sends ? (side->udp ? 0 : 1) : -1;
	iperf3_socket_cc(side->cc_fd, res->congestion_used, sizeof(res->congestion_used));
	res->nstreams = side->n;
	for (int i = 0; i < side->n; i++) {
		const struct iperf3_stream *st = &side->st[i];
		struct iperf3_stream_result *s = &res->s[i];

		s->id = st->id;
		s->bytes = atomic_load(&st->bytes) - st->omit_bytes;
		s->retransmits = st->sender && side->retr ? side->retr[i] : -1;
		s->omitted_errors = s->omitted_packets = 0;
		if (side->udp)
			iperf3_stream_udp_result(st, s);
		s->has_times = true;
		s->start_time = 0;
		s->end_time = side->dur;
	}
}

const struct iperf3_stream_result *iperf3_results_stream(const struct iperf3_results *r,
							 int id)
{
	for (int k = 0; k < r->nstreams; k++)
		if (r->s[k].id == id)
			return &r->s[k];
	return NULL;
}

double iperf3_stream_jitter(const struct iperf3_stream *s)
{
	uint64_t b = atomic_load_explicit(&s->jitter_bits, memory_order_relaxed);
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

uint32_t iperf3_udp_default_len(int ctrl_fd)
{
	int v = 0;
	socklen_t sl = sizeof(v);

	if (ctrl_fd >= 0 &&
	    getsockopt(ctrl_fd, IPPROTO_TCP, TCP_MAXSEG, &v, &sl) == 0 &&
	    v >= 16 && v <= 65507)
		return (uint32_t)v;
	return IPERF3_UDP_DEFAULT_LEN;
}

int iperf3_tune_socket(int fd, bool tcp, uint32_t mss, bool nodelay,
		       const char *cc, uint64_t window, struct ll_err *err)
{
	int one = 1;

	if (window) {
		int w = window > INT32_MAX ? INT32_MAX : (int)window;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &w, sizeof(w)) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof(w)) < 0)
			return ll_err_set(err, -errno, "SO_SNDBUF/SO_RCVBUF %d: %s",
					  w, strerror(errno));
	}
	if (!tcp)
		return 0;
	if (mss) {
		int m = (int)mss;
		if (setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &m, sizeof(m)) < 0)
			return ll_err_set(err, -errno, "TCP_MAXSEG %d: %s", m,
					  strerror(errno));
	}
	if (nodelay &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return ll_err_set(err, -errno, "TCP_NODELAY: %s", strerror(errno));
	if (cc && cc[0] &&
	    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) < 0)
		return ll_err_set(err, -errno, "TCP_CONGESTION %s: %s", cc,
				  strerror(errno));
	return 0;
}

void iperf3_socket_cc(int fd, char *buf, size_t len)
{
	char cc[32];
	socklen_t sl = sizeof(cc);

	buf[0] = '\0';
	if (fd >= 0 && getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &sl) == 0) {
		cc[sizeof(cc) - 1] = '\0';
		snprintf(buf, len, "%s", cc);
	}
}

/* read a /proc list into buf (newline dropped); 0 or -errno */
static int read_list(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* name is one of the space-separated words of list */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p; ) {
		p += strspn(p, " ");
		size_t w = strcspn(p, " ");
		if (w == n && !strncmp(p, name, n))
			return true;
		p += w;
	}
	return false;
}

int iperf3_cc_check(const char *name, struct ll_err *err)
{
	static const char avail_path[] =
		"/proc/sys/net/ipv4/tcp_available_congestion_control";
	static const char allowed_path[] =
		"/proc/sys/net/ipv4/tcp_allowed_congestion_control";
	char avail[512], allowed[512];
	int r;

	if (!name || !name[0])
		return 0;
	r = read_list(avail_path, avail, sizeof(avail));
	if (r < 0)
		return 0;   /* nothing to check against: setsockopt will tell */
	if (!in_list(avail, name) && geteuid() == 0) {
		/* root: setting it loads the module tcp_<name> if there is one */
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name,
				       (socklen_t)strlen(name)) < 0) {
				/* not loadable: the list below says so */
			}
			close(fd);
		}
		read_list(avail_path, avail, sizeof(avail));
	}
	if (!in_list(avail, name))
		return ll_err_set(err, -ENOENT,
				  "-C '%s': not available here (available: %s)",
				  name, avail);
	if (geteuid() != 0 && read_list(allowed_path, allowed, sizeof(allowed)) == 0 &&
	    !in_list(allowed, name))
		return ll_err_set(err, -EPERM,
				  "-C '%s': not allowed for non-root users here "
				  "(allowed: %s; net.ipv4.tcp_allowed_congestion_control)",
				  name, allowed);
	return 0;
}

/* -n/-k: claim up to len bytes of the shared budget; 0 when it is spent. */
static uint32_t claim(struct iperf3_stream *s, uint32_t len)
{
	if (!s->budget_used || !s->budget)
		return len;
	uint64_t prev = atomic_fetch_add(s->budget_used, len);
	if (prev >= s->budget)
		return 0;
	return s->budget - prev < len ? (uint32_t)(s->budget - prev) : len;
}

/* UDP GSO (udp(7) UDP_SEGMENT, Linux 4.18): one sendmsg() carries up to
 * UDP_GSO_SEGS datagrams of len bytes each, which the kernel (or the NIC)
 * cuts into ordinary datagrams: the wire sees what iperf3 sends. Each
 * datagram keeps its own header (timestamp, sequence number). A paced
 * sender batches at most 1 ms of its rate, so bursts stay within one
 * batch; -n/-k and datagrams over 65000/2 bytes go one by one. */
#define UDP_GSO_SEGS  64
#define UDP_GSO_BYTES 65000

static unsigned udp_gso_batch(const struct iperf3_stream *s)
{
	if (!s->gso || s->budget || s->len > UDP_GSO_BYTES / 2)
		return 1;
	unsigned k = UDP_GSO_BYTES / s->len;
	if (k > UDP_GSO_SEGS)
		k = UDP_GSO_SEGS;
	if (s->rate) {
		double per_ms = (double)s->rate / 8 / 1000 / s->len;
		if (per_ms < k)
			k = per_ms < 1 ? 1 : (unsigned)per_ms;
	}
	return k;
}

static void udp_put_header(struct iperf3_stream *s, unsigned char *b,
			   const struct timespec *ts, uint64_t seq)
{
	put_be32(b, (uint32_t)ts->tv_sec);
	put_be32(b + 4, (uint32_t)(ts->tv_nsec / 1000));
	if (s->seq64) {
		put_be32(b + 8, (uint32_t)(seq >> 32));
		put_be32(b + 12, (uint32_t)seq);
	} else {
		put_be32(b + 8, (uint32_t)seq);
	}
}

/* Send k datagrams of s->len bytes from b (k > 1: one GSO sendmsg).
 * Returns the bytes sent or -1 with errno. */
static ssize_t udp_send_batch(struct iperf3_stream *s, unsigned char *b,
			      unsigned k)
{
	if (k == 1)
		return send(s->fd, b, s->len, MSG_NOSIGNAL);
	char cbuf[CMSG_SPACE(sizeof(uint16_t))] = { 0 };
	struct iovec iov = { .iov_base = b, .iov_len = (size_t)k * s->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	uint16_t seg = (uint16_t)s->len;

	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
	return sendmsg(s->fd, &mh, MSG_NOSIGNAL);
}

static bool udp_retry_errno(int e)
{
	return e == EINTR || e == EAGAIN || e == ENOBUFS || e == ECONNREFUSED;
}

static void udp_send_loop(struct iperf3_stream *s)
{
	double t0 = iperf3_now();
	uint64_t total = 0;
	uint64_t seq = 0;
	unsigned k = udp_gso_batch(s);
	unsigned char *batch = s->buf;

	if (k > 1) {
		batch = malloc((size_t)k * s->len);
		if (!batch) {
			k = 1;
			batch = s->buf;
		} else {
			for (unsigned i = 0; i < k; i++)
				memcpy(batch + (size_t)i * s->len, s->buf, s->len);
		}
	}
	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		if (s->budget && !claim(s, s->len))
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);   /* as iperf3: gettimeofday */
		for (unsigned i = 0; i < k; i++)
			udp_put_header(s, batch + (size_t)i * s->len, &ts, seq + 1 + i);
		ssize_t r;
		for (;;) {
			r = udp_send_batch(s, batch, k);
			if (r >= 0 || !udp_retry_errno(errno))
				break;
			if (atomic_load_explicit(s->stop, memory_order_relaxed))
				break;
		}
		if (r < 0 && k > 1 && (errno == EIO || errno == EINVAL ||
				       errno == EMSGSIZE || errno == ENOPROTOOPT ||
				       errno == EOPNOTSUPP)) {
			k = 1;   /* no GSO on this path: one by one from now on */
			continue;
		}
		if (r < 0) {
			if (!udp_retry_errno(errno))
				atomic_store(&s->error, errno);
			break;
		}
		if (k > atomic_load_explicit(&s->gso_segs, memory_order_relaxed))
			atomic_store(&s->gso_segs, k);
		seq += k;
		total += (uint64_t)r;
		atomic_fetch_add_explicit(&s->bytes, (uint64_t)r, memory_order_relaxed);
		atomic_store_explicit(&s->packets, seq, memory_order_relaxed);
		if (s->rate)
			pace(s, t0, total);
	}
	if (batch != s->buf)
		free(batch);
}

static void publish_udp(struct iperf3_stream *s, const struct udpstats *u)
{
	uint64_t b;

	atomic_store_explicit(&s->packets, u->highest, memory_order_relaxed);
	atomic_store_explicit(&s->lost, (int64_t)udpstats_lost(u),
			      memory_order_relaxed);
	atomic_store_explicit(&s->outoforder, (int64_t)u->ooo,
			      memory_order_relaxed);
	atomic_store_explicit(&s->dups, u->dups, memory_order_relaxed);
	atomic_store_explicit(&s->settled_lost, udpstats_settled_lost(u),
			      memory_order_relaxed);
	memcpy(&b, &u->jitter_s, sizeof(b));
	atomic_store_explicit(&s->jitter_bits, b, memory_order_relaxed);
}

/* Account one datagram of n bytes at b (header: sec, usec, seq); returns
 * the bytes to count. */
static size_t udp_account(struct iperf3_stream *s, struct udpstats *u,
			  const unsigned char *b, size_t n, int64_t now_us)
{
	size_t hdr = s->seq64 ? IPERF3_UDP_HDR64 : IPERF3_UDP_HDR;

	if (n < hdr)
		return 0;   /* a late "9876"/"6789" or junk */
	int64_t sent_us = (int64_t)get_be32(b) * 1000000 + (int64_t)get_be32(b + 4);
	uint64_t seq = get_be32(b + 8);
	if (s->seq64)
		seq = seq << 32 | get_be32(b + 12);
	/* every datagram's bytes count, duplicates too, as iperf3's
	 * iperf_udp_recv counts them; udpstats keeps duplicates out of the
	 * loss and the jitter */
	return udpstats_packet(u, seq, s->seq64 ? 64 : 32, sent_us, now_us) >= 0 ? n : 0;
}

/* UDP GRO (udp(7) UDP_GRO, Linux 5.0): the kernel may hand over several
 * datagrams of one flow at once, all of the size the UDP_GRO control
 * message gives but the last; they are split and accounted one by one, so
 * sequence, loss, reordering, duplicates and jitter stay per datagram. */
static void udp_recv_loop(struct iperf3_stream *s)
{
	struct udpstats *u = malloc(sizeof(*u));
	int one = 1;
	bool gro = setsockopt(s->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	size_t cap = gro && s->len < IPERF3_UDP_GRO_BUF ? IPERF3_UDP_GRO_BUF : s->len;
	unsigned char *buf = cap > s->len ? malloc(cap) : s->buf;

	if (!u || !buf) {
		free(u);
		if (buf && buf != s->buf)
			free(buf);
		atomic_store(&s->error, ENOMEM);
		return;
	}
	udpstats_init(u);
	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = buf, .iov_len = cap };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf,
				     .msg_controllen = gro ? sizeof(cbuf) : 0 };
		ssize_t r = recvmsg(s->fd, &mh, 0);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNREFUSED)
				continue;
			atomic_store(&s->error, errno);
			break;
		}
		if (r == 0)   /* shutdown() by the owner (or an empty datagram) */
			continue;   /* the loop condition re-checks stop */
		size_t seg = (size_t)r;
		for (struct cmsghdr *cm = gro ? CMSG_FIRSTHDR(&mh) : NULL; cm;
		     cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
				int g;
				memcpy(&g, CMSG_DATA(cm), sizeof(g));
				if (g > 0 && (size_t)g < seg)
					seg = (size_t)g;
			}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		unsigned nseg = 0;
		uint64_t got = 0;
		for (size_t off = 0; off < (size_t)r; off += seg, nseg++)
			got += udp_account(s, u, buf + off,
					   (size_t)r - off < seg ? (size_t)r - off : seg,
					   now_us);
		if (nseg > atomic_load_explicit(&s->gso_segs, memory_order_relaxed))
			atomic_store(&s->gso_segs, nseg);
		publish_udp(s, u);
		atomic_fetch_add_explicit(&s->bytes, got, memory_order_relaxed);
	}
	if (buf != s->buf)
		free(buf);
	free(u);
}

/* send all of n bytes of the block (partial sends continue) */
static ssize_t tcp_send_block(struct iperf3_stream *s, uint32_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r;
		if (s->zerocopy && s->mfd >= 0) {
			off_t off = (off_t)done;
			r = sendfile(s->fd, s->mfd, &off, n - done);
		} else {
			r = send(s->fd, s->buf + done, n - done, MSG_NOSIGNAL);
		}
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				if (atomic_load_explicit(s->stop, memory_order_relaxed))
					return (ssize_t)done;
				continue;
			}
			return done ? (ssize_t)done : -1;
		}
		if (r == 0)
			break;
		done += (size_t)r;
		atomic_fetch_add_explicit(&s->bytes, (uint64_t)r,
					  memory_order_relaxed);
	}
	return (ssize_t)done;
}

/* TCP receiver wake-ups. Each wake-up of a blocked reader costs the
 * sending CPU a cross-CPU wake (sock_def_readable): at tens of Gbit/s that
 * is a quarter of its time. The reader therefore asks the kernel to wake it
 * only once about 1 ms of data is queued (SO_RCVLOWAT, socket(7); the
 * kernel caps it at half the receive buffer), re-estimated from the
 * measured rate every 100 ms; below 16 KiB per ms it stays at 1 byte, as
 * without it. SO_RCVTIMEO bounds the wait to 10 ms, so bytes that arrive
 * when the rate drops are still counted within 10 ms (a timed-out recv()
 * returns what it copied, or EAGAIN). */
#define RX_LOWAT_PERIOD  0.1          /* s between re-estimates */
#define RX_LOWAT_WINDOW  0.001        /* s of data to wait for */
#define RX_LOWAT_MIN     16384        /* bytes: below this, no low-water mark */
#define RX_LOWAT_MAX     (512 * 1024) /* bytes */

struct rx_lowat {
	double t;          /* start of the current estimate period */
	uint64_t bytes;    /* total at t */
	int cur;           /* current SO_RCVLOWAT (1 = off) */
};

static void rx_lowat_init(struct iperf3_stream *s, struct rx_lowat *lw)
{
	struct timeval tv = { 0, 10 * 1000 };

	lw->t = iperf3_now();
	lw->bytes = 0;
	lw->cur = 1;
	setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static void rx_lowat_update(struct iperf3_stream *s, struct rx_lowat *lw,
			    uint64_t total)
{
	double now = iperf3_now();

	if (now - lw->t < RX_LOWAT_PERIOD)
		return;
	double want = (double)(total - lw->bytes) / (now - lw->t) * RX_LOWAT_WINDOW;
	int v = want < RX_LOWAT_MIN ? 1 :
		want > RX_LOWAT_MAX ? RX_LOWAT_MAX : (int)want;
	/* only real changes (a quarter or more) cost a system call */
	if (v != lw->cur && (v == 1 || lw->cur == 1 ||
			     v > lw->cur + lw->cur / 4 || v < lw->cur - lw->cur / 4)) {
		if (setsockopt(s->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)) == 0)
			lw->cur = v;
	}
	lw->t = now;
	lw->bytes = total;
}

static void tcp_loop(struct iperf3_stream *s, double t0)
{
	struct rx_lowat lw = { 0 };
	uint64_t total = 0;
	/* with the shared block, a sender by time writes up to 4 blocks per
	 * send() and a receiver asks for up to 1 MiB per recv(): fewer system
	 * calls for the same bytes (the block size only matters to -k, which
	 * uses the budget path) */
	uint32_t wlen = s->len, rlen = s->len;
	if (s->buf_shared && !s->budget && !s->rate) {
		uint64_t w = (uint64_t)s->len * 4;
		wlen = w > IPERF3_MAX_BLOCKSIZE ? IPERF3_MAX_BLOCKSIZE : (uint32_t)w;
	}
	if (s->buf_shared)
		rlen = IPERF3_MAX_BLOCKSIZE;
	if (!s->sender) {
		rx_lowat_init(s, &lw);
	} else {
		/* a send() that waits for room in the socket buffer returns
		 * what it copied after 10 ms (SO_SNDTIMEO, socket(7)), so
		 * the bytes are counted as they go: at a few Mbit/s one
		 * 512 KiB send lasts seconds and the intervals would read 0,
		 * 4.2, 0, 4.2 Mbit/s on a 2 Mbit/s path */
		struct timeval tv = { 0, 10 * 1000 };

		setsockopt(s->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}

	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		ssize_t r;
		if (s->sender) {
			uint32_t n = claim(s, s->len);
			if (!n)
				break;
			if (!s->budget && !s->zerocopy) {
				r = send(s->fd, s->buf, n > wlen ? n : wlen, MSG_NOSIGNAL);
				if (r > 0)
					atomic_fetch_add_explicit(&s->bytes, (uint64_t)r,
								  memory_order_relaxed);
			} else {
				r = tcp_send_block(s, n);
			}
		} else {
			/* the payload is never looked at: MSG_TRUNC has TCP
			 * discard it without the copy to user space (tcp(7);
			 * iperf3 3.19's --skip-rx-copy) */
			r = recv(s->fd, s->buf, rlen, MSG_TRUNC);
			if (r > 0)
				atomic_fetch_add_explicit(&s->bytes, (uint64_t)r,
							  memory_order_relaxed);
		}
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			atomic_store(&s->error, errno);
			break;
		}
		if (r == 0)
			break;
		total += (uint64_t)r;
		if (s->sender && s->rate)
			pace(s, t0, total);
		else if (!s->sender)
			rx_lowat_update(s, &lw, total);
	}
}

void iperf3_gate_init(struct iperf3_gate *g)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&g->mu, NULL);
	/* pacing waits on it with CLOCK_MONOTONIC deadlines (iperf3_now) */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	g->open = false;
}

void iperf3_gate_open(struct iperf3_gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->open = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

void iperf3_gate_destroy(struct iperf3_gate *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}

static void *stream_main(void *arg)
{
	struct iperf3_stream *s = arg;
	sigset_t all;
	double t0 = iperf3_now();

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (s->gate) {
		pthread_mutex_lock(&s->gate->mu);
		while (!s->gate->open)
			pthread_cond_wait(&s->gate->cv, &s->gate->mu);
		pthread_mutex_unlock(&s->gate->mu);
		t0 = iperf3_now();
	}
	if (s->udp) {
		if (s->sender && s->rate)
			/* pacing sleeps are short: the default 50 us timer slack
			 * would turn them into bursts */
			prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
		if (s->sender)
			udp_send_loop(s);
		else
			udp_recv_loop(s);
	} else {
		tcp_loop(s, t0);
	}
	atomic_store(&s->finished, true);
	if (s->notify_fd) {
		char b = 'f';
		if (write(*s->notify_fd, &b, 1) < 0) {
			/* the owner polls the flag too */
		}
	}
	return NULL;
}

static unsigned char *shared_tx, *shared_rx;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void shared_init(void)
{
	shared_tx = malloc(IPERF3_MAX_BLOCKSIZE);
	shared_rx = malloc(IPERF3_MAX_BLOCKSIZE);
	for (size_t got = 0; shared_tx && got < IPERF3_MAX_BLOCKSIZE;) {
		ssize_t g = getrandom(shared_tx + got, IPERF3_MAX_BLOCKSIZE - got, 0);
		if (g <= 0)
			break;
		got += (size_t)g;
	}
}

int iperf3_stream_start(struct iperf3_stream *s, struct ll_err *err)
{
	int r;

	if (!s->len)
		s->len = IPERF3_DEFAULT_TCP_BLKSIZE;
	s->buf_shared = false;
	if (!s->udp && s->len <= IPERF3_MAX_BLOCKSIZE) {
		pthread_once(&shared_once, shared_init);
		s->buf = s->sender ? shared_tx : shared_rx;
		s->buf_shared = s->buf != NULL;
	}
	if (!s->buf_shared)
		s->buf = malloc(s->len);
	if (!s->buf)
		return ll_err_set(err, -ENOMEM, "stream %d: out of memory", s->id);
	if (s->sender && !s->buf_shared) {
		size_t got = 0;
		while (got < s->len) {
			ssize_t g = getrandom(s->buf + got, s->len - got, 0);
			if (g <= 0)
				break;
			got += (size_t)g;
		}
	}
	atomic_store(&s->bytes, 0);
	atomic_store(&s->error, 0);
	atomic_store(&s->packets, 0);
	atomic_store(&s->lost, 0);
	atomic_store(&s->outoforder, 0);
	atomic_store(&s->jitter_bits, 0);
	atomic_store(&s->dups, 0);
	atomic_store(&s->gso_segs, 1);
	atomic_store(&s->last_lost, 0);
	atomic_store(&s->finished, false);
	s->prev_transit = 0;
	s->mfd = -1;
	if (s->udp && s->len < (s->seq64 ? IPERF3_UDP_HDR + 4 : IPERF3_UDP_HDR)) {
		free(s->buf);
		s->buf = NULL;
		return ll_err_set(err, -EINVAL, "stream %d: UDP length %u < %d",
				  s->id, s->len, IPERF3_UDP_HDR);
	}

	if (s->zerocopy && s->sender && !s->udp) {
		/* -Z: the block lives in a memfd that sendfile(2) reads */
		s->mfd = memfd_create("linklab-zerocopy", MFD_CLOEXEC);
		if (s->mfd < 0 || write(s->mfd, s->buf, s->len) != (ssize_t)s->len) {
			int e = errno ? errno : EIO;
			if (s->mfd >= 0)
				close(s->mfd);
			s->mfd = -1;
			if (!s->buf_shared)
				free(s->buf);
			s->buf = NULL;
			return ll_err_set(err, -e, "stream %d: -Z memfd: %s", s->id,
					  strerror(e));
		}
	}
	if (s->udp && !s->sender && s->rcvbuf_boost) {
		/* 16 MiB: 13 ms at 10 Gbit/s, so a receiver that waits that
		 * long for a CPU drops nothing (4 MiB lost 1-4 % of a -b 10G
		 * stream on a loaded 2-core host, 16 MiB none); kernel memory,
		 * used only while datagrams wait, within the udp_mem limit */
		int want = 16 * 1024 * 1024;
		if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) < 0)
			setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	}
	r = pthread_create(&s->thread, NULL, stream_main, s);
	if (r) {
		if (s->mfd >= 0)
			close(s->mfd);
		s->mfd = -1;
		if (!s->buf_shared)
			free(s->buf);
		s->buf = NULL;
		return ll_err_set(err, -r, "stream %d: pthread_create: %s", s->id,
				  strerror(r));
	}
	s->running = true;
	return 0;
}

void iperf3_stream_join(struct iperf3_stream *s)
{
	if (s->running) {
		pthread_join(s->thread, NULL);
		s->running = false;
	}
	if (s->mfd > 0) {
		close(s->mfd);
		s->mfd = -1;
	}
	if (!s->buf_shared)
		free(s->buf);
	s->buf = NULL;
}
