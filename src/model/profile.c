/* SPDX-License-Identifier: MIT */
/* profile.c - INI profiles through iniparser (the only file including it). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iniparser.h>

#include "linklab/model/profile.h"

#define PROFILE_LINE_MAX 1024
/* A profile is a few dozen lines: a larger file, or one with more lines, is
 * refused before iniparser reads it (its dictionary grows quadratically). */
#define PROFILE_SIZE_MAX (1024 * 1024)
#define PROFILE_LINES_MAX 512

/* iniparser reports through a callback without a context pointer: collect
 * its messages here while profile_load runs (single-threaded use). */
static char ini_errbuf[512];

/* iniparser error callback: keep the first message (its lines joined by
 * blanks), print nothing. */
static int ini_errback(const char *fmt, ...)
{
	va_list ap;
	char *c;

	if (ini_errbuf[0])
		return 0;
	va_start(ap, fmt);
	vsnprintf(ini_errbuf, sizeof(ini_errbuf), fmt, ap);
	va_end(ap);
	for (c = ini_errbuf; *c; c++)
		if (*c == '\n')
			*c = ' ';
	while (c > ini_errbuf && c[-1] == ' ')
		*--c = '\0';
	return 0;
}

/* iniparser's message names the descriptor it read ("/proc/self/fd/N"):
 * the same text into out with the user's file name instead. */
static void ini_errtext(const char *fdpath, const char *path, char *out, size_t len)
{
	const char *at = strstr(ini_errbuf, fdpath);

	if (!at) {
		snprintf(out, len, "%s", ini_errbuf);
		return;
	}
	snprintf(out, len, "%.*s%s%s", (int)(at - ini_errbuf), ini_errbuf, path,
		 at + strlen(fdpath));
}

static const char *const known_sections[] = { "profile", "dial", "a", "b", NULL };

static bool section_known(const char *s)
{
	int i;

	for (i = 0; known_sections[i]; i++)
		if (!strcmp(s, known_sections[i]))
			return true;
	return false;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Line-level checks iniparser cannot make: duplicates, case-only section
 * differences, inline comments that cut a value, over-long lines, unknown
 * sections and keys. */
#define PROFILE_MAX_BAD_LINES 3

/* Returns -EINVAL when the file is plainly not an INI profile (too many
 * lines that are neither sections nor 'key = value'). */
/* Where each "section:key" of the file is, one entry per line that gives
 * it, with the value as given, so that a bad value found after iniparser
 * read the file (the last line of a repeated key: the value it keeps) is
 * reported with file:line, and an earlier value of a repeated key (which
 * iniparser drops) is checked all the same. */
struct key_lines {
	char key[64][96];
	int line[64];
	char val[64][160];
	int n;
};

/* The last line that gives sec:key (the value iniparser keeps), 0 if none. */
static int key_line(const struct key_lines *kl, const char *sec, const char *key)
{
	char k[96];
	int i, ln = 0;

	snprintf(k, sizeof(k), "%s:%s", sec, key);
	for (i = 0; i < kl->n; i++)
		if (!strcasecmp(kl->key[i], k))
			ln = kl->line[i];
	return ln;
}

/* The value of a dial field that a later line of the file overrides: checked
 * as load_section checks the value kept, reported at its own line. */
static void lint_dropped_value(const char *path, int lineno, const char *sec,
			       const char *key, const char *val, struct ll_diag *diag)
{
	struct impair scratch = { 0 };
	struct ll_diag one;
	char v[160];
	size_t n;
	int i;

	if (!impair_field_find(key) || (strcmp(sec, "dial") && strcmp(sec, "a") && strcmp(sec, "b")))
		return;
	/* the value as iniparser reads it: quotes dropped, else cut at an
	 * inline comment */
	n = strlen(val);
	if (n >= 2 && val[0] == '"' && val[n - 1] == '"')
		snprintf(v, sizeof(v), "%.*s", (int)(n - 2), val + 1);
	else
		snprintf(v, sizeof(v), "%.*s", (int)strcspn(val, "#;"), val);
	ll_diag_clear(&one);
	if (impair_set(&scratch, key, trim(v), &one) < 0)
		for (i = 0; i < one.n; i++)
			ll_diag_add(diag, one.e[i].level, NULL, "%s:%d: [%s] %s", path, lineno,
				    sec, one.e[i].text);
}

/* a [section] line s: its name into sec, checked against the known ones
 * and the ones seen (secs, *nsecs of them, at most 16 kept). False when
 * the line is no header iniparser reads (no ']', text after it). */
static bool lint_section(char *s, const char *path, int lineno, char *sec,
			 size_t seclen, char (*secs)[64], int *nsecs,
			 struct ll_diag *diag)
{
	char *end = strchr(s, ']');
	int i;

	if (!end) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s:%d: section header without ']'", path, lineno);
		return false;
	}
	if (end[1]) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s:%d: text after the section header: '%s' (a comment "
			    "goes on a line of its own)", path, lineno,
			    end + 1 + strspn(end + 1, " \t"));
		return false;
	}
	*end = '\0';
	snprintf(sec, seclen, "%s", trim(s + 1));
	for (i = 0; i < *nsecs; i++) {
		if (!strcmp(secs[i], sec))
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "%s:%d: section [%s] appears twice",
				    path, lineno, sec);
		else if (!strcasecmp(secs[i], sec))
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "%s:%d: section [%s] differs from [%s] only in case",
				    path, lineno, sec, secs[i]);
	}
	if (*nsecs < 16)
		snprintf(secs[(*nsecs)++], sizeof(secs[0]), "%s", sec);
	if (!section_known(sec))
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s:%d: unknown section [%s] (known: profile, dial, a, b)",
			    path, lineno, sec);
	return true;
}

