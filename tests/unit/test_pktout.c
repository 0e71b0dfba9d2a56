/* SPDX-License-Identifier: MIT */
/* test_pktout.c - the endpoint engine's checksum completion (pktout.h):
 * a CHECKSUM_PARTIAL packet (check field = the pseudo-header sum, as the
 * kernel leaves it) comes out with the checksum RFC 1071 gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/engine/pktout.h"

static uint32_t sum16(uint32_t s, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Pseudo-header sum of an IPv4 (l3 20) or IPv6 (l3 40) packet. */
static uint32_t pseudo(const unsigned char *ip, size_t len, size_t l3, int proto)
{
	uint32_t s = 0;

	if (l3 == 20)
		s = sum16(s, ip + 12, 8);
	else
		s = sum16(s, ip + 8, 32);
	s += (uint32_t)proto + (uint32_t)(len - l3);
	return s;
}

static void build(unsigned char *p, size_t len, size_t l3, int proto)
{
	size_t i;

	memset(p, 0, len);
	for (i = l3; i < len; i++)
		p[i] = (unsigned char)(i * 37 + 11);
	if (l3 == 20) {
		p[0] = 0x45;
		p[2] = (unsigned char)(len >> 8);
		p[3] = (unsigned char)len;
		p[8] = 64;
		p[9] = (unsigned char)proto;
		memcpy(p + 12, "\x0a\xc7\x00\x01\x0a\xc7\x00\x02", 8);
	} else {
		p[0] = 0x60;
		p[4] = (unsigned char)((len - 40) >> 8);
		p[5] = (unsigned char)(len - 40);
		p[6] = (unsigned char)proto;
		p[7] = 64;
		p[8] = 0xfd;
		p[9] = 0x99;
		p[23] = 1;
		p[24] = 0xfd;
		p[25] = 0x99;
		p[39] = 2;
	}
}

static void check_one(size_t len, size_t l3, int proto)
{
	unsigned char p[1600], want[1600];
	size_t off = l3 + (proto == 6 ? 16 : 6);
	uint16_t c, ps;

	build(p, len, l3, proto);
	/* the reference: the whole checksum over pseudo header and L4 */
	p[off] = p[off + 1] = 0;
	c = (uint16_t)~fold(pseudo(p, len, l3, proto) + sum16(0, p + l3, len - l3));
	if (c == 0 && proto == 17)
		c = 0xffff;
	memcpy(want, p, len);
	want[off] = (unsigned char)(c >> 8);
	want[off + 1] = (unsigned char)c;
	/* CHECKSUM_PARTIAL: the pseudo-header sum, folded, not inverted */
	ps = fold(pseudo(p, len, l3, proto));
	p[off] = (unsigned char)(ps >> 8);
	p[off + 1] = (unsigned char)ps;
	assert_true(pktout_csum_complete(p, (uint32_t)len));
	assert_memory_equal(p, want, len);
	/* and the receiver's check: the sum over everything is 0xffff */
	assert_int_equal(fold(pseudo(p, len, l3, proto) + sum16(0, p + l3, len - l3)), 0xffff);
}

static void test_csum(void **state)
{
	(void)state;
	check_one(1500, 20, 6);     /* TCP over IPv4 */
	check_one(61, 20, 17);      /* UDP over IPv4, odd length */
	check_one(1280, 40, 6);     /* TCP over IPv6 */
	check_one(77, 40, 17);      /* UDP over IPv6, odd length */
}

static void test_csum_refused(void **state)
{
	unsigned char p[100];

	(void)state;
	build(p, sizeof(p), 20, 1);     /* ICMP: not ours to complete */
	assert_false(pktout_csum_complete(p, sizeof(p)));
	build(p, sizeof(p), 20, 6);
	assert_false(pktout_csum_complete(p, 30));      /* no room for the TCP check */
	memset(p, 0, sizeof(p));
	assert_false(pktout_csum_complete(p, sizeof(p)));   /* not IP */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum),
		cmocka_unit_test(test_csum_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
