import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translator } from '../../src/pages/i18n.js';
import { run, timeRun, translateHtml } from '../../src/pages/runs.js';

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
