/* SPDX-License-Identifier: MIT */
/* test_profile.c - INI profiles: shipped presets load, per-side overlay,
 * every problem reported with file:line, save/load round trip. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "linklab/model/profile.h"
#include "linklab/base/units.h"

static int diag_has(const struct ll_diag *d, const char *frag)
{
	int i;

	for (i = 0; i < d->n; i++)
		if (strstr(d->e[i].text, frag))
			return 1;
	return 0;
}

static void dump(const struct ll_diag *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		print_message("  diag: %s\n", d->e[i].text);
}

static void test_shipped_profiles_load(void **state)
{
	DIR *dir = opendir("profiles");
	struct dirent *de;
	int n = 0;

	(void)state;
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		char path[512];
		struct profile p;
		struct ll_diag diag;

		if (!strstr(de->d_name, ".ini"))
			continue;
		snprintf(path, sizeof(path), "profiles/%s", de->d_name);
		ll_diag_clear(&diag);
		if (profile_load(path, &p, &diag) != 0 || diag.n) {
			print_message("%s:\n", path);
			dump(&diag);
			fail();
		}
		assert_true(p.name[0]);
		assert_true(p.description[0]);
		assert_false(impair_is_empty(&p.a) && impair_is_empty(&p.b));
		n++;
	}
	closedir(dir);
	assert_true(n >= 12);
}

static void test_per_side(void **state)
{
	struct profile p;
	struct ll_diag diag;

	(void)state;
	ll_diag_clear(&diag);
	assert_int_equal(profile_load("tests/data/profiles/good-sides.ini", &p, &diag), 0);
	assert_true(p.per_side);
	assert_int_equal(p.a.rate, 10000000);
	assert_int_equal(p.b.rate, 20000000);
	assert_int_equal(p.a.delay, 10000000);   /* [dial] applies to both */
	assert_int_equal(p.b.delay, 10000000);
	assert_false(p.a.set & IMP_LOSS);
	assert_int_equal(p.b.loss, 42949673);    /* 1% as tc */
	assert_string_equal(p.name, "Sides");
}

static void test_bad_keys_all_reported(void **state)
{
	struct profile p;
	struct ll_diag diag;
	const char *f = "tests/data/profiles/bad-keys.ini";

	(void)state;
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(f, &p, &diag), -22);
	dump(&diag);
	assert_true(diag_has(&diag, "bad-keys.ini:5: unknown key 'dealy' in [dial]"));
	assert_true(diag_has(&diag, "bad-keys.ini:6: key 'rate' repeated in [dial]"));
	assert_true(diag_has(&diag, "bad-keys.ini:7: loss: value '1% ; cut here' is cut"));
	assert_true(diag_has(&diag, "bad-keys.ini:8: section [Dial] differs from [dial] only in case"));
	assert_true(diag_has(&diag, "bad-keys.ini:10: unknown section [bogus]"));
}

/* A key given twice: iniparser keeps the last value; the earlier ones are
 * checked too, each at its own line, and a bad last value is said at the
 * last line (the one kept). A NUL byte is said as such, not as a line
 * too long. */
static void test_repeated_and_nul_reported(void **state)
{
	struct profile p;
	struct ll_diag diag;
	char path[] = "/tmp/llD2-prof-XXXXXX";
	FILE *f;
	int fd;

	(void)state;
	ll_diag_clear(&diag);
	assert_int_equal(profile_load("tests/data/profiles/bad-repeated.ini", &p, &diag), -22);
	dump(&diag);
	assert_true(diag_has(&diag, "bad-repeated.ini:5: [dial] delay: '-1ms' must not be negative"));
	assert_true(diag_has(&diag, "bad-repeated.ini:6: [dial] rate: '5' has no unit"));
	assert_true(diag_has(&diag, "bad-repeated.ini:7: key 'delay' repeated in [dial]"));
	assert_true(diag_has(&diag, "bad-repeated.ini:9: key 'rate' repeated in [dial]"));
	/* the values kept are the last ones */
	assert_int_equal(p.a.delay, 10000000);
	assert_int_equal(p.a.rate, 9000000);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fwrite("[dial]\nrate = 1mbit\n\0\0garbage\n", 1, 29, f);
	fclose(f);
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(path, &p, &diag), -22);
	dump(&diag);
	assert_true(diag_has(&diag, ":3: a NUL byte at column 1 (a profile is text)"));
	assert_false(diag_has(&diag, "longer than"));
	unlink(path);
}

