// Two-factor sign-in in the pages: the code step of the sign-in page (after the password or Google
// step answered two_factor_required) and the console's setup (QR code and secret, then a first code
// through the form, whose answer lists the recovery codes once).
(function () {
  'use strict';
  var page = JSON.parse(document.getElementById('page-data').textContent);
  var messages = page.messages || {};

  // Called by forms.js with the challenge of a two_factor_required answer; false when this page has no code step.
  window.gatewaydTwoFactor = function (challenge) {
    var step = document.getElementById('two-factor-step');
    if (!step) return false;
    step.querySelector('input[name="challenge"]').value = challenge;
    var first = document.querySelectorAll('[data-first-step]');
    for (var i = 0; i < first.length; i++) first[i].hidden = true;
    step.hidden = false;
    step.querySelector('input[name="code"]').focus();
    return true;
  };

  var start = document.querySelector('[data-two-factor-start]');
  if (!start) return;
  var box = document.querySelector('[data-two-factor-setup]');
  var error = document.querySelector('[data-two-factor-error]');
  function fail(json) {
    var code = json && json.error ? json.error.code : 'generic';
    error.textContent = messages['page.error.' + code] || (json && json.error && json.error.message) || messages['page.error.generic'];
    error.hidden = false;
    error.focus();
    start.disabled = false;
  }
  start.addEventListener('click', function () {
    start.disabled = true;
    error.hidden = true;
    fetch('/api/v1/me/two-factor/setup', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: '{}',
    })
      .then(function (res) {
        return res.json().then(function (json) {
          if (!res.ok) return fail(json);
          var svg = new DOMParser().parseFromString(json.qr_svg, 'image/svg+xml').documentElement;
          var qr = box.querySelector('[data-qr]');
          qr.textContent = '';
          qr.appendChild(document.importNode(svg, true));
          box.querySelector('[data-secret]').textContent = json.secret;
          start.hidden = true;
          box.hidden = false;
          box.querySelector('input[name="code"]').focus();
        });
      })
      .catch(function () {
        fail({ error: { code: 'network' } });
      });
  });
})();
