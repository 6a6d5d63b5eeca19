/* Streamed response bodies (http/http.h, "streamed bodies"; the server's
 * side in http/internal.h).
 *
 * A stream's bytes wait in one buffer (data[off..len)), appended by the
 * writer, consumed by libmicrohttpd's content reader on its I/O thread.
 * When the reader finds nothing to send it suspends the connection and
 * says so (suspended); the next write, end or stop resumes it. Each resume
 * answers exactly one suspend (both under the stream's lock), so
 * libmicrohttpd never sees a resume of a connection that is not
 * suspended. conn is cleared when libmicrohttpd frees the response (the
 * connection is done): nothing touches a connection after that.
 *
 * A suspended connection costs its socket and MHD's per-connection state,
 * no thread: thousands of idle streams are cheap. */
#include "http/http.h"
#include "http/internal.h"

#include <microhttpd.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/clock.h"
#include "util/banned.h"

struct http_stream {
    pthread_mutex_t lock;
    pthread_cond_t room; /* signalled when unsent bytes go out or the stream closes
                          * (http_stream_wait_room) */
    int refs;
    char *data;
    size_t off, len, cap, max;   /* unsent bytes: data[off..len); len - off <= max */
    bool ended;                  /* no more writes: the body ends after what is there */
    bool failed;                 /* ended by http_stream_fail: broken off, not ended */
    bool closed;                 /* the connection is done (or was cut): writes fail */
    bool suspended;              /* the connection waits for a write */
    struct MHD_Connection *conn; /* while the response is queued; NULL after */
    struct http_streams *reg;    /* the server's open streams, while in it */
    struct http_stream *prev, *next;
};

int http_stream_new(struct http_stream **out, size_t max_pending, struct err *err)
{
    struct http_stream *st = calloc(1, sizeof *st);
    *out = NULL;
    if (!st)
        return err_set(err, ERR_NOMEM, "out of memory");
    pthread_mutex_init(&st->lock, NULL);
    if (clock_cond_init(&st->room) != 0) {
        pthread_mutex_destroy(&st->lock);
        free(st);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    st->refs = 1;
    st->max = max_pending;
    *out = st;
    return 0;
}

static void stream_unref(struct http_stream *st)
{
    pthread_mutex_lock(&st->lock);
    bool last = --st->refs == 0;
    pthread_mutex_unlock(&st->lock);
    if (!last)
        return;
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->room);
    free(st->data);
    free(st);
}

struct http_stream *http_stream_ref(struct http_stream *st)
{
    pthread_mutex_lock(&st->lock);
    st->refs++;
    pthread_mutex_unlock(&st->lock);
    return st;
}

void http_stream_release(struct http_stream *st)
{
    if (st)
        stream_unref(st);
}

/* Under st->lock: let a connection waiting for data go on. */
static void wake(struct http_stream *st)
{
    if (st->closed || st->ended)
        pthread_cond_broadcast(&st->room); /* a writer waiting for room stops waiting */
    if (st->suspended && st->conn) {
        st->suspended = false;
        MHD_resume_connection(st->conn);
    }
}

/* Under st->lock: drop what is unsent and free its memory. */
static void drop_pending(struct http_stream *st)
{
    free(st->data);
    st->data = NULL;
    st->off = st->len = st->cap = 0;
}

/* Under st->lock: a client that does not read. Its socket is shut down so
 * that libmicrohttpd, which may be waiting to write to it, fails at once
 * instead of after the idle timeout. */
static void cut(struct http_stream *st)
{
    st->closed = true;
    drop_pending(st);
    if (st->conn) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(st->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci)
            shutdown(ci->connect_fd, SHUT_RDWR);
    }
    wake(st);
}

int http_stream_write(struct http_stream *st, const char *data, size_t len)
{
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    if (st->closed || st->ended) {
        rc = ERR_IO;
        goto out;
    }
    size_t pending = st->len - st->off;
    if (len > st->max || pending > st->max - len) {
        cut(st);
        rc = ERR_FULL;
        goto out;
    }
    if (st->off && st->len + len > st->cap) {
        memmove(st->data, st->data + st->off, pending);
        st->off = 0;
        st->len = pending;
    }
    if (st->len + len > st->cap) {
        size_t cap = st->cap ? st->cap : 1024;
        while (cap < st->len + len)
            cap *= 2;
        if (cap > st->max && st->max >= st->len + len)
            cap = st->max;
        char *p = realloc(st->data, cap);
        if (!p) {
            cut(st);
            rc = ERR_NOMEM;
            goto out;
        }
        st->data = p;
        st->cap = cap;
    }
    memcpy(st->data + st->len, data, len);
    st->len += len;
    wake(st);
out:
    pthread_mutex_unlock(&st->lock);
    return rc;
}

size_t http_stream_pending(struct http_stream *st)
{
    pthread_mutex_lock(&st->lock);
    size_t n = st->len - st->off;
    pthread_mutex_unlock(&st->lock);
    return n;
}

void http_stream_end(struct http_stream *st)
{
    pthread_mutex_lock(&st->lock);
    st->ended = true;
    wake(st);
    pthread_mutex_unlock(&st->lock);
}

