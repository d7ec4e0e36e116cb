// Herald inbox: the user's feed (GET /user/v1/feed) kept current over the live
// feed WebSocket (GET /user/v1/feed/live), see API.md §7.
// Page parameters: api_key (required), user_id (development mode) or user_key
// (a JWT), base (the Herald origin; defaults to this page's origin).
(function () {
  'use strict';

  const params = new URLSearchParams(location.search);
  const apiKey = params.get('api_key') || '';
  const userId = params.get('user_id') || '';
  const userKey = params.get('user_key') || '';
  const base = (params.get('base') || location.origin).replace(/\/+$/, '');

  const $ = (id) => document.getElementById(id);
  const els = { badge: $('badge'), entries: $('entries'), status: $('status'), message: $('message'), empty: $('empty') };

  const entries = new Map(); // id -> entry, archived ones left out
  let lastSeq = null; // seq of the last event applied (null until the first hello)
  let ws = null;
  let attempt = 0;
  let retryTimer = null;
  let syncing = 0; // > 0 while GET /feed is being reloaded; events wait in `queued`
  let queued = [];
  let lastError = '';

  // ------------------------------------------------------------ REST

  function headers() {
    const h = { 'x-service-api-key': apiKey };
    if (userKey) h['x-service-user-key'] = userKey;
    else h['x-service-user-id'] = userId;
    return h;
  }

  async function api(method, path) {
    const r = await fetch(base + '/user/v1' + path, { method, headers: headers(), cache: 'no-store' });
    const body = await r.json().catch(() => null);
    if (!r.ok) {
      const err = new Error((body && body.error && body.error.message) || 'HTTP ' + r.status);
      err.status = r.status;
      throw err;
    }
    return body;
  }

  // ------------------------------------------------------------ rendering

  function setStatus(state) {
    els.status.textContent = state;
    els.status.dataset.state = state;
  }

  function setBadge(n) {
    if (typeof n !== 'number') return;
    els.badge.textContent = String(n);
    els.badge.dataset.count = String(n);
    document.title = (n > 0 ? '(' + n + ') ' : '') + 'Inbox · Herald';
  }

  function showMessage(text) {
    els.message.textContent = text || '';
    els.message.hidden = !text;
  }

  function ago(iso) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return '';
    const s = Math.max(0, (Date.now() - t) / 1000);
    if (s < 45) return 'just now';
    if (s < 3600) return Math.max(1, Math.round(s / 60)) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    if (s < 7 * 86400) return Math.round(s / 86400) + ' d ago';
    return new Date(t).toLocaleDateString();
  }

  function fill(li, e) {
    const data = e.data || {};
    li.className = 'entry ' + (e.read ? 'read' : 'unread');
    li.dataset.id = e.id;
    li.tabIndex = 0;
    li.setAttribute('role', 'button');
    li.setAttribute('aria-label', (e.read ? '' : 'Unread: ') + (data.subject || data.body || 'notification'));
    li.replaceChildren();
    if (data.subject) {
      const p = document.createElement('p');
      p.className = 'subject';
      p.textContent = data.subject;
      li.append(p);
    }
    if (data.body) {
      const p = document.createElement('p');
      p.className = 'body';
      p.textContent = data.body;
      li.append(p);
    }
    const time = document.createElement('time');
    time.dateTime = e.created_at;
    time.title = e.created_at;
    time.textContent = ago(e.created_at);
    li.append(time);
  }

  function element(id) {
    return Array.from(els.entries.children).find((li) => li.dataset.id === id) || null;
  }

  // Inserts or updates an entry in place; ids are UUID v7, so newest first = descending id.
  function upsert(e) {
    if (!e || !e.id) return;
    let li = element(e.id);
    if (e.archived) {
      entries.delete(e.id);
      if (li) li.remove();
    } else {
      entries.set(e.id, e);
      if (!li) {
        li = document.createElement('li');
        const next = Array.from(els.entries.children).find((c) => c.dataset.id < e.id);
        els.entries.insertBefore(li, next || null);
      }
      fill(li, e);
    }
    els.empty.hidden = entries.size > 0;
  }

  function replaceAll(items) {
    entries.clear();
    els.entries.replaceChildren();
    items.forEach(upsert);
    els.empty.hidden = entries.size > 0;
  }

  // ------------------------------------------------------------ feed state

  async function loadFeed() {
    const body = await api('GET', '/feed?limit=50');
    replaceAll(body.items || []);
    setBadge(body.meta && body.meta.unread_count);
  }

  // Reloads GET /feed and continues from `seq` (first hello, or a reset).
  async function resync(seq) {
    syncing += 1;
    try {
      await loadFeed();
      showMessage('');
    } catch (err) {
      showMessage('Could not load the feed: ' + err.message);
    } finally {
      syncing -= 1;
      lastSeq = seq;
      if (!syncing) {
        const q = queued;
        queued = [];
        q.forEach(applyEvent);
      }
    }
  }

  function applyEvent(m) {
    if (syncing) return void queued.push(m);
    if (lastSeq !== null && m.seq <= lastSeq) return; // seen already
    lastSeq = m.seq;
    upsert(m.entry);
    if (m.meta) setBadge(m.meta.unread_count);
  }

  function onFrame(m) {
    switch (m.type) {
      case 'hello':
        attempt = 0;
        lastError = '';
        setStatus('live');
        showMessage('');
        if (lastSeq === null) {
          resync(m.seq);
        } else if (m.meta && !syncing) {
          setBadge(m.meta.unread_count);
        }
        break;
      case 'reset':
        resync(m.seq);
        break;
      case 'feed_entry.created':
      case 'feed_entry.updated':
        applyEvent(m);
        break;
      case 'error':
        lastError = (m.error && m.error.message) || 'authentication failed';
        break;
      default: // unknown frames are ignored
    }
  }

  // ------------------------------------------------------------ live socket

  function connect() {
    clearTimeout(retryTimer);
    setStatus('connecting');
    const url = new URL(base + '/user/v1/feed/live');
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('api_key', apiKey);
    const sock = new WebSocket(url.toString());
    ws = sock;
    sock.onopen = () => {
      const auth = { type: 'auth' };
      if (userKey) auth.user_key = userKey;
      else auth.user_id = userId;
      if (lastSeq !== null) auth.since_seq = lastSeq;
      sock.send(JSON.stringify(auth));
    };
    sock.onmessage = (ev) => {
      let m;
      try {
        m = JSON.parse(ev.data);
      } catch (_) {
        return;
      }
      if (m && typeof m === 'object') onFrame(m);
    };
    sock.onclose = (ev) => {
      if (ws !== sock) return;
      ws = null;
      setStatus('offline');
      if (ev.code === 4401) {
        showMessage('Not signed in: ' + (lastError || ev.reason || 'authentication failed'));
        retryTimer = null;
        return; // retrying would fail the same way
      }
      // 1013 (too slow) and 1001 (server restart) resume from lastSeq like any other drop
      const delay = Math.min(30000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
      attempt = Math.min(attempt + 1, 10);
      retryTimer = setTimeout(connect, delay);
    };
  }

  // ------------------------------------------------------------ reading

  async function markRead(id) {
    const e = entries.get(id);
    if (!e || e.read) return;
    try {
      upsert(await api('POST', '/feed/' + encodeURIComponent(id) + '/read'));
      // the socket brings the new counts; without it, ask for them
      if (!ws || els.status.dataset.state !== 'live') {
        const body = await api('GET', '/feed?limit=1');
        setBadge(body.meta && body.meta.unread_count);
      }
    } catch (err) {
      showMessage('Could not mark as read: ' + err.message);
    }
  }

  els.entries.addEventListener('click', (ev) => {
    const li = ev.target.closest('.entry');
    if (li) markRead(li.dataset.id);
  });
  els.entries.addEventListener('keydown', (ev) => {
    const li = ev.target.closest('.entry');
    if (li && (ev.key === 'Enter' || ev.key === ' ')) {
      ev.preventDefault();
      markRead(li.dataset.id);
    }
  });

  setInterval(() => {
    for (const t of els.entries.querySelectorAll('time')) t.textContent = ago(t.dateTime);
  }, 30000);

  window.addEventListener('online', () => {
    if (!ws && retryTimer) connect();
  });

  // ------------------------------------------------------------ start

  async function start() {
    if (!apiKey || !(userId || userKey)) {
      setStatus('offline');
      showMessage('Open this page with ?api_key=…&user_id=… (or user_key=…).');
      return;
    }
    try {
      await loadFeed();
    } catch (err) {
      showMessage('Could not load the feed: ' + err.message);
      if (err.status === 401 || err.status === 404) return void setStatus('offline');
    }
    connect();
  }

  start();
})();
