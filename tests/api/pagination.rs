//! docs/API.md §4 (pagination of every list), exercised on GET /admin/v1/users.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::helpers::*;

fn users_path() -> String {
    format!("{A}/users")
}

/// Creates `n` users in order; returns their external ids, oldest first.
async fn create_users(app: &TestApp, tag: &str, n: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let ext = format!("{tag}-{i:02}-{}", &random_hex()[..6]);
        app.create_user_as(&ext, json!({"first_name": format!("P{i}")}))
            .await;
        out.push(ext);
    }
    out
}

async fn get_page(app: &TestApp, params: &[(&str, &str)]) -> (Resp, Value) {
    let r = app.admin(GET, &users_path()).query(params).go().await;
    let body = r.page();
    (r, body)
}

fn exts(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["external_id"].as_str().unwrap().to_string())
        .collect()
}

fn ids(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["id"].as_str().unwrap().to_string())
        .collect()
}

#[track_caller]
fn assert_desc(ids: &[String], what: &str) {
    for w in ids.windows(2) {
        assert!(
            w[0] > w[1],
            "{what}: ids must be strictly descending: {ids:?}"
        );
    }
}

/// Follows `page.<direction>` from `cursor` until `has_more_<direction>` is
/// false; checks each page on the way; returns the pages in walk order.
async fn walk(app: &TestApp, direction: &str, cursor: Option<String>, limit: usize) -> Vec<Value> {
    let lim = limit.to_string();
    let mut pages = Vec::new();
    let mut cursor = cursor;
    for _ in 0..1000 {
        let mut params = vec![("limit", lim.as_str())];
        if let Some(c) = &cursor {
            params.push((direction, c.as_str()));
        }
        let (r, body) = get_page(app, &params).await;
        let page = &body["page"];
        assert_eq!(page["limit"], json!(limit), "page.limit: {r}");
        let n = body["items"].as_array().unwrap().len();
        assert!(n <= limit, "{n} items on a page of {limit}: {r}");
        assert_desc(&ids(&body), "a page");
        let more = page[format!("has_more_{direction}")].as_bool().unwrap();
        pages.push(body.clone());
        if !more {
            assert!(
                page[direction].is_null(),
                "page.{direction} must be null when has_more_{direction} is false: {r}"
            );
            return pages;
        }
        assert_eq!(n, limit, "every page but the last is full: {r}");
        let next = page[direction]
            .as_str()
            .unwrap_or_else(|| panic!("page.{direction} must be a cursor: {r}"))
            .to_string();
        assert_ne!(Some(&next), cursor.as_ref(), "the cursor must move: {r}");
        cursor = Some(next);
    }
    panic!("walk did not end within 1000 pages");
}

#[track_caller]
fn assert_each_once(seen: &[String], want: &[String], what: &str) {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for e in seen {
        *counts.entry(e.as_str()).or_default() += 1;
    }
    let dups: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    let missing: Vec<_> = want
        .iter()
        .filter(|e| !counts.contains_key(e.as_str()))
        .collect();
    let extra: Vec<_> = seen.iter().filter(|e| !want.contains(e)).collect();
    assert!(
        dups.is_empty() && missing.is_empty() && extra.is_empty(),
        "{what}: every item exactly once; duplicates {dups:?}, missing {missing:?}, unexpected {extra:?}"
    );
}

