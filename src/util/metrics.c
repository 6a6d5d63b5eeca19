/* The process's metrics registry (util/metrics.h).
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/ —
 * "# HELP", "# TYPE", then one `name{labels} value` line per series. */
#include "util/metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/banned.h"

enum metric_kind { METRIC_COUNTER, METRIC_GAUGE };

struct metric {
    enum metric_kind kind;
    char name[METRICS_NAME_MAX + 1];
    char help[METRICS_HELP_MAX + 1];
    _Atomic uint64_t count; /* counters */
    _Atomic int64_t value;  /* gauges */
};

static struct metric registry[METRICS_MAX];
/* Entries below n_registered are fully written before n_registered grows
 * (release), so a renderer that loads it (acquire) reads no half entry. */
static _Atomic size_t n_registered;
/* Guards registration and the reserved prefixes. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static char reserved[METRICS_RESERVED_MAX][METRICS_NAME_MAX + 1];
static size_t n_reserved;

static bool name_valid(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > METRICS_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == ':';
        if (!alpha && !(i > 0 && ch >= '0' && ch <= '9'))
            return false;
    }
    return true;
}

/* Under registry_lock. */
static bool name_reserved(const char *name)
{
    for (size_t i = 0; i < n_reserved; i++)
        if (!strncmp(name, reserved[i], strlen(reserved[i])))
            return true;
    return false;
}

void metrics_reserve(const char *prefix)
{
    if (!prefix || !*prefix || strlen(prefix) > METRICS_NAME_MAX)
        return;
    pthread_mutex_lock(&registry_lock);
    bool known = false;
    for (size_t i = 0; i < n_reserved && !known; i++)
        known = !strcmp(reserved[i], prefix);
    if (!known && n_reserved < METRICS_RESERVED_MAX)
        snprintf(reserved[n_reserved++], sizeof reserved[0], "%s", prefix);
    pthread_mutex_unlock(&registry_lock);
}

static struct metric *metric_get(enum metric_kind kind, const char *name, const char *help)
{
    struct metric *m = NULL;
    if (!name_valid(name))
        return NULL;
    pthread_mutex_lock(&registry_lock);
    size_t n = atomic_load_explicit(&n_registered, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(registry[i].name, name)) {
            m = registry[i].kind == kind ? &registry[i] : NULL;
            goto out;
        }
    }
    if (n == METRICS_MAX || name_reserved(name))
        goto out;
    m = &registry[n];
    m->kind = kind;
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->help, sizeof m->help, "%s", help ? help : "");
    atomic_store_explicit(&m->count, 0, memory_order_relaxed);
    atomic_store_explicit(&m->value, 0, memory_order_relaxed);
    atomic_store_explicit(&n_registered, n + 1, memory_order_release);
out:
    pthread_mutex_unlock(&registry_lock);
    return m;
}

struct metric *metrics_counter(const char *name, const char *help)
{
    return metric_get(METRIC_COUNTER, name, help);
}

struct metric *metrics_gauge(const char *name, const char *help)
{
    return metric_get(METRIC_GAUGE, name, help);
}

void metrics_add(struct metric *m, uint64_t n)
{
    if (m && m->kind == METRIC_COUNTER)
        atomic_fetch_add_explicit(&m->count, n, memory_order_relaxed);
}

void metrics_set(struct metric *m, int64_t v)
{
    if (m && m->kind == METRIC_GAUGE)
        atomic_store_explicit(&m->value, v, memory_order_relaxed);
}

int64_t metrics_value(const struct metric *m)
{
    if (!m)
        return 0;
    if (m->kind == METRIC_GAUGE)
        return atomic_load_explicit(&m->value, memory_order_relaxed);
    uint64_t c = atomic_load_explicit(&m->count, memory_order_relaxed);
    return c > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)c;
}

/* HELP text escapes backslash and newline (the format's only two). */
void metrics_family(struct buf *b, const char *name, const char *help, const char *type)
{
    buf_printf(b, "# HELP %s ", name);
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            buf_puts(b, "\\\\");
        else if (*p == '\n')
            buf_puts(b, "\\n");
        else
            buf_putc(b, *p);
    }
    buf_printf(b, "\n# TYPE %s %s\n", name, type);
}

void metrics_render(struct buf *b)
{
    size_t n = atomic_load_explicit(&n_registered, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        const struct metric *m = &registry[i];
        bool counter = m->kind == METRIC_COUNTER;
        metrics_family(b, m->name, m->help, counter ? "counter" : "gauge");
        if (counter)
            buf_printf(b, "%s %llu\n", m->name,
                       (unsigned long long)atomic_load_explicit(&m->count, memory_order_relaxed));
        else
            buf_printf(b, "%s %lld\n", m->name,
                       (long long)atomic_load_explicit(&m->value, memory_order_relaxed));
    }
}