/* a key = value line in section sec: cut values, repeated keys (recorded
 * in kl, *nseen of them, at most 64) and keys unknown in sec */
static void lint_key(const char *key, const char *val, const char *path,
		     int lineno, const char *sec, struct key_lines *kl, int *nseen,
		     struct ll_diag *diag)
{
	char (*seen)[96] = kl->key;
	int i;

	if (strpbrk(val, "#;") && val[0] != '"')
		ll_diag_add(diag, LL_DIAG_WARN, NULL,
			    "%s:%d: %s: value '%s' is cut at '#' or ';' (the rest "
			    "is a comment): the value used is '%.*s'",
			    path, lineno, key, val, (int)strcspn(val, "#;"), val);
	for (i = *nseen - 1; i >= 0; i--) {
		char k[96];

		snprintf(k, sizeof(k), "%s:%s", sec, key);
		if (!strcasecmp(seen[i], k)) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "%s:%d: key '%s' repeated in [%s]", path,
				    lineno, key, sec);
			/* the value before this line is dropped by iniparser:
			 * its problems are said all the same */
			lint_dropped_value(path, kl->line[i], sec, key, kl->val[i], diag);
			break;
		}
	}
	if (*nseen < 64) {
		kl->line[*nseen] = lineno;
		snprintf(kl->val[*nseen], sizeof(kl->val[0]), "%s", val);
		snprintf(seen[(*nseen)++], sizeof(seen[0]), "%s:%s", sec, key);
		kl->n = *nseen;
	}
	if (!strcmp(sec, "profile")) {
		if (strcasecmp(key, "name") && strcasecmp(key, "description"))
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "%s:%d: unknown key '%s' in [profile] "
				    "(known: name, description)", path, lineno, key);
	} else if (section_known(sec) && !impair_field_find(key)) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s:%d: unknown key '%s' in [%s]", path, lineno,
			    key, sec);
	} else if (!sec[0]) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s:%d: key '%s' outside any section", path, lineno, key);
	}
}

/* A UTF-8 byte order mark at the start of line 1 is dropped (editors on
 * Windows write one); a UTF-16 one is refused naming the file. The bytes
 * dropped (0 or 3), or -EINVAL. */
static int lint_bom(char *line, const char *path, struct ll_diag *diag)
{
	unsigned char *u = (unsigned char *)line;

	if (u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) {
		memmove(line, line + 3, strlen(line + 3) + 1);
		return 3;
	}
	if ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff)) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s: UTF-16 text (byte order mark %02X %02X): a profile is "
			    "UTF-8 or ASCII text; save it as UTF-8", path, u[0], u[1]);
		return -EINVAL;
	}
	return 0;
}

/* Check every line of f; copy the file into clean (the text iniparser
 * reads) without a UTF-8 byte order mark and with each line iniparser
 * cannot read (reported here) blanked, so that the values of the other
 * lines are still read and checked. */
