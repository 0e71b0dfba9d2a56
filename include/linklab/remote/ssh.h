/* SPDX-License-Identifier: MIT */
/* ssh.h - one libssh2 session per peer: connect with a timeout, verify the
 * host key against every known_hosts file (OpenSSH rules, ssh(1) "VERIFYING
 * HOST KEYS"), authenticate (agent, then each IdentityFile), run commands on
 * exec channels and keep one long-running command (the test server) open.
 * src/remote/ssh.c is the only file that includes <libssh2.h>. Engines: never print,
 * return 0 or a negative errno code with err filled.
 * A session is not thread-safe (libssh2 rule): use it from one thread at a
 * time. Waits are poll() on the socket in the directions libssh2 asks for
 * (libssh2_session_block_directions), each bounded by its timeout. */
#ifndef LINKLAB_SSH_H
#define LINKLAB_SSH_H

#include <stdbool.h>
#include <stddef.h>

#include "linklab/base/err.h"
#include "linklab/remote/sshcfg.h"

struct ssh_session;
struct ssh_proc;

/* Authentication falls through, each only when the server offers
 * it: agent (SSH_AUTH_SOCK) -> each IdentityFile (passphrase asked through
 * t->prompt, else the default prompt, up to 3 tries) -> keyboard-interactive
 * -> password (asked, wiped after use, never stored). -EACCES names every
 * method and key type tried.
 * Connect to t->hostname:t->port (getaddrinfo, every address tried in turn,
 * connect/handshake/auth bounded by timeout_ms, 0 -> 10000 ms), check the
 * host key, authenticate as t->user.
 * Host key: known -> continue; changed -> -EPERM "HOST KEY FOR h HAS
 * CHANGED"; unknown -> -EPERM with the SHA256 fingerprint and a hint, unless
 * t->accept_new or t->strict is "accept-new"/"no": then the key is appended
 * (OpenSSH format, "[host]:port" when port != 22) to t->known_hosts[0].
 * Errors: -EHOSTUNREACH/-ECONNREFUSED/-ETIMEDOUT (connect), -EPROTO
 * (handshake), -EACCES (no auth method worked: each key tried is named),
 * ProxyJump: the stream to host:port comes from OpenSSH's
 * `ssh [-F t->config_file] -W host:port [-J earlier,jumps] LASTJUMP` over a
 * socketpair (jump hosts authenticate as the user's ssh does); host key and
 * authentication of the peer itself stay ours. ssh_addrs() then fails
 * (-EINVAL: no TCP socket of ours). */
int ssh_open(struct ssh_session **out, const struct ssh_target *t,
	     int timeout_ms, struct ll_err *err);

/* Close the session (and any open spawn channels); NULL is a no-op. */
void ssh_close(struct ssh_session *s);

/* "user@host:port" of the session, for messages. */
const char *ssh_name(const struct ssh_session *s);

/* Run cmd (one POSIX shell command line, quoted by the caller) as
 * `sh -c CMD </dev/null` in the session's persistent /bin/sh (one channel
 * opened at the first command: a command then costs one round trip, no
 * channel or login-shell start-up), followed by a status marker on stdout
 * and an end tag on stderr, both numbered per command and cut off the
 * output. If that shell cannot be started, a new exec channel per command
 * (libssh2 1.10 reports a missing exit-status as 0; the marker tells them
 * apart). After a timeout or error the shell is dropped and restarted. Read stdout and stderr to EOF and the exit status, all
 * within timeout_ms (0 -> 30000). *out and *err_text (either may be NULL) get
 * malloc'ed NUL-terminated text (caller frees; up to 4 MiB each, more is
 * discarded). *exit_status gets the remote exit code. Returns 0 when the
 * command ran (whatever its exit status), -ETIMEDOUT, -EIO (session or
 * channel error, libssh2 text in err) or -EPROTO (the remote shell was
 * killed or sent no status: treated as a failure). */
int ssh_exec(struct ssh_session *s, const char *cmd, char **out,
	     char **err_text, int *exit_status, int timeout_ms,
	     struct ll_err *err);

/* Start cmd on its own exec channel and leave it running. */
int ssh_spawn(struct ssh_session *s, const char *cmd, struct ssh_proc **out,
	      struct ll_err *err);

/* Read one line of the spawned command's stdout (without '\n') into line
 * within timeout_ms. Returns the line length (>= 0), -ENODATA at EOF (the
 * command ended; its stderr text in err), -ETIMEDOUT, or -EIO. */
