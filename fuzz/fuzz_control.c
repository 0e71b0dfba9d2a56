/* fuzz_control.c - libFuzzer target: the control connection as a client
 * reads it: state bytes, SERVER_ERROR's 8 bytes, u32-BE length-prefixed
 * JSON (iperf3_recv_state, iperf3_read_server_error, iperf3_json_read) from
 * a socketpair holding the input; the peer has closed its end. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linklab/traffic/iperf3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	struct ll_err err;

	if (size > 32768)
		return 0;   /* stays within the socket buffer */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	if (size && write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	close(sv[1]);
	for (int steps = 0; steps < 64; steps++) {
		int st;
		if (iperf3_recv_state(sv[0], &st, 0, &err) < 0)
			break;
		if (st == IPERF3_SERVER_ERROR) {
			iperf3_read_server_error(sv[0], 0, &err);
			break;
		}
		if (st == IPERF3_EXCHANGE_RESULTS || st == IPERF3_LINKLAB_SAMPLE ||
		    st == IPERF3_PARAM_EXCHANGE) {
			cJSON *j = NULL;
			if (iperf3_json_read(sv[0], &j, 65536, 0, &err) < 0)
				break;
			struct iperf3_results *r = calloc(1, sizeof(*r));
			if (r)
				iperf3_results_parse(j, r, &err);
			free(r);
			struct iperf3_params p;
			iperf3_params_parse(j, &p, &err);
			cJSON_Delete(j);
		}
	}
	close(sv[0]);
	return 0;
}
