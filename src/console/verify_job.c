/* SPDX-License-Identifier: MIT */
/* verify_job.c - a `linklab verify -J` child for the console (verify_job.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linklab/console/verify_job.h"

#define VJ_MAX_OUT (256 * 1024)

struct verify_job {
	pid_t pid;
	int out, errfd;             /* read ends, -1 when closed */
	char *buf, ebuf[LL_ERR_MAX];
	size_t len, cap, elen;
	struct timespec t0;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int verify_job_start(struct verify_job **out, char *const argv[],
		     struct ll_err *err)
{
	struct verify_job *j = calloc(1, sizeof(*j));
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 };

	*out = NULL;
	if (!j)
		return ll_err_set(err, -ENOMEM, "verify: out of memory");
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		goto fail;
	j->pid = fork();
	if (j->pid < 0)
		goto fail;
	if (j->pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		setpgid(0, 0);      /* Ctrl-C on the console's tty: not ours */
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	j->out = po[0];
	j->errfd = pe[0];
	fcntl(j->out, F_SETFL, O_NONBLOCK);
	fcntl(j->errfd, F_SETFL, O_NONBLOCK);
	clock_gettime(CLOCK_MONOTONIC, &j->t0);
	*out = j;
	return 0;
fail:
	{
		int e = errno;
		for (int i = 0; i < 2; i++) {
			if (po[i] >= 0)
				close(po[i]);
			if (pe[i] >= 0)
				close(pe[i]);
		}
		free(j);
		return ll_err_set(err, -e, "verify: cannot start %s: %s", argv[0],
				  strerror(e));
	}
}

int verify_job_fd(const struct verify_job *j)
{
	return j ? (j->out >= 0 ? j->out : j->errfd) : -1;
}

const char *verify_job_output(const struct verify_job *j)
{
	return j && j->buf ? j->buf : "";
}

double verify_job_age(const struct verify_job *j)
{
	return j ? now_s() - ((double)j->t0.tv_sec + j->t0.tv_nsec / 1e9) : 0;
}

/* Drain fd into the buffer; closes it at EOF. */
static void drain(struct verify_job *j, int *fd, bool is_err)
{
	char tmp[4096];
	ssize_t n;

	while (*fd >= 0 && (n = read(*fd, tmp, sizeof(tmp))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			break;
		}
		if (is_err) {
			size_t k = (size_t)n < sizeof(j->ebuf) - 1 - j->elen ?
				   (size_t)n : sizeof(j->ebuf) - 1 - j->elen;
			memcpy(j->ebuf + j->elen, tmp, k);
			j->elen += k;
			j->ebuf[j->elen] = '\0';
			continue;
		}
		if (j->len + (size_t)n + 1 > j->cap) {
			size_t cap = j->cap ? j->cap * 2 : 8192;
			char *b;
			while (cap < j->len + (size_t)n + 1)
				cap *= 2;
			if (cap > VJ_MAX_OUT || !(b = realloc(j->buf, cap)))
				break;
			j->buf = b;
			j->cap = cap;
		}
		memcpy(j->buf + j->len, tmp, (size_t)n);
		j->len += (size_t)n;
		j->buf[j->len] = '\0';
	}
	close(*fd);
	*fd = -1;
}

static void row_from_json(struct verify_row *r, const cJSON *o)
{
	const cJSON *v;

	memset(r, 0, sizeof(*r));
#define STR(k, dst) if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(o, k))) \
	snprintf(dst, sizeof(dst), "%s", v->valuestring)
#define NUM(k, dst) if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, k))) \
	dst = v->valuedouble
	STR("quantity", r->quantity);
	STR("direction", r->direction);
	STR("unit", r->unit);
	STR("detail", r->detail);
	NUM("dialled", r->dialled);
	NUM("measured", r->measured);
	NUM("error", r->error);
#undef STR
#undef NUM
	r->measurable = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "measurable"));
	r->ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"));
	v = cJSON_GetObjectItemCaseSensitive(o, "tolerance");
	if (cJSON_GetArraySize(v) == 2) {
		r->tol_lo = cJSON_GetArrayItem(v, 0)->valuedouble;
		r->tol_hi = cJSON_GetArrayItem(v, 1)->valuedouble;
	}
}

int verify_job_parse(const char *json, struct verify_job_result *res)
{
	cJSON *doc = json ? cJSON_Parse(json) : NULL;
	const cJSON *checks, *c, *e;

	memset(res, 0, sizeof(*res));
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		snprintf(res->error, sizeof(res->error), "verify printed no JSON document");
		return -EINVAL;
	}
	res->ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"));
	e = cJSON_GetObjectItemCaseSensitive(doc, "error");
	if (cJSON_IsString(e))
		snprintf(res->error, sizeof(res->error), "%s", e->valuestring);
	checks = cJSON_GetObjectItemCaseSensitive(doc, "checks");
	cJSON_ArrayForEach(c, checks) {
		if (res->rep.n >= VERIFY_MAX_ROWS)
			break;
		row_from_json(&res->rep.r[res->rep.n++], c);
	}
	cJSON_Delete(doc);
	return 0;
}

static void reap(struct verify_job *j, int *status)
{
	*status = -1;
	if (j->pid > 0 && waitpid(j->pid, status, 0) == j->pid)
		j->pid = 0;
}

int verify_job_pump(struct verify_job *j, struct verify_job_result *res)
{
	int status;

	drain(j, &j->out, false);
	drain(j, &j->errfd, true);
	if (j->out >= 0 || j->errfd >= 0)
		return 0;
	reap(j, &status);
	if (verify_job_parse(j->buf, res) < 0 && j->elen) {
		/* no document: the child's own words (first line) */
		char *nl = strchr(j->ebuf, '\n');
		if (nl)
			*nl = '\0';
		snprintf(res->error, sizeof(res->error), "%s", j->ebuf);
	} else if (!res->error[0] && WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		snprintf(res->error, sizeof(res->error), "verify refused its options");
	}
	return 1;
}

void verify_job_free(struct verify_job *j)
{
	if (!j)
		return;
	if (j->pid > 0) {
		kill(j->pid, SIGTERM);
		for (int i = 0; i < 20 && waitpid(j->pid, NULL, WNOHANG) == 0; i++)
			poll(NULL, 0, 50);
		if (waitpid(j->pid, NULL, WNOHANG) == 0) {
			kill(j->pid, SIGKILL);
			waitpid(j->pid, NULL, 0);
		}
	}
	if (j->out >= 0)
		close(j->out);
	if (j->errfd >= 0)
		close(j->errfd);
	free(j->buf);
	free(j);
}
