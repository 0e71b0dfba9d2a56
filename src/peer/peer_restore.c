/* SPDX-License-Identifier: MIT */
/* peer_restore.c - put an interface back as it was before a change
 * (peer_restore.h). */
#include "linklab/peer/peer_restore.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/model/qdisc.h"

int peer_restore_to(struct peer *p, const char *dev, const struct impair *before,
		    struct ll_err *err)
{
	struct qdisc_state *qs;
	struct impair now;
	int rc;

	rc = p->ops->clear(p, dev, err);
	if (rc < 0 || impair_is_empty(before))
		return rc;
	qs = calloc(1, sizeof(*qs));
	if (!qs)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = p->ops->read_qdiscs(p, dev, qs, err);
	if (rc == 0) {
		qdisc_state_to_impair(qs, &now);
		if (memcmp(&now, before, sizeof(now)) != 0)
			rc = p->ops->apply(p, dev, before, err);
	}
	free(qs);
	return rc;
}
