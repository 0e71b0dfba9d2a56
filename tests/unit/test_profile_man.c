/* SPDX-License-Identifier: MIT */
/* test_profile_man.c - doc/linklab-profile.5 is checked against the dial
 * schema: every impair_fields entry must appear in its FIELDS section as
 * `.BI "name = "` with its accepted range, and the sections of the format
 * must be described. Run from the repository root (as make unit does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "linklab/model/impair.h"

/* The file as one string, or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* troff escapes '-' as "\-": compare with them undone. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == '-')
			continue;
		*o++ = *s;
	}
	*o = '\0';
}

static void every_field_documented(void **state)
{
	char *man = slurp("doc/linklab-profile.5"), want[256];
	const struct impair_field *f;
	int n = 0, missing = 0;

	(void)state;
	assert_non_null(man);
	unescape(man);
	for (f = impair_fields; f->name; f++, n++) {
		const char *at;

		snprintf(want, sizeof(want), ".BI \"%s = \"", f->name);
		at = strstr(man, want);
		if (!at) {
			print_message("doc/linklab-profile.5 lacks field %s\n", f->name);
			missing++;
			continue;
		}
		snprintf(want, sizeof(want), "Range: %s.", f->range);
		at = strstr(at, "Range: ");
		if (!at || strncmp(at, want, strlen(want))) {
			print_message("doc/linklab-profile.5: %s range is not '%s'\n",
				      f->name, f->range);
			missing++;
		}
	}
	assert_true(n > 10);
	assert_int_equal(missing, 0);
	free(man);
}

static void sections_and_errors_described(void **state)
{
	char *man = slurp("doc/linklab-profile.5");
	static const char *const needed[] = {
		".TH LINKLAB-PROFILE 5", ".B [profile]", ".B [dial]", "[a]", "[b]",
		"FILE", "LINE", "unknown sections and keys", "differ only in case",
		"1024 bytes", "XDG_CONFIG_HOME", NULL,
	};
	int k;

	(void)state;
	assert_non_null(man);
	unescape(man);
	for (k = 0; needed[k]; k++) {
		if (!strstr(man, needed[k]))
			print_message("doc/linklab-profile.5 lacks '%s'\n", needed[k]);
		assert_non_null(strstr(man, needed[k]));
	}
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_documented),
		cmocka_unit_test(sections_and_errors_described),
	};

	return cmocka_run_group_tests_name("profile_man", tests, NULL, NULL);
}