static int lint_file(FILE *f, FILE *clean, const char *path, struct key_lines *kl,
		     struct ll_diag *diag)
{
	char raw[PROFILE_LINE_MAX + 2], sec[64] = "", *line = NULL;
	char secs[16][64];
	int nseen = 0, nsecs = 0, lineno = 0, nbad = 0;
	size_t cap = 0;
	ssize_t len;

	/* getline: the length counts NUL bytes too (fgets would take a line
	 * with one for an endless line) */
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *s, *eq, *key, *val;
		bool ok = true;

		lineno++;
		if (lineno == 1) {
			int dropped = lint_bom(line, path, diag);

			if (dropped < 0) {
				free(line);
				return -EINVAL;
			}
			len -= dropped;
		}
		if (len > PROFILE_LINE_MAX + 1 || memchr(line, '\0', (size_t)len)) {
			if (len > PROFILE_LINE_MAX + 1)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "%s:%d: line longer than %d bytes", path,
					    lineno, PROFILE_LINE_MAX);
			else
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "%s:%d: a NUL byte at column %d (a profile is text)",
					    path, lineno,
					    (int)((char *)memchr(line, '\0', (size_t)len) - line) + 1);
			fputc('\n', clean);
			continue;
		}
		snprintf(raw, sizeof(raw), "%s", line);
		s = trim(line);
		eq = strchr(s, '=');
		if (!*s || *s == '#' || *s == ';') {
			/* a blank line or a comment */
		} else if (*s == '[') {
			ok = lint_section(s, path, lineno, sec, sizeof(sec), secs, &nsecs,
					  diag);
		} else if (!eq) {
			if (++nbad > PROFILE_MAX_BAD_LINES) {
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "%s: not an INI profile (%d lines are neither "
					    "'key = value' nor [section]); stopped reading at line %d",
					    path, nbad, lineno);
				free(line);
				return -EINVAL;
			}
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "%s:%d: expected 'key = value'", path, lineno);
			ok = false;
		} else {
			*eq = '\0';
			key = trim(s);
			val = trim(eq + 1);
			if (!*key) {
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "%s:%d: no key before '=' (expected 'key = value')",
					    path, lineno);
				ok = false;
			} else {
				lint_key(key, val, path, lineno, sec, kl, &nseen, diag);
			}
		}
		fputs(ok ? raw : "\n", clean);
	}
	free(line);
	return 0;
}

/* Fill d from one section of the dictionary. */
static void load_section(dictionary *ini, const char *sec, struct impair *d,
			 const char *path, const struct key_lines *kl, struct ll_diag *diag)
{
	const struct impair_field *f;
	char key[96];

	for (f = impair_fields; f->name; f++) {
		const char *v;
		struct ll_diag one;
		int i;

		snprintf(key, sizeof(key), "%s:%s", sec, f->name);
		v = iniparser_getstring(ini, key, NULL);
		if (!v)
			continue;
		ll_diag_clear(&one);
		if (impair_set(d, f->name, v, &one) < 0) {
			int ln = key_line(kl, sec, f->name);

			for (i = 0; i < one.n; i++) {
				if (ln)
					ll_diag_add(diag, one.e[i].level, f->name, "%s:%d: [%s] %s",
						    path, ln, sec, one.e[i].text);
				else
					ll_diag_add(diag, one.e[i].level, f->name, "%s: [%s] %s",
						    path, sec, one.e[i].text);
			}
		}
	}
}

/* Open path for reading if it is a regular file of at most PROFILE_SIZE_MAX
 * bytes; otherwise say which file is skipped and why (*rc set). Opening
 * does not block on a FIFO (O_NONBLOCK, cleared after the check). */