#[tokio::test]
async fn page_sizes_default_cap_and_exact_fit() {
    let app = TestApp::spawn();
    let users = create_users(&app, "lim", 60).await;
    let newest_first: Vec<String> = users.iter().rev().cloned().collect();

    // default 25, newest first
    let (r, body) = get_page(&app, &[]).await;
    let page = &body["page"];
    assert_eq!(page["limit"], json!(25), "{r}");
    assert_eq!(
        exts(&body),
        newest_first[..25].to_vec(),
        "newest first: {r}"
    );
    assert_eq!(page["has_more_after"], json!(true), "{r}");
    assert!(page["after"].is_string(), "{r}");
    assert_eq!(page["has_more_before"], json!(false), "first page: {r}");
    assert!(page["before"].is_null(), "first page: {r}");

    // capped at 1000, also for values too large for an integer
    for big in ["1000000", "1000", "99999999999999999999999999"] {
        let (r, body) = get_page(&app, &[("limit", big)]).await;
        assert_eq!(body["page"]["limit"], json!(1000), "limit={big}: {r}");
        assert_eq!(exts(&body), newest_first, "limit={big}: {r}");
        assert_eq!(body["page"]["has_more_after"], json!(false), "{r}");
        assert!(body["page"]["after"].is_null(), "{r}");
    }

    // exactly as many items as the limit: nothing follows
    let (r, body) = get_page(&app, &[("limit", "60")]).await;
    assert_eq!(exts(&body).len(), 60, "{r}");
    assert_eq!(
        body["page"]["has_more_after"],
        json!(false),
        "exact fit: {r}"
    );
    assert!(body["page"]["after"].is_null(), "exact fit: {r}");
    let (r, body) = get_page(&app, &[("limit", "59")]).await;
    assert_eq!(exts(&body).len(), 59, "{r}");
    assert_eq!(body["page"]["has_more_after"], json!(true), "{r}");
    // the page after a page of 59 holds the one oldest item and is the last
    let after = body["page"]["after"].as_str().unwrap().to_string();
    let (r, body) = get_page(&app, &[("limit", "59"), ("after", &after)]).await;
    assert_eq!(exts(&body), vec![users[0].clone()], "{r}");
    assert_eq!(body["page"]["has_more_after"], json!(false), "{r}");
    assert_eq!(body["page"]["has_more_before"], json!(true), "{r}");
    let (r, body) = get_page(&app, &[("limit", "1")]).await;
    assert_eq!(exts(&body), vec![users[59].clone()], "{r}");

    // invalid limits
    for bad in ["0", "-5", "abc", "1.5"] {
        let r = app
            .admin(GET, &users_path())
            .query(&[("limit", bad)])
            .go()
            .await;
        assert_invalid_param(&r, "limit");
    }
}

#[tokio::test]
async fn walking_forward_then_back_sees_every_item_once() {
    let app = TestApp::spawn();
    let users = create_users(&app, "walk", 60).await;
    let newest_first: Vec<String> = users.iter().rev().cloned().collect();

    // forward with after, limit 7: 8 full pages and one of 4
    let fwd = walk(&app, "after", None, 7).await;
    assert_eq!(fwd.len(), 9, "pages of 7 over 60 items");
    let first = &fwd[0]["page"];
    assert!(first["before"].is_null(), "first page: page.before");
    assert_eq!(first["has_more_before"], json!(false), "first page");
    for p in &fwd[1..] {
        assert_eq!(p["page"]["has_more_before"], json!(true), "later page: {p}");
        assert!(p["page"]["before"].is_string(), "later page: {p}");
    }
    let seen: Vec<String> = fwd.iter().flat_map(exts).collect();
    assert_each_once(&seen, &users, "walking with after");
    assert_eq!(seen, newest_first, "order across pages: newest first");
    let all_ids: Vec<String> = fwd.iter().flat_map(ids).collect();
    assert_desc(&all_ids, "across pages");

    // back with before from the last page
    let last = fwd.last().unwrap();
    assert_eq!(exts(last).len(), 4, "last page: {last}");
    let before = last["page"]["before"].as_str().unwrap().to_string();
    let back = walk(&app, "before", Some(before), 7).await;
    for p in &back {
        assert_eq!(
            p["page"]["has_more_after"],
            json!(true),
            "pages fetched with before: {p}"
        );
        assert!(p["page"]["after"].is_string(), "{p}");
    }
    let newest = back.last().unwrap();
    assert!(
        newest["page"]["before"].is_null(),
        "the newest page: {newest}"
    );
    assert_eq!(newest["page"]["has_more_before"], json!(false), "{newest}");
    let mut seen_back: Vec<String> = exts(last);
    for p in &back {
        seen_back.extend(exts(p));
    }
    assert_each_once(&seen_back, &users, "walking back with before");
    // read in reverse walk order, the pages give the newest-first list again
    let mut rebuilt: Vec<String> = Vec::new();
    for p in back.iter().rev() {
        rebuilt.extend(exts(p));
    }
    rebuilt.extend(exts(last));
    assert_eq!(
        rebuilt, newest_first,
        "pages fetched with before are newest first"
    );

    // a cursor does not bind to the limit
    let (_, p1) = get_page(&app, &[("limit", "10")]).await;
    let after = p1["page"]["after"].as_str().unwrap().to_string();
    let (r, p2) = get_page(&app, &[("limit", "20"), ("after", &after)]).await;
    assert_eq!(exts(&p2), newest_first[10..30].to_vec(), "{r}");
    assert_eq!(p2["page"]["limit"], json!(20), "{r}");
    let before = p2["page"]["before"].as_str().unwrap().to_string();
    let (r, p0) = get_page(&app, &[("limit", "3"), ("before", &before)]).await;
    assert_eq!(exts(&p0), newest_first[7..10].to_vec(), "{r}");
    assert_eq!(p0["page"]["has_more_before"], json!(true), "{r}");
}