void http_stream_fail(struct http_stream *st)
{
    pthread_mutex_lock(&st->lock);
    st->ended = true;
    st->failed = true;
    wake(st);
    pthread_mutex_unlock(&st->lock);
}

/* Under st->lock: whether the client of a parked connection has gone (its
 * socket reads as closed). libmicrohttpd does not watch the sockets of
 * suspended connections, so without this a client that left would be
 * noticed only at the next write. */
static bool parked_client_gone(struct http_stream *st)
{
    if (!st->suspended || !st->conn)
        return false;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(st->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return false;
    char c;
    ssize_t n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

bool http_stream_open(struct http_stream *st)
{
    pthread_mutex_lock(&st->lock);
    if (!st->closed && parked_client_gone(st)) {
        st->closed = true; /* the reader ends the response, MHD closes the connection */
        drop_pending(st);
        wake(st);
    }
    bool open = !st->closed && !st->ended;
    pthread_mutex_unlock(&st->lock);
    return open;
}

int http_stream_wait_room(struct http_stream *st, size_t room, int64_t timeout_ms)
{
    struct timespec until = clock_mono_in(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    for (;;) {
        if (st->closed || st->ended || room > st->max) {
            rc = ERR_IO;
            break;
        }
        if (st->len - st->off <= st->max - room)
            break;
        if (pthread_cond_timedwait(&st->room, &st->lock, &until) == ETIMEDOUT) {
            rc = st->len - st->off <= st->max - room ? 0 : ERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* ---- the server's side ------------------------------------------------------ */

/* libmicrohttpd's content reader, on its I/O thread. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct http_stream *st = cls;
    ssize_t n;
    (void)pos;
    pthread_mutex_lock(&st->lock);
    if (st->closed) {
        n = MHD_CONTENT_READER_END_WITH_ERROR;
    } else if (st->len > st->off) {
        size_t take = st->len - st->off;
        if (take > max)
            take = max;
        memcpy(buf, st->data + st->off, take);
        st->off += take;
        if (st->off == st->len)
            st->off = st->len = 0;
        pthread_cond_broadcast(&st->room);
        n = (ssize_t)take;
    } else if (st->failed) {
        /* The connection is closed without the chunked body's last
         * chunk: the client sees an incomplete transfer. */
        n = MHD_CONTENT_READER_END_WITH_ERROR;
    } else if (st->ended) {
        n = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        /* Nothing to send: park the connection until a write. Returning 0
         * is only allowed with the connection suspended (MHD would
         * otherwise call again at once). */
        st->suspended = true;
        MHD_suspend_connection(st->conn);
        n = 0;
    }
    pthread_mutex_unlock(&st->lock);
    return n;
}

/* libmicrohttpd is done with the response (the connection finished or
 * closed): the stream is closed and leaves the server's list. */
static void stream_done(void *cls)
{
    struct http_stream *st = cls;
    struct http_streams *reg = st->reg;
    if (reg) {
        pthread_mutex_lock(&reg->lock);
        if (st->prev)
            st->prev->next = st->next;
        else
            reg->head = st->next;
        if (st->next)
            st->next->prev = st->prev;
        reg->n--;
        pthread_mutex_unlock(&reg->lock);
    }
    pthread_mutex_lock(&st->lock);
    st->closed = true;
    st->conn = NULL;
    st->reg = NULL;
    st->suspended = false;
    drop_pending(st);
    pthread_cond_broadcast(&st->room);
    pthread_mutex_unlock(&st->lock);
    stream_unref(st);
}

void http_streams_init(struct http_streams *reg)
{
    memset(reg, 0, sizeof *reg);
    pthread_mutex_init(&reg->lock, NULL);
}

void http_streams_release(struct http_streams *reg)
{
    pthread_mutex_destroy(&reg->lock);
}

struct MHD_Response *http_stream_response(struct http_streams *reg, struct http_stream *st,
                                          struct MHD_Connection *conn)
{
    struct MHD_Response *mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, HTTP_STREAM_BLOCK,
                                                                stream_read, st, stream_done);
    if (!mr)
        return NULL;
    pthread_mutex_lock(&st->lock);
    st->refs++; /* the server's, dropped by stream_done */
    st->conn = conn;
    st->reg = reg;
    pthread_mutex_unlock(&st->lock);
    pthread_mutex_lock(&reg->lock);
    st->next = reg->head;
    st->prev = NULL;
    if (reg->head)
        reg->head->prev = st;
    reg->head = st;
    reg->n++;
    bool stopping = reg->stopping;
    pthread_mutex_unlock(&reg->lock);
    if (stopping)
        http_stream_end(st);
    return mr;
}

void http_streams_stop(struct http_streams *reg)
{
    pthread_mutex_lock(&reg->lock);
    reg->stopping = true;
    for (struct http_stream *st = reg->head; st; st = st->next) {
        pthread_mutex_lock(&st->lock);
        /* Promptly: what a client has not read yet is not waited for. */
        drop_pending(st);
        st->ended = true;
        wake(st);
        pthread_mutex_unlock(&st->lock);
    }
    pthread_mutex_unlock(&reg->lock);
}
