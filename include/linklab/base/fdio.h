/* SPDX-License-Identifier: MIT */
/* fdio.h - whole writes on a file descriptor; a child's standard streams. */
#ifndef LINKLAB_FDIO_H
#define LINKLAB_FDIO_H

#include <stdbool.h>
#include <stddef.h>

/* Write all n bytes of p to fd, again after a short write or EINTR. sock:
 * send(2) with MSG_NOSIGNAL (a closed peer gives EPIPE, not SIGPIPE), else
 * write(2). 0, or -1 with errno set (0 bytes written counts as failure). */
int fdio_write_all(int fd, const void *p, size_t n, bool sock);

/* The first max - 1 bytes of the file at path, NUL-terminated, malloc'd
 * (the caller frees). NULL when it cannot be opened, or (empty_null) is
 * empty. */
char *fdio_read_file(const char *path, size_t max, bool empty_null);

/* In a forked child before exec: its own process group and the terminal's
 * signals (SIGHUP, SIGINT, SIGQUIT) ignored - kept across exec, so a hang-up
 * that ends the parent does not cut the child's work short - stdin from
 * /dev/null, stdout and stderr to out_fd. */
void fdio_child_detach(int out_fd);

#endif