int ssh_spawn_readline(struct ssh_proc *p, char *line, size_t len,
		       int timeout_ms, struct ll_err *err);

/* Write all of data (len bytes) to the spawned command's stdin within
 * timeout_ms (0 -> 5000). 0, -ETIMEDOUT or -EIO. */
int ssh_spawn_write(struct ssh_proc *p, const char *data, size_t len,
		    int timeout_ms, struct ll_err *err);

/* Close the spawned command's channel (sends EOF, does not wait for it to
 * end: kill it first through ssh_exec if needed). NULL is a no-op. */
void ssh_spawn_close(struct ssh_proc *p);

/* Does the peer still answer? Runs `true` with a 5 s bound. 0 or negative
 * errno code. */
int ssh_alive(struct ssh_session *s, struct ll_err *err);

/* Send a keepalive if due (every 15 s, libssh2_keepalive_send) and read
 * what the server sent meanwhile (its own keepalive requests are answered
 * only while libssh2 reads: call this at least every *next_s seconds, and
 * when ssh_fd() is readable while idle). *next_s gets the seconds until the
 * next one is due. 0, or -EIO when the session is gone. */
int ssh_keepalive(struct ssh_session *s, int *next_s, struct ll_err *err);

/* Has a command on s timed out (ssh_exec -ETIMEDOUT: the peer's sshd or
 * the command stopped answering)? From then on ssh_exec and ssh_spawn
 * fail at once with -ETIMEDOUT ("not answering"), and closing channels or
 * the session sends what it must without waiting for replies, so a
 * stalled peer costs one bound, not one per command. */
bool ssh_stalled(const struct ssh_session *s);

/* The TCP socket (for the caller's poll loop), -1 if closed. */
int ssh_fd(const struct ssh_session *s);

/* --- host names in known_hosts and messages (pure) --- */

/* The name OpenSSH gives host at port in known_hosts and in ssh-keyscan's
 * output (sshd(8), SSH_KNOWN_HOSTS FILE FORMAT): the bare host on port 22
 * (or port <= 0), else "[host]:port", an IPv6 address too
 * ("[fd00::2]:2222"). */
void ssh_known_host(const char *host, int port, char *buf, size_t len);

/* "user@host:port" for messages, an IPv6 address in brackets so that the
 * port stays apart ("root@[fd00::2]:22"); user NULL or "": "host:port";
 * port <= 0: 22. */
void ssh_host_name(const char *user, const char *host, int port, char *buf,
		   size_t len);

/* The advice for an unknown host key, as commands a user can paste:
 * "Check the fingerprint (ssh-keyscan [-p PORT] HOST | ssh-keygen -lf -),
 * then connect once with --accept-new (or ssh ...)": `ssh [-F FILE] ALIAS`
 * for an ssh_config alias, `ssh [-p PORT] USER@HOST` for an address
 * (ssh takes an IPv6 address bare there; ssh-keyscan prints the entry as
 * known_hosts names it, "[addr]:port" off port 22). */
void ssh_unknown_hint(const struct ssh_target *t, char *buf, size_t len);

/* --- prompts, key checks and spawned commands --- */

/* The prompt used when a target carries none (the CLI installs its tty
 * reader here; engines never read the terminal themselves). NULL = none:
 * encrypted keys, keyboard-interactive and password are then skipped and
 * named as such in the failure. */
void ssh_set_default_prompt(ssh_prompt_fn fn, void *ctx);

/* Numeric addresses of the session's TCP socket: this end (local, *lport)
 * and the peer's (peer, *pport); IPv4-mapped IPv6 shown as IPv4. 0,
 * -ENOTCONN or -errno (getsockname/getpeername). */
int ssh_addrs(const struct ssh_session *s, char *local, size_t llen,
	      int *lport, char *peer, size_t plen, int *pport);

/* Key type and encryption of an OpenSSH private key file, read without the
 * passphrase: the "openssh-key-v1" container (OpenSSH PROTOCOL.key:
 * ciphername "none" = plain; the public key blob names the type, e.g.
 * "ssh-ed25519") or a PEM file ("RSA"/"EC"/"DSA" armour, "ENCRYPTED").
 * type gets "unknown" when unreadable. 0, -errno (open) or -EINVAL. */
int ssh_key_info(const char *path, char *type, size_t len, bool *encrypted);

#endif
