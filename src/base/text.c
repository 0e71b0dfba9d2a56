/* SPDX-License-Identifier: MIT */
/* text.c - visible escapes for terminal-driving bytes (see text.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "linklab/base/text.h"

/* Length of the valid UTF-8 sequence at s (n bytes available): 1..4, 0 if
 * the bytes are invalid, -1 if a valid prefix is cut short by n. Sets *cp. */
static int utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	int len, i;
	uint32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, v = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, v = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, v = c & 0x07, min = 0x10000;
	else
		return 0;
	for (i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
		/* reject overlong / surrogate / too-large early, at the
		 * second byte, so a cut prefix is not called valid */
		if (i == 1 && ((len == 3 && c == 0xe0 && s[1] < 0xa0) ||
			       (len == 3 && c == 0xed && s[1] >= 0xa0) ||
			       (len == 4 && c == 0xf0 && s[1] < 0x90) ||
			       (len == 4 && c == 0xf4 && s[1] >= 0x90)))
			return 0;
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* A code point a terminal acts on instead of showing: C1 controls (U+0080..
 * U+009F) and the Unicode bidi controls that reorder what follows them
 * (U+061C, U+200E/U+200F, U+202A..U+202E, U+2066..U+2069; Unicode UAX #9). */
static int is_control_cp(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* A C0 byte the flags let through. */
static int keep_c0(uint32_t cp, unsigned flags)
{
	return (flags & TEXT_KEEP_C0) ||
	       ((flags & TEXT_KEEP_NL) && (cp == '\n' || cp == '\t'));
}

size_t text_sanitize_n(const char *s, size_t n, char *out, size_t outlen,
		       unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0;

	if (outlen == 0)
		return 0;
	while (i < n) {
		uint32_t cp = 0;
		int l = utf8_len(u + i, n - i, &cp);
		size_t need;

		if (l < 0 && (flags & TEXT_PARTIAL))
			break;
		if (l > 0 && cp >= 0x20 && cp != 0x7f && !is_control_cp(cp))
			need = (size_t)l;
		else if (l == 1 && cp < 0x20 && keep_c0(cp, flags))
			need = 1;
		else
			l = 0, need = 4;   /* one byte as \xNN */
		if (o + need >= outlen)
			break;
		if (l > 0) {
			memcpy(out + o, u + i, (size_t)l);
			i += (size_t)l;
		} else {
			snprintf(out + o, 5, "\\x%02x", u[i]);
			i++;
		}
		o += need;
	}
	out[o] = '\0';
	return i;
}

char *text_sanitize(const char *s, char *buf, size_t len)
{
	if (!len)
		return buf;
	if (!s) {
		buf[0] = '\0';
		return buf;
	}
	text_sanitize_n(s, strlen(s), buf, len, 0);
	return buf;
}

int text_is_safe(const char *s, unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0, i = 0;

	while (i < n) {
		uint32_t cp = 0;
		int l = utf8_len(u + i, n - i, &cp);

		if (l <= 0 || (cp < 0x20 && !keep_c0(cp, flags)) || cp == 0x7f ||
		    is_control_cp(cp))
			return 0;
		i += (size_t)l;
	}
	return 1;
}

/* Columns code point cp takes on a terminal: 0 for combining marks and
 * zero-width characters, 2 for East Asian wide and fullwidth ones and
 * emoji (after Markus Kuhn's wcwidth), else 1. */
static int cp_width(uint32_t cp)
{
	static const uint32_t zero[][2] = {
		{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd },
		{ 0x0610, 0x061a }, { 0x064b, 0x065f }, { 0x0e31, 0x0e31 },
		{ 0x0e34, 0x0e3a }, { 0x1ab0, 0x1aff }, { 0x1dc0, 0x1dff },
		{ 0x200b, 0x200f }, { 0x20d0, 0x20ff }, { 0xfe00, 0xfe0f },
		{ 0xfe20, 0xfe2f }, { 0xfeff, 0xfeff },
	};
	static const uint32_t wide[][2] = {
		{ 0x1100, 0x115f }, { 0x2e80, 0x303e }, { 0x3041, 0x33ff },
		{ 0x3400, 0x4dbf }, { 0x4e00, 0x9fff }, { 0xa000, 0xa4cf },
		{ 0xac00, 0xd7a3 }, { 0xf900, 0xfaff }, { 0xfe30, 0xfe4f },
		{ 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x1f300, 0x1f64f },
		{ 0x1f900, 0x1f9ff }, { 0x20000, 0x3fffd },
	};
	size_t i;

	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		if (cp >= zero[i][0] && cp <= zero[i][1])
			return 0;
	for (i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

size_t text_width(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0, w = 0;

	while (n) {
		uint32_t cp = 0;
		int len = utf8_len(u, n, &cp);

		if (len <= 0) {
			len = 1;          /* an invalid byte: one column */
			cp = 'x';
		}
		w += (size_t)cp_width(cp);
		u += len;
		n -= (size_t)len;
	}
	return w;
}

size_t text_fit(const char *s, size_t cols)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0, w = 0, used = 0;

	while (used < n) {
		uint32_t cp = 0;
		int len = utf8_len(u + used, n - used, &cp);

		if (len <= 0) {
			len = 1;
			cp = 'x';
		}
		if (w + (size_t)cp_width(cp) > cols)
			break;
		w += (size_t)cp_width(cp);
		used += (size_t)len;
	}
	return used;
}
