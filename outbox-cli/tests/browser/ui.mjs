// Drives Debian's chromium through the pages of `outbox ui` (started and seeded by
// outbox-cli/tests/ui.rs): the overview and its chart, paging through entries, one entry
// whose payload holds markup. Usage: node ui.mjs BASE_URL SCREENSHOT_DIR. Exits non-zero
// with the reason when a page is not as it should be.
import { check, launch } from './common.mjs';

const [base, shots] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  // The overview: counts, and the chart of what the server sampled.
  await page.goto(`${base}/`);
  check((await page.title()).startsWith('Overview'), 'the overview has its title');
  const pending = (await page.locator('#card-pending b').textContent()).trim();
  check(pending === '121', `the overview counts 121 pending entries, not ${pending}`);
  const delivered = page.locator('svg#chart polyline.delivered');
  check(await delivered.count() === 1, 'the chart draws delivered/s');
  // The server samples what is live (the claims made are summed only by full counts).
  check(await page.locator('svg#chart polyline.claimed').count() === 0, 'live samples draw no claimed/s');
  const drawn = (await delivered.getAttribute('points')).trim().split(/\s+/);
  const zero = Number(await page.locator('svg#chart text', { hasText: /^0$/ }).getAttribute('y'));
  check(zero > 0 && drawn.some((p) => Number(p.split(',')[1]) < zero),
    `delivered/s rose above the zero line (y ${zero}) while the entries were drained: ${drawn}`);
  const box = await page.locator('svg#chart').boundingBox();
  check(box && box.width > 300 && box.height > 60, `the chart is drawn at a readable size (${JSON.stringify(box)})`);
  const points = (await delivered.getAttribute('points')).trim().split(/\s+/);
  check(points.length >= 2, `the chart has points (${points.length})`);
  // By topic: what is live in each, every count a link to its list.
  const topicRow = (name) => page.locator('#by-topic tbody tr', { has: page.locator(`td:text-is("${name}")`) });
  check(await page.locator('#by-topic tbody tr').count() === 2, 'two topics hold live entries');
  const orders = (await topicRow('orders').locator('td').allTextContents()).map((t) => t.trim());
  check(orders[1] === '120' && orders[2] !== '—', `orders: 120 pending and the oldest one's age: ${orders}`);
  check((await page.locator('#by-topic tbody tr').first().locator('td').first().textContent()) === 'orders',
    'the busiest topic comes first');
  await page.screenshot({ path: `${shots}/overview.png`, fullPage: true });
  await topicRow('markup').locator('a').first().click();
  await page.waitForURL((u) => u.pathname === '/entries' && u.searchParams.get('topic') === 'markup');
  check(await page.locator('tbody tr').count() === 1, "the topic's pending count opens its one entry");

  // Entries, a page at a time, by the same cursor as `outbox list`.
  await page.click('nav >> text=Entries');
  const rows = page.locator('tbody tr');
  check(await rows.count() === 50, `the first page holds 50 entries, not ${await rows.count()}`);
  const firstId = await rows.first().locator('code').textContent();
  await page.click('#next');
  check(await rows.count() === 50, 'the second page holds 50 entries');
  const secondFirst = await rows.first().locator('code').textContent();
  check(secondFirst !== firstId, 'the second page starts after the first');
  await page.click('#next');
  check(await rows.count() === 21, `the last page holds the other 21, not ${await rows.count()}`);
  check(await page.locator('#next').count() === 0, 'the last page has no next page');
  await page.screenshot({ path: `${shots}/entries.png`, fullPage: true });

  // One entry whose payload is markup: shown as text, never run.
  await page.goto(`${base}/entries?status=pending&topic=markup`);
  check(await rows.count() === 1, 'the topic filter finds the one markup entry');
  await rows.first().locator('a').click();
  const shown = await page.locator('#payload').textContent();
  check(shown.includes('<script>window.ran = true; alert("ran")</script>'), `the payload is shown as text: ${shown}`);
  check(await page.evaluate(() => window.ran === undefined), 'the payload did not run');
  check(await page.locator('td', { hasText: 'x-note' }).count() === 1, 'the headers are listed');
  await page.screenshot({ path: `${shots}/entry.png`, fullPage: true });

  // Bad input: a clear page, not a crash.
  const bad = await page.goto(`${base}/entries?status=nonsense`);
  check(bad.status() === 400, `an unknown status is a 400, not ${bad.status()}`);
  const missing = await page.goto(`${base}/entries/0193a1b2-0000-7000-8000-000000000000`);
  check(missing.status() === 404, `an unknown id is a 404, not ${missing.status()}`);

  check(dialogs.length === 0, `no dialog opened (${dialogs})`);
  check(errors.length === 0, `no script error (${errors})`);
  console.log('the pages are as they should be');
} finally {
  await browser.close();
}
