// Copy buttons: <button data-copy="text" data-done="Copied" hidden>. Hidden without JavaScript,
// where the text itself stays selectable.
(function () {
  'use strict';
  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'sr-only';
    document.body.appendChild(area);
    area.select();
    try {
      document.execCommand('copy');
    } catch (e) {
      /* the text stays selectable by hand */
    }
    document.body.removeChild(area);
  }
  function init() {
    var buttons = document.querySelectorAll('button[data-copy]');
    for (var i = 0; i < buttons.length; i++) {
      (function (button) {
        var label = button.textContent;
        button.hidden = false;
        button.addEventListener('click', function () {
          var text = button.getAttribute('data-copy');
          var done = function () {
            button.textContent = button.getAttribute('data-done') || label;
            button.classList.add('done');
            setTimeout(function () {
              button.textContent = label;
              button.classList.remove('done');
            }, 2000);
          };
          if (navigator.clipboard && window.isSecureContext) {
            navigator.clipboard.writeText(text).then(done, function () {
              fallbackCopy(text);
              done();
            });
          } else {
            fallbackCopy(text);
            done();
          }
        });
      })(buttons[i]);
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
