import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translator } from '../../src/pages/i18n.js';
import { groupsHtml, run, timeRun, translateHtml, urlHtml, valueGroups } from '../../src/pages/runs.js';

test('sentences as markup: each amount and time an isolated run, a typed name escaped, a typed NUL never taken for a run', () => {
  const t = translator('fa');
  const name = '<img src=x onerror=alert(1)> & "Books" \u00000\u0000';
  const html = translateHtml(t, 'page.checkout.accepted_body', { received: run('19.000000'), payable: run('20.000011'), merchant: name });
  assert.match(html, /<bdi dir="ltr" class="num">19\.000000<\/bdi>/);
  assert.match(html, /<bdi dir="ltr" class="num">20\.000011<\/bdi>/);
  assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;Books&quot; 0'), html);
  assert.doesNotMatch(html, /<img|\u0000/);
  // Only the runs are markup: two <bdi>, nothing else.
  assert.equal(html.match(/</g)!.length, 4);
  assert.equal(run('1<2').html, '<bdi dir="ltr" class="num">1&lt;2</bdi>');
  assert.equal(
    timeRun('2026-05-12T10:42:00.000Z', '2026-05-12 10:42 UTC').html,
    '<time datetime="2026-05-12T10:42:00.000Z" dir="ltr">2026-05-12 10:42 UTC</time>',
  );
});

test('long values as groups and URLs as parts: a break opportunity only between them, markup escaped', () => {
  assert.equal(
    groupsHtml('TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7'),
    ['TLa2', 'f6VP', 'qDgR', 'E67v', '1736', 's7bJ', '8Ray', '5wYjU7'].map((g) => `<span class="g">${g}</span>`).join('<wbr>'),
  );
  assert.deepEqual(valueGroups('a'.repeat(64), 4).length, 16);
  assert.deepEqual(valueGroups('abcde', 4), ['abcde']);
  assert.equal(
    urlHtml('https://shop.example:8443/epay/submit.php?pid=1&x=<2>'),
    ['https://', 'shop.example:8443/', 'epay/', 'submit.php?', 'pid=1&amp;', 'x=&lt;2&gt;'].map((p) => `<span class="u">${p}</span>`).join('<wbr>'),
  );
  assert.equal(
    urlHtml('https://a.example/pay/YIAYBBq57YrqCOCeCLee_FIui0SSyePX'),
    ['https://', 'a.example/', 'pay/', 'YIAYBBq5', '7YrqCOCe', 'CLee_FIu', 'i0SSyePX'].map((p) => `<span class="u">${p}</span>`).join('<wbr>'),
  );
});
