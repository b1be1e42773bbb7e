// Sign-in, registration, password and contact forms: plain JavaScript that posts JSON to the API
// (a same-origin fetch sends Origin itself) and shows the outcome in the page's language.
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

  function body(form) {
    var out = {};
    var fields = form.querySelectorAll('input[name], select[name], textarea[name]');
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.name === 'cf-turnstile-response' || f.name === 'h-captcha-response' || f.name === 'g-recaptcha-response') continue;
      if (f.hasAttribute('data-optional') && f.value.trim() === '') continue;
      out[f.name] = f.name === 'password' || f.type === 'hidden' ? f.value : f.value.trim();
    }
    if (form.hasAttribute('data-locale')) out.locale = page.locale;
    var token = captchaToken(form);
    if (token) out.captcha_token = token;
    return out;
  }

  function showError(form, text) {
    var box = form.querySelector('[data-error]');
    box.textContent = text;
    box.hidden = false;
    box.focus();
  }

  function done(form, result) {
    var then = form.getAttribute('data-then');
    if (then === 'login' || then === 'console') {
      window.location.assign(safeNext(form.getAttribute('data-next'), '/console'));
      return;
    }
    var panel = form.parentNode.querySelector('[data-done]');
    if (then === 'contact' && result && result.ticket) {
      var ref = panel.querySelector('[data-field="reference"]');
      if (ref) ref.textContent = result.ticket.reference;
    }
    form.hidden = true;
    panel.hidden = false;
    panel.focus();
  }

  function submit(form, event) {
    event.preventDefault();
    if (!form.reportValidity()) return;
    var button = form.querySelector('button[type="submit"]');
    var errorBox = form.querySelector('[data-error]');
    errorBox.hidden = true;
    button.disabled = true;
    fetch(form.getAttribute('data-api'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(body(form)),
    })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (json) {
          if (res.ok) return done(form, json);
          var code = json && json.error ? json.error.code : 'generic';
          resetCaptcha();
          showError(form, message(code));
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
      }
      form.addEventListener('submit', function (event) { submit(form, event); });
    })(forms[i]);
  }

  // The confirmation page: the token is in the #verify= fragment (never sent to a server in a URL).
  var verify = document.getElementById('verify');
  if (verify) {
    var show = function (state) {
      var parts = verify.querySelectorAll('[data-state]');
      for (var j = 0; j < parts.length; j++) parts[j].hidden = parts[j].getAttribute('data-state') !== state;
      var el = verify.querySelector('[data-state="' + state + '"]');
      if (state !== 'working') el.focus();
    };
    var token = fragmentToken('verify');
    if (!token) show('failed');
    else {
      fetch(verify.getAttribute('data-api'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        credentials: 'same-origin',
        body: JSON.stringify({ token: token }),
      }).then(function (res) { show(res.ok ? 'ok' : 'failed'); }, function () { show('failed'); });
    }
  }

  // Google sign-in calls this global by name (data-callback on #g_id_onload).
  window.gatewaydGoogleCredential = function (response) {
    var box = document.querySelector('[data-google-error]');
    fetch('/api/v1/auth/google', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify({ credential: response.credential }),
    })
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