#[tokio::test]
async fn inserts_and_deletes_between_pages_neither_duplicate_nor_skip() {
    let app = TestApp::spawn();
    let users = create_users(&app, "ins", 60).await;
    let nf: Vec<String> = users.iter().rev().cloned().collect(); // newest first

    let (r, p1) = get_page(&app, &[("limit", "10")]).await;
    assert_eq!(exts(&p1), nf[..10].to_vec(), "{r}");
    let after1 = p1["page"]["after"].as_str().unwrap().to_string();

    // newer items arrive: the next page is unaffected
    let fresh = create_users(&app, "new", 5).await;
    let (r, p2) = get_page(&app, &[("limit", "10"), ("after", &after1)]).await;
    assert_eq!(
        exts(&p2),
        nf[10..20].to_vec(),
        "inserts must not shift pages: {r}"
    );
    let after2 = p2["page"]["after"].as_str().unwrap().to_string();
    let before2 = p2["page"]["before"].as_str().unwrap().to_string();

    // items of the next page are deleted: the page continues past them
    let gone = [nf[20].clone(), nf[25].clone()];
    for e in &gone {
        let r = app
            .admin(DELETE, &format!("{A}/users/{}", enc(e)))
            .go()
            .await;
        assert_eq!(r.status, 204, "{r}");
    }
    let (r, p3) = get_page(&app, &[("limit", "10"), ("after", &after2)]).await;
    let want3: Vec<String> = nf[21..32]
        .iter()
        .filter(|e| !gone.contains(e))
        .cloned()
        .collect();
    assert_eq!(exts(&p3), want3, "deletes must not skip items: {r}");

    // the rest of the walk: every remaining original exactly once, no new ones
    let after3 = p3["page"]["after"].as_str().unwrap().to_string();
    let rest = walk(&app, "after", Some(after3), 10).await;
    let mut seen: Vec<String> = [exts(&p1), exts(&p2), exts(&p3)].concat();
    seen.extend(rest.iter().flat_map(exts));
    let remaining: Vec<String> = users
        .iter()
        .filter(|e| !gone.contains(e))
        .cloned()
        .collect();
    assert_each_once(
        &seen,
        &remaining,
        "walking after across inserts and deletes",
    );

    // going back from page 2: page 1 exactly, then the new items
    let (r, back1) = get_page(&app, &[("limit", "10"), ("before", &before2)]).await;
    assert_eq!(exts(&back1), nf[..10].to_vec(), "{r}");
    assert_eq!(
        back1["page"]["has_more_before"],
        json!(true),
        "new items precede: {r}"
    );
    let b = back1["page"]["before"].as_str().unwrap().to_string();
    let (r, back2) = get_page(&app, &[("limit", "10"), ("before", &b)]).await;
    let fresh_nf: Vec<String> = fresh.iter().rev().cloned().collect();
    assert_eq!(exts(&back2), fresh_nf, "{r}");
    assert_eq!(back2["page"]["has_more_before"], json!(false), "{r}");
    assert!(back2["page"]["before"].is_null(), "{r}");

    // a fresh first page starts with the new items
    let (r, first) = get_page(&app, &[("limit", "10")]).await;
    let mut want = fresh_nf.clone();
    want.extend(nf[..5].iter().cloned());
    assert_eq!(exts(&first), want, "{r}");
}

