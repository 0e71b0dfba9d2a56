/* SPDX-License-Identifier: MIT */
/* cmd.h - helpers shared by the non-console commands (src/cmd_*.c): common
 * option handling and text/JSON printing of links and qdiscs. */
#ifndef LINKLAB_CMD_H
#define LINKLAB_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "linklab/peer/peer.h"
#include "linklab/peer/peerset.h"

/* Which peers a command acts on. */
enum cmd_sides { CMD_SIDE_A = 1, CMD_SIDE_B = 2 };

struct cmd_common {
	struct peerset_opts po;
	bool json;        /* -J */
	bool local_only;  /* --local */
	bool remote_only; /* --remote */
	bool help;        /* -h, --help */
};

/* Consume a common option (peer options, -J, --local, --remote). Returns 1
 * if consumed, 0 if not, <0 on a missing value (err filled). */
int cmd_common_opt(struct cmd_common *c, int argc, char **argv, int *i,
		   struct ll_err *err);

/* Sides selected by the options for an open peerset; 0 and err filled if the
 * choice is impossible (--remote without --peer, both flags). */
unsigned cmd_sides(const struct cmd_common *c, const struct peerset *ps,
		   struct ll_err *err);

cJSON *cmd_json_links(const struct link_list *ll, const char *selected);
cJSON *cmd_json_qdiscs(const struct qdisc_state *s);
void cmd_print_links(FILE *f, const char *label, const struct link_list *ll,
		     const char *selected);
void cmd_print_qdiscs(FILE *f, const char *label, const struct qdisc_state *s);

/* Options with a value seen so far by a hand-written parser. */
struct cmd_seen {
	int n;
	struct {
		char name[48];
		const char *val;
	} e[64];
};

/* Record option name (its first nlen bytes, e.g. "--rate" of "--rate=1mbit")
 * given with val. If it was given before, add "option NAME given twice
 * ('FIRST', then 'SECOND'): give it once" to diag (field: the name without
 * dashes) and return true: the caller drops the second value. */
bool cmd_seen_twice(struct cmd_seen *s, const char *name, size_t nlen,
		    const char *val, struct ll_diag *diag);

/* Replace every string value and key under node (and its siblings) that
 * holds DEL, C1 or invalid UTF-8 by its text_sanitize_n(TEXT_KEEP_C0) form,
 * so a printed document carries none raw (cJSON escapes C0 itself). */
void cmd_json_sanitize(cJSON *node);

/* A printed JSON document txt (malloc'd) made safe the same way: returned
 * as is when it holds no DEL, C1 or invalid UTF-8, else parsed, sanitized,
 * printed again (formatted or not) and txt freed. */
char *cmd_json_text_safe(char *txt, bool formatted);

/* Print cJSON document to stdout (formatted, sanitized) and free it. */
void cmd_print_json(cJSON *doc);

/* Say on stderr what a console that ended without restoring (kill -9)
 * left impaired on this host (stale owner records, peer_lock.h, whose
 * interface is still journalled), one line per interface. */
void cmd_leftovers(const char *cmd);

/* Does a live console drive side i (0: A's interface dev, 1: the peer B)?
 * 1 (desc: who, pid, since when), 0 no, <0 B could not tell (werr: why). */
int cmd_side_holder(struct peerset *ps, int i, const char *dev, char *desc, size_t len,
		    char *werr, size_t wlen);

/* Report an error "linklab CMD: msg" on stderr; returns cmd_status(err). */
int cmd_fail(const char *cmd, const struct ll_err *err);

/* Exit status for an error: 2 for bad input (-EINVAL, -ENODEV), else 1. */
int cmd_status(const struct ll_err *err);

/* err's message without a leading "DEV: " when the caller prints DEV. */
const char *cmd_errtext(const char *dev, const struct ll_err *err);

/* Add {"label": p->label, "dev": dev} as doc["a"] (i == 0) or doc["b"];
 * returns it for more fields. */
cJSON *cmd_json_side(cJSON *doc, int i, const struct peer *p, const char *dev);

/* Which engine holds dev's dial on p ("kernel", or "user" with the endpoint
 * engine's pid, queue and counters): into side (JSON) when given, else a
 * line on f when the endpoint engine holds it (cmd_engine.c). */
void cmd_engine_report(FILE *f, cJSON *side, struct peer *p, const char *dev);

#endif
