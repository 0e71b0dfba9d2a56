/* SPDX-License-Identifier: MIT */
/* sshcfg.h - resolve a peer HOST the way OpenSSH does, by running `ssh -G`
 * (honouring -F FILE) and reading HostName, User, Port, IdentityFile,
 * IdentitiesOnly, UserKnownHostsFile, StrictHostKeyChecking, ProxyJump. */
#ifndef LINKLAB_SSHCFG_H
#define LINKLAB_SSHCFG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "linklab/base/err.h"

#define SSHCFG_MAX_FILES 8

/* Ask the operator something during authentication: a key passphrase
 * ("Enter passphrase for key FILE: "), a keyboard-interactive question or a
 * password ("user@host's password: "). echo: false for secrets. Write the
 * answer, NUL-terminated, into buf (len bytes; the caller wipes it after
 * use, it is never stored). Return 0, or a negative value to cancel (the
 * method is then skipped). The CLI reads /dev/tty without echo
 * (src/cli/prompt.c); the console passes its own. */
typedef int (*ssh_prompt_fn)(void *ctx, const char *prompt, bool echo,
			     char *buf, size_t len);

struct ssh_target {
	char alias[256];          /* what the user typed */
	char hostname[256];       /* HostName */
	char user[64];            /* User */
	int port;                 /* Port, default 22 */
	int nidentity;
	char identity[SSHCFG_MAX_FILES][PATH_MAX];     /* IdentityFile, ~ expanded */
	int nknown;
	char known_hosts[SSHCFG_MAX_FILES][PATH_MAX];  /* UserKnownHostsFile */
	char strict[16];          /* StrictHostKeyChecking: yes|no|accept-new|ask */
	bool accept_new;          /* --accept-new given on the command line */
	char proxyjump[256];      /* ProxyJump ("" or "none" = direct) */
	/* how passphrases and passwords are asked */
	ssh_prompt_fn prompt;     /* NULL: the process default
				   * (ssh_set_default_prompt), else no prompt */
	void *prompt_ctx;
	char config_file[PATH_MAX];  /* -F FILE ("" = default), for the
				      * ProxyJump helper */
	bool identities_only;     /* IdentitiesOnly yes: of the agent's keys
				   * only those of an IdentityFile are offered */
	int connect_timeout_ms;   /* bound on connect, handshake and each
				   * authentication step (ms), 0 -> 10000 */
};

struct sshcfg_opts {
	const char *config_file;  /* -F FILE, NULL = default */
	const char *key_file;     /* --ssh-key FILE: tried first */
	const char *known_hosts;  /* --known-hosts FILE: replaces the list */
	bool accept_new;          /* --accept-new */
	/* the prompt, copied into ssh_target */
	ssh_prompt_fn prompt;
	void *prompt_ctx;
};

/* Resolve host ("alias", "user@host", "host:port", "user@host:port") into t.
 * -ENOENT if ssh is not installed or --ssh-key names a file that cannot be
 * read, -EINVAL if ssh -G rejects the name or the config (its stderr in
 * err). */
int sshcfg_resolve(const char *host, const struct sshcfg_opts *o,
		   struct ssh_target *t, struct ll_err *err);

#endif
