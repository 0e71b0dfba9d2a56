/* SPDX-License-Identifier: MIT */
/* fixture.h - what the unit tests share (include after <cmocka.h>):
 *
 * LL_SKIP("fmt", ...): the one way a case says it cannot run here: prints
 * "SKIP: reason" and ends the case as skipped (cmocka's skip(); inside a
 * NETNS_CASE child the parent reports the skip). tests/run-unit.sh counts
 * the skipped cases.
 *
 * NETNS_CASE(fn, setup_sh): a cmocka case that runs fn in a forked child,
 * in a network namespace of its own (unshare(CLONE_NEWNET)) where the shell
 * command setup_sh (NULL: none) ran first. The namespace, its links, qdiscs
 * and per-namespace sysctls end with the child, so no case sees another's.
 * Not root, unshare failing or setup_sh failing: the case is skipped with
 * the reason. fn's assertions work as usual (the child runs fn under a
 * cmocka runner of its own and exits 0 passed, 1 failed, 77 skipped); its
 * stdout and stderr reach the parent's stdout without that runner's banner
 * lines. */
#ifndef LINKLAB_TEST_FIXTURE_H
#define LINKLAB_TEST_FIXTURE_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int ll_fixture_skipped;      /* the child's case called LL_SKIP */

#define LL_SKIP(...) do { \
		printf("SKIP: " __VA_ARGS__); printf("\n"); fflush(stdout); \
		ll_fixture_skipped = 1; skip(); \
	} while (0)

struct ll_netns_case {
	const char *name;
	CMUnitTestFunction fn;
	const char *setup_sh;
};

/* The child: namespace, setup, then fn under a one-case runner. */
static inline void ll_netns_child(const struct ll_netns_case *c)
{
	const struct CMUnitTest one[] = { { c->name, c->fn, NULL, NULL, NULL } };
	int rc;

	if (unshare(CLONE_NEWNET) < 0) {
		printf("SKIP: %s: unshare(CLONE_NEWNET): %s\n", c->name, strerror(errno));
		fflush(stdout);
		exit(77);
	}
	if (c->setup_sh && system(c->setup_sh) != 0) {
		printf("SKIP: %s: the namespace's setup failed: %s\n", c->name, c->setup_sh);
		fflush(stdout);
		exit(77);
	}
	rc = _cmocka_run_group_tests(c->name, one, 1, NULL, NULL);
	fflush(stdout);
	exit(rc ? 1 : ll_fixture_skipped ? 77 : 0);
}

/* Copy the child's stdout to ours, leaving out its runner's banners. */
static inline void ll_netns_relay(int fd)
{
	FILE *f = fdopen(fd, "r");
	char line[4096];

	if (!f) {
		close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "[==========]", 12) || !strncmp(line, "[ RUN      ]", 12) ||
		    !strncmp(line, "[       OK ]", 12) || !strncmp(line, "[  PASSED  ]", 12) ||
		    !strncmp(line, "[  SKIPPED ]", 12) || !strcmp(line, "\n") ||
		    strstr(line, " SKIPPED TEST(S)"))
			continue;
		fputs(line, stdout);
	}
	fclose(f);
	fflush(stdout);
}

static inline void ll_netns_run(void **state)
{
	const struct ll_netns_case *c = *state;
	int pfd[2], st = 0;
	pid_t pid;

	if (geteuid() != 0)
		LL_SKIP("%s: not root: a network namespace needs CAP_SYS_ADMIN", c->name);
	assert_int_equal(pipe(pfd), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		close(pfd[1]);
		ll_netns_child(c);
	}
	close(pfd[1]);
	ll_netns_relay(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		skip();
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s failed in its namespace (%s %d)", c->name,
			 WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

#define NETNS_CASE(f, setup) \
	{ #f, ll_netns_run, NULL, NULL, \
	  (void *)&(const struct ll_netns_case){ #f, f, setup } }

#endif
