/* SPDX-License-Identifier: MIT */
/* test_sshcfg.c - sshcfg_resolve against a temporary ssh config (runs the
 * real `ssh -G`; skips if the OpenSSH client is missing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linklab/remote/sshcfg.h"

static char cfg_path[64];
static char bad_path[64];

static int setup(void **state)
{
	int fd;
	FILE *f;

	(void)state;
	snprintf(cfg_path, sizeof(cfg_path), "/tmp/ll-sshcfg-XXXXXX");
	fd = mkstemp(cfg_path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fprintf(f, "Host peer-x\n"
		   "  HostName 10.9.8.7\n"
		   "  User alice\n"
		   "  Port 2222\n"
		   "  IdentityFile ~/keys/lab_key\n"
		   "  IdentityFile /etc/lab/second\n"
		   "  UserKnownHostsFile /tmp/kh-one ~/kh-two\n"
		   "  StrictHostKeyChecking accept-new\n"
		   "Host strict-y\n"
		   "  HostName 10.9.8.8\n"
		   "  StrictHostKeyChecking yes\n"
		   "  IdentitiesOnly yes\n"
		   "Host tok\n"
		   "  HostName 10.1.1.1\n"
		   "  User zed\n"
		   "  Port 2200\n"
		   "  IdentityFile ~/.ssh/%%h_%%r_%%p\n"
		   "  IdentityFile %%d/k_%%n_%%%%\n"
		   "Host *\n"
		   "  IdentityFile /etc/lab/default\n");
	fclose(f);
	snprintf(bad_path, sizeof(bad_path), "/tmp/ll-sshbad-XXXXXX");
	fd = mkstemp(bad_path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fprintf(f, "Host x\n  NoSuchOption yes\n");
	fclose(f);
	setenv("HOME", "/home/tester", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(cfg_path);
	unlink(bad_path);
	return 0;
}

static void need_ssh(void)
{
	if (access("/usr/bin/ssh", X_OK) != 0 && system("command -v ssh >/dev/null 2>&1") != 0) {
		LL_SKIP("OpenSSH client (ssh) not installed");
	}
}

static void test_alias(void **state)
{
	struct ssh_target t;
	struct sshcfg_opts o = {.config_file = cfg_path};
	struct ll_err err = {0};

	(void)state;
	need_ssh();
	assert_int_equal(sshcfg_resolve("peer-x", &o, &t, &err), 0);
	assert_string_equal(t.alias, "peer-x");
	assert_string_equal(t.hostname, "10.9.8.7");
	assert_string_equal(t.user, "alice");
	assert_int_equal(t.port, 2222);
	assert_true(t.nidentity >= 3);
	assert_string_equal(t.identity[0], "/home/tester/keys/lab_key");
	assert_string_equal(t.identity[1], "/etc/lab/second");
	assert_string_equal(t.identity[2], "/etc/lab/default");
	assert_false(t.identities_only);     /* ssh -G: "identitiesonly no" */
	assert_true(t.nknown >= 2);
	assert_string_equal(t.known_hosts[0], "/tmp/kh-one");
	/* ssh -G expands ~ here itself (from the passwd entry) */
	assert_non_null(strstr(t.known_hosts[1], "/kh-two"));
	assert_true(t.known_hosts[1][0] == '/');
	assert_string_equal(t.strict, "accept-new");
	assert_false(t.accept_new);
}

static int fake_prompt(void *ctx, const char *prompt, bool echo, char *buf,
		       size_t len)
{
	(void)ctx; (void)prompt; (void)echo; (void)buf; (void)len;
	return -1;
}

static void test_opts_override(void **state)
{
	struct ssh_target t;
	char key[64];
	int fd;
	struct sshcfg_opts o = {.config_file = cfg_path, .key_file = key,
				.known_hosts = "/tmp/only_kh", .accept_new = true,
				.prompt = fake_prompt, .prompt_ctx = cfg_path};
	struct ll_err err = {0};

	(void)state;
	need_ssh();
	snprintf(key, sizeof(key), "/tmp/ll-sshkey-XXXXXX");
	fd = mkstemp(key);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sshcfg_resolve("peer-x", &o, &t, &err), 0);
	/* -F travels with the target (the ProxyJump helper needs it) */
	assert_string_equal(t.config_file, cfg_path);
	/* the prompt callback travels with the target */
	assert_ptr_equal(t.prompt, fake_prompt);
	assert_ptr_equal(t.prompt_ctx, cfg_path);
	/* --ssh-key first, then the config's identities */
	assert_string_equal(t.identity[0], key);
	unlink(key);
	/* a --ssh-key that cannot be read is an error, not silently skipped */
	assert_int_equal(sshcfg_resolve("peer-x", &o, &t, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "--ssh-key"));
	assert_non_null(strstr(err.msg, key));
	assert_non_null(strstr(err.msg, "No such file"));
	o.key_file = "~/my.key";   /* HOME=/home/tester: not there either */
	assert_int_equal(sshcfg_resolve("peer-x", &o, &t, &err), -ENOENT);
	o.key_file = NULL;
	assert_int_equal(sshcfg_resolve("peer-x", &o, &t, &err), 0);
	assert_string_equal(t.identity[0], "/home/tester/keys/lab_key");
	o.key_file = key;
	/* --known-hosts replaces the list */
	assert_int_equal(t.nknown, 1);
	assert_string_equal(t.known_hosts[0], "/tmp/only_kh");
	assert_true(t.accept_new);
}