static void test_bad_values_all_reported(void **state)
{
	struct profile p;
	struct ll_diag diag;

	(void)state;
	ll_diag_clear(&diag);
	assert_int_equal(profile_load("tests/data/profiles/bad-values.ini", &p, &diag), -22);
	dump(&diag);
	/* each bad value with file:line, as the line-level problems */
	assert_true(diag_has(&diag, "bad-values.ini:4: [dial] rate: '50mbs'"));
	assert_true(diag_has(&diag, "bad-values.ini:5: [dial] delay: '-5ms'"));
	assert_true(diag_has(&diag, "bad-values.ini:6: [dial] loss: 150% is out of range (0% .. 100%)"));
	assert_true(diag.nerrors >= 3);
}

static void test_missing_file(void **state)
{
	struct profile p;
	struct ll_diag diag;

	(void)state;
	ll_diag_clear(&diag);
	assert_int_equal(profile_load("tests/data/profiles/nope.ini", &p, &diag), -2);
	assert_true(diag_has(&diag, "nope.ini"));
}

static void test_save_roundtrip(void **state)
{
	char dir[] = "/tmp/llprofXXXXXX", path[512];
	struct impair d = { 0 };
	struct ll_diag diag;
	struct ll_err err = { 0 };
	struct profile p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("XDG_CONFIG_HOME", dir, 1);
	unsetenv("LINKLAB_PROFILE_PATH");
	ll_diag_clear(&diag);
	assert_int_equal(impair_set(&d, "rate", "50mbit", &diag), 0);
	assert_int_equal(impair_set(&d, "delay", "100ms", &diag), 0);
	assert_int_equal(impair_set(&d, "loss", "0.1%", &diag), 0);
	assert_int_equal(profile_save("class-1", "lesson one", &d, path, sizeof(path), &err), 0);
	assert_int_equal(profile_find("class-1", path, sizeof(path), &err), 0);
	assert_int_equal(profile_load(path, &p, &diag), 0);
	assert_int_equal(p.a.rate, d.rate);
	assert_int_equal(p.a.delay, d.delay);
	assert_int_equal(p.a.loss, d.loss);
	assert_string_equal(p.description, "lesson one");
	assert_int_not_equal(profile_save("../evil", NULL, &d, NULL, 0, &err), 0);
	assert_non_null(strstr(err.msg, "../evil"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/linklab/profiles", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/linklab", dir);
	rmdir(path);
	rmdir(dir);
}

/* A FIFO, an over-size file and a many-key file are skipped at once, each
 * naming the file and the reason; a save over a symlink replaces the link
 * and leaves its target alone. */
static void test_hostile_files(void **state)
{
	char dir[] = "/tmp/llprofXXXXXX", path[600], target[600], buf[64];
	struct impair d = { 0 };
	struct ll_diag diag;
	struct ll_err err = { 0 };
	struct profile p;
	struct stat st;
	FILE *f;
	int i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo.ini", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(path, &p, &diag), -EINVAL);  /* no hang */
	dump(&diag);
	assert_true(diag_has(&diag, "fifo.ini: skipped: not a regular file (a FIFO)"));
	unlink(path);

	snprintf(path, sizeof(path), "%s/big.ini", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[dial]\n", f);
	for (i = 0; i < 300000; i++)
		fprintf(f, "k%d = 1\n", i);
	fclose(f);
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(path, &p, &diag), -EINVAL);
	assert_true(diag_has(&diag, "big.ini: skipped:"));
	assert_true(diag_has(&diag, "over the 1048576-byte limit"));
	unlink(path);

	snprintf(path, sizeof(path), "%s/many.ini", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[dial]\n", f);
	for (i = 0; i < 50000; i++)
		fprintf(f, "rate = 1mbit\n");
	fclose(f);
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(path, &p, &diag), -EINVAL);
	assert_true(diag_has(&diag, "many.ini: skipped: 50001 lines, over the 512-line limit"));
	unlink(path);

	/* profile_write over a symlink */
	snprintf(target, sizeof(target), "%s/target", dir);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/x.ini", dir);
	assert_int_equal(symlink(target, path), 0);
	ll_diag_clear(&diag);
	assert_int_equal(impair_set(&d, "rate", "5mbit", &diag), 0);
	assert_int_equal(profile_write(path, "x", NULL, &d, NULL, &err), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	f = fopen(target, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious\n");
	assert_int_equal(profile_load(path, &p, &diag), 0);
	assert_int_equal(p.a.rate, 5000000);
	unlink(path);
	unlink(target);
	assert_int_equal(rmdir(dir), 0);   /* no temporary file left */
}

/* Lines iniparser cannot read do not hide the values of the others: every
 * problem of the file at once, structure, values and cross-field rules. */
static void test_structure_and_values_at_once(void **state)
{
	struct profile p;
	struct ll_diag diag;

	(void)state;
	ll_diag_clear(&diag);
	assert_int_equal(profile_load("tests/data/profiles/bad-mixed.ini", &p, &diag), -EINVAL);
	dump(&diag);
	assert_true(diag_has(&diag, "bad-mixed.ini:5: expected 'key = value'"));
	assert_true(diag_has(&diag, "bad-mixed.ini:8: no key before '='"));
	assert_true(diag_has(&diag, "bad-mixed.ini:11: text after the section header: '; per side'"));
	assert_true(diag_has(&diag, "bad-mixed.ini:4: [dial] rate: '50mbs'"));
	/* the blanked [b] header leaves its delay in [a] */
	assert_true(diag_has(&diag, "bad-mixed.ini:12: [a] delay: '-1ms' must not be negative"));
	assert_true(diag_has(&diag, "[a] loss-corr 10% needs a loss"));
	/* not also "jitter needs a delay": the delay given was refused */
	assert_false(diag_has(&diag, "needs a delay"));
	assert_false(diag_has(&diag, "iniparser"));
	assert_int_equal(diag.nerrors, 6);
}

/* Write text (n bytes) to a new file in dir named name; its path into path. */
static void write_file(const char *dir, const char *name, const char *text, size_t n,
		       char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	fclose(f);
}

/* A UTF-8 byte order mark is read past; UTF-16 is refused naming the file;
 * a message from iniparser names the user's file, never /proc/self/fd. */
static void test_bom_and_names(void **state)
{
	static const char bom[] = "\xef\xbb\xbf[profile]\nname = Bom\n[dial]\nrate = 10mbit\n";
	static const char u16[] = "\xff\xfe[\0d\0i\0a\0l\0]\0\n\0";
	static const char junk[] = "[dial] junk\nrate = 10mbit\n";
	char dir[] = "/tmp/llprofXXXXXX", path[600];
	struct ll_diag diag;
	struct profile p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_file(dir, "bom.ini", bom, sizeof(bom) - 1, path, sizeof(path));
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(path, &p, &diag), 0);
	dump(&diag);
	assert_int_equal(diag.n, 0);
	assert_string_equal(p.name, "Bom");
	assert_int_equal(p.a.rate, 10000000);
	unlink(path);

	write_file(dir, "u16.ini", u16, sizeof(u16) - 1, path, sizeof(path));
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(path, &p, &diag), -EINVAL);
	dump(&diag);
	assert_true(diag_has(&diag, "u16.ini: UTF-16 text (byte order mark FF FE)"));
	assert_true(diag_has(&diag, "save it as UTF-8"));
	unlink(path);

	write_file(dir, "junk.ini", junk, sizeof(junk) - 1, path, sizeof(path));
	ll_diag_clear(&diag);
	assert_int_equal(profile_load(path, &p, &diag), -EINVAL);
	dump(&diag);
	assert_true(diag.nerrors >= 1);
	assert_true(diag_has(&diag, "junk.ini"));
	assert_false(diag_has(&diag, "/proc/self/fd"));
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_profiles_load),
		cmocka_unit_test(test_per_side),
		cmocka_unit_test(test_bad_keys_all_reported),
		cmocka_unit_test(test_bad_values_all_reported),
		cmocka_unit_test(test_repeated_and_nul_reported),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_save_roundtrip),
		cmocka_unit_test(test_hostile_files),
		cmocka_unit_test(test_bom_and_names),
		cmocka_unit_test(test_structure_and_values_at_once),
	};
	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