#[tokio::test]
async fn bad_cursors_are_invalid_params() {
    let app = TestApp::spawn();
    create_users(&app, "cur", 12).await;
    let (_, p1) = get_page(&app, &[("limit", "5")]).await;
    let cur = p1["page"]["after"].as_str().unwrap().to_string();
    let (_, p2) = get_page(&app, &[("limit", "5"), ("after", &cur)]).await;
    let cur_before = p2["page"]["before"].as_str().unwrap().to_string();
    let users = users_path();

    // both directions at once → param before
    for (a, b) in [(&cur, &cur), (&cur, &cur_before)] {
        let r = app
            .admin(GET, &users)
            .query(&[("after", a.as_str()), ("before", b.as_str())])
            .go()
            .await;
        assert_invalid_param(&r, "before");
    }

    // garbage
    for garbage in [
        "garbage!!",
        "eyJpZCI6IjEyMyJ9",
        "0",
        "AAAAAAAAAAAAAAAAAAAAAAAA",
        "%%%",
    ] {
        for param in ["after", "before"] {
            let r = app.admin(GET, &users).query(&[(param, garbage)]).go().await;
            assert_invalid_param(&r, param);
        }
    }

    // tampered: one character changed somewhere, or truncated
    let flip = |s: &str, i: usize| {
        let mut c: Vec<char> = s.chars().collect();
        c[i] = if c[i] == 'A' { 'B' } else { 'A' };
        c.into_iter().collect::<String>()
    };
    let n = cur.chars().count();
    assert!(n >= 4, "cursor too short to tamper with: {cur:?}");
    let mut tampered: Vec<String> = [0, n / 3, n / 2, (2 * n) / 3]
        .iter()
        .map(|&i| flip(&cur, i))
        .filter(|t| t != &cur)
        .collect();
    tampered.push(cur.chars().take(n - 3).collect());
    tampered.push(format!("{cur}AAAA"));
    for t in &tampered {
        let r = app
            .admin(GET, &users)
            .query(&[("after", t.as_str()), ("limit", "5")])
            .go()
            .await;
        assert_invalid_param(&r, "after");
    }
    let n = cur_before.chars().count();
    let t = flip(&cur_before, n / 2);
    let r = app
        .admin(GET, &users)
        .query(&[("before", t.as_str())])
        .go()
        .await;
    assert_invalid_param(&r, "before");

    // a users cursor on another list
    for list in ["notifications", "channels"] {
        let r = app
            .admin(GET, &format!("{A}/{list}"))
            .query(&[("after", cur.as_str()), ("limit", "5")])
            .go()
            .await;
        assert_invalid_param(&r, "after");
        let r = app
            .admin(GET, &format!("{A}/{list}"))
            .query(&[("before", cur_before.as_str())])
            .go()
            .await;
        assert_invalid_param(&r, "before");
    }

    // the genuine cursors still work
    let (r, again) = get_page(&app, &[("limit", "5"), ("after", &cur)]).await;
    assert_eq!(exts(&again), exts(&p2), "{r}");
    let (r, back) = get_page(&app, &[("limit", "5"), ("before", &cur_before)]).await;
    assert_eq!(exts(&back), exts(&p1), "{r}");
}