static FILE *profile_open(const char *path, struct ll_diag *diag, int *rc)
{
	struct stat st;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: %s", path, strerror(errno));
		*rc = errno == ENOENT ? -ENOENT : -EINVAL;
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s: skipped: not a regular file (%s)", path,
			    S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ?
			    "a directory" : S_ISSOCK(st.st_mode) ? "a socket" :
			    "a device");
		close(fd);
		*rc = -EINVAL;
		return NULL;
	}
	if (st.st_size > PROFILE_SIZE_MAX) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "%s: skipped: %lld bytes, over the %d-byte limit for a profile",
			    path, (long long)st.st_size, PROFILE_SIZE_MAX);
		close(fd);
		*rc = -EINVAL;
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "r");
	if (!f) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: %s", path, strerror(errno));
		close(fd);
		*rc = -ENOMEM;
		return NULL;
	}
	{
		int c, lines = 0;

		while ((c = getc_unlocked(f)) != EOF)
			lines += c == '\n';
		if (lines > PROFILE_LINES_MAX) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "%s: skipped: %d lines, over the %d-line limit for a profile",
				    path, lines, PROFILE_LINES_MAX);
			fclose(f);
			*rc = -EINVAL;
			return NULL;
		}
		rewind(f);
	}
	return f;
}

/* True if text names field as a word ("reorder needs a delay"). */
static bool names_field(const char *text, const char *field)
{
	size_t n = strlen(field);
	const char *t;

	for (t = strstr(text, field); t; t = strstr(t + 1, field)) {
		bool left = t == text || !(t[-1] == '-' || isalnum((unsigned char)t[-1]));
		bool right = !(t[n] == '-' || isalnum((unsigned char)t[n]));

		if (left && right)
			return true;
	}
	return false;
}

/* The cross-field checks of each side's dial (impair_validate) into diag,
 * also when the file has other problems: a message about a field whose
 * value was refused (diag entries from index vfirst on) is left out, as
 * is [b]'s copy of a message [a] already gave. */
static void validate_sides(const struct profile *p, const char *path,
			   struct ll_diag *diag, int vfirst)
{
	struct ll_diag v, seen;
	int side, i, k, vlast = diag->n;

	ll_diag_clear(&seen);
	for (side = 0; side < (p->per_side ? 2 : 1); side++) {
		ll_diag_clear(&v);
		impair_validate(side ? &p->b : &p->a, &v);
		for (i = 0; i < v.n; i++) {
			bool skip = false;

			for (k = vfirst; k < vlast && !skip; k++)
				skip = diag->e[k].field[0] &&
				       (names_field(v.e[i].text, diag->e[k].field) ||
					!strcmp(v.e[i].field, diag->e[k].field));
			for (k = 0; k < seen.n && !skip; k++)
				skip = !strcmp(seen.e[k].text, v.e[i].text);
			if (skip)
				continue;
			ll_diag_add(&seen, v.e[i].level, NULL, "%s", v.e[i].text);
			ll_diag_add(diag, v.e[i].level, v.e[i].field, "%s: %s%s",
				    path, p->per_side ? (side ? "[b] " : "[a] ") : "",
				    v.e[i].text);
		}
	}
}

/* iniparser reads the checked copy of the file (clean, a memfd) through
 * /proc/self/fd; its message, if any, names path. NULL on failure (diag). */
static dictionary *ini_read(FILE *clean, const char *path, struct ll_diag *diag)
{
	char fdpath[64], msg[LL_DIAG_LEN];
	dictionary *ini;

	if (fflush(clean) != 0) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: %s", path, strerror(errno));
		return NULL;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fileno(clean));
	ini_errbuf[0] = '\0';
	iniparser_set_error_callback(ini_errback);
	ini = iniparser_load(fdpath);
	if (!ini || ini_errbuf[0]) {
		ini_errtext(fdpath, path, msg, sizeof(msg));
		if (strstr(msg, path))
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s", msg);
		else
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: %s", path,
				    msg[0] ? msg : "cannot parse");
		if (ini)
			iniparser_freedict(ini);
		return NULL;
	}
	return ini;
}

