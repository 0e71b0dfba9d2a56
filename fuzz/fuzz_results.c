/* fuzz_results.c - libFuzzer target: the results object of the exchange
 * (iperf3_results_parse with 3.12's quirks), and a parse -> build -> parse
 * round trip that must keep every stream. Input: JSON text. */
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
	struct iperf3_results *r = calloc(2, sizeof(*r));
	struct ll_err err;
	if (r && iperf3_results_parse(j, &r[0], &err) == 0) {
		cJSON *b = iperf3_results_build(&r[0]);
		if (b) {
			if (iperf3_results_parse(b, &r[1], &err) != 0)
				abort();
			if (r[1].nstreams != r[0].nstreams)
				abort();
			for (int i = 0; i < r[0].nstreams; i++)
				if (r[1].s[i].id != r[0].s[i].id ||
				    r[1].s[i].bytes != r[0].s[i].bytes)
					abort();
			cJSON_Delete(b);
		}
	}
	free(r);
	cJSON_Delete(j);
	return 0;
}
