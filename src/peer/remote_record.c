/* SPDX-License-Identifier: MIT */
/* remote_record.c - put back, on B itself, what a remote apply recorded
 * (remote_record.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linklab/base/fdio.h"
#include "linklab/peer/remote_record.h"
#include "linklab/remote/tccmd.h"
#include "linklab/remote/tctree.h"

#define RR_DIR "/run/linklab"       /* where peer_remote.c keeps them */
#define RR_CMD (64 * 1024)
#define RR_OUT (256 * 1024)

static void rr_path(uint64_t netns, const char *dev, const char *ext, char *buf,
		    size_t len)
{
	snprintf(buf, len, RR_DIR "/remote-%" PRIu64 "-%s.%s", netns, dev, ext);
}

int remote_record_exists(uint64_t netns, const char *dev)
{
	char p[256];

	rr_path(netns, dev, "tc.json", p, sizeof(p));
	return access(p, F_OK) == 0;
}

/* sh -c cmd, stdout and stderr into *out (malloc'd, may be NULL). Its exit
 * status, or -errno. The shell ignores the terminal's signals: a hang-up
 * that ends linklab does not cut a restore short. */
static int sh_run(const char *cmd, char **out)
{
	int pfd[2], st = 0;
	size_t n = 0;
	char *buf = malloc(RR_OUT);
	pid_t pid;

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		free(buf);
		return -errno;
	}
	if (pid == 0) {
		fdio_child_detach(pfd[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t r = read(pfd[0], buf + n, RR_OUT - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (n += (size_t)r) >= RR_OUT - 1)
			break;
	}
	buf[n] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* rm of the record's files and kill of a revert timer still armed for it
 * (its argv names the record and ends "linklab-revert"). */
static void drop_files(uint64_t netns, const char *dev)
{
	static const char *const ext[] = { "tc.json", "applied", "ifb", "revert", NULL };
	char p[256], q[300], cmd[800];
	char *o = NULL;
	int i;

	rr_path(netns, dev, "tc.json", p, sizeof(p));
	snprintf(cmd, sizeof(cmd), "%s.* linklab-revert$", p);
	if (tccmd_quote(cmd, q, sizeof(q)) == 0) {
		snprintf(cmd, sizeof(cmd), "for p in $(pgrep -f -- %s); do kill $p; done; true", q);
		sh_run(cmd, &o);
		free(o);
	}
	for (i = 0; ext[i]; i++) {
		rr_path(netns, dev, ext[i], p, sizeof(p));
		unlink(p);
	}
}

/* The restore command: the IFB device a remote ingress dial made (named in
 * the .ifb marker) goes, then tctree's commands put the tree back. */
static int restore_command(uint64_t netns, const char *dev, const char *rec, char *cmd,
			   size_t len, struct ll_err *err)
{
	char p[256], q[64], *ifb;

	cmd[0] = '\0';
	rr_path(netns, dev, "ifb", p, sizeof(p));
	ifb = fdio_read_file(p, RR_OUT, true);
	if (ifb) {
		ifb[strcspn(ifb, " \n")] = '\0';
		if (ifb[0] && tccmd_quote(ifb, q, sizeof(q)) == 0)
			snprintf(cmd, len, "{ ip link del %s 2>/dev/null; true; } && ", q);
		free(ifb);
	}
	return tctree_restore_cmd(dev, rec, cmd + strlen(cmd), len - strlen(cmd), err);
}

int remote_record_restore(uint64_t netns, const char *dev, int ifindex, const char *mac,
			  char *note, size_t nlen, struct ll_err *err)
{
	char p[256], why[300], rmac[64] = "", *rec, *cmd = NULL, *o = NULL, *back;
	int rifi = 0, rc;

	note[0] = '\0';
	rr_path(netns, dev, "tc.json", p, sizeof(p));
	rec = fdio_read_file(p, RR_OUT, true);
	if (!rec)
		return ll_err_set(err, -EIO, "%s: record %s is empty or unreadable; nothing "
				  "restored", dev, p);
	if (tctree_identity(rec, &rifi, rmac, sizeof(rmac)) == 0 &&
	    ((ifindex > 0 && rifi > 0 && rifi != ifindex) ||
	     (mac && mac[0] && rmac[0] && strcasecmp(mac, rmac) != 0))) {
		snprintf(note, nlen, "%s: record %s of a remote apply is of another interface "
			 "(ifindex %d, address %s; now %d, %s): dropped, nothing restored",
			 dev, p, rifi, rmac, ifindex, mac ? mac : "");
		drop_files(netns, dev);
		free(rec);
		return 0;
	}
	cmd = malloc(RR_CMD);
	rc = cmd ? restore_command(netns, dev, rec, cmd, RR_CMD, err)
		 : ll_err_set(err, -ENOMEM, "out of memory");
	if (rc == 0 && (rc = sh_run(cmd, &o)) != 0)
		rc = ll_err_set(err, -EIO, "%s: putting back the record %s failed (exit %d): "
				"%.200s; record kept", dev, p, rc, o ? o : "");
	free(o);
	o = NULL;
	/* read back: the tree now, compared with the record */
	if (rc == 0 && tctree_record_cmd(dev, cmd, RR_CMD) == 0 && sh_run(cmd, &o) == 0) {
		back = o;
		if (tctree_diff(rec, back, why, sizeof(why)) != 0)
			rc = ll_err_set(err, -EIO, "%s: the restored tree does not read back as "
					"recorded in %s: %s; record kept", dev, p, why);
	} else if (rc == 0) {
		rc = ll_err_set(err, -EIO, "%s: cannot read back the restored tree; record %s "
				"kept", dev, p);
	}
	if (rc == 0) {
		snprintf(note, nlen, "%s: restored from the record a remote apply left (%s)",
			 dev, p);
		drop_files(netns, dev);
	}
	free(o);
	free(cmd);
	free(rec);
	return rc;
}
