/* util/array.h: the typed growable array keeps what it held, doubles its
 * room, and refuses a size that overflows without touching the array. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/array.h"
#include "util/err.h"

struct point {
    int x, y;
};

static void pushed_items_stay_in_order_as_the_room_grows(void **state)
{
    (void)state;
    ARRAY(struct point) pts = ARRAY_INIT;
    assert_null(pts.items);
    for (int i = 0; i < 1000; i++) {
        struct point *p = array_push(&pts);
        assert_non_null(p);
        *p = (struct point){i, -i};
        assert_true(pts.cap >= pts.n);
    }
    assert_int_equal(pts.n, 1000);
    assert_int_equal(pts.cap, 1024); /* 16 doubled six times */
    for (int i = 0; i < 1000; i++)
        assert_true(pts.items[i].x == i && pts.items[i].y == -i);
    array_release(&pts);
    assert_null(pts.items);
    assert_int_equal(pts.n + pts.cap, 0);
}

static void room_is_reserved_ahead_and_kept_when_it_suffices(void **state)
{
    (void)state;
    ARRAY(char) bytes = ARRAY_INIT;
    assert_int_equal(array_grow(&bytes, 0), 0);
    assert_null(bytes.items); /* nothing asked, nothing allocated */
    assert_int_equal(array_grow(&bytes, 100), 0);
    assert_int_equal(bytes.cap, 128);
    char *before = bytes.items;
    bytes.n = 100;
    assert_int_equal(array_grow(&bytes, 28), 0);
    assert_ptr_equal(bytes.items, before);
    assert_int_equal(bytes.cap, 128);
    array_release(&bytes);
}

/* The caller's own fields: what push/ and api/ hold inside their structs. */
static void own_fields_grow_through_array_reserve(void **state)
{
    (void)state;
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    for (int64_t i = 0; i < 40; i++) {
        assert_int_equal(array_reserve(&ids, &cap, n, 1, sizeof *ids), 0);
        ids[n++] = i * i;
    }
    assert_int_equal(cap, 64);
    assert_int_equal(ids[39], 39 * 39);
    free(ids);
}

static void sizes_that_overflow_are_refused_and_change_nothing(void **state)
{
    (void)state;
    ARRAY(uint64_t) v = ARRAY_INIT;
    assert_non_null(array_push(&v));
    v.items[0] = 42;
    uint64_t *items = v.items;
    size_t cap = v.cap;
    assert_int_equal(array_grow(&v, SIZE_MAX), ERR_NOMEM);         /* n + more */
    assert_int_equal(array_grow(&v, SIZE_MAX / 2), ERR_NOMEM);     /* the doubling */
    assert_int_equal(array_grow(&v, SIZE_MAX / 8 + 1), ERR_NOMEM); /* the bytes */
    assert_ptr_equal(v.items, items);
    assert_int_equal(v.cap, cap);
    assert_int_equal(v.n, 1);
    assert_true(v.items[0] == 42);
    array_release(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pushed_items_stay_in_order_as_the_room_grows),
        cmocka_unit_test(room_is_reserved_ahead_and_kept_when_it_suffices),
        cmocka_unit_test(own_fields_grow_through_array_reserve),
        cmocka_unit_test(sizes_that_overflow_are_refused_and_change_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
