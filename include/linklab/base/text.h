/* SPDX-License-Identifier: MIT */
/* text.h - make untrusted text (from the network, a peer, a file) safe to
 * print on a terminal. Every byte that could drive the terminal is shown as
 * a visible escape instead: C0 controls (0x00..0x1f), DEL (0x7f), C1 controls
 * (U+0080..U+009F, ECMA-48 8.3), the bidi controls that reorder the text
 * after them (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069,
 * Unicode UAX #9; "Trojan Source", CVE-2021-42574) and bytes that are not valid UTF-8 (RFC 3629:
 * overlong forms, surrogates, > U+10FFFF, truncated sequences) become
 * "\xNN", one per byte. Valid printable UTF-8 is kept as is. */
#ifndef LINKLAB_TEXT_H
#define LINKLAB_TEXT_H

#include <stddef.h>

/* Flags for text_sanitize_n. */
enum {
	TEXT_KEEP_NL = 1,   /* keep '\n' and '\t' (multi-line output) */
	TEXT_PARTIAL = 2,   /* input continues: leave a truncated UTF-8
			     * sequence at the end unconsumed */
	TEXT_KEEP_C0 = 4,   /* keep every C0 byte (for a JSON encoder that
			     * escapes them as \u00NN itself) */
};

/* Copy s into buf (len bytes, always NUL-terminated when len > 0) with every
 * control byte and invalid UTF-8 byte replaced by "\xNN" (no newline kept).
 * Output that does not fit is cut at a character boundary. Returns buf;
 * s NULL gives "". */
char *text_sanitize(const char *s, char *buf, size_t len);

/* The same over n bytes of s (NULs included). Writes at most outlen - 1
 * bytes plus a NUL. Returns the number of input bytes consumed: all of them
 * unless out filled up, or TEXT_PARTIAL left an incomplete trailing UTF-8
 * sequence (at most 3 bytes). */
size_t text_sanitize_n(const char *s, size_t n, char *out, size_t outlen,
		       unsigned flags);

/* 1 if s (NUL-terminated) would print unchanged by text_sanitize_n with
 * flags (0: text_sanitize), else 0. */
int text_is_safe(const char *s, unsigned flags);

/* Terminal columns s takes (NUL-terminated, printable UTF-8 as
 * text_sanitize leaves it): combining marks and zero-width characters 0,
 * East Asian wide/fullwidth characters and emoji 2, others 1 (an invalid
 * byte 1). For padding a column by what is seen, not by bytes. */
size_t text_width(const char *s);

/* How many bytes of s (as text_width takes it) fit in cols terminal
 * columns, cut at a character boundary: a prefix never splits a UTF-8
 * sequence nor a wide character. 0 for s NULL. */
size_t text_fit(const char *s, size_t cols);

#endif
