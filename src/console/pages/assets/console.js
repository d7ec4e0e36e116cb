// Herald console: the pages' changes, made through the Admin API with the
// member's session cookie and CSRF token. Written by hand, no framework:
// each part below starts only on the page that has its elements.
'use strict';
(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const csrf = () => { const m = $('meta[name="csrf-token"]'); return m ? m.content : ''; };

  // One Admin API call: {ok, status, body} (body: the parsed JSON or null).
  async function api(method, path, body) {
    const init = { method, credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf(), Accept: 'application/json' } };
    if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    let r;
    try { r = await fetch(path, init); } catch (e) {
      return { ok: false, status: 0, body: { error: { code: 'network', message: 'The server could not be reached.' } } };
    }
    let json = null;
    try { json = await r.json(); } catch (e) { /* no body */ }
    return { ok: r.ok, status: r.status, body: json };
  }

  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v === null || v === undefined) continue;
      if (k === 'text') e.textContent = v; else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids) if (k) e.append(k);
    return e;
  };
  let uid = 0;
  const nextId = (p) => `${p}-${++uid}`;

  // The error object's field errors, each shown beside the field it names
  // (an element with data-error-for = the path, or the nearest parent
  // path's); the rest in `fallback`.
  function clearErrors(root) {
    $$('[data-error-for], .field-error', root).forEach((e) => { if (e.classList.contains('field-error')) e.textContent = ''; });
    $$('[aria-invalid]', root).forEach((e) => e.removeAttribute('aria-invalid'));
  }
  function showError(root, err, fallback) {
    const e = (err && err.error) || { message: 'Something went wrong.' };
    const fields = (e.details && e.details.fields) || [];
    const placed = [];
    const put = (path, msg) => {
      let p = path;
      while (p) {
        const slot = $(`[data-error-for="${CSS.escape(p)}"]`, root);
        if (slot) {
          slot.textContent = slot.textContent ? `${slot.textContent} ${msg}` : msg;
          const input = $(`[data-field="${CSS.escape(p)}"]`, root);
          if (input) input.setAttribute('aria-invalid', 'true');
          return true;
        }
        p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '';
      }
      return false;
    };
    for (const f of fields) if (!put(f.field, `${f.message}`)) placed.push(`${f.field}: ${f.message}`);
    if (e.details && e.details.param && !fields.length && put(e.details.param, e.message)) return;
    if (!fields.length || placed.length) {
      if (fallback) fallback.textContent = [e.message, ...placed].join(' ');
    }
  }
  const say = (node, text) => { if (node) node.textContent = text; };

  // ------------------------------------------------------------ flows list
  const newFlow = $('form[data-new-flow]');
  if (newFlow) {
    newFlow.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const h = newFlow.elements.handle.value.trim();
      if (h) location.href = `/console/flows/${encodeURIComponent(h)}`;
    });
  }

  // ------------------------------------------------------------ flow editor
  const editor = $('#flow-editor');
  if (editor) flowEditor(editor);

  function flowEditor(form) {
    const handle = form.dataset.handle;
    const path = `/admin/v1/flows/${encodeURIComponent(handle)}`;
    let flow = JSON.parse($('#flow-data').textContent || 'null');
    const channels = JSON.parse($('#channels-data').textContent || '[]');
    const exists = () => !!flow;
    const steps = flow ? JSON.parse(JSON.stringify(flow.steps || [])) : [];
    const msg = $('#flow-message');
    const formErr = $('#err-form');
    form.elements.name.value = flow ? flow.name : handle;
    form.elements.description.value = (flow && flow.description) || '';
    form.elements.critical.checked = !!(flow && flow.critical);
    form.elements.commercial.checked = !!(flow && flow.commercial);
    $('#f-name').dataset.field = 'name';
    $('#err-name').dataset.errorFor = 'name';
    $('#err-description').dataset.errorFor = 'description';
    $('#err-steps').dataset.errorFor = 'steps';
    $('#err-data').dataset.errorFor = 'data';
    const list = $('#steps');

    const fresh = (type) => ({
      channel: { type: 'channel', channel_id: channels.length ? channels[0].id : '', template: { body: '' } },
      delay: { type: 'delay', seconds: 60 },
      throttle: { type: 'throttle', limit: 1, window: '1h' },
      batch: { type: 'batch', window: '15m' },
      // A route most often starts in the app, then reaches further out.
      route: { type: 'route', success: 'sent', channels: [{ channel_id: (channels.find((c) => c.channel_type === 'in_app') || channels[0] || { id: '' }).id, template: { body: '' } }] },
    }[type]);
    const SUCCESS = ['sent', 'delivered', 'seen', 'read', 'clicked', 'interacted'];
    const MAX_BACKUPS = 3;
    const MAX_HOPS = 5;
    const channelOptions = (list) => list.map((c) => [c.id, `${c.name} (${c.channel_type})`]);

    // A labelled input bound to a step's value at `key` (a path of the step).
    function field(i, step, key, label, opts) {
      const o = opts || {};
      const id = nextId('s');
      const get = () => key.split('.').reduce((v, k) => (v == null ? undefined : v[k]), step);
      const set = (v) => {
        const ks = key.split('.');
        let t = step;
        for (const k of ks.slice(0, -1)) { if (typeof t[k] !== 'object' || t[k] === null) t[k] = {}; t = t[k]; }
        const last = ks[ks.length - 1];
        if (v === undefined || v === '') delete t[last]; else t[last] = v;
      };
      const full = `steps.${i}.${key}`;
      let input;
      if (o.options) {
        input = el('select', { id });
        for (const [v, text] of o.options) input.append(el('option', { value: v, text }));
        input.value = get() == null ? '' : get();
      } else if (o.area) {
        input = el('textarea', { id, rows: o.rows || 3 });
        const v = get();
        input.value = v == null ? '' : (o.json ? JSON.stringify(v, null, 1) : v);
      } else {
        input = el('input', { id, type: o.number ? 'number' : 'text' });
        const v = get();
        input.value = v == null ? '' : v;
      }
      const err = el('span', { class: 'field-error', id: `${id}-err`, 'data-error-for': full, role: 'alert' });
      input.dataset.field = full;
      input.setAttribute('aria-describedby', `${id}-err`);
      input.addEventListener(o.options ? 'change' : 'input', () => {
        let v = input.value;
        if (o.number) v = v === '' ? undefined : Number(v);
        if (o.json) {
          if (v.trim() === '') v = undefined;
          else { try { v = JSON.parse(v); err.textContent = ''; } catch (e) { err.textContent = 'Not valid JSON.'; return; } }
        }
        set(v);
        if (o.rerender) render(); else schedulePreview();
      });
      return el('div', { class: 'row' }, el('label', { for: id, text: label }), input, err);
    }

    // A button that changes the steps, then draws them again with the focus
    // kept on it (or on the button that now has its label).
    const btn = (text, label, fn, disabled) => {
      const b = el('button', { type: 'button', 'aria-label': label, text, disabled: !!disabled });
      b.addEventListener('click', () => { fn(); render(); const again = $(`[aria-label="${label}"]`, list); if (again && !again.disabled) again.focus(); });
      return b;
    };

    // What a channel step and each channel of a route have alike: the
    // template (its fields by the channel's type), the backup channels, and
    // a live preview. `at` is the prefix of their keys in the step.
    function channelParts(i, s, at, previewId, previewLabel, withWindow) {
      const part = at ? at.split('.').filter(Boolean).reduce((v, k) => v[k], s) : s;
      const ch = channels.find((c) => c.id === part.channel_id);
      const email = ch && ch.channel_type === 'email';
      const cols = el('div', { class: 'template-cols' });
      const tpl = el('div', { class: 'template' });
      const where = at ? ` (step ${i + 1}, channel ${Number(at.split('.')[1]) + 1})` : '';
      if (email) tpl.append(field(i, s, `${at}template.subject`, `Subject${where}`));
      tpl.append(field(i, s, `${at}template.body`, `Body${where}`, { area: true, rows: 4 }));
      if (email) tpl.append(field(i, s, `${at}template.html`, `HTML (optional)${where}`, { area: true }));
      tpl.append(field(i, s, `${at}template.url`, `Link URL (optional)${where}`));
      if (withWindow) tpl.append(field(i, s, 'send_window', 'Send window (JSON, optional)', { area: true, json: true, rows: 2 }));
      tpl.append(backups(i, s, part, at, ch));
      const pv = el('div', { class: 'preview', id: previewId, 'aria-live': 'polite', 'aria-label': previewLabel },
        el('p', { class: 'muted', text: 'Preview appears here.' }));
      cols.append(tpl, pv);
      return cols;
    }

    // A channel's backups (`fallback_channel_ids`), in order: other
    // channels of its type, each a choice with a button that removes it.
    function backups(i, s, part, at, ch) {
      const name = `step ${i + 1}${at ? `, channel ${Number(at.split('.')[1]) + 1}` : ''}`;
      const box = el('fieldset', { class: 'backups' }, el('legend', { text: `Backup channels (${name})` }),
        el('span', { class: 'field-error', 'data-error-for': `steps.${i}.${at}fallback_channel_ids`, role: 'alert' }));
      const same = channels.filter((c) => ch && c.channel_type === ch.channel_type && c.id !== ch.id);
      const chosen = part.fallback_channel_ids || [];
      chosen.forEach((id, k) => {
        const row = field(i, s, `${at}fallback_channel_ids.${k}`, `Backup ${k + 1} (${name})`, { options: channelOptions(same.some((c) => c.id === id) ? same : [...same, { id, name: id, channel_type: '?' }]) });
        row.append(btn('Remove', `Remove backup ${k + 1} of ${name}`, () => {
          chosen.splice(k, 1);
          if (!chosen.length) delete part.fallback_channel_ids;
        }));
        box.append(row);
      });
      if (ch && ch.channel_type === 'in_app') {
        box.append(el('p', { class: 'muted', text: 'An in-app channel has no backups.' }));
      } else if (!same.length) {
        box.append(el('p', { class: 'muted', text: 'No other channel of this type to fall back to.' }));
      } else {
        box.append(btn('Add a backup channel', `Add a backup channel to ${name}`, () => {
          part.fallback_channel_ids = [...chosen, (same.find((c) => !chosen.includes(c.id)) || same[0]).id];
        }, chosen.length >= MAX_BACKUPS));
      }
      return box;
    }

    function render() {
      list.textContent = '';
      steps.forEach((s, i) => {
        const li = el('li', { class: `step step-${s.type}`, 'aria-label': `Step ${i + 1}: ${s.type}` });
        const tools = el('div', { class: 'step-tools' },
          el('strong', { text: `${i + 1}. ${s.type}` }));
        tools.append(
          btn('↑', `Move step ${i + 1} up`, () => { [steps[i - 1], steps[i]] = [steps[i], steps[i - 1]]; }, i === 0),
          btn('↓', `Move step ${i + 1} down`, () => { [steps[i + 1], steps[i]] = [steps[i], steps[i + 1]]; }, i === steps.length - 1),
          btn('Remove', `Remove step ${i + 1}`, () => { steps.splice(i, 1); }),
        );
        li.append(tools, el('span', { class: 'field-error', 'data-error-for': `steps.${i}`, role: 'alert' }));
        const body = el('div', { class: 'step-body' });
        if (s.type === 'channel') {
          body.append(field(i, s, 'channel_id', 'Channel', { options: channelOptions(channels), rerender: true }));
          body.append(channelParts(i, s, '', `preview-${i}`, `Preview of step ${i + 1}`, true));
        } else if (s.type === 'route') {
          body.append(field(i, s, 'success', 'Success (the route stops once a channel reaches it)',
            { options: SUCCESS.map((v) => [v, v]) }));
          const hops = el('ol', { class: 'hops', 'aria-label': `Channels of step ${i + 1}` });
          (s.channels || []).forEach((h, m) => {
            const name = `step ${i + 1}, channel ${m + 1}`;
            const hop = el('li', { class: 'hop', 'aria-label': `Route ${name}` });
            const remove = btn('Remove', `Remove ${name}`, () => { s.channels.splice(m, 1); }, s.channels.length === 1);
            hop.append(el('div', { class: 'step-tools' }, el('strong', { text: `Channel ${m + 1}` }), remove),
              el('span', { class: 'field-error', 'data-error-for': `steps.${i}.channels.${m}`, role: 'alert' }),
              field(i, s, `channels.${m}.channel_id`, `Channel (${name})`, { options: channelOptions(channels), rerender: true }));
            if (m > 0) hop.append(field(i, s, `channels.${m}.after`, `After, if not met (e.g. 10m; ${name})`));
            hop.append(channelParts(i, s, `channels.${m}.`, `preview-${i}-${m}`, `Preview of ${name}`, false));
            hops.append(hop);
          });
          body.append(hops, btn('Add a channel', `Add a channel to step ${i + 1}`, () => {
            s.channels = s.channels || [];
            s.channels.push({ channel_id: channels.length ? channels[0].id : '', template: { body: '' }, after: '0s' });
          }, (s.channels || []).length >= MAX_HOPS));
        } else if (s.type === 'delay') {
          body.append(field(i, s, 'seconds', 'Delay (seconds)', { number: true }));
        } else if (s.type === 'throttle') {
          body.append(field(i, s, 'limit', 'Limit', { number: true }), field(i, s, 'window', 'Window (e.g. 1h)'),
            field(i, s, 'key', 'Key (template, optional)'));
        } else if (s.type === 'batch') {
          body.append(field(i, s, 'window', 'Window (e.g. 15m)'), field(i, s, 'key', 'Key (template, optional)'),
            field(i, s, 'max', 'Max activities (optional)', { number: true }));
        } else {
          body.append(el('pre', { text: JSON.stringify(s, null, 1) }));
        }
        body.append(field(i, s, 'if', 'Condition, if (JSON, optional)', { area: true, json: true, rows: 2 }));
        li.append(body);
        list.append(li);
      });
      schedulePreview();
    }

    const addStep = $('#add-step');
    if (addStep) addStep.addEventListener('click', () => {
      steps.push(fresh($('#add-type').value));
      render();
      const last = list.lastElementChild;
      if (last) { const f = $('input, select, textarea', last); if (f) f.focus(); }
    });

    const body = () => ({
      name: form.elements.name.value,
      description: form.elements.description.value || null,
      critical: form.elements.critical.checked,
      commercial: form.elements.commercial.checked,
      steps,
    });
    const sample = () => {
      const t = $('#p-data').value.trim();
      if (!t) return {};
      return JSON.parse(t);
    };

    // Live preview: the unsaved flow rendered for the chosen user and data.
    let timer = null;
    let seq = 0;
    function schedulePreview() { clearTimeout(timer); timer = setTimeout(preview, 300); }
    async function preview() {
      const panes = $$('.preview', list);
      if (!panes.length) return;
      let data;
      try { data = sample(); $('#err-data').textContent = ''; } catch (e) { $('#err-data').textContent = 'Sample data is not valid JSON.'; return; }
      const mine = ++seq;
      const r = await api('POST', '/admin/v1/flows/preview', { ...body(), handle, user: $('#p-user').value || 'console-test-user', data });
      if (mine !== seq) return;
      $$('.template .field-error', list).forEach((e) => { e.textContent = ''; });
      panes.forEach((p) => { p.textContent = ''; });
      if (!r.ok) {
        showError(list, r.body, null);
        panes.forEach((p) => p.append(el('p', { class: 'error', text: `Not rendered: ${(r.body && r.body.error && r.body.error.message) || 'error'}` })));
        return;
      }
      // A route's channels come as items of the route's step, in order.
      const hop = {};
      for (const s of r.body.steps || []) {
        const route = steps[s.step] && steps[s.step].type === 'route';
        const m = hop[s.step] = (hop[s.step] === undefined ? 0 : hop[s.step] + 1);
        const p = $(route ? `#preview-${s.step}-${m}` : `#preview-${s.step}`);
        if (!p) continue;
        if (s.error) {
          p.append(el('p', { class: 'error', role: 'alert', text: `Template error: ${s.error.message}` }));
          const slot = $(`[data-error-for="${CSS.escape(s.error.field || '')}"]`, list);
          if (slot) slot.textContent = s.error.message;
          continue;
        }
        const c = s.content || {};
        if (c.subject) p.append(el('p', { class: 'subject' }, el('strong', { text: c.subject })));
        p.append(el('p', { class: 'rendered', text: c.body || '' }));
        if (c.url) p.append(el('p', { class: 'muted', text: c.url }));
      }
    }
    form.elements.name.addEventListener('input', schedulePreview);
    $('#p-user').addEventListener('input', schedulePreview);
    $('#p-data').addEventListener('input', schedulePreview);

    const setStatus = (s) => {
      const b = $('#flow-status');
      if (b) { b.textContent = s; b.className = `status status-${s}`; }
    };
    const enable = () => { for (const id of ['activate', 'archive', 'send-test']) { const b = $(`#${id}`); if (b) b.disabled = !exists(); } };

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(form); say(formErr, ''); say(msg, 'Saving…');
      const r = exists() ? await api('PUT', path, body()) : await api('POST', '/admin/v1/flows', { handle, ...body() });
      if (!r.ok) { say(msg, 'Not saved.'); showError(form, r.body, formErr); return; }
      const created = !exists();
      flow = r.body;
      say(msg, created ? 'Created.' : 'Saved.');
      if (created) { location.reload(); return; }
      setStatus(flow.status); enable();
    });
    const transition = (name, words) => async () => {
      clearErrors(form); say(formErr, '');
      const r = await api('POST', `${path}/${name}`);
      if (!r.ok) { say(msg, `Not ${words}.`); showError(form, r.body, formErr); return; }
      flow = r.body; setStatus(flow.status); say(msg, `${words[0].toUpperCase()}${words.slice(1)}.`);
    };
    // A viewer's page has none of these (see flow.html).
    const on = (id, fn) => { const b = $(`#${id}`); if (b) b.addEventListener('click', fn); };
    on('activate', transition('activate', 'activated'));
    on('archive', transition('archive', 'archived'));
    on('send-test', async () => {
      clearErrors(form); say(formErr, '');
      let data;
      try { data = sample(); } catch (e) { $('#err-data').textContent = 'Sample data is not valid JSON.'; return; }
      say(msg, 'Sending a test…');
      const r = await api('POST', `${path}/run`, { recipients: [{ external_id: $('#p-user').value || 'console-test-user' }], data });
      if (!r.ok) { say(msg, 'Not sent.'); showError(form, r.body, formErr); return; }
      const run = r.body.id;
      for (let i = 0; i < 20; i++) {
        const l = await api('GET', `/admin/v1/notifications?flow_run_id=${encodeURIComponent(run)}&limit=1`);
        const n = l.ok && l.body.items && l.body.items[0];
        if (n) {
          msg.textContent = 'Test sent: ';
          msg.append(el('a', { href: `/console/notifications/${n.id}`, text: 'open its notification' }));
          return;
        }
        await new Promise((res) => setTimeout(res, 250));
      }
      say(msg, `Test run ${run} accepted; its notification is not there yet.`);
    });
    render();
  }

  // ------------------------------------------------------------ a channel's form
  const channelForm = $('#channel-form');
  if (channelForm) channelEditor(channelForm);

  async function channelEditor(form) {
    const channel = JSON.parse($('#channel-data').textContent || 'null');
    const MASK = form.dataset.mask;
    const box = $('#config-fields');
    const out = $('#channel-message');
    const provider = form.elements.provider;
    const r = await api('GET', '/openapi.json');
    const schemas = (r.ok && r.body.components && r.body.components.schemas) || {};
    const camel = (p) => p.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('') + 'Config';
    let fields = [];
    // A property's JSON type: the first that is not null, looking into
    // anyOf/allOf/oneOf alternatives (a $ref's is an object's).
    const typeOf = (p) => {
      if (Array.isArray(p.type)) return p.type.find((t) => t !== 'null') || null;
      if (p.type) return p.type;
      for (const alt of p.anyOf || p.allOf || p.oneOf || []) {
        const t = alt.$ref ? 'object' : typeOf(alt);
        if (t && t !== 'null') return t;
      }
      return null;
    };
    function build() {
      box.textContent = '';
      box.append(el('legend', { text: 'Configuration' }));
      fields = [];
      const schema = schemas[camel(provider.value)];
      if (!schema || !schema.properties) { box.append(el('p', { class: 'error', text: 'This provider has no schema in /openapi.json.' })); return; }
      const required = new Set(schema.required || []);
      const old = (channel && channel.provider === provider.value && channel.config) || {};
      for (const [key, prop] of Object.entries(schema.properties)) {
        const id = nextId('cfg');
        const secret = !!prop.writeOnly;
        const type = typeOf(prop) || (prop.enum ? 'string' : null);
        let input;
        let kind = 'text';
        if (prop.enum) {
          input = el('select', { id });
          if (!required.has(key)) input.append(el('option', { value: '', text: '(none)' }));
          for (const v of prop.enum) if (v !== null) input.append(el('option', { value: String(v), text: String(v) }));
          input.value = old[key] == null ? (prop.default == null ? '' : String(prop.default)) : String(old[key]);
        } else if (type === 'boolean') {
          kind = 'bool';
          input = el('input', { id, type: 'checkbox' });
          input.checked = old[key] == null ? !!prop.default : !!old[key];
        } else if (type === 'integer' || type === 'number') {
          kind = 'number';
          input = el('input', { id, type: 'number' });
          input.value = old[key] == null ? '' : old[key];
        } else if (type === 'string') {
          input = el('input', { id, type: secret ? 'password' : 'text', autocomplete: secret ? 'new-password' : 'off' });
          if (secret) { input.placeholder = old[key] === MASK ? `${MASK} (set; type to replace)` : ''; }
          else input.value = old[key] == null ? '' : old[key];
        } else {
          kind = 'json';
          input = el('textarea', { id, rows: 3 });
          input.value = old[key] == null ? '' : JSON.stringify(old[key], null, 1);
        }
        const path = `config.${key}`;
        input.dataset.field = path;
        const err = el('span', { class: 'field-error', id: `${id}-err`, 'data-error-for': path, role: 'alert' });
        const help = el('span', { class: 'help', id: `${id}-help`, text: prop.description || '' });
        input.setAttribute('aria-describedby', `${id}-help ${id}-err`);
        if (required.has(key)) input.setAttribute('aria-required', 'true');
        const label = el('label', { for: id, text: `${key}${required.has(key) ? ' (required)' : ''}${secret ? ' (secret)' : ''}` });
        box.append(kind === 'bool'
          ? el('div', { class: 'row' }, el('label', {}, input, ` ${key}`), help, err)
          : el('div', { class: 'row' }, label, input, help, err));
        fields.push({ key, input, kind, secret, err });
      }
    }
    provider.addEventListener('change', build);
    build();
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(form); say(out, 'Saving…'); say($('#err-channel'), '');
      const config = {};
      for (const f of fields) {
        if (f.kind === 'bool') { config[f.key] = f.input.checked; continue; }
        const v = f.input.value.trim();
        if (v === '') continue; // untouched secrets and empty fields are not sent
        if (f.kind === 'number') config[f.key] = Number(v);
        else if (f.kind === 'json') {
          try { config[f.key] = JSON.parse(v); } catch (e) { f.err.textContent = 'Not valid JSON.'; say(out, 'Not saved.'); return; }
        } else config[f.key] = v;
      }
      const body = { name: form.elements.name.value.trim(), sandbox: form.elements.sandbox.checked, config };
      const option = provider.selectedOptions[0];
      const res = channel
        ? await api('PUT', `/admin/v1/channels/${channel.id}`, body)
        : await api('POST', '/admin/v1/channels', { ...body, type: option.dataset.type, provider: provider.value });
      if (!res.ok) { say(out, 'Not saved.'); showError(form, res.body, $('#err-channel')); return; }
      if (!channel) { location.href = `/console/channels/${res.body.id}`; return; }
      say(out, 'Saved.');
      for (const f of fields) if (f.secret && f.input.value) { f.input.value = ''; f.input.placeholder = `${MASK} (set; type to replace)`; }
    });
  }

  // A channel's Send test: one message to a user through the channel, then
  // a link to its notification; the API's errors beside the field.
  const channelTestForm = $('#channel-test');
  if (channelTestForm) channelTest(channelTestForm);

  function channelTest(form) {
    const out = $('#channel-test-message');
    const fallback = $('#err-channel-test');
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(form); say(fallback, ''); say(out, 'Sending a test…');
      const path = `/admin/v1/channels/${encodeURIComponent(form.dataset.channel)}/test`;
      const r = await api('POST', path, { user_id: form.elements.user_id.value.trim() });
      if (!r.ok) {
        say(out, 'Not sent.');
        showError(form, r.body, fallback);
        const bad = $('[aria-invalid="true"]', form);
        if (bad) bad.focus();
        return;
      }
      out.textContent = 'Test accepted. ';
      out.append(el('a', { href: `/console/notifications/${encodeURIComponent(r.body.notification_id)}`, text: 'View the notification' }));
    });
  }

  // ------------------------------------------------------------ topics
  const newTopic = $('#new-topic');
  if (newTopic) {
    newTopic.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(newTopic);
      const key = newTopic.elements.key.value.trim();
      if (!key) { $('#err-t-key').textContent = 'Give the topic a key.'; return; }
      const name = newTopic.elements.name.value.trim();
      const r = await api('PUT', `/admin/v1/topics/${encodeURIComponent(key)}`, name ? { name } : {});
      if (r.ok) { location.href = `/console/topics/${encodeURIComponent(key)}`; return; }
      showError(newTopic, r.body, $('#err-topic'));
    });
  }
  const subscribe = $('#subscribe');
  if (subscribe) {
    const topic = encodeURIComponent(subscribe.dataset.topic);
    subscribe.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(subscribe);
      const r = await api('POST', `/admin/v1/topics/${topic}/subscriptions`, { external_id: subscribe.elements.external_id.value.trim() });
      if (r.ok) { location.reload(); return; }
      showError(subscribe, r.body, $('#subscribe-message'));
    });
    $$('button[data-unsubscribe]').forEach((b) => b.addEventListener('click', async () => {
      const r = await api('DELETE', `/admin/v1/topics/${topic}/subscriptions/${encodeURIComponent(b.dataset.unsubscribe)}`);
      if (r.ok) { b.closest('li').remove(); say($('#subscribe-message'), `Removed ${b.dataset.unsubscribe}.`); return; }
      say($('#subscribe-message'), `Not removed: ${(r.body && r.body.error && r.body.error.message) || 'error'}`);
    }));
  }

  // ------------------------------------------------------------ event endpoints
  // A secret as the API answers it once: shown in `out`, with a warning.
  const showSecret = (out, secret, extra) => {
    out.textContent = '';
    out.append(el('p', { text: 'The signing secret, shown this once: copy it now.' }),
      el('p', {}, el('code', { class: 'secret', text: secret })));
    if (extra) out.append(extra);
  };
  const newEndpoint = $('#new-endpoint');
  if (newEndpoint) {
    newEndpoint.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(newEndpoint); say($('#err-endpoint'), '');
      const types = newEndpoint.elements.event_types.value.split(',').map((t) => t.trim()).filter(Boolean);
      const body = { url: newEndpoint.elements.url.value.trim() };
      if (types.length) body.event_types = types;
      const r = await api('POST', '/admin/v1/webhook_endpoints', body);
      if (!r.ok) { showError(newEndpoint, r.body, $('#err-endpoint')); return; }
      showSecret($('#endpoint-secret'), r.body.secret, el('p', {}, el('a', { href: `/console/endpoints/${r.body.id}`, text: 'Open the endpoint' })));
    });
  }
  const endpoint = $('#endpoint');
  if (endpoint) {
    const id = endpoint.dataset.id;
    const rotateSecret = $('#rotate-secret');
    if (rotateSecret) rotateSecret.addEventListener('click', async () => {
      const r = await api('POST', `/admin/v1/webhook_endpoints/${id}/rotate_secret`);
      if (r.ok) showSecret($('#secret-out'), r.body.secret);
      else say($('#secret-out'), `Not rotated: ${(r.body && r.body.error && r.body.error.message) || 'error'}`);
    });
    const replay = $('#replay');
    if (replay) replay.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(replay);
      const r = await api('POST', `/admin/v1/webhook_endpoints/${id}/replay`, { since: replay.elements.since.value.trim() });
      if (r.ok) { say($('#replay-message'), `${r.body.queued} event(s) queued again.`); return; }
      showError(replay, r.body, $('#replay-message'));
    });
  }

  // ------------------------------------------------------------ settings
  const settings = $('#settings-form');
  if (settings) {
    const out = $('#settings-message');
    settings.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(settings); say(out, 'Saving…');
      const v = (n) => settings.elements[n].value.trim();
      const r = await api('PUT', '/admin/v1/project', {
        timezone: v('timezone') || null,
        retention: { notifications: v('retention_notifications') || null, feed: v('retention_feed') || null },
      });
      if (r.ok) { say(out, 'Saved.'); return; }
      say(out, 'Not saved.');
      showError(settings, r.body, out);
    });
  }
  const clock = $('#clock-form');
  if (clock) {
    const out = $('#clock-message');
    $('#clock-switch').addEventListener('click', async () => {
      const to = clock.dataset.clock === 'test' ? 'real' : 'test';
      const r = await api('PUT', '/admin/v1/project', { clock: to });
      if (r.ok) { location.reload(); return; }
      showError(clock, r.body, out);
    });
    clock.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearErrors(clock); say(out, 'Advancing…');
      const r = await api('POST', '/admin/v1/project/clock/advance', { by: clock.elements.by.value.trim() });
      if (!r.ok) { say(out, 'Not advanced.'); showError(clock, r.body, out); return; }
      const t = $('#clock-time');
      if (t) { t.textContent = r.body.clock_time; t.setAttribute('datetime', r.body.clock_time); }
      say(out, `The clock is now at ${r.body.clock_time}.`);
    });
  }
  const rotate = $('#rotate-link-secret');
  if (rotate) {
    rotate.addEventListener('click', async () => {
      const out = $('#keys-message');
      const r = await api('POST', '/admin/v1/project/rotate_link_secret');
      if (r.ok) { say(out, 'Rotated: earlier preference links no longer open.'); return; }
      say(out, `Not rotated: ${(r.body && r.body.error && r.body.error.message) || 'error'}`);
    });
  }

  const rotateKey = $('#rotate-secret-key');
  if (rotateKey) {
    rotateKey.addEventListener('click', async () => {
      const out = $('#secret-message');
      const shown = $('#new-secret-key');
      const r = await api('POST', '/admin/v1/project/rotate_secret', {});
      if (r.ok) {
        shown.textContent = r.body.secret_key;
        shown.hidden = false;
        say(out, 'Rotated. The new secret key is below: copy it now, it is not shown again.');
        return;
      }
      say(out, `Not rotated: ${(r.body && r.body.error && r.body.error.message) || 'error'}`);
    });
  }

  // ------------------------------------------------------------ a user's page
  const prefs = $('#prefs');
  if (prefs) {
    const user = prefs.dataset.user;
    const out = $('#prefs-message');
    $$('input[data-pref]', prefs).forEach((box) => {
      box.addEventListener('change', async () => {
        const keys = box.dataset.pref.split('.');
        const patch = {};
        let t = patch;
        keys.slice(0, -1).forEach((k) => { t[k] = {}; t = t[k]; });
        t[keys[keys.length - 1]] = box.checked;
        say(out, 'Saving…');
        const r = await api('PUT', `/admin/v1/users/${encodeURIComponent(user)}/preferences`, patch);
        if (r.ok) { say(out, 'Saved.'); return; }
        box.checked = !box.checked;
        say(out, `Not saved: ${(r.body && r.body.error && r.body.error.message) || 'error'}`);
      });
    });
  }
  const feed = $('#feed');
  if (feed) {
    (async () => {
      const r = await api('GET', `/admin/v1/users/${encodeURIComponent(feed.dataset.user)}/feed?limit=20`);
      feed.textContent = '';
      if (!r.ok) { feed.append(el('li', { class: 'error', text: (r.body && r.body.error && r.body.error.message) || 'The feed could not be read.' })); return; }
      const items = r.body.items || r.body.entries || [];
      if (!items.length) feed.append(el('li', { class: 'empty', text: 'Empty.' }));
      for (const e of items) {
        const d = e.data || {};
        feed.append(el('li', {}, el('span', { text: d.subject || d.body || e.id }), ' ',
          el('span', { class: 'muted', text: `${e.created_at || ''}${e.read_at ? ' · read' : ' · unread'}` })));
      }
    })();
  }
})();
