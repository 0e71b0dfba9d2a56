/* SPDX-License-Identifier: MIT */
/* netem_dist.c - find and read iproute2's netem .dist tables (format of
 * iproute2 tc/q_netem.c get_distribution; written independently). */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linklab/model/impair.h"
#include "linklab/model/netem_dist.h"

const char *netem_dist_name(int dist)
{
	switch (dist) {
	case IMP_DIST_NORMAL: return "normal";
	case IMP_DIST_PARETO: return "pareto";
	case IMP_DIST_PARETONORMAL: return "paretonormal";
	default: return NULL;
	}
}

static int try_dir(const char *dir, const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s.dist", dir, name);

	return n > 0 && (size_t)n < len && access(path, R_OK) == 0;
}

int netem_dist_find(const char *name, char *path, size_t len,
		    struct ll_err *err)
{
	static const char *const fixed[] = { "/usr/lib/tc", "/usr/lib64/tc",
					     "/usr/local/lib/tc" };
	const char *env = getenv("TC_LIB_DIR");
	glob_t g;
	size_t i;

	if (!name || !*name || strchr(name, '/'))
		return ll_err_set(err, -EINVAL, "'%s' is not a distribution name",
				  name ? name : "");
	if (env && *env && try_dir(env, name, path, len))
		return 0;
	if (glob("/usr/lib/*/tc", GLOB_NOSORT, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++)
			if (try_dir(g.gl_pathv[i], name, path, len)) {
				globfree(&g);
				return 0;
			}
		globfree(&g);
	}
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (try_dir(fixed[i], name, path, len))
			return 0;
	return ll_err_set(err, -ENOENT,
			  "no distribution table %s.dist ($TC_LIB_DIR, /usr/lib/*/tc, /usr/lib/tc, /usr/lib64/tc, /usr/local/lib/tc): install iproute2's tc",
			  name);
}

int netem_dist_load(int dist, int16_t *out, size_t max, size_t *n,
		    struct ll_err *err)
{
	const char *name = netem_dist_name(dist);
	char path[PATH_MAX], line[4096];
	unsigned lineno = 0;
	size_t k = 0;
	FILE *f;
	int rc;

	*n = 0;
	if (!name)
		return ll_err_set(err, -EINVAL, "distribution %d has no table", dist);
	rc = netem_dist_find(name, path, sizeof(path), err);
	if (rc < 0)
		return rc;
	f = fopen(path, "re");
	if (!f)
		return ll_err_set(err, -errno, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		lineno++;
		if (line[0] == '\n' || line[0] == '#')
			continue;
		for (;;) {
			long v;

			errno = 0;
			v = strtol(p, &end, 0);
			if (end == p)
				break;
			if (errno || v < INT16_MIN || v > INT16_MAX) {
				fclose(f);
				return ll_err_set(err, -EINVAL,
						  "%s:%u: value out of the s16 range", path,
						  lineno);
			}
			if (k >= max) {
				fclose(f);
				return ll_err_set(err, -EINVAL,
						  "%s: more than %zu values", path, max);
			}
			out[k++] = (int16_t)v;
			p = end;
		}
		p += strspn(p, " \t\r\n");
		if (*p) {
			fclose(f);
			return ll_err_set(err, -EINVAL, "%s:%u: '%.20s' is not a number",
					  path, lineno, p);
		}
	}
	if (ferror(f)) {
		fclose(f);
		return ll_err_set(err, -EIO, "%s: read error", path);
	}
	fclose(f);
	if (!k)
		return ll_err_set(err, -EINVAL, "%s: no values", path);
	*n = k;
	return 0;
}
