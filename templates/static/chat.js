// Website chat: starts a chat through the public support API, keeps the private chat token in this
// browser (localStorage), polls for replies and shows them. Everything typed is shown as text.
(function () {
  'use strict';
  var root = document.getElementById('chat');
  if (!root) return;
  var page = JSON.parse(document.getElementById('page-data').textContent);
  var messages = page.messages || {};
  var KEY = 'gatewayd.chat_token';
  var POLL_MS = 8000;
  var toggle = root.querySelector('.chat-toggle');
  var panel = root.querySelector('.chat-panel');
  var start = root.querySelector('form[data-chat="start"]');
  var thread = root.querySelector('[data-chat="thread"]');
  var reply = root.querySelector('form[data-chat="reply"]');
  var list = thread.querySelector('ol');
  var timer = null;

  function text(key) {
    return messages[key] || key;
  }
  function token() {
    try {
      return localStorage.getItem(KEY);
    } catch (e) {
      return null;
    }
  }
  function setToken(value) {
    try {
      if (value) localStorage.setItem(KEY, value);
      else localStorage.removeItem(KEY);
    } catch (e) {
      /* private mode */
    }
  }

  function showError(form, code) {
    var box = form.querySelector('[data-error]');
    box.textContent = messages['page.error.' + code] || messages['page.error.generic'];
    box.hidden = false;
  }

  function render(chat) {
    start.hidden = true;
    thread.hidden = false;
    thread.querySelector('[data-field="reference"]').textContent = chat.ticket.reference;
    thread.querySelector('[data-field="status"]').textContent = text('page.support.status.' + chat.ticket.status);
    while (list.firstChild) list.removeChild(list.firstChild);
    chat.messages.forEach(function (m) {
      var li = document.createElement('li');
      li.className = m.author;
      var who = document.createElement('strong');
      who.textContent = m.author === 'staff' ? text('page.chat.from_staff') : chat.name;
      // The one date format of every page ("2026-05-12 09:30 UTC"), isolated left to right.
      var when = document.createElement('span');
      when.className = 'muted small';
      var exact = new Date(m.created_at).toISOString();
      var time = document.createElement('time');
      time.setAttribute('datetime', exact);
      time.textContent = exact.slice(0, 16).replace('T', ' ') + ' UTC';
      when.appendChild(document.createTextNode(' · '));
      when.appendChild(time);
      var body = document.createElement('p');
      body.className = 'body';
      body.textContent = m.body;
      li.appendChild(who);
      li.appendChild(when);
      li.appendChild(body);
      list.appendChild(li);
    });
  }

  function api(method, path, payload) {
    var headers = { accept: 'application/json' };
    if (payload) headers['content-type'] = 'application/json';
    var t = token();
    if (t) headers['x-support-chat-token'] = t;
    return fetch('/api/v1/support/chat' + path, {
      method: method,
      headers: headers,
      credentials: 'omit',
      body: payload ? JSON.stringify(payload) : undefined,
    }).then(function (res) {
      return res
        .json()
        .catch(function () {
          return {};
        })
        .then(function (json) {
          return { ok: res.ok, status: res.status, json: json };
        });
    });
  }

  function refresh() {
    if (!token()) return;
    api('GET', '').then(
      function (r) {
        if (r.ok) render(r.json);
        else if (r.status === 401) forget();
      },
      function () {
        /* offline: next poll */
      },
    );
  }

  function poll() {
    if (timer) clearInterval(timer);
    timer = setInterval(function () {
      if (!panel.hidden) refresh();
    }, POLL_MS);
  }

  function forget() {
    setToken(null);
    if (timer) clearInterval(timer);
    thread.hidden = true;
    start.hidden = false;
  }

  function open(state) {
    panel.hidden = !state;
    toggle.setAttribute('aria-expanded', String(state));
    if (state) {
      refresh();
      var first = panel.querySelector(token() ? '#chat-reply' : '#chat-name');
      if (first) first.focus();
    } else toggle.focus();
  }

  toggle.hidden = false;
  toggle.addEventListener('click', function () {
    open(panel.hidden);
  });
  root.querySelector('[data-chat-close]').addEventListener('click', function () {
    open(false);
  });
  root.querySelector('[data-chat-forget]').addEventListener('click', forget);
  panel.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') open(false);
  });

  start.addEventListener('submit', function (e) {
    e.preventDefault();
    if (!start.reportValidity()) return;
    var payload = { name: start.name.value.trim(), email: start.email.value.trim(), message: start.message.value };
    var captcha = start.querySelector('[name="cf-turnstile-response"], [name="h-captcha-response"]');
    if (captcha && captcha.value) payload.captcha_token = captcha.value;
    start.querySelector('[data-error]').hidden = true;
    api('POST', '', payload).then(
      function (r) {
        if (!r.ok) return showError(start, r.json.error ? r.json.error.code : 'generic');
        setToken(r.json.chat_token);
        start.reset();
        render(r.json);
        poll();
      },
      function () {
        showError(start, 'network');
      },
    );
  });

  reply.addEventListener('submit', function (e) {
    e.preventDefault();
    if (!reply.reportValidity()) return;
    reply.querySelector('[data-error]').hidden = true;
    api('POST', '/messages', { message: reply.message.value }).then(
      function (r) {
        if (!r.ok) return showError(reply, r.json.error ? r.json.error.code : 'generic');
        reply.reset();
        render(r.json);
      },
      function () {
        showError(reply, 'network');
      },
    );
  });

  if (token()) poll();
})();
