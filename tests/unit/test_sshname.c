/* SPDX-License-Identifier: MIT */
/* test_sshname.c - host names in known_hosts form and in messages, and the
 * unknown-host-key advice (ssh.h): an IPv6 address with a port is
 * "[addr]:port", as ssh-keyscan prints it and known_hosts stores it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/remote/ssh.h"

static void test_known_host(void **state)
{
	char b[128];

	(void)state;
	ssh_known_host("10.0.0.2", 22, b, sizeof(b));
	assert_string_equal(b, "10.0.0.2");
	ssh_known_host("10.0.0.2", 2222, b, sizeof(b));
	assert_string_equal(b, "[10.0.0.2]:2222");
	ssh_known_host("fd00::2", 22, b, sizeof(b));
	assert_string_equal(b, "fd00::2");
	ssh_known_host("fd00::2", 2222, b, sizeof(b));
	assert_string_equal(b, "[fd00::2]:2222");
	ssh_known_host("peer.example", 0, b, sizeof(b));
	assert_string_equal(b, "peer.example");
}

static void test_host_name(void **state)
{
	char b[128];

	(void)state;
	ssh_host_name("root", "fd00::2", 2222, b, sizeof(b));
	assert_string_equal(b, "root@[fd00::2]:2222");
	ssh_host_name("root", "fd00::2", 22, b, sizeof(b));
	assert_string_equal(b, "root@[fd00::2]:22");
	ssh_host_name("root", "10.0.0.2", 22, b, sizeof(b));
	assert_string_equal(b, "root@10.0.0.2:22");
	ssh_host_name(NULL, "fd00::2", 2222, b, sizeof(b));
	assert_string_equal(b, "[fd00::2]:2222");
	ssh_host_name("", "h", 0, b, sizeof(b));
	assert_string_equal(b, "h:22");
	/* cut, still terminated */
	ssh_host_name("root", "fd00::2", 2222, b, 8);
	assert_string_equal(b, "root@[f");
}

static void test_unknown_hint(void **state)
{
	struct ssh_target t;
	char b[1024];

	(void)state;
	memset(&t, 0, sizeof(t));
	snprintf(t.alias, sizeof(t.alias), "root@[fd00::2]:2222");
	snprintf(t.hostname, sizeof(t.hostname), "fd00::2");
	snprintf(t.user, sizeof(t.user), "root");
	t.port = 2222;
	ssh_unknown_hint(&t, b, sizeof(b));
	assert_string_equal(b, "Check the fingerprint (ssh-keyscan -p 2222 fd00::2 | "
			    "ssh-keygen -lf -), then connect once with --accept-new "
			    "(or ssh -p 2222 root@fd00::2)");
	/* port 22: no -p */
	t.port = 22;
	snprintf(t.alias, sizeof(t.alias), "fd00::2");
	ssh_unknown_hint(&t, b, sizeof(b));
	assert_non_null(strstr(b, "(ssh-keyscan fd00::2 | "));
	assert_non_null(strstr(b, "(or ssh root@fd00::2)"));
	/* an ssh_config alias: the user's own ssh with the same -F */
	snprintf(t.alias, sizeof(t.alias), "peer-b");
	snprintf(t.config_file, sizeof(t.config_file), "/lab/ssh_config");
	t.port = 2200;
	ssh_unknown_hint(&t, b, sizeof(b));
	assert_non_null(strstr(b, "(ssh-keyscan -p 2200 fd00::2 | "));
	assert_non_null(strstr(b, "(or ssh -F /lab/ssh_config peer-b)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_host),
		cmocka_unit_test(test_host_name),
		cmocka_unit_test(test_unknown_hint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
