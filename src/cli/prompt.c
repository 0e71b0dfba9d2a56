/* SPDX-License-Identifier: MIT */
/* prompt.c - ask the operator on /dev/tty (or through $LINKLAB_ASKPASS)
 * for a passphrase or password during SSH authentication; echo off for
 * secrets (termios(3)). */
#include "linklab/base/text.h"
#include "linklab/cli/prompt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* Run $LINKLAB_ASKPASS PROMPT (no shell) and read its first line. */
static int askpass(const char *prog, const char *prompt, char *buf, size_t len)
{
	int pfd[2], st = 0;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		execlp(prog, prog, prompt, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (n + 1 < len && (r = read(pfd[0], buf + n, len - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n += (size_t)r;
	}
	close(pfd[0]);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		explicit_bzero(buf, len);
		return -EINTR;
	}
	return 0;
}

int prompt_tty(void *ctx, const char *prompt, bool echo, char *buf,
		   size_t len)
{
	struct termios old, quiet;
	const char *ap = getenv("LINKLAB_ASKPASS");
	FILE *tty;
	bool restore = false;
	int rc = 0;

	(void)ctx;
	if (!buf || len < 2)
		return -EINVAL;
	buf[0] = '\0';
	if (ap && *ap)
		return askpass(ap, prompt, buf, len);
	tty = fopen("/dev/tty", "r+e");
	if (!tty)
		return -ENXIO;
	if (!echo && tcgetattr(fileno(tty), &old) == 0) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		quiet.c_lflag |= ECHONL;
		restore = tcsetattr(fileno(tty), TCSAFLUSH, &quiet) == 0;
	}
	{
		/* the prompt text may come from the server (keyboard-interactive) */
		char safe[1024];

		text_sanitize_n(prompt, strlen(prompt), safe, sizeof(safe), TEXT_KEEP_NL);
		fputs(safe, tty);
	}
	fflush(tty);
	if (!fgets(buf, (int)len, tty)) {
		rc = -EINTR;
		buf[0] = '\0';
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	if (restore)
		tcsetattr(fileno(tty), TCSAFLUSH, &old);
	fclose(tty);
	return rc;
}
