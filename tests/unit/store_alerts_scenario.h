/* The alerts scenario of store.h, run on the embedded store by test_store
 * and on both stores by test_store_pg (the answers must be the same):
 * the per-key limit, the cursor starting at the head, leases as a
 * compare and set, deliveries kept in order until done. Include after
 * cmocka.h and store/store.h. */
#ifndef NEWSD_TESTS_STORE_ALERTS_SCENARIO_H
#define NEWSD_TESTS_STORE_ALERTS_SCENARIO_H

static int64_t scenario_key(struct store *s, unsigned char tag)
{
    struct key_record k;
    struct err err;
    int64_t id = 0;
    memset(&k, 0, sizeof k);
    k.plan = "unlimited";
    memset(k.hash, tag, sizeof k.hash);
    err_clear(&err);
    assert_int_equal(store_key_insert(s, &k, &id, &err), 0);
    return id;
}

/* head: the store's last article seq before the scenario. */
static void store_alerts_scenario(struct store *s, int64_t head)
{
    struct err err;
    struct arena a;
    struct alert_record *list = NULL;
    struct alert_delivery *ds = NULL;
    size_t n = 0;
    int64_t id1 = 0, id2 = 0, id3 = 0, count = -1;
    arena_init(&a, 0);
    err_clear(&err);

    int64_t k1 = scenario_key(s, 1), k2 = scenario_key(s, 2);
    struct alert_record r = {.key_id = k1,
                             .query = "{\"q\":\"zebra\"}",
                             .webhook = "http://127.0.0.1:9/hook",
                             .secret = "s3cret",
                             .cursor_seq = -1};
    assert_int_equal(store_alert_add(s, &r, 2, &id1, &err), 0);
    assert_int_equal(store_alert_add(s, &r, 2, &id2, &err), 0);
    /* The plan's limit is per key, checked in the insert's transaction. */
    assert_int_equal(store_alert_add(s, &r, 2, NULL, &err), ERR_FULL);
    r.key_id = k2;
    r.query = "{\"q\":\"okapi\"}";
    r.dedupe = true;
    assert_int_equal(store_alert_add(s, &r, 2, &id3, &err), 0);
    r.key_id = 999;
    assert_int_equal(store_alert_add(s, &r, 0, NULL, &err), ERR_NOTFOUND);
    assert_true(id1 > 0 && id2 > id1 && id3 > id2);

    assert_int_equal(store_alerts_list(s, &a, k1, &list, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(list[0].id, id1);
    assert_string_equal(list[0].query, "{\"q\":\"zebra\"}");
    assert_string_equal(list[0].webhook, "http://127.0.0.1:9/hook");
    assert_string_equal(list[0].secret, "s3cret");
    assert_int_equal(list[0].cursor_seq, head); /* only what comes after it */
    assert_null(list[0].lease_owner);
    assert_false(list[0].dedupe);
    assert_int_equal(list[0].copies, 0);
    assert_int_equal(store_alerts_list(s, &a, 0, &list, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_true(list[2].dedupe);

    /* Leases: A takes all; B gets none until A's lease ends. */
    assert_int_equal(store_alerts_lease(s, &a, "node-a", 1000, 2000, &list, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(list[2].lease_owner, "node-a");
    assert_int_equal(list[2].lease_until_ms, 2000);
    assert_int_equal(store_alerts_lease(s, &a, "node-b", 1500, 2500, &list, &n, &err), 0);
    assert_int_equal(n, 0);
    /* Asked again early, the leases stay as they are (no write per ask)... */
    assert_int_equal(store_alerts_lease(s, &a, "node-a", 1100, 2100, &list, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(list[0].lease_until_ms, 2000);
    /* ... and past half their length they are renewed. */
    assert_int_equal(store_alerts_lease(s, &a, "node-a", 1600, 2600, &list, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(list[0].lease_until_ms, 2600);
    /* A disabled key's alerts are paused, not handed to anyone. */
    assert_int_equal(store_key_update(s, k2, NULL, KEY_DISABLED, &err), 0);
    assert_int_equal(store_alerts_lease(s, &a, "node-a", 1600, 2600, &list, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(store_key_update(s, k2, NULL, KEY_ACTIVE, &err), 0);
    assert_int_equal(store_alerts_lease(s, &a, "node-a", 1600, 2600, &list, &n, &err), 0);
    assert_int_equal(n, 3);

    const int64_t first[] = {11, 12}, second[] = {12, 13}, refused[] = {99};
    int64_t *stories = NULL;
    struct alert_delivery d = {.seq = head + 5,
                               .id = "d-1",
                               .body = "{\"alert\":1,\"articles\":[]}",
                               .next_ms = 1700,
                               .created_ms = 1700,
                               .stories = first,
                               .n_stories = 2};
    assert_int_equal(store_alert_advance(s, id1, "node-a", head, 0, 0, &d, &err), 0);
    /* The cursor moved: an advance from the old one is refused. */
    assert_int_equal(store_alert_advance(s, id1, "node-a", head, head + 6, 1, NULL, &err),
                     ERR_BUSY);
    struct alert_delivery late = d;
    late.id = "d-late";
    late.stories = refused;
    late.n_stories = 1;
    assert_int_equal(store_alert_advance(s, id1, "node-a", head, 0, 1, &late, &err), ERR_BUSY);
    assert_int_equal(store_alert_advance(s, id1, "node-a", head + 5, head + 7, 2, NULL, &err), 0);
    d.seq = head + 9;
    d.id = "d-2";
    d.stories = second;
    assert_int_equal(store_alert_advance(s, id1, "node-a", head + 7, 0, 3, &d, &err), 0);
    /* The stories delivered, oldest first (12 moved to d-2's seq); none of
     * a refused move. */
    assert_int_equal(store_alert_stories(s, &a, id1, &stories, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(stories[0], 11);
    assert_true((stories[1] == 12 && stories[2] == 13) || (stories[1] == 13 && stories[2] == 12));
    assert_int_equal(store_alert_deliveries_count(s, &count, &err), 0);
    assert_int_equal(count, 2);

    /* A stopping node gives its leases back: B takes them at once. */
    assert_int_equal(store_alerts_release(s, "node-a", &err), 0);
    assert_int_equal(store_alerts_lease(s, &a, "node-b", 1700, 2700, &list, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(store_alerts_release(s, "node-b", &err), 0);
    assert_int_equal(store_alerts_lease(s, &a, "node-a", 1700, 2700, &list, &n, &err), 0);
    assert_int_equal(n, 3);
    /* B takes over once A's lease has ended; A can no longer move on. */
    assert_int_equal(store_alerts_lease(s, &a, "node-b", 2700, 3700, &list, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(list[0].cursor_seq, head + 9);
    /* The copies counted with each move add up; a refused move adds none. */
    assert_int_equal(list[0].copies, 5);
    assert_int_equal(store_alert_advance(s, id1, "node-a", head + 9, head + 10, 0, NULL, &err),
                     ERR_BUSY);
    assert_int_equal(store_alert_advance(s, 4242, "node-b", 0, 1, 0, NULL, &err), ERR_NOTFOUND);

    /* Deliveries come oldest first, bodies as kept; failures are recorded. */
    assert_int_equal(store_alert_deliveries(s, &a, id1, 10, &ds, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(ds[0].id, "d-1");
    assert_string_equal(ds[0].body, "{\"alert\":1,\"articles\":[]}");
    assert_int_equal(ds[0].seq, head + 5);
    assert_string_equal(ds[1].id, "d-2");
    assert_int_equal(store_alert_delivery_failed(s, id1, "d-1", 3, 9000, 1800, &err), 0);
    assert_int_equal(store_alert_delivery_failed(s, id1, "nope", 3, 9000, 1800, &err),
                     ERR_NOTFOUND);
    assert_int_equal(store_alert_deliveries(s, &a, id1, 1, &ds, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ds[0].attempts, 3);
    assert_int_equal(ds[0].next_ms, 9000);
    assert_int_equal(ds[0].first_failure_ms, 1800);
    assert_int_equal(store_alert_delivery_done(s, id1, "d-1", &err), 0);
    assert_int_equal(store_alert_delivery_done(s, id1, "d-1", &err), 0);
    assert_int_equal(store_alert_deliveries(s, &a, id1, 10, &ds, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(ds[0].id, "d-2");

    /* A key removes only its own; the deliveries go with the alert. */
    assert_int_equal(store_alert_remove(s, id1, k2, &err), ERR_NOTFOUND);
    assert_int_equal(store_alert_remove(s, id1, k1, &err), 0);
    assert_int_equal(store_alert_remove(s, id1, k1, &err), ERR_NOTFOUND);
    assert_int_equal(store_alert_deliveries_count(s, &count, &err), 0);
    assert_int_equal(count, 0);
    assert_int_equal(store_alert_stories(s, &a, id1, &stories, &n, &err), 0);
    assert_int_equal(n, 0);
    /* The stories kept are the newest STORE_ALERT_STORIES_MAX: one
     * delivery of that many pushes the older one out. */
    int64_t *many = calloc(STORE_ALERT_STORIES_MAX, sizeof *many);
    assert_non_null(many);
    for (size_t i = 0; i < STORE_ALERT_STORIES_MAX; i++)
        many[i] = 1000 + (int64_t)i;
    struct alert_delivery old = {
        .seq = head + 1, .id = "d-old", .body = "{}", .stories = first, .n_stories = 1};
    struct alert_delivery big = {.seq = head + 2,
                                 .id = "d-big",
                                 .body = "{}",
                                 .stories = many,
                                 .n_stories = STORE_ALERT_STORIES_MAX};
    assert_int_equal(store_alert_advance(s, id2, "node-b", head, 0, 0, &old, &err), 0);
    assert_int_equal(store_alert_advance(s, id2, "node-b", head + 1, 0, 0, &big, &err), 0);
    assert_int_equal(store_alert_stories(s, &a, id2, &stories, &n, &err), 0);
    assert_int_equal(n, STORE_ALERT_STORIES_MAX);
    for (size_t i = 0; i < n; i++)
        assert_true(stories[i] >= 1000);
    free(many);
    assert_int_equal(store_alert_remove(s, id3, 0, &err), 0);
    /* A deleted key takes its alerts with it. */
    assert_int_equal(store_key_delete(s, k1, &err), 0);
    assert_int_equal(store_alerts_list(s, &a, 0, &list, &n, &err), 0);
    assert_int_equal(n, 0);
    /* An id is never given again: a delivery names its alert by it. */
    int64_t id4 = 0;
    r.key_id = k2;
    assert_int_equal(store_alert_add(s, &r, 0, &id4, &err), 0);
    assert_true(id4 > id3);
    arena_release(&a);
}

#endif
