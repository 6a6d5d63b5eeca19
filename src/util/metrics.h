/* The process's metrics registry: named counters and gauges that any module
 * counts into, and their Prometheus text exposition (version 0.0.4).
 *
 * One registry per process, not one passed in: /metrics describes the
 * process, as Prometheus client libraries' default registry does, and a
 * counter is then one atomic add at the place the event happens, with no
 * handle to thread through every layer's options. Tests read differences
 * (before → after), never absolute values.
 *
 * Invariants: every value is a C11 atomic, so counters are exact under any
 * number of concurrent writers without a lock; only registration takes a
 * lock. A registered metric lives until the process exits, so a handle
 * never dangles and may be kept in a static. Depends on libc and util/buf
 * alone: any layer may count. Series with labels (api/metrics.h: requests
 * by endpoint and status) are written by their owners next to these, under
 * names they keep out of the registry with metrics_reserve. */
#ifndef NEWSD_UTIL_METRICS_H
#define NEWSD_UTIL_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define METRICS_MAX 64       /* registered counters and gauges */
#define METRICS_NAME_MAX 64  /* bytes of a name, NUL excluded */
#define METRICS_HELP_MAX 160 /* bytes of a help text, NUL excluded; longer is cut */
#define METRICS_RESERVED_MAX 8

struct metric; /* a registered counter or gauge */

/* The counter (monotonic, starts at 0) named name, registered with help on
 * first use; later calls return the same handle and ignore help (which may
 * then be NULL). NULL when the name is not a Prometheus name
 * ([a-zA-Z_:][a-zA-Z0-9_:]*, at most METRICS_NAME_MAX bytes), is taken by a
 * gauge or reserved (metrics_reserve), or the registry is full. Thread-safe. */
struct metric *metrics_counter(const char *name, const char *help);

/* The gauge (a signed value set at will) named name; as metrics_counter. */
struct metric *metrics_gauge(const char *name, const char *help);

/* Counter += n. No-op on NULL or on a gauge. */
void metrics_add(struct metric *m, uint64_t n);

/* Gauge = v. No-op on NULL or on a counter. */
void metrics_set(struct metric *m, int64_t v);

/* The current value (a counter's as int64, saturating); 0 for NULL. */
int64_t metrics_value(const struct metric *m);

/* Refuse registered names that start with prefix from now on: the caller
 * writes series of that name itself (idempotent; at most
 * METRICS_RESERVED_MAX prefixes). Thread-safe. */
void metrics_reserve(const char *prefix);

/* Append every registered metric: # HELP, # TYPE, its one sample. Sticky
 * buf errors, checked by the caller. */
void metrics_render(struct buf *b);

/* Append the # HELP and # TYPE lines of a family (type: "counter",
 * "gauge", "histogram"); help is escaped as the format asks. For owners of
 * series the registry does not hold. */
void metrics_family(struct buf *b, const char *name, const char *help, const char *type);

#endif
