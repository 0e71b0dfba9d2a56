/* SPDX-License-Identifier: MIT */
/* fdio.c - whole writes on a file descriptor (fdio.h). */
#include <errno.h>
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
