//! Hello, created and updated events with their per-user seq, fan-out to
//! every socket of a user, and resume with since_seq.

use super::*;

#[tokio::test]
async fn hello_comes_first_with_seq_zero_and_meta() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("hello", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    let h = hello(&mut ws, 0).await;
    assert_eq!(
        h,
        json!({"type": "hello", "seq": 0, "meta": {"unread_count": 0, "unseen_count": 0}}),
        "hello of a user without events"
    );
    silence(&mut ws, 300).await;

    // a user with one event: hello carries its seq and the counts
    let mut ws2 = connect_user(&f.app, &ext, "").await;
    hello(&mut ws2, 0).await;
    f.run(&ext, 1).await;
    expect_type(&mut ws2, "feed_entry.created").await;
    let mut ws3 = connect_user(&f.app, &ext, "").await;
    let h = hello(&mut ws3, 1).await;
    assert_eq!(
        h["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{h}"
    );
    silence(&mut ws3, 300).await;
}

#[tokio::test]
async fn created_event_arrives_within_a_second_of_the_run() {
    let f = fixture().await;
    let (actor_ext, _) = f
        .app
        .create_user("actor", json!({"first_name": "Ann"}))
        .await;
    let (ext, _) = f.app.create_user("created", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    hello(&mut ws, 0).await;

    let r = f
        .app
        .admin(POST, &format!("{A}/flows/{}/run", f.flow_id))
        .json(&json!({"recipients": [{"external_id": ext}], "actor": actor_ext, "data": {"i": 7}}))
        .go()
        .await;
    r.ok(202);
    let accepted = Instant::now();
    let ev = match next_got(&mut ws, Duration::from_secs(1)).await {
        Got::Text(v) => v,
        other => panic!("no frame within 1 s of the run's 202: {other:?}"),
    };
    let took = accepted.elapsed();
    assert!(took <= Duration::from_secs(1), "created after {took:?}");
    assert_event(&ev, "feed_entry.created", 1);
    assert_eq!(
        ev["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{ev}"
    );
    let entry = &ev["entry"];
    assert_eq!(entry["data"]["subject"], json!("S7"), "{ev}");
    assert_eq!(entry["data"]["body"], json!("B7"), "{ev}");
    assert_eq!(entry["flow_id"], json!(f.flow_id), "{ev}");
    assert_eq!(entry["actor"]["external_id"], json!(actor_ext), "{ev}");
    for k in ["read", "seen", "archived", "clicked"] {
        assert_eq!(entry[k], json!(false), "entry.{k}: {ev}");
    }
    // the entry is the feed entry as GET /feed/{id} shows it
    let r = f
        .app
        .user(GET, &format!("{U}/feed/{}", s(&entry["id"])), &ext)
        .go()
        .await;
    assert_eq!(&r.ok(200), entry, "event entry vs GET /feed/{{id}}");
    silence(&mut ws, 300).await;
}

#[tokio::test]
async fn every_socket_of_a_user_receives_every_event() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("fan", json!({})).await;
    let (other, _) = f.app.create_user("other", json!({})).await;
    let mut a = connect_user(&f.app, &ext, "").await;
    hello(&mut a, 0).await;
    let mut b = connect_browser(&f.app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut b, 0).await;
    let mut o = connect_user(&f.app, &other, "").await;
    hello(&mut o, 0).await;

    for i in 1..=3 {
        f.run(&ext, i).await;
    }
    let mut got_a = vec![];
    let mut got_b = vec![];
    for seq in 1..=3 {
        let x = frame(&mut a).await;
        let y = frame(&mut b).await;
        assert_event(&x, "feed_entry.created", seq);
        assert_eq!(x, y, "both sockets get the same event");
        got_a.push(x);
        got_b.push(y);
    }
    // an update from REST reaches both as well
    let id = s(&got_a[0]["entry"]["id"]);
    post_user(&f.app, &ext, &format!("/feed/{id}/read")).await;
    let x = frame(&mut a).await;
    let y = frame(&mut b).await;
    assert_event(&x, "feed_entry.updated", 4);
    assert_eq!(x, y);
    silence(&mut a, 300).await;
    silence(&mut b, 100).await;
    // another user's socket saw none of it
    silence(&mut o, 100).await;
}

#[tokio::test]
async fn rest_changes_arrive_as_updated_events_one_per_entry() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("rest", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut ids = vec![];
    for i in 1..=3 {
        f.run(&ext, i).await;
        let ev = frame(&mut ws).await;
        assert_event(&ev, "feed_entry.created", i);
        ids.push(s(&ev["entry"]["id"]));
    }
    let mut seq = 3;

    // PATCH seen
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[0]), &ext)
        .json(&json!({"seen": true}))
        .go()
        .await;
    let rest = r.ok(200);
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"], rest, "event entry vs PATCH response");
    assert_eq!(ev["entry"]["seen"], json!(true));
    assert_eq!(ev["entry"]["read"], json!(false));
    assert_eq!(ev["meta"], json!({"unread_count": 3, "unseen_count": 2}));

    // PATCH {} and a repeated true change nothing: no event
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[0]), &ext)
        .json(&json!({}))
        .go()
        .await;
    r.ok(200);
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[0]), &ext)
        .json(&json!({"seen": true}))
        .go()
        .await;
    r.ok(200);
    silence(&mut ws, 300).await;

    // POST …/read
    let rest = post_user(&f.app, &ext, &format!("/feed/{}/read", ids[1])).await;
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"], rest);
    assert_eq!(ev["entry"]["read"], json!(true));
    assert_eq!(ev["entry"]["seen"], json!(true));
    assert_eq!(ev["meta"], json!({"unread_count": 2, "unseen_count": 1}));

    // one PATCH with several fields: one event
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[1]), &ext)
        .json(&json!({"clicked": true, "archived": true}))
        .go()
        .await;
    r.ok(200);
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"]["id"], json!(ids[1]));
    assert_eq!(ev["entry"]["archived"], json!(true));
    assert_eq!(ev["entry"]["clicked"], json!(true));
    silence(&mut ws, 200).await;

    // read_all: one event per changed entry (ids[0] seen, ids[2] unseen)
    let body = post_user(&f.app, &ext, "/feed/read_all").await;
    assert_eq!(body["updated"], json!(2), "{body}");
    assert_eq!(
        body["meta"],
        json!({"unread_count": 0, "unseen_count": 0}),
        "{body}"
    );
    let e1 = next(&mut ws, &mut seq).await;
    let e2 = next(&mut ws, &mut seq).await;
    let mut changed = vec![s(&e1["entry"]["id"]), s(&e2["entry"]["id"])];
    changed.sort();
    let mut want = vec![ids[0].clone(), ids[2].clone()];
    want.sort();
    assert_eq!(changed, want, "read_all events name the changed entries");
    for e in [&e1, &e2] {
        assert_eq!(e["entry"]["read"], json!(true), "{e}");
    }
    assert_eq!(
        e2["meta"],
        json!({"unread_count": 0, "unseen_count": 0}),
        "{e2}"
    );
    // nothing left to change: no events
    let body = post_user(&f.app, &ext, "/feed/read_all").await;
    assert_eq!(body["updated"], json!(0), "{body}");
    let body = post_user(&f.app, &ext, "/feed/seen_all").await;
    assert_eq!(body["updated"], json!(0), "{body}");
    silence(&mut ws, 300).await;

    // unarchive, then seen_all on a fresh entry: one event each
    post_user(&f.app, &ext, &format!("/feed/{}/unarchive", ids[1])).await;
    next(&mut ws, &mut seq).await;
    f.run(&ext, 4).await;
    let ev = frame(&mut ws).await;
    seq += 1;
    assert_event(&ev, "feed_entry.created", seq);
    let body = post_user(&f.app, &ext, "/feed/seen_all").await;
    assert_eq!(body["updated"], json!(1), "{body}");
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"]["seen"], json!(true));
    assert_eq!(ev["meta"], json!({"unread_count": 1, "unseen_count": 0}));
    silence(&mut ws, 300).await;
}

