// Every form of the pages (sign-in, registration, contact, console actions): plain JavaScript that
// sends JSON to the API (a same-origin fetch sends Origin itself, so the API's Origin rule protects
// every console action) and shows the outcome in the page's language.
(function () {
  'use strict';
  // A URL that breaks only after '/', '?' or '&' (never inside its host and port), as the pages render it.
  function showUrl(el, url) {
    el.textContent = '';
    var parts = url.match(/[^/?&]*(?:[/?&]+|$)/g);
    for (var i = 0; i < parts.length; i++) {
      if (!parts[i]) continue;
      if (el.firstChild) el.appendChild(document.createElement('wbr'));
      var part = document.createElement('span');
      part.className = 'u';
      part.textContent = parts[i];
      el.appendChild(part);
    }
  }
  var page = JSON.parse(document.getElementById('page-data').textContent);
  var messages = page.messages || {};

  // The page's own message for an API error code; the API's own (precise, English) message when the
  // page has none, so a 4xx is never answered with a vague "something went wrong".
  function message(code, apiMessage) {
    return messages['page.error.' + code] || apiMessage || messages['page.error.generic'];
  }

  // Codes whose fault lies in one field of the form: that field is marked like a validation detail.
  var CODE_FIELD = { duplicate_order_id: 'merchant_order_id', amount_pool_exhausted: 'amount', invalid_webhook_url: 'url', invalid_credential: 'password' };

  function fieldNamed(form, path) {
    var name = String(path || '').split('.')[0];
    if (!name) return null;
    var fields = form.querySelectorAll('input[name], select[name], textarea[name]');
    for (var i = 0; i < fields.length; i++) if (fields[i].name === name && fields[i].type !== 'hidden') return fields[i];
    return null;
  }

  // "Label: rule" in the page's language: the field's hint, else its data-rule, else its length limits.
  function fieldRule(field) {
    var label = field.id ? document.querySelector('label[for="' + field.id + '"]') : null;
    // A box of a group (the networks of a wallet) is named by its group's legend.
    var group = field.type === 'checkbox' && field.closest('fieldset') ? field.closest('fieldset').querySelector('legend') : null;
    var name = label ? label.textContent.trim() : group ? group.textContent.trim() : field.name;
    var hintId = field.getAttribute('aria-describedby');
    var hint = hintId ? document.getElementById(hintId) : null;
    var rule = hint ? hint.textContent.trim() : field.getAttribute('data-rule');
    if (!rule && field.maxLength > 0) {
      rule = (messages['page.rule.length'] || '{min}-{max}')
        .replace('{min}', String(field.required ? Math.max(1, field.minLength) : Math.max(0, field.minLength)))
        .replace('{max}', String(field.maxLength));
    }
    return rule ? name + ': ' + rule : name;
  }

  function clearMarks(form) {
    var marked = form.querySelectorAll('[aria-invalid="true"]');
    for (var i = 0; i < marked.length; i++) marked[i].removeAttribute('aria-invalid');
  }

  // What went wrong, as the lines to show: the code's message, then one line per field at fault
  // (each field once, marked with aria-invalid), in the page's language.
  function describe(form, status, json) {
    var error = json && json.error && typeof json.error.code === 'string' ? json.error : null;
    if (!error) return [message(status >= 500 ? 'internal_error' : 'generic')];
    var code = error.code === 'unauthorized' ? 'signed_out' : error.code;
    // A form may word a code for its own context (data-error-CODE, already translated by the page).
    var lines = [form.getAttribute('data-error-' + code) || message(code, error.message)];
    var details = error.details && error.details.length ? error.details : CODE_FIELD[code] ? [{ path: CODE_FIELD[code] }] : [];
    var seen = {};
    for (var i = 0; i < details.length; i++) {
      var d = details[i];
      var field = fieldNamed(form, d.path);
      var key = field ? field.name : d.path;
      if (seen[key]) continue;
      seen[key] = true;
      if (field) field.setAttribute('aria-invalid', 'true');
      if (d.reason && messages['page.error.webhook.' + d.reason]) lines.push(messages['page.error.webhook.' + d.reason]);
      else if (code === 'validation_error') lines.push(field ? fieldRule(field) : d.path + ': ' + d.message);
    }
    return lines;
  }

  function trimmable(f) {
    return f.tagName === 'INPUT' && /^(text|email|url|search|tel|number)$/.test(f.type);
  }

  // Pasted values lose their surrounding spaces before the checks run; a failed check speaks the
  // page's language (the field's rule) rather than the browser's.
  function check(form) {
    var fields = form.querySelectorAll('input[name], select[name], textarea[name]');
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (trimmable(f) && f.value !== f.value.trim()) f.value = f.value.trim();
      if (!f.setCustomValidity) continue;
      f.setCustomValidity('');
      if (!f.checkValidity()) f.setCustomValidity(fieldRule(f));
    }
    return form.reportValidity();
  }

  function captchaToken(form) {
    var input = form.querySelector('[name="cf-turnstile-response"], [name="h-captcha-response"]');
    return input && input.value ? input.value : undefined;
  }

  function resetCaptcha() {
    // A captcha token is single use, whatever the outcome.
    try {
      if (window.turnstile) window.turnstile.reset();
    } catch (e) {
      /* widget not ready */
    }
    try {
      if (window.hcaptcha) window.hcaptcha.reset();
    } catch (e) {
      /* widget not ready */
    }
  }

  function safeNext(value, fallback) {
    // Only our own console paths: never an open redirect.
    return typeof value === 'string' && /^\/console(\/[A-Za-z0-9_\/-]*)?(\?[A-Za-z0-9_=&%-]*)?$/.test(value) ? value : fallback;
  }

  function fieldValue(f) {
    var type = f.getAttribute('data-type');
    var raw = f.type === 'password' || f.type === 'hidden' || f.tagName === 'TEXTAREA' ? f.value : f.value.trim();
    if (raw.trim() === '' && f.hasAttribute('data-null-if-empty')) return null;
    if (type === 'bool') return raw === 'true';
    if (type === 'int') return /^-?[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
    if (type === 'json') {
      try {
        return JSON.parse(raw);
      } catch (e) {
        return raw;
      }
    }
    return raw;
  }

  function body(form) {
    var out = {};
    var partial = {};
    var fields = form.querySelectorAll('input[name], select[name], textarea[name]');
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.name === 'cf-turnstile-response' || f.name === 'h-captcha-response' || f.name === 'g-recaptcha-response') continue;
      // A part of the form that does not apply (data-when-field) is left out of the body.
      if (f.matches(':disabled')) continue;
      if (f.type === 'checkbox' && f.getAttribute('data-type') === 'bool') {
        out[f.name] = f.checked;
        continue;
      }
      if (f.type === 'checkbox') {
        if (!out[f.name]) out[f.name] = [];
        // A box of data-type="json" carries an object (an invoice option: its network and token).
        if (f.checked) out[f.name].push(f.getAttribute('data-type') === 'json' ? JSON.parse(f.value) : f.value);
        // A group marked data-null-if-all sends null when every box is ticked ("all, also later ones").
        else if (f.hasAttribute('data-null-if-all')) partial[f.name] = true;
        continue;
      }
      if (f.hasAttribute('data-optional') && f.value.trim() === '') continue;
      if (f.hasAttribute('data-path-only')) continue;
      out[f.name] = fieldValue(f);
    }
    // A group marked data-omit-if-none with no box ticked is left out (the API's default applies).
    var noneBoxes = form.querySelectorAll('input[type="checkbox"][data-omit-if-none]');
    for (var k = 0; k < noneBoxes.length; k++) if (out[noneBoxes[k].name] && out[noneBoxes[k].name].length === 0) delete out[noneBoxes[k].name];
    var allBoxes = form.querySelectorAll('input[type="checkbox"][data-null-if-all]');
    for (var j = 0; j < allBoxes.length; j++) if (!partial[allBoxes[j].name]) out[allBoxes[j].name] = null;
    if (form.hasAttribute('data-locale')) out.locale = page.locale;
    var token = captchaToken(form);
    if (token) out.captcha_token = token;
    return out;
  }

  // A time from the API (ISO 8601) in the pages' one format, "2026-05-12 09:30 UTC" (as the server
  // renders dates), on a <time> keeping the exact instant.
  function showDate(el, iso) {
    var ms = Date.parse(iso);
    if (isNaN(ms)) return;
    var exact = new Date(ms).toISOString();
    el.setAttribute('datetime', exact);
    el.textContent = exact.slice(0, 16).replace('T', ' ') + ' UTC';
  }

  function pick(obj, path) {
    return path.split('.').reduce(function (o, k) {
      return o == null ? undefined : o[k];
    }, obj);
  }

  // data-api may name a path segment taken from a field (data-path-field): `/invoices/{invoice}/resolve`.
  function apiUrl(form) {
    var url = form.getAttribute('data-api');
    var name = form.getAttribute('data-path-field');
    if (!name) return url;
    var field = form.querySelector('[name="' + name + '"]:checked') || form.querySelector('[name="' + name + '"]');
    return url.replace('{' + name + '}', encodeURIComponent(field ? field.value : ''));
  }

  function idempotencyKey(form) {
    // One key per attempt to create, reused when the same submission is retried.
    if (!form.__idem) form.__idem = window.crypto && crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(36).slice(2);
    return form.__idem;
  }

  function showError(form, lines) {
    var box = form.querySelector('[data-error]');
    box.textContent = '';
    for (var i = 0; i < lines.length; i++) {
      var line = document.createElement('span');
      line.className = i === 0 ? 'error-main' : 'error-detail';
      line.textContent = lines[i];
      box.appendChild(line);
    }
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
    if (then === 'reload') {
      window.location.reload();
      return;
    }
    if (then === 'signout') {
      window.location.assign('/login');
      return;
    }
    if (then === 'goto') {
      var target = form.getAttribute('data-goto').replace(/\{([a-z_.]+)\}/g, function (w, path) {
        return encodeURIComponent(pick(result, path));
      });
      window.location.assign(target);
      return;
    }
    // A registration answered email_sent: false sent no mail: say so rather than "check your inbox".
    var notSent = then === 'register' && result && result.email_sent === false;
    var panel = form.parentNode.querySelector(notSent ? '[data-not-sent]' : '[data-done]');
    var fields = panel.querySelectorAll('[data-field]');
    for (var i = 0; i < fields.length; i++) {
      var value = pick(result, fields[i].getAttribute('data-field'));
      if (value !== undefined && fields[i].hasAttribute('data-url')) showUrl(fields[i], String(value));
      else if (value !== undefined) fields[i].textContent = Array.isArray(value) ? value.join('\n') : String(value);
      if (value !== undefined && fields[i].hasAttribute('data-date')) showDate(fields[i], String(value));
      if (fields[i].hasAttribute('data-copy-field')) {
        var button = panel.querySelector('button[data-copy]');
        if (button) button.setAttribute('data-copy', Array.isArray(value) ? value.join('\n') : String(value));
      }
    }
    if (then !== 'secret') form.hidden = true;
    else form.reset();
    panel.hidden = false;
    panel.focus();
    // A roll inside the list shows its secret in the list itself: that list is not swapped away.
    if (then === 'secret' && !form.closest('[data-list]')) refreshLists();
  }

  // After a key or webhook is created the page stays (its secret is shown once), so the lists marked
  // data-list are read again from the server and swapped in, their forms wired like the rest.
  function refreshLists() {
    fetch(window.location.pathname + window.location.search, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (res) {
        return res.ok ? res.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, 'text/html');
        var lists = document.querySelectorAll('[data-list]');
        for (var i = 0; i < lists.length; i++) {
          var next = fresh.getElementById(lists[i].id);
          if (!next) continue;
          var node = document.importNode(next, true);
          lists[i].parentNode.replaceChild(node, lists[i]);
          var inner = node.querySelectorAll('form[data-api]');
          for (var j = 0; j < inner.length; j++) bind(inner[j]);
        }
      })
      .catch(function () {
        /* the list refreshes on the next page load */
      });
  }

  function submit(form, event) {
    event.preventDefault();
    clearMarks(form);
    if (!check(form)) return;
    // A choice may carry its own confirmation (the invoice a payment is applied to, with the difference).
    var chosen = form.querySelector('input[type="radio"]:checked[data-confirm]');
    var confirmText = chosen ? chosen.getAttribute('data-confirm') : form.getAttribute('data-confirm');
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
    fetch(apiUrl(form), { method: method, headers: headers, credentials: 'same-origin', body: payload })
      .then(function (res) {
        return res
          .json()
          .catch(function () {
            return {};
          })
          .then(function (json) {
            // 200 instead of 201: the thing was there already (a wallet's address); say so, keep the form.
            if (res.status === 200 && form.hasAttribute('data-exists')) {
              return showError(form, [form.getAttribute('data-exists').replace('{label}', String(pick(json, form.getAttribute('data-exists-field'))))]);
            }
            if (res.ok) return done(form, json);
            resetCaptcha();
            if (twoFactorStep(json)) return;
            showError(form, describe(form, res.status, json));
          });
      })
      .catch(function () {
        showError(form, [message('network')]);
      })
      .then(function () {
        button.disabled = false;
      });
  }

  // A sign-in that needs the code of two-factor sign-in: the page's code step takes over (two-factor.js).
  function twoFactorStep(json) {
    return !!(json && json.error && json.error.code === 'two_factor_required' && window.gatewaydTwoFactor && window.gatewaydTwoFactor(json.error.challenge));
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
        return res
          .json()
          .catch(function () {
            return {};
          })
          .then(function (json) {
            if (!res.ok) {
              showError(form, describe(form, res.status, json));
              return;
            }
            var box = form.querySelector('[data-credentials]');
            var counts = box.querySelectorAll('[data-count]');
            for (var k = 0; k < counts.length; k++) counts[k].textContent = String(json[counts[k].getAttribute('data-count')]);
            box.hidden = false;
          });
      })
      .catch(function () {
        showError(form, [message('network')]);
      });
  }

  // A fieldset marked data-when-field applies only while that field matches data-when-pattern (the
  // networks of an EVM address): otherwise it is hidden, and disabled so nothing of it is sent.
  function applies(form) {
    var parts = form.querySelectorAll('fieldset[data-when-field]');
    for (var i = 0; i < parts.length; i++) {
      var field = form.querySelector('[name="' + parts[i].getAttribute('data-when-field') + '"]');
      var on = !!field && new RegExp(parts[i].getAttribute('data-when-pattern')).test(field.value.trim());
      parts[i].hidden = !on;
      parts[i].disabled = !on;
    }
  }

  function bind(form) {
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
      form.addEventListener('submit', function (event) {
        submit(form, event);
      });
      form.addEventListener('input', function (event) {
        var f = event.target;
        if (f.setCustomValidity) f.setCustomValidity('');
        if (f.removeAttribute) f.removeAttribute('aria-invalid');
        applies(form);
      });
      applies(form);
    })(form);
  }

  var forms = document.querySelectorAll('form[data-api]');
  for (var i = 0; i < forms.length; i++) bind(forms[i]);

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
            if (!res.ok) {
              show('failed');
              return;
            }
            return res.json().then(function (json) {
              show(json.password_set === false ? 'ok_no_password' : 'ok');
            });
          })
          .catch(function () {
            show('failed');
          });
      });
      show('ready');
    }
  }

  // Google sign-in calls this global by name (data-callback on #g_id_onload).
  window.gatewaydGoogleCredential = function (response) {
    var box = document.querySelector('[data-google-error]');
    postJson('/api/v1/auth/google', { credential: response.credential })
      .then(function (res) {
        if (res.ok) {
          window.location.assign('/console');
          return;
        }
        return res.json().then(function (json) {
          if (twoFactorStep(json)) return;
          box.textContent = message(json && json.error ? json.error.code : 'generic');
          box.hidden = false;
        });
      })
      .catch(function () {
        box.textContent = message('network');
        box.hidden = false;
      });
  };
})();
