/* SPDX-License-Identifier: MIT */
/* dialopt.h - the one parser of dial options on a command line, shared by
 * `apply`, `bridge`, `bridge --set` and `profile save`: --NAME VALUE or
 * --NAME=VALUE for every field of impair_fields[], optionally with a
 * direction prefix (--a-to-b-NAME, --b-to-a-NAME) and the bridge's aliases
 * (--overhead N = --packet-overhead N; --cell SIZE[,OVERHEAD] = --cell-size
 * SIZE --cell-overhead OVERHEAD). Pure: every problem goes to a struct
 * ll_diag (all of them, each naming the field, the value and the accepted
 * range, as impair_set words them), nothing is printed. A command walks its
 * argv, hands each word to dialopt_take and handles the words that are not
 * dial options itself. */
#ifndef LINKLAB_DIALOPT_H
#define LINKLAB_DIALOPT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"

/* Where an option's value goes: one direction's own dial, or both (no
 * prefix). A direction's own value wins over a plain one in any order. */
enum dialopt_level { DIALOPT_A_TO_B = 0, DIALOPT_B_TO_A = 1, DIALOPT_BOTH = 2,
		     DIALOPT_LEVELS = 3 };

enum dialopt_flag {
	DIALOPT_DIRS      = 1u << 0,  /* accept --a-to-b-NAME and --b-to-a-NAME */
	DIALOPT_ALIASES   = 1u << 1,  /* accept --overhead and --cell */
	DIALOPT_DIST_FILE = 1u << 2,  /* --distribution FILE (a value with a '/')
				       * is kept as a path, not parsed */
};

#define DIALOPT_VALUE_MAX 128

/* The options seen so far. Fill with dialopt_init; read lvl[] (or
 * dialopt_dial) when the command line is done. */
struct dialopt {
	unsigned flags;                          /* enum dialopt_flag */
	struct impair lvl[DIALOPT_LEVELS];       /* the values, per level */
	uint32_t seen[DIALOPT_LEVELS];           /* IMP_* bits given per level */
	char first[DIALOPT_LEVELS][32][DIALOPT_VALUE_MAX];  /* first value of
						  * each field, by bit number */
	char dist_file[DIALOPT_LEVELS][PATH_MAX];  /* --distribution FILE */
};

/* Empty o; flags: enum dialopt_flag. */
void dialopt_init(struct dialopt *o, unsigned flags);

/* If argv[*i] is a dial option, take it and its value (the next word
 * unless it is written --NAME=VALUE; *i then points at the last word
 * taken) and return 1; problems go to diag: a missing value, an option
 * given twice at the same level ("option --rate given twice ('10mbit', then
 * '20mbit'): give it once"), a bad value (impair_set's text; a direction's
 * prefixed "a_to_b: " / "b_to_a: "). Return 0 (nothing taken) when it is
 * not a dial option. */
int dialopt_take(struct dialopt *o, int argc, char *const *argv, int *i,
		 struct ll_diag *diag);

/* Every word of argv[0..argc) must be a dial option: the others are named
 * ("unknown option '--x'"). Returns the errors added to diag (0: all good). */
int dialopt_parse(struct dialopt *o, int argc, char *const *argv, struct ll_diag *diag);

/* The dial of one direction (DIALOPT_A_TO_B or DIALOPT_B_TO_A): the plain
 * options with the direction's own on top; DIALOPT_BOTH: the plain ones.
 * file (flen bytes, may be NULL) gets the --distribution FILE that applies
 * ("" when none); out then carries no distribution name. */
void dialopt_dial(const struct dialopt *o, enum dialopt_level level, struct impair *out,
		  char *file, size_t flen);

#endif
