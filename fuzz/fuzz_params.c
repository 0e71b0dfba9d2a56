/* fuzz_params.c - libFuzzer target: the parameter object a client sends
 * (iperf3_params_parse, then the server's range checks). Input: JSON text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linklab/traffic/iperf3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	cJSON *j = cJSON_Parse(s);
	free(s);
	if (!j)
		return 0;
	struct iperf3_params p;
	struct ll_err err;
	if (iperf3_params_parse(j, &p, &err) == 0) {
		struct ll_diag *d = calloc(1, sizeof(*d));
		if (d) {
			int ie = iperf3_params_check(&p, d);
			if (ie == 0) {
				/* accepted parameters round-trip through the builder */
				cJSON *b = iperf3_params_build(&p);
				struct iperf3_params q;
				if (b && iperf3_params_parse(b, &q, &err) != 0)
					abort();
				if (b && (q.parallel != p.parallel || q.udp != p.udp ||
					  q.reverse != p.reverse || q.len != p.len))
					abort();
				cJSON_Delete(b);
			}
			free(d);
		}
	}
	cJSON_Delete(j);
	return 0;
}
