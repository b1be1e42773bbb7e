// Checkout: counts down from the server's remaining time (never the phone's clock), polls the
// public status API and switches to the paid, in-review or expired screen without a reload.
(function () {
  'use strict';
  // A hash in groups of 4 that never break inside, a break opportunity between them (as the page renders it).
  function showGroups(el, value) {
    var groups = value.match(/.{1,4}/g) || [];
    if (groups.length > 1 && groups[groups.length - 1].length <= 2) groups[groups.length - 2] += groups.pop();
    el.textContent = '';
    for (var i = 0; i < groups.length; i++) {
      if (i > 0) el.appendChild(document.createElement('wbr'));
      var group = document.createElement('span');
      group.className = 'g';
      group.textContent = groups[i];
      el.appendChild(group);
    }
  }
  var data = JSON.parse(document.getElementById('page-data').textContent).checkout;
  var screen = data.screen;
  // Remaining time is anchored to a monotonic clock: a wrong phone clock cannot shorten it.
  var deadline = performance.now() + data.remaining_ms;
  var countdown = document.getElementById('countdown');
  var overdue = document.getElementById('overdue');

  function format(ms) {
    var total = Math.ceil(Math.max(0, ms) / 1000);
    var h = Math.floor(total / 3600),
      m = Math.floor((total % 3600) / 60),
      s = total % 60;
    var mmss = (m < 10 ? '0' : '') + m + ':' + (s < 10 ? '0' : '') + s;
    return h > 0 ? h + ':' + mmss : mmss;
  }

  function tick() {
    var left = deadline - performance.now();
    if (countdown) countdown.textContent = format(left);
    if (overdue) overdue.hidden = left > 0;
  }

  function screenOf(inv) {
    if (inv.status === 'confirmed') return 'confirmed';
    if (inv.status === 'expired') return 'expired';
    if (inv.status === 'review' && inv.tx_hash) return 'review';
    return 'pay';
  }

  function show(next, inv) {
    // What arrived changed in a way the server words (a partial payment on the still open invoice,
    // a payment the shop accepted): reload. A plain payment only turns the screen, without a reload.
    var partial = next === 'pay' && inv.amount_received !== undefined && inv.amount_received !== data.amount_received;
    var stray = next === 'pay' && inv.unmatched_payment_seen !== undefined && inv.unmatched_payment_seen !== data.unmatched_payment_seen;
    // A payment seen before its block is final, or one that left the chain: the server words it.
    var seen =
      next === 'pay' &&
      inv.payment_dropped !== undefined &&
      ((inv.payment_seen ? inv.payment_seen.tx_hash : null) !== data.seen_tx || inv.payment_dropped !== data.payment_dropped);
    if (partial || stray || seen || (inv.resolution || null) !== (data.resolution || null)) {
      window.location.reload();
      return true;
    }
    var fields = document.querySelectorAll('[data-field="tx_hash"]');
    for (var i = 0; i < fields.length; i++) showGroups(fields[i], inv.tx_hash || '');
    if (next === screen) return false;
    screen = next;
    ['pay', 'confirmed', 'review', 'expired'].forEach(function (name) {
      var el = document.getElementById('screen-' + name);
      if (el) el.hidden = name !== next;
    });
    var shown = document.getElementById('screen-' + next);
    var heading = shown && shown.querySelector('h2');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus();
    }
    return false;
  }

  var timer = null;
  function schedule() {
    if (screen === 'confirmed' || screen === 'expired') return;
    timer = setTimeout(poll, data.poll_seconds * 1000);
  }

  function poll() {
    timer = null;
    fetch(data.api, { cache: 'no-store', credentials: 'omit', headers: { accept: 'application/json' } })
      .then(function (res) {
        if (!res.ok) throw new Error('status ' + res.status);
        var serverNow = Date.parse(res.headers.get('date') || '');
        return res.json().then(function (body) {
          var inv = body.invoice;
          if (!isNaN(serverNow)) {
            // Re-anchor on the server's clock when the two drift apart by more than the header's resolution.
            var left = Date.parse(inv.expires_at) - serverNow;
            if (Math.abs(deadline - performance.now() - left) > 2000) deadline = performance.now() + left;
          }
          show(screenOf(inv), inv);
        });
      })
      .catch(function () {
        /* offline or server busy: the next poll tries again */
      })
      .then(schedule);
  }

  // "I already paid": the payer names the transaction; the server looks it up on the chain now.
  var claim = document.getElementById('claim');
  var form = document.getElementById('claim-form');
  // Offered only while the option shown takes a transaction id (TRON, EVM): Solana and TON are seen by their watchers.
  var shownOption = function () {
    return document.querySelector('.option[data-option]:not([hidden])');
  };
  var syncClaim = function () {
    var o = shownOption();
    if (claim && form) claim.hidden = !!o && o.getAttribute('data-claim') === '0';
  };
  if (claim && form) {
    syncClaim();
    var input = document.getElementById('claim-tx');
    var result = document.getElementById('claim-result');
    // The sentence with each amount its own left-to-right run, so a right-to-left page keeps its digits in order.
    var say = function (key, amount) {
      var values = { amount: amount || '', payable: data.payable_amount };
      var parts = (form.getAttribute('data-' + key) || '').split(/\{(amount|payable)\}/);
      result.textContent = '';
      for (var i = 0; i < parts.length; i++) {
        if (i % 2 === 0) {
          result.appendChild(document.createTextNode(parts[i]));
        } else {
          var num = document.createElement('bdi');
          num.dir = 'ltr';
          num.className = 'num';
          num.textContent = values[parts[i]];
          result.appendChild(num);
        }
      }
    };
    // What the server said survives the reload that shows what it recorded.
    var SAID = 'gatewayd-claim:' + data.api;
    try {
      var said = JSON.parse(window.sessionStorage.getItem(SAID) || 'null');
      if (said) {
        window.sessionStorage.removeItem(SAID);
        claim.open = true;
        say(said.key, said.amount);
      }
    } catch (err) {
      /* storage off: the page itself shows what was recorded */
    }
    // One message for each answer: recorded for this invoice now or before, paid another invoice, a wrong amount.
    var outcome = function (c) {
      if (c.outcome === 'deferred') return 'deferred';
      if (c.paid_to === 'another_invoice') return 'other-invoice';
      if (c.paid_to === 'no_invoice') return 'wrong-amount';
      return c.outcome === 'recorded' ? 'recorded' : 'already';
    };
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      // Sent as given (an EVM hash keeps its 0x); the server checks it against the invoice's networks.
      var tx = input.value.trim();
      if (!/^(0x)?[0-9a-fA-F]{64}$/.test(tx)) return say('invalid');
      say('checking');
      fetch(data.api + '/transaction', {
        method: 'POST',
        cache: 'no-store',
        credentials: 'omit',
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify(shownOption() ? { tx_hash: tx, network: shownOption().getAttribute('data-network') } : { tx_hash: tx }),
      })
        .then(function (res) {
          return res.json().then(function (body) {
            if (res.ok) {
              var key = outcome(body.claim);
              say(key, body.claim.amount);
              try {
                window.sessionStorage.setItem(SAID, JSON.stringify({ key: key, amount: body.claim.amount }));
              } catch (err) {
                /* the message is shown until a reload */
              }
              if (!show(screenOf(body.invoice), body.invoice)) {
                try {
                  window.sessionStorage.removeItem(SAID);
                } catch (err) {
                  /* nothing kept */
                }
              }
              return;
            }
            var code = body.error && body.error.code;
            var reason = body.error && body.error.details && body.error.details[0] && body.error.details[0].reason;
            if (code === 'transaction_not_found') say('not-found');
            else if (code === 'transaction_not_accepted') say(reason === 'failed' ? 'failed' : 'no-transfer');
            else if (code === 'rate_limited') say('busy');
            else if (code === 'validation_error') say('invalid');
            else if (code === 'chain_unavailable') say('deferred');
            else say('error');
          });
        })
        .catch(function () {
          say('error');
        });
    });
  }

  // The network picker: each option's panel is on the page; a choice shows its panel in place and
  // keeps ?option= in the address, so a reload (or the page without JavaScript) shows the same one.
  var picker = document.getElementById('picker');
  if (picker) {
    picker.addEventListener('click', function (e) {
      var link = e.target.closest ? e.target.closest('a[data-option]') : null;
      if (!link) return;
      e.preventDefault();
      var chosen = link.getAttribute('data-option');
      var panels = document.querySelectorAll('.option[data-option]');
      for (var i = 0; i < panels.length; i++) panels[i].hidden = panels[i].getAttribute('data-option') !== chosen;
      syncClaim();
      var links = picker.querySelectorAll('a[data-option]');
      for (var j = 0; j < links.length; j++) {
        if (links[j] === link) links[j].setAttribute('aria-current', 'true');
        else links[j].removeAttribute('aria-current');
      }
      try {
        var url = new URL(window.location.href);
        url.searchParams.set('option', chosen);
        window.history.replaceState(null, '', url.toString());
      } catch (err) {
        /* the address keeps the earlier choice */
      }
    });
  }

  tick();
  setInterval(tick, 1000);
  schedule();
  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState === 'visible' && timer !== null) {
      clearTimeout(timer);
      poll();
    }
  });
})();
