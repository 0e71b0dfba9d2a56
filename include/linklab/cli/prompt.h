/* SPDX-License-Identifier: MIT */
/* prompt.h - the CLI's way to ask the operator during SSH authentication: a
 * key passphrase, a keyboard-interactive question, a password. Read from
 * /dev/tty (never stdin, which a script may own) with echo off for secrets
 * (termios ECHO cleared, restored afterwards). The console
 * passes its own prompt in sshcfg_opts instead. */
#ifndef LINKLAB_PROMPT_H
#define LINKLAB_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

/* ssh_prompt_fn for the CLI: write prompt to /dev/tty, read one line into
 * buf (len bytes, newline removed). ctx unused. 0, or -ENXIO when there is
 * no terminal (batch use: the method is skipped), -EINTR on Ctrl-C/EOF.
 * $LINKLAB_ASKPASS (a program, like SSH_ASKPASS) is run instead when set:
 * its first output line is the answer (tests, GUIs). */
int prompt_tty(void *ctx, const char *prompt, bool echo, char *buf,
		   size_t len);

#endif
