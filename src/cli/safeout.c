/* SPDX-License-Identifier: MIT */
/* safeout.c - stdout and stderr through text_sanitize_n: whatever a command
 * prints (a peer's interface name, a server's error text, a profile's
 * description) reaches the terminal with control bytes and invalid UTF-8
 * shown as \xNN. Newlines and tabs pass. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linklab/base/fdio.h"
#include "linklab/base/text.h"
#include "linklab/cli/safeout.h"

struct safeout {
	int fd;
	size_t npend;              /* bytes of a cut UTF-8 sequence */
	char pend[4];
};

static struct safeout safeout_fd[2] = { { .fd = 1 }, { .fd = 2 } };

/* Sanitize n bytes of s (after the pending ones) onto fd. */
static ssize_t safeout_write(void *cookie, const char *s, size_t n)
{
	struct safeout *so = cookie;
	char in[1028], out[4 * sizeof(in) + 1];
	size_t done = 0;

	while (done < n) {
		size_t take = n - done, m, used;

		if (take > sizeof(in) - so->npend)
			take = sizeof(in) - so->npend;
		memcpy(in, so->pend, so->npend);
		memcpy(in + so->npend, s + done, take);
		m = so->npend + take;
		used = text_sanitize_n(in, m, out, sizeof(out),
				       TEXT_KEEP_NL | TEXT_PARTIAL);
		if (fdio_write_all(so->fd, out, strlen(out), false) < 0)
			return done ? (ssize_t)done : -1;
		so->npend = m - used;           /* <= 3: a cut sequence */
		memcpy(so->pend, in + used, so->npend);
		done += take;
	}
	return (ssize_t)n;
}

static int safeout_close(void *cookie)
{
	struct safeout *so = cookie;
	char out[32];

	if (so->npend) {
		text_sanitize_n(so->pend, so->npend, out, sizeof(out), TEXT_KEEP_NL);
		so->npend = 0;
		return fdio_write_all(so->fd, out, strlen(out), false);
	}
	return 0;
}

static FILE *safeout_open(struct safeout *so, int mode)
{
	cookie_io_functions_t io = { .write = safeout_write, .close = safeout_close };
	FILE *f = fopencookie(so, "w", io);

	if (f)
		setvbuf(f, NULL, mode, mode == _IONBF ? 0 : BUFSIZ);
	return f;
}

void safeout_install(int with_stdout)
{
	FILE *f;

	if (with_stdout) {
		fflush(stdout);
		f = safeout_open(&safeout_fd[0], isatty(1) ? _IOLBF : _IOFBF);
		if (f)
			stdout = f;
	}
	fflush(stderr);
	f = safeout_open(&safeout_fd[1], _IONBF);
	if (f)
		stderr = f;
}