int profile_load(const char *path, struct profile *p, struct ll_diag *diag)
{
	dictionary *ini;
	const char *s, *base;
	FILE *f, *clean = NULL;
	struct key_lines *kl;
	int before = diag->nerrors, before_values, rc, mfd;

	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", path);
	f = profile_open(path, diag, &rc);
	if (!f)
		return rc;
	kl = calloc(1, sizeof(*kl));
	/* the checked copy: a memfd, else an unlinked temporary file */
	mfd = memfd_create("linklab-profile", MFD_CLOEXEC);
	if (mfd >= 0 && !(clean = fdopen(mfd, "w+")))
		close(mfd);
	if (!clean)
		clean = tmpfile();
	if (!kl || !clean) {
		fclose(f);
		if (clean)
			fclose(clean);
		free(kl);
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: %s", path,
			    kl ? strerror(errno) : "out of memory");
		return -ENOMEM;
	}
	rc = lint_file(f, clean, path, kl, diag);
	fclose(f);
	ini = rc < 0 ? NULL : ini_read(clean, path, diag);
	fclose(clean);
	if (!ini) {
		free(kl);
		return -EINVAL;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	s = iniparser_getstring(ini, "profile:name", NULL);
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(base, "."), base);
	if (s && *s)
		snprintf(p->name, sizeof(p->name), "%s", s);
	s = iniparser_getstring(ini, "profile:description", "");
	snprintf(p->description, sizeof(p->description), "%s", s);

	before_values = diag->n;
	load_section(ini, "dial", &p->a, path, kl, diag);
	p->b = p->a;
	if (iniparser_find_entry(ini, "a")) {
		load_section(ini, "a", &p->a, path, kl, diag);
		p->per_side = true;
	}
	if (iniparser_find_entry(ini, "b")) {
		load_section(ini, "b", &p->b, path, kl, diag);
		p->per_side = true;
	}
	iniparser_freedict(ini);
	free(kl);

	validate_sides(p, path, diag, before_values);
	return diag->nerrors > before ? -EINVAL : 0;
}

/* The directories searched, in order, into dirs (each PATH_MAX). */
static int profile_dirs(char dirs[][PATH_MAX], int max, bool *user)
{
	const char *env = getenv("LINKLAB_PROFILE_PATH");
	char exe[PATH_MAX], *slash;
	ssize_t n;
	int nd = 0;

	if (env && *env) {
		char *copy = strdup(env), *tok, *save = NULL;

		for (tok = strtok_r(copy, ":", &save); tok && nd < max;
		     tok = strtok_r(NULL, ":", &save)) {
			user[nd] = true;
			snprintf(dirs[nd++], PATH_MAX, "%s", tok);
		}
		free(copy);
	}
	if (nd < max) {
		const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");

		user[nd] = true;
		if (x && *x)
			snprintf(dirs[nd++], PATH_MAX, "%s/linklab/profiles", x);
		else if (h && *h)
			snprintf(dirs[nd++], PATH_MAX, "%s/.config/linklab/profiles", h);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && nd < max) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			user[nd] = false;
			snprintf(dirs[nd++], PATH_MAX, "%.*s/../profiles",
				 PATH_MAX - 16, exe);
			if (nd < max) {
				user[nd] = false;
				snprintf(dirs[nd++], PATH_MAX, "%.*s/../share/linklab/profiles",
					 PATH_MAX - 32, exe);
			}
		}
	}
	return nd;
}

int profile_find(const char *name, char *path, size_t len, struct ll_err *err)
{
	char dirs[8][PATH_MAX];
	bool user[8];
	int nd, i;

	if (strchr(name, '/')) {
		if (access(name, R_OK) == 0) {
			snprintf(path, len, "%s", name);
			return 0;
		}
		return ll_err_set(err, -ENOENT, "profile file %s: %s", name,
				  strerror(errno));
	}
	nd = profile_dirs(dirs, 8, user);
	for (i = 0; i < nd; i++) {
		snprintf(path, len, "%s/%s.ini", dirs[i], name);
		if (access(path, R_OK) == 0)
			return 0;
	}
	return ll_err_set(err, -ENOENT,
			  "profile '%s' not found (see `linklab profile list`)", name);
}