/// Resume: a socket that misses events gets exactly them, in order, then live ones.
async fn resume_case(via_auth_frame: bool) {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("resume", json!({})).await;
    // the observer stays connected and sees every event
    let mut obs = connect_user(&f.app, &ext, "").await;
    hello(&mut obs, 0).await;
    let mut a = connect_user(&f.app, &ext, "").await;
    hello(&mut a, 0).await;
    for i in 1..=2 {
        f.run(&ext, i).await;
        let x = frame(&mut a).await;
        assert_eq!(x, frame(&mut obs).await);
        assert_event(&x, "feed_entry.created", i);
    }
    a.close(None).await.ok();
    drop(a);

    // missed while disconnected: two runs and a read
    let mut missed = vec![];
    for i in 3..=4 {
        f.run(&ext, i).await;
        missed.push(frame(&mut obs).await);
    }
    let id = s(&missed[0]["entry"]["id"]);
    post_user(&f.app, &ext, &format!("/feed/{id}/read")).await;
    missed.push(frame(&mut obs).await);
    for (k, m) in missed.iter().enumerate() {
        assert_eq!(seq_of(m), 3 + k as u64, "{m}");
    }

    let mut b = if via_auth_frame {
        connect_browser(
            &f.app,
            json!({"type": "auth", "user_id": ext, "since_seq": 2}),
            "",
        )
        .await
    } else {
        connect_user(&f.app, &ext, "since_seq=2").await
    };
    let h = hello(&mut b, 5).await;
    assert_eq!(h["meta"], missed[2]["meta"], "hello meta = latest counts");
    for m in &missed {
        assert_eq!(&frame(&mut b).await, m, "replayed event");
    }
    silence(&mut b, 300).await;

    // then live events, once each
    f.run(&ext, 5).await;
    let live = frame(&mut b).await;
    assert_eq!(live, frame(&mut obs).await);
    assert_event(&live, "feed_entry.created", 6);
    silence(&mut b, 300).await;

    // resuming at the latest seq replays nothing
    let mut c = if via_auth_frame {
        connect_browser(
            &f.app,
            json!({"type": "auth", "user_id": ext, "since_seq": 6}),
            "",
        )
        .await
    } else {
        connect_user(&f.app, &ext, "since_seq=6").await
    };
    hello(&mut c, 6).await;
    silence(&mut c, 300).await;

    // resuming from 0 replays everything, in order
    let mut z = connect_user(&f.app, &ext, "since_seq=0").await;
    hello(&mut z, 6).await;
    for seq in 1..=6 {
        assert_eq!(seq_of(&frame(&mut z).await), seq);
    }
    silence(&mut z, 300).await;
}

