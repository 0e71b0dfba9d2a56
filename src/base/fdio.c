/* SPDX-License-Identifier: MIT */
/* fdio.c - whole writes on a file descriptor (fdio.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linklab/base/fdio.h"

int fdio_write_all(int fd, const void *p, size_t n, bool sock)
{
	const char *c = p;

	while (n) {
		ssize_t w = sock ? send(fd, c, n, MSG_NOSIGNAL) : write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void fdio_child_detach(int out_fd)
{
	int nul = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	if (nul >= 0)
		dup2(nul, 0);
	dup2(out_fd, 1);
	dup2(out_fd, 2);
}

char *fdio_read_file(const char *path, size_t max, bool empty_null)
{
	FILE *f = fopen(path, "r");
	char *buf = f && max ? malloc(max) : NULL;
	size_t n = 0;

	if (buf) {
		n = fread(buf, 1, max - 1, f);
		buf[n] = '\0';
	}
	if (f)
		fclose(f);
	if (buf && !n && empty_null) {
		free(buf);
		buf = NULL;
	}
	return buf;
}
