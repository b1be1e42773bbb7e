// Every form of the pages (sign-in, registration, contact, console actions): plain JavaScript that
// sends JSON to the API (a same-origin fetch sends Origin itself, so the API's Origin rule protects
// every console action) and shows the outcome in the page's language.
(function () {
  'use strict';
  var page = JSON.parse(document.getElementById('page-data').textContent);
  var messages = page.messages || {};

  function message(code) {
    return messages['page.error.' + code] || messages['page.error.generic'];
  }

  function captchaToken(form) {
    var input = form.querySelector('[name="cf-turnstile-response"], [name="h-captcha-response"]');
    return input && input.value ? input.value : undefined;
  }

  function resetCaptcha() {
    // A captcha token is single use, whatever the outcome.
    try { if (window.turnstile) window.turnstile.reset(); } catch (e) { /* widget not ready */ }
    try { if (window.hcaptcha) window.hcaptcha.reset(); } catch (e) { /* widget not ready */ }
  }

  function safeNext(value, fallback) {
    // Only our own console paths: never an open redirect.
    return typeof value === 'string' && /^\/console(\/[A-Za-z0-9_\/-]*)?(\?[A-Za-z0-9_=&%-]*)?$/.test(value) ? value : fallback;
  }

  function fieldValue(f) {
    var type = f.getAttribute('data-type');
    var raw = f.name === 'password' || f.type === 'hidden' || f.tagName === 'TEXTAREA' ? f.value : f.value.trim();
    if (raw.trim() === '' && f.hasAttribute('data-null-if-empty')) return null;
    if (type === 'int') return /^-?[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
    if (type === 'json') { try { return JSON.parse(raw); } catch (e) { return raw; } }
    return raw;
  }

  function body(form) {
    var out = {};
    var fields = form.querySelectorAll('input[name], select[name], textarea[name]');
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.name === 'cf-turnstile-response' || f.name === 'h-captcha-response' || f.name === 'g-recaptcha-response') continue;
      if (f.type === 'checkbox' && f.getAttribute('data-type') === 'bool') {
        out[f.name] = f.checked;
        continue;
      }
      if (f.type === 'checkbox') {
        if (!out[f.name]) out[f.name] = [];
        if (f.checked) out[f.name].push(f.value);
        continue;
      }
      if (f.hasAttribute('data-optional') && f.value.trim() === '') continue;
      out[f.name] = fieldValue(f);
    }
    if (form.hasAttribute('data-locale')) out.locale = page.locale;
    var token = captchaToken(form);
    if (token) out.captcha_token = token;
    return out;
  }

  function pick(obj, path) {
    return path.split('.').reduce(function (o, k) { return o == null ? undefined : o[k]; }, obj);
  }

  function idempotencyKey(form) {
    // One key per attempt to create, reused when the same submission is retried.
    if (!form.__idem) form.__idem = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(36).slice(2);
    return form.__idem;
  }

  function showError(form, text) {
    var box = form.querySelector('[data-error]');
    box.textContent = text;
    box.hidden = false;
    box.focus();
  }

  function done(form, result) {
    var then = form.getAttribute('data-then');
    form.__idem = null;
    if (then === 'login' || then === 'console') {
      window.location.assign(safeNext(form.getAttribute('data-next'), '/console'));
      return;
    }
    if (then === 'reload') { window.location.reload(); return; }
    if (then === 'signout') { window.location.assign('/login'); return; }
    if (then === 'goto') {
      var target = form.getAttribute('data-goto').replace(/\{([a-z_.]+)\}/g, function (w, path) { return encodeURIComponent(pick(result, path)); });
      window.location.assign(target);
      return;
    }
    // A registration answered email_sent: false sent no mail: say so rather than "check your inbox".
    var notSent = then === 'register' && result && result.email_sent === false;
    var panel = form.parentNode.querySelector(notSent ? '[data-not-sent]' : '[data-done]');
    var fields = panel.querySelectorAll('[data-field]');
    for (var i = 0; i < fields.length; i++) {
      var value = pick(result, fields[i].getAttribute('data-field'));
      if (value !== undefined) fields[i].textContent = String(value);
      if (fields[i].hasAttribute('data-copy-field')) {
        var button = panel.querySelector('button[data-copy]');
        if (button) button.setAttribute('data-copy', String(value));
      }
    }
    if (then !== 'secret') form.hidden = true;
    else form.reset();
    panel.hidden = false;
    panel.focus();
  }

  function submit(form, event) {
    event.preventDefault();
    if (!form.reportValidity()) return;
    var confirmText = form.getAttribute('data-confirm');
    if (confirmText && !window.confirm(confirmText)) return;
    var button = form.querySelector('button[type="submit"]');
    var errorBox = form.querySelector('[data-error]');
    errorBox.hidden = true;
    button.disabled = true;
    var method = form.getAttribute('data-method') || 'POST';
    var headers = { accept: 'application/json' };
    var payload;
    if (method !== 'DELETE') {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body(form));
    }
    if (form.hasAttribute('data-idempotency')) headers['idempotency-key'] = idempotencyKey(form);
    fetch(form.getAttribute('data-api'), { method: method, headers: headers, credentials: 'same-origin', body: payload })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (json) {
          if (res.ok) return done(form, json);
          var code = json && json.error ? json.error.code : 'generic';
          resetCaptcha();
          var text = message(code);
          if (code === 'validation_error' && json.error.details && json.error.details.length) {
            text += ' (' + json.error.details.map(function (d) { return d.path; }).join(', ') + ')';
          }
          showError(form, text);
        });
      })
      .catch(function () { showError(form, message('network')); })
      .then(function () { button.disabled = false; });
  }

  function fragmentToken(name) {
    var m = new RegExp('(?:^#|&)' + name + '=([A-Za-z0-9_-]{43})(?:&|$)').exec(window.location.hash);
    // The token leaves the address bar (and the history) as soon as it is read.
    if (window.location.hash) history.replaceState(null, '', window.location.pathname + window.location.search);
    return m ? m[1] : null;
  }

  // A same-origin JSON POST (the browser adds Origin, which the API checks).
  function postJson(url, payload) {
    return fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(payload),
    });
  }

  // The reset page: what the account holds besides sessions (API keys, webhooks), with the offer to
  // revoke them. The API answers only to the holder of a live reset link.
  function preview(form, token) {
    postJson(form.getAttribute('data-preview'), { token: token })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (json) {
          if (!res.ok) { showError(form, message(json && json.error ? json.error.code : 'generic')); return; }
          var box = form.querySelector('[data-credentials]');
          var counts = box.querySelectorAll('[data-count]');
          for (var k = 0; k < counts.length; k++) counts[k].textContent = String(json[counts[k].getAttribute('data-count')]);
          box.hidden = false;
        });
      })
      .catch(function () { showError(form, message('network')); });
  }

  var forms = document.querySelectorAll('form[data-api]');
  for (var i = 0; i < forms.length; i++) {
    (function (form) {
      var fragment = form.getAttribute('data-fragment');
      if (fragment) {
        var token = fragmentToken(fragment);
        if (!token) {
          form.hidden = true;
          document.querySelector('[data-missing-token]').hidden = false;
          return;
        }
        form.querySelector('input[name="token"]').value = token;
        if (form.hasAttribute('data-preview')) preview(form, token);
      }
      form.addEventListener('submit', function (event) { submit(form, event); });
    })(forms[i]);
  }

  // The confirmation page: the token is in the #verify= fragment (never sent to a server in a URL).
  // It is never used on load: a link from another site could otherwise sign this browser in to an
  // account of the sender's choosing (login CSRF). The person confirms with a click.
  var verify = document.getElementById('verify');
  if (verify) {
    var show = function (state) {
      var parts = verify.querySelectorAll('[data-state]');
      for (var j = 0; j < parts.length; j++) parts[j].hidden = parts[j].getAttribute('data-state') !== state;
      var el = verify.querySelector('[data-state="' + state + '"]');
      if (state === 'ready') el.querySelector('button').focus();
      else if (state === 'ok_no_password') el.querySelector('input[name="password"]').focus();
      else if (state !== 'working') el.focus();
    };
    var verifyToken = fragmentToken('verify');
    if (!verifyToken) show('failed');
    else {
      verify.querySelector('form[data-state="ready"]').addEventListener('submit', function (event) {
        event.preventDefault();
        show('working');
        postJson(verify.getAttribute('data-api'), { token: verifyToken })
          .then(function (res) {
            if (!res.ok) { show('failed'); return; }
            return res.json().then(function (json) { show(json.password_set === false ? 'ok_no_password' : 'ok'); });
          })
          .catch(function () { show('failed'); });
      });
      show('ready');
    }
  }

  // Google sign-in calls this global by name (data-callback on #g_id_onload).
  window.gatewaydGoogleCredential = function (response) {
    var box = document.querySelector('[data-google-error]');
    postJson('/api/v1/auth/google', { credential: response.credential })
      .then(function (res) {
        if (res.ok) { window.location.assign('/console'); return; }
        return res.json().then(function (json) {
          box.textContent = message(json && json.error ? json.error.code : 'generic');
          box.hidden = false;
        });
      })
      .catch(function () { box.textContent = message('network'); box.hidden = false; });
  };
})();