int profile_list(struct profile_entry **out, int *n, struct ll_err *err)
{
	char dirs[8][PATH_MAX];
	bool user[8];
	struct profile_entry *v = NULL;
	int nd, i, k, cnt = 0, cap = 0;

	nd = profile_dirs(dirs, 8, user);
	for (i = 0; i < nd; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			bool dup = false;

			if (l < 5 || strcmp(de->d_name + l - 4, ".ini"))
				continue;
			for (k = 0; k < cnt; k++)
				if (!strncmp(v[k].name, de->d_name, l - 4) &&
				    v[k].name[l - 4] == '\0')
					dup = true;
			if (dup)
				continue;
			if (cnt == cap) {
				struct profile_entry *nv;

				cap = cap ? cap * 2 : 16;
				nv = realloc(v, (size_t)cap * sizeof(*v));
				if (!nv) {
					closedir(d);
					free(v);
					return ll_err_set(err, -ENOMEM, "out of memory");
				}
				v = nv;
			}
			snprintf(v[cnt].name, sizeof(v[cnt].name), "%.*s",
				 (int)(l - 4), de->d_name);
			snprintf(v[cnt].path, sizeof(v[cnt].path), "%.*s/%s",
				 PATH_MAX - 300, dirs[i], de->d_name);
			v[cnt].user = user[i];
			cnt++;
		}
		closedir(d);
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* mkdir -p for the user directory. */
static int mkdir_p(char *dir)
{
	char *p;

	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int profile_name_check(const char *name, struct ll_err *err)
{
	const char *c;

	if (!*name || strlen(name) > 48)
		return ll_err_set(err, -EINVAL, "profile name '%s': 1 to 48 characters", name);
	if (name[0] == '.' || name[0] == '-')
		return ll_err_set(err, -EINVAL, "profile name '%s': must not start with '%c'%s",
				  name, name[0], name[0] == '-' ? " (it would read as an option)" : "");
	if (strlen(name) > 4 && !strcasecmp(name + strlen(name) - 4, ".ini"))
		return ll_err_set(err, -EINVAL, "profile name '%s': give it without '.ini' "
				  "(the file is NAME.ini)", name);
	for (c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("-_.", *c))
			return ll_err_set(err, -EINVAL,
					  "profile name '%s': use letters, digits, '-', '_', '.'",
					  name);
	return 0;
}

static void write_section(FILE *f, const char *sec, const struct impair *d)
{
	const struct impair_field *fl;
	char val[64];

	fprintf(f, "\n[%s]\n", sec);
	for (fl = impair_fields; fl->name; fl++)
		if (d->set & fl->bit)
			fprintf(f, "%s = %s\n", fl->name,
				impair_get(d, fl, val, sizeof(val)));
}

/* Same dial: the same fields set with the same tc text. */
static bool dial_same(const struct impair *a, const struct impair *b)
{
	const struct impair_field *fl;
	char x[64], y[64];

	if (a->set != b->set)
		return false;
	for (fl = impair_fields; fl->name; fl++)
		if ((a->set & fl->bit) &&
		    strcmp(impair_get(a, fl, x, sizeof(x)), impair_get(b, fl, y, sizeof(y))))
			return false;
	return true;
}

int profile_write(const char *path, const char *name, const char *description,
		  const struct impair *a, const struct impair *b,
		  struct ll_err *err)
{
	char desc[256], tmp[PATH_MAX + 16];
	FILE *f;
	int fd;

	/* a temporary file renamed over path: a symlink at path is replaced,
	 * never followed */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return ll_err_set(err, -errno, "cannot write %s: %s", path, strerror(errno));
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return ll_err_set(err, -ENOMEM, "cannot write %s: out of memory", path);
	}
	fprintf(f, "; linklab profile\n[profile]\nname = %s\n", name);
	if (description && *description) {
		/* an inline ';' or '#' would cut the value when read back;
		 * a control byte (ESC, BEL, CR ...) is not text: a blank */
		snprintf(desc, sizeof(desc), "%s", description);
		for (char *c = desc; *c; c++)
			if (*c == ';' || *c == '#' || *c == '\n')
				*c = ',';
			else if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = ' ';
		fprintf(f, "description = %s\n", desc);
	}
	if (!b || dial_same(a, b)) {
		write_section(f, "dial", a);
	} else {
		write_section(f, "a", a);
		write_section(f, "b", b);
	}
	if (fclose(f) != 0) {
		unlink(tmp);
		return ll_err_set(err, -EIO, "cannot write %s", path);
	}
	if (rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		return ll_err_set(err, -e, "cannot write %s: %s", path, strerror(e));
	}
	return 0;
}

int profile_save_sides(const char *name, const char *description,
		       const struct impair *a, const struct impair *b,
		       char *path_out, size_t len, struct ll_err *err)
{
	char dirs[8][PATH_MAX], path[PATH_MAX + 80];
	bool user[8];
	int rc;

	rc = profile_name_check(name, err);
	if (rc < 0)
		return rc;
	if (profile_dirs(dirs, 8, user) < 1 || !user[0])
		return ll_err_set(err, -ENOENT, "no user profile directory (HOME unset)");
	rc = mkdir_p(dirs[0]);
	if (rc < 0)
		return ll_err_set(err, rc, "cannot create %s: %s", dirs[0], strerror(-rc));
	snprintf(path, sizeof(path), "%s/%s.ini", dirs[0], name);
	rc = profile_write(path, name, description, a, b, err);
	if (rc < 0)
		return rc;
	if (path_out)
		snprintf(path_out, len, "%s", path);
	return 0;
}

int profile_save(const char *name, const char *description,
		 const struct impair *d, char *path_out, size_t len,
		 struct ll_err *err)
{
	return profile_save_sides(name, description, d, NULL, path_out, len, err);
}

bool profile_is_user_path(const char *path)
{
	char dirs[8][PATH_MAX];
	bool user[8];
	int nd, i;
	size_t l;

	nd = profile_dirs(dirs, 8, user);
	for (i = 0; i < nd; i++) {
		l = strlen(dirs[i]);
		if (user[i] && !strncmp(path, dirs[i], l) && path[l] == '/' &&
		    !strchr(path + l + 1, '/'))
			return true;
	}
	return false;
}

int profile_rename(const char *path, const char *newname, char *path_out,
		   size_t len, struct ll_err *err)
{
	char npath[PATH_MAX + 80], line[PROFILE_LINE_MAX + 2], sec[64] = "";
	const char *slash;
	FILE *in, *out;
	bool named = false;
	int rc;

	rc = profile_name_check(newname, err);
	if (rc < 0)
		return rc;
	if (!profile_is_user_path(path))
		return ll_err_set(err, -EPERM,
				  "%s: shipped profiles are read-only (save a copy instead)",
				  path);
	slash = strrchr(path, '/');
	snprintf(npath, sizeof(npath), "%.*s/%s.ini", (int)(slash - path), path,
		 newname);
	if (access(npath, F_OK) == 0)
		return ll_err_set(err, -EEXIST, "profile %s already exists", npath);
	in = fopen(path, "r");
	if (!in)
		return ll_err_set(err, -errno, "%s: %s", path, strerror(errno));
	out = fopen(npath, "wx");
	if (!out) {
		rc = -errno;
		fclose(in);
		return ll_err_set(err, rc, "cannot write %s: %s", npath, strerror(-rc));
	}
	while (fgets(line, sizeof(line), in)) {
		char *s, *e;

		if (!memcmp(line, "\xef\xbb\xbf", 3))   /* a UTF-8 byte order mark */
			memmove(line, line + 3, strlen(line + 3) + 1);
		s = trim(line);

		if (*s == '[' && (e = strchr(s, ']'))) {
			if (!strcmp(sec, "profile") && !named) {
				fprintf(out, "name = %s\n", newname);
				named = true;
			}
			snprintf(sec, sizeof(sec), "%.*s", (int)(e - s - 1), s + 1);
			fprintf(out, "%s\n", s);
			continue;
		}
		if (!strcmp(sec, "profile") && !strncmp(s, "name", 4) &&
		    (s[4] == '=' || isspace((unsigned char)s[4]))) {
			fprintf(out, "name = %s\n", newname);
			named = true;
			continue;
		}
		fprintf(out, "%s\n", s);
	}
	fclose(in);
	if (!strcmp(sec, "profile") && !named)
		fprintf(out, "name = %s\n", newname);
	if (fclose(out) != 0) {
		unlink(npath);
		return ll_err_set(err, -EIO, "cannot write %s", npath);
	}
	if (unlink(path) < 0) {
		rc = -errno;
		unlink(npath);
		return ll_err_set(err, rc, "cannot remove %s: %s", path, strerror(-rc));
	}
	if (path_out)
		snprintf(path_out, len, "%s", npath);
	return 0;
}

int profile_delete(const char *path, struct ll_err *err)
{
	if (!profile_is_user_path(path))
		return ll_err_set(err, -EPERM,
				  "%s: shipped profiles are read-only", path);
	if (unlink(path) < 0)
		return ll_err_set(err, -errno, "cannot delete %s: %s", path,
				  strerror(errno));
	return 0;
}