static void test_strict_yes(void **state)
{
	struct ssh_target t;
	struct sshcfg_opts o = {.config_file = cfg_path};

	(void)state;
	need_ssh();
	assert_int_equal(sshcfg_resolve("strict-y", &o, &t, NULL), 0);
	assert_string_equal(t.hostname, "10.9.8.8");
	assert_int_equal(t.port, 22);
	/* ssh -G prints "true" for yes */
	assert_string_equal(t.strict, "yes");
	/* IdentitiesOnly yes: only IdentityFile keys of the agent are offered */
	assert_true(t.identities_only);
}

static void test_tokens(void **state)
{
	struct ssh_target t;
	struct sshcfg_opts o = {.config_file = cfg_path};
	struct ll_err err = {0};

	(void)state;
	need_ssh();
	assert_int_equal(sshcfg_resolve("tok", &o, &t, &err), 0);
	/* ssh -G leaves IdentityFile tokens unexpanded; we expand them */
	assert_string_equal(t.identity[0], "/home/tester/.ssh/10.1.1.1_zed_2200");
	assert_string_equal(t.identity[1], "/home/tester/k_tok_%");
}

static void test_user_host_port(void **state)
{
	struct ssh_target t;
	struct sshcfg_opts o = {.config_file = cfg_path};
	struct ll_err err = {0};

	(void)state;
	need_ssh();
	assert_int_equal(sshcfg_resolve("bob@192.0.2.5:2022", &o, &t, &err), 0);
	assert_string_equal(t.alias, "bob@192.0.2.5:2022");
	assert_string_equal(t.hostname, "192.0.2.5");
	assert_string_equal(t.user, "bob");
	assert_int_equal(t.port, 2022);
	assert_int_equal(sshcfg_resolve("carol@[fd99::2]:2200", &o, &t, &err), 0);
	assert_string_equal(t.hostname, "fd99::2");
	assert_string_equal(t.user, "carol");
	assert_int_equal(t.port, 2200);
	assert_int_equal(sshcfg_resolve("fd99::2", &o, &t, &err), 0);
	assert_string_equal(t.hostname, "fd99::2");
	assert_int_equal(t.port, 22);
	/* the alias's settings still apply when user@ is given */
	assert_int_equal(sshcfg_resolve("root@peer-x", &o, &t, &err), 0);
	assert_string_equal(t.hostname, "10.9.8.7");
	assert_string_equal(t.user, "root");
	assert_int_equal(t.port, 2222);
}

static void test_bad_forms(void **state)
{
	struct ssh_target t;
	struct sshcfg_opts o = {.config_file = cfg_path};
	struct ll_err err = {0};

	(void)state;
	assert_int_equal(sshcfg_resolve("host:99999", &o, &t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "host:99999"));
	assert_non_null(strstr(err.msg, "port after ':' must be a number 1..65535"));
	assert_int_equal(sshcfg_resolve("@host", &o, &t, &err), -EINVAL);
	assert_int_equal(sshcfg_resolve("-oProxyCommand=x", &o, &t, &err), -EINVAL);
	assert_int_equal(sshcfg_resolve("", &o, &t, &err), -EINVAL);
}

static void test_bad_config(void **state)
{
	struct ssh_target t;
	struct sshcfg_opts o = {.config_file = bad_path};
	struct sshcfg_opts missing = {.config_file = "/nonexistent/ll_cfg"};
	struct ll_err err = {0};

	(void)state;
	need_ssh();
	assert_int_equal(sshcfg_resolve("x", &o, &t, &err), -EINVAL);
	/* ssh's own complaint is passed on, with the file name */
	assert_non_null(strstr(err.msg, "Bad configuration option"));
	assert_non_null(strstr(err.msg, bad_path));
	assert_int_equal(sshcfg_resolve("x", &missing, &t, &err), -EINVAL);
	/* "ssh -G -F FILE HOST": a space between the file and the host */
	assert_non_null(strstr(err.msg, "ssh -G -F /nonexistent/ll_cfg x failed"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alias),
		cmocka_unit_test(test_opts_override),
		cmocka_unit_test(test_strict_yes),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_user_host_port),
		cmocka_unit_test(test_bad_forms),
		cmocka_unit_test(test_bad_config),
	};
	return cmocka_run_group_tests_name("sshcfg", tests, setup, teardown);
}