#[tokio::test]
async fn resume_with_since_seq_query_replays_exactly_the_missed_events() {
    resume_case(false).await;
}

#[tokio::test]
async fn resume_with_since_seq_in_the_auth_frame_replays_exactly_the_missed_events() {
    resume_case(true).await;
}

#[tokio::test]
async fn since_seq_above_the_latest_gives_reset_right_after_hello() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("reset", json!({})).await;

    // no events yet: latest 0
    let mut ws = connect_user(&f.app, &ext, "since_seq=1").await;
    hello(&mut ws, 0).await;
    assert_eq!(frame(&mut ws).await, json!({"type": "reset", "seq": 0}));
    silence(&mut ws, 200).await;

    f.run(&ext, 1).await;
    assert_event(&frame(&mut ws).await, "feed_entry.created", 1);

    // via the query
    let mut q = connect_user(&f.app, &ext, "since_seq=50").await;
    hello(&mut q, 1).await;
    assert_eq!(frame(&mut q).await, json!({"type": "reset", "seq": 1}));
    silence(&mut q, 200).await;

    // via the auth frame
    let mut a = connect_browser(
        &f.app,
        json!({"type": "auth", "user_id": ext, "since_seq": 9999}),
        "",
    )
    .await;
    hello(&mut a, 1).await;
    assert_eq!(frame(&mut a).await, json!({"type": "reset", "seq": 1}));
    silence(&mut a, 200).await;

    // after a reset the socket is live
    f.run(&ext, 2).await;
    for s in [&mut ws, &mut q, &mut a] {
        assert_event(&frame(s).await, "feed_entry.created", 2);
    }
}
