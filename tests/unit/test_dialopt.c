/* SPDX-License-Identifier: MIT */
/* test_dialopt.c - the table-driven dial: every field's limits (the ends
 * accepted, one step past refused with a message naming field, value and
 * accepted range), the range texts agree with the limits, units round trip
 * (parse(print(x)) == x for every field), impair_overlay; the one dial-option
 * parser: every problem at once, direction prefixes, aliases, a repeated
 * option, --distribution FILE. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/base/units.h"
#include "linklab/model/dialopt.h"
#include "linklab/model/impair.h"

/* line split at blanks into argv (NULL-terminated); the word count. */
static int words(char *line, char **argv)
{
	char *t, *save = NULL;
	int n = 0;

	for (t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	argv[n] = NULL;
	return n;
}

static void dump(const struct ll_diag *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		fprintf(stderr, "  diag: %s\n", d->e[i].text);
}

/* The value v of a scalar field written in its unit, as a user would. */
static void text_of(const struct impair_field *f, int64_t s, uint64_t u, bool neg,
		    char *buf, size_t len)
{
	switch (f->kind) {
	case IMPK_RATE: units_format_rate(u, buf, len); break;
	case IMPK_TIME: snprintf(buf, len, "%s%" PRIu64 "ns", neg ? "-" : "", u); break;
	case IMPK_SIZE: snprintf(buf, len, "%" PRIu64 "b", u); break;
	case IMPK_INT: snprintf(buf, len, "%" PRId64, s); break;
	default: snprintf(buf, len, "%s%" PRIu64, neg ? "-" : "", u); break;
	}
}

/* Set name=value on an empty dial: 0 and nothing to diag, or -EINVAL with
 * exactly one error that names the field, frag and the accepted range;
 * a refused value leaves the dial empty. */
static void expect(const struct impair_field *f, const char *value, bool ok, const char *frag)
{
	struct impair d = { 0 }, zero = { 0 };
	struct ll_diag dg;
	int rc;

	ll_diag_clear(&dg);
	rc = impair_set(&d, f->name, value, &dg);
	if (ok) {
		if (rc != 0 || dg.n) {
			fprintf(stderr, "%s=%s refused\n", f->name, value);
			dump(&dg);
			fail();
		}
		assert_true(d.set & f->bit);
		return;
	}
	if (rc != -EINVAL || dg.nerrors != 1 || strncmp(dg.e[0].text, f->name, strlen(f->name)) ||
	    !strstr(dg.e[0].text, frag) || !strstr(dg.e[0].text, f->range) ||
	    strcmp(dg.e[0].field, f->name)) {
		fprintf(stderr, "%s=%s: want one error naming '%s' and '%s'\n", f->name, value,
			frag, f->range);
		dump(&dg);
		fail();
	}
	assert_memory_equal(&d, &zero, sizeof(d));
}

/* Every scalar field: lo and hi accepted, lo - 1 and hi + 1 refused. */
static void test_scalar_limits(void **state)
{
	const struct impair_field *f;
	char t[64], shown[80];
	int n = 0;

	(void)state;
	for (f = impair_fields; f->name; f++) {
		bool sgn = (f->flags & IMPF_SIGNED) != 0;

		if (f->kind != IMPK_RATE && f->kind != IMPK_TIME && f->kind != IMPK_SIZE &&
		    f->kind != IMPK_COUNT && f->kind != IMPK_INT && f->kind != IMPK_U64)
			continue;
		n++;
		text_of(f, f->lo, (uint64_t)f->lo, false, t, sizeof(t));
		expect(f, t, true, NULL);
		text_of(f, (int64_t)f->hi, f->hi, false, t, sizeof(t));
		expect(f, t, true, NULL);
		/* one below lo */
		if (f->lo > 0) {
			text_of(f, f->lo - 1, (uint64_t)f->lo - 1, false, t, sizeof(t));
			if (f->kind == IMPK_RATE || f->kind == IMPK_TIME || f->kind == IMPK_SIZE)
				snprintf(shown, sizeof(shown), "%s",
					 f->kind == IMPK_RATE ? units_format_rate((uint64_t)f->lo - 1, shown, sizeof(shown)) :
					 f->kind == IMPK_TIME ? units_format_time(f->lo - 1, shown, sizeof(shown)) :
					 units_format_size((uint64_t)f->lo - 1, shown, sizeof(shown)));
			else
				snprintf(shown, sizeof(shown), "'%s'", t);
			expect(f, t, false, shown);
		} else if (f->lo == 0) {
			text_of(f, -1, 1, true, t, sizeof(t));
			expect(f, t, false, t);
		} else {
			snprintf(t, sizeof(t), "%" PRId64, (int64_t)f->lo - 1);
			expect(f, t, false, t);
		}
		/* one above hi */
		if (f->hi == UINT64_MAX) {
			expect(f, "18446744073709551616", false, "18446744073709551616");
		} else if (!sgn || f->hi < INT64_MAX) {
			text_of(f, (int64_t)f->hi + 1, f->hi + 1, false, t, sizeof(t));
			if (f->kind == IMPK_RATE)
				expect(f, t, false, units_format_rate(f->hi + 1, shown, sizeof(shown)));
			else if (f->kind == IMPK_TIME)
				expect(f, t, false, units_format_time((int64_t)f->hi + 1, shown, sizeof(shown)));
			else if (f->kind == IMPK_SIZE)
				expect(f, t, false, units_format_size(f->hi + 1, shown, sizeof(shown)));
			else
				expect(f, t, false, t);
		}
	}
	assert_int_equal(n, 16);
}

/* Percent, list, pair, choice, flag and prefix fields at their edges. */
static void test_other_limits(void **state)
{
	const struct impair_field *f;
	int n = 0;

	(void)state;
	for (f = impair_fields; f->name; f++) {
		unsigned k;

		switch (f->kind) {
		case IMPK_PERCENT:
			expect(f, "0%", true, NULL);
			expect(f, "100%", true, NULL);
			expect(f, "100.5%", false, "100.5%");
			expect(f, "-0.5%", false, "-0.5%");
			expect(f, "5", false, "'5'");
			break;
		case IMPK_PLIST: {
			char list[128] = "", one[16];

			for (k = 0; k < f->count; k++) {
				snprintf(one, sizeof(one), "%s%u%%", k ? "," : "", k * 25);
				strcat(list, one);
			}
			expect(f, list, true, NULL);
			expect(f, "100%", true, NULL);
			strcat(list, ",1%");    /* count + 1 values */
			expect(f, list, false, list);
			expect(f, "1%,101%", false, "101%");
			break;
		}
		case IMPK_TIMEPAIR:
			expect(f, "0ns", true, NULL);
			expect(f, "274s", true, NULL);
			expect(f, "0ns,274s", true, NULL);
			expect(f, "275s", false, "275s");
			expect(f, "1ms,275s", false, "275s");
			expect(f, "-1ms", false, "'-1ms'");
			break;
		case IMPK_CHOICE:
			for (k = 0; f->names[k]; k++)
				expect(f, f->names[k], true, NULL);
			assert_int_equal(k, f->hi + 1);
			expect(f, "sideways", false, "'sideways'");
			break;
		case IMPK_FLAG:
			expect(f, "on", true, NULL);
			expect(f, "off", true, NULL);
			expect(f, "maybe", false, "'maybe'");
			break;
		case IMPK_PREFIX:
			expect(f, "0.0.0.0/0", true, NULL);
			expect(f, "192.0.2.7/32", true, NULL);
			expect(f, "2001:db8::1/128", true, NULL);
			expect(f, "192.0.2.0/33", false, "'192.0.2.0/33'");
			expect(f, "2001:db8::/129", false, "'2001:db8::/129'");
			break;
		default:
			continue;
		}
		n++;
	}
	assert_int_equal(n, 16);
}

/* The range text's two ends are the table's limits (the text a user reads
 * and the check that runs are the same numbers). */
static void test_range_text(void **state)
{
	const struct impair_field *f;
	int n = 0;

	(void)state;
	for (f = impair_fields; f->name; f++) {
		const char *r = strstr(f->range, "each ") ? strstr(f->range, "each ") + 5 : f->range;
		const char *dots = strstr(r, " .. ");
		char lo[64], hi[64];
		struct ll_err e = { 0 };
		int64_t s1 = 0, s2 = 0;
		uint64_t u1 = 0, u2 = 0;
		uint32_t p1 = 0, p2 = 0;

		if (!dots || f->kind == IMPK_PREFIX)
			continue;
		snprintf(lo, sizeof(lo), "%.*s", (int)(dots - r), r);
		snprintf(hi, sizeof(hi), "%.*s", (int)strcspn(dots + 4, ","), dots + 4);
		switch (f->kind) {
		case IMPK_RATE:
			assert_int_equal(units_parse_rate(lo, &u1, &e), 0);
			assert_int_equal(units_parse_rate(hi, &u2, &e), 0);
			break;
		case IMPK_TIME:
		case IMPK_TIMEPAIR:
			assert_int_equal(units_parse_time(lo, &s1, 0, &e), 0);
			assert_int_equal(units_parse_time(hi, &s2, 0, &e), 0);
			u1 = (uint64_t)s1;
			u2 = (uint64_t)s2;
			break;
		case IMPK_SIZE:
			assert_int_equal(units_parse_size(lo, &u1, &e), 0);
			assert_int_equal(units_parse_size(hi, &u2, &e), 0);
			break;
		case IMPK_PERCENT:
		case IMPK_PLIST:
			assert_int_equal(units_parse_percent(lo, &p1, &e), 0);
			assert_int_equal(units_parse_percent(hi, &p2, &e), 0);
			u1 = p1;
			u2 = p2;
			break;
		default:
			s1 = strtoll(lo, NULL, 10);
			u1 = (uint64_t)s1;
			u2 = strtoull(hi, NULL, 10);
			break;
		}
		if ((int64_t)u1 != f->lo || u2 != f->hi) {
			fprintf(stderr, "%s: range '%s' is %s .. %s, the table says %" PRId64
				" .. %" PRIu64 "\n", f->name, f->range, lo, hi, f->lo, f->hi);
			fail();
		}
		n++;
	}
	assert_int_equal(n, 28);
}

/* Sample values of a field, low, middle and high, in its unit. */
static int samples(const struct impair_field *f, const char *out[4])
{
	static const char *const by_kind[][4] = {
		[IMPK_RATE] = { "8bit", "50mbit", "1.5gbit", "4tbit" },
		[IMPK_TIME] = { "1us", "1.5ms", "100ms", "274s" },
		[IMPK_SIZE] = { "1b", "1514b", "64kb", "2147483647b" },
		[IMPK_PERCENT] = { "0%", "0.1%", "33.3%", "100%" },
		[IMPK_COUNT] = { "1", "5", "1000", "65535" },
		[IMPK_PLIST] = { "1%", "1%,30%", "5%,50%,0%", "0%,100%,0.5%,1%" },
		[IMPK_FLAG] = { "on", "off", NULL, NULL },
		[IMPK_INT] = { "1", "-14", "5", "2147483647" },
		[IMPK_U64] = { "0", "42", "9223372036854775808", "18446744073709551615" },
		[IMPK_TIMEPAIR] = { "0ns", "1ms", "1ms,10ms", "274s" },
		[IMPK_PREFIX] = { "192.0.2.7", "10.0.0.0/8", "fd00:1::/48", "::/0" },
	};
	int n = 0, k;

	if (f->kind == IMPK_CHOICE) {
		for (k = 0; f->names[k] && k < 4; k++)
			out[n++] = f->names[k];
		return n;
	}
	for (k = 0; k < 4 && by_kind[f->kind][k]; k++)
		out[n++] = by_kind[f->kind][k];
	return n;
}

/* parse(print(x)) == x for every field of the table. */
static void test_roundtrip_all(void **state)
{
	const struct impair_field *f;
	int fields = 0;

	(void)state;
	for (f = impair_fields; f->name; f++) {
		const char *v[4];
		int n = samples(f, v), k, taken = 0;

		for (k = 0; k < n; k++) {
			struct impair d = { 0 }, d2 = { 0 };
			struct ll_diag dg;
			char buf[128];

			ll_diag_clear(&dg);
			if (impair_set(&d, f->name, v[k], &dg) < 0)
				continue;       /* a sample outside this field's limits */
			taken++;
			impair_get(&d, f, buf, sizeof(buf));
			assert_true(buf[0]);
			assert_int_equal(impair_set(&d2, f->name, buf, &dg), 0);
			if (memcmp(&d, &d2, sizeof(d))) {
				fprintf(stderr, "%s=%s printed '%s', which parses differently\n",
					f->name, v[k], buf);
				fail();
			}
		}
		if (taken < 2) {
			fprintf(stderr, "%s: only %d sample values taken\n", f->name, taken);
			fail();
		}
		fields++;
	}
	assert_int_equal(fields, 32);
}

/* impair_overlay copies each given field's whole storage (a list's count,
 * a pair, a prefix) and leaves the others. */
static void test_overlay(void **state)
{
	static const char *const base[] = { "delay", "50ms", "loss-state", "1%,2%,3%",
		"dst", "10.0.0.0/8", "rate", "5mbit", NULL };
	static const char *const top[] = { "loss-state", "9%", "slot", "1ms,2ms",
		"dst", "fd00::/16", NULL };
	struct impair a = { 0 }, b = { 0 };
	struct ll_diag dg;
	char buf[96];
	int i;

	(void)state;
	ll_diag_clear(&dg);
	for (i = 0; base[i]; i += 2)
		assert_int_equal(impair_set(&a, base[i], base[i + 1], &dg), 0);
	for (i = 0; top[i]; i += 2)
		assert_int_equal(impair_set(&b, top[i], top[i + 1], &dg), 0);
	impair_overlay(&a, &b);
	assert_string_equal(impair_summary(&a, buf, sizeof(buf)),
			    "rate 5mbit delay 50ms loss-state 9% slot 1ms,2ms dst fd00::/16");
	assert_int_equal(a.loss_state_n, 1);
}

/* An option whose value is missing before the next option: "missing
 * value", not the next option taken as its value. */
static void test_missing_value_before_option(void **state)
{
	char line[] = "--delay --loss 1%", *argv[4];
	int argc = words(line, argv);
	struct dialopt o;
	struct ll_diag dg;

	(void)state;
	dialopt_init(&o, 0);
	ll_diag_clear(&dg);
	assert_int_equal(argc, 3);
	dialopt_parse(&o, argc, argv, &dg);
	assert_int_equal(dg.n, 1);
	assert_string_equal(dg.e[0].text, "--delay: missing value (0ns .. 274s)");
	assert_true(o.lvl[DIALOPT_BOTH].set & IMP_LOSS);
}

/* Every problem of one command line at once, each naming its field. */
static void test_all_at_once(void **state)
{
	char line[] = "--rate 0bit --delay -1ms --loss=150% --gap 0 --rate 5mbit --bogus "
		      "--jitter 5ms --dport 70000 --limit", *argv[24];
	int argc = words(line, argv);
	static const char *const want[] = {
		"rate: 0bit is out of range (8bit .. 4tbit)",
		"delay: '-1ms' must not be negative (0ns .. 274s)",
		"loss: 150% is out of range (0% .. 100%)",
		"gap: '0' is not a count in range (1 .. 4294967295)",
		"option --rate given twice ('0bit', then '5mbit'): give it once",
		"unknown option '--bogus'",
		"dport: '70000' is not a count in range (1 .. 65535)",
		"--limit: missing value (1 .. 4294967295)",
	};
	struct dialopt o;
	struct ll_diag dg;
	size_t i;

	(void)state;
	dialopt_init(&o, 0);
	ll_diag_clear(&dg);
	assert_int_equal(argc, 15);
	assert_int_equal(dialopt_parse(&o, argc, argv, &dg), 8);
	if (dg.n != 8)
		dump(&dg);
	assert_int_equal(dg.n, 8);
	for (i = 0; i < 8; i++)
		assert_string_equal(dg.e[i].text, want[i]);
	assert_string_equal(dg.e[0].field, "rate");
	assert_string_equal(dg.e[4].field, "rate");
	/* the good one went through, the bad ones left nothing */
	assert_int_equal(o.lvl[DIALOPT_BOTH].set, IMP_JITTER);
	assert_int_equal(o.lvl[DIALOPT_BOTH].jitter, 5000000);
}

/* Direction prefixes, aliases, --distribution FILE and levels of a repeat. */
static void test_dirs_aliases(void **state)
{
	char l1[] = "--a-to-b-delay 10ms --delay 5ms --b-to-a-loss 1% --cell 48,5 "
		    "--a-to-b-overhead=-14 --distribution /usr/lib/tc/normal.dist "
		    "--a-to-b-distribution pareto --b-to-a-delay 7ms";
	char l2[] = "--a-to-b-delay 1ms --a-to-b-delay 2ms --delay 3ms --b-to-a-jitter -1ms";
	char l3[] = "--a-to-b-delay 1ms";
	char *argv[24], *twice[24], *plain[4];
	struct dialopt *o = calloc(1, sizeof(*o));
	struct impair ab, ba;
	struct ll_diag dg;
	char fa[64], fb[64], buf[160];
	int i = 0;

	(void)state;
	assert_non_null(o);
	dialopt_init(o, DIALOPT_DIRS | DIALOPT_ALIASES | DIALOPT_DIST_FILE);
	ll_diag_clear(&dg);
	assert_int_equal(dialopt_parse(o, words(l1, argv), argv, &dg), 0);
	dialopt_dial(o, DIALOPT_A_TO_B, &ab, fa, sizeof(fa));
	dialopt_dial(o, DIALOPT_B_TO_A, &ba, fb, sizeof(fb));
	assert_string_equal(impair_summary(&ab, buf, sizeof(buf)),
			    "delay 10ms distribution pareto packet-overhead -14 cell-size 48 cell-overhead 5");
	assert_string_equal(fa, "");
	assert_string_equal(impair_summary(&ba, buf, sizeof(buf)),
			    "delay 7ms loss 1% cell-size 48 cell-overhead 5");
	assert_string_equal(fb, "/usr/lib/tc/normal.dist");

	/* a repeat at the same level is refused; another level is no repeat;
	 * a direction's problem names its direction */
	dialopt_init(o, DIALOPT_DIRS);
	ll_diag_clear(&dg);
	assert_int_equal(dialopt_parse(o, words(l2, twice), twice, &dg), 2);
	assert_string_equal(dg.e[0].text,
			    "option --a-to-b-delay given twice ('1ms', then '2ms'): give it once");
	assert_string_equal(dg.e[1].text,
			    "b_to_a: jitter: '-1ms' must not be negative (0ns .. 2.147483647s)");
	dialopt_dial(o, DIALOPT_A_TO_B, &ab, NULL, 0);
	assert_int_equal(ab.delay, 1000000);

	/* without DIALOPT_DIRS a prefix is no dial option */
	dialopt_init(o, 0);
	ll_diag_clear(&dg);
	assert_int_equal(dialopt_take(o, words(l3, plain), plain, &i, &dg), 0);
	assert_int_equal(i, 0);
	assert_int_equal(dg.n, 0);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalar_limits),
		cmocka_unit_test(test_other_limits),
		cmocka_unit_test(test_range_text),
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_overlay),
		cmocka_unit_test(test_all_at_once),
		cmocka_unit_test(test_missing_value_before_option),
		cmocka_unit_test(test_dirs_aliases),
	};
	return cmocka_run_group_tests_name("dialopt", tests, NULL, NULL);
}
