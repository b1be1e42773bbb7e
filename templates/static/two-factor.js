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
  // Once the first code is confirmed the recovery codes replace the secret: the QR code and the
  // secret leave the page (two-factor is on), and the codes can be copied or saved as a text file.
  var done = box.querySelector('[data-done]');
  var download = done.querySelector('[data-download-codes]');
  new MutationObserver(function () {
    if (done.hidden) return;
    var secret = box.querySelector('[data-two-factor-secret]');
    if (secret) secret.parentNode.removeChild(secret);
    download.hidden = false;
  }).observe(done, { attributes: true, attributeFilter: ['hidden'] });
  download.addEventListener('click', function () {
    var codes = done.querySelector('[data-field="recovery_codes"]').textContent.trim();
    var url = URL.createObjectURL(new Blob([codes + '\n'], { type: 'text/plain;charset=utf-8' }));
    var link = document.createElement('a');
    link.href = url;
    link.download = 'gatewayd-recovery-codes.txt';
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () {
      URL.revokeObjectURL(url);
    }, 1000);
  });
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
