// Drives Debian's chromium through the writes of `outbox ui`, started and seeded with
// three dead letters of topic hooks (key k1) and two of topic other (key k2) by
// outbox-cli/tests/ui.rs. Usage:
//   node writes.mjs BASE_URL SCREENSHOT_DIR read-only   no forms, every post refused, the
//                                                       lookups by id and by key
//   node writes.mjs BASE_URL SCREENSHOT_DIR allowed     requeue one of hooks from its row,
//                                                       then purge hooks' other two at once,
//                                                       the list filtered by topic
// Exits non-zero with the reason when a page is not as it should be.
import { check, launch } from './common.mjs';

const [base, shots, mode] = process.argv.slice(2);
check(mode === 'read-only' || mode === 'allowed', `a mode, read-only or allowed, not ${mode}`);

/** Posts a form to /actions from the page, as a script on it could; [status, text]. */
const post = (page, fields) => page.evaluate(async (fields) => {
  const r = await fetch('/actions', { method: 'POST', body: new URLSearchParams(fields) });
  return [r.status, await r.text()];
}, fields);

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.accept(); });

  await page.goto(`${base}/entries?status=dead_lettered&topic=hooks`);
  const rows = page.locator('tbody tr');
  check(await rows.count() === 3, `three dead letters of hooks are listed, not ${await rows.count()}`);
  const id = (await rows.first().locator('code').textContent()).trim();
  const forged = await post(page, { action: 'requeue', status: 'dead_lettered', id });
  check(forged[0] === 403, `a post without the form's token is refused, not answered ${forged[0]}`);

  if (mode === 'read-only') {
    // The error the webhook answered beside the reason the entry was dead-lettered.
    const headings = await page.locator('thead th').allTextContents();
    const cell = async (name) => (await rows.first().locator('td').nth(headings.indexOf(name)).textContent()).trim();
    check(headings.includes('last error') && headings.includes('dead-letter reason'),
      `the list shows the last error and the dead-letter reason: ${headings}`);
    const [error, reason] = [await cell('last error'), await cell('dead-letter reason')];
    check(error.includes('400') && error !== reason,
      `the last error is the webhook's answer (${error}), not the reason (${reason})`);
    check((await page.locator('nav a[aria-current="page"]').textContent()) === 'Dead letters',
      'the list marks Dead letters in the navigation');
    check(await page.locator('form[action="/actions"]').count() === 0, 'the list offers no write');
    check(await page.locator('.readonly').count() === 1, 'the list says how to allow writes');
    await rows.first().locator('a').click();
    await page.waitForURL((u) => u.pathname === `/entries/${id}`);
    check((await page.locator('nav a[aria-current="page"]').textContent()) === 'Dead letters',
      "a dead letter's page marks Dead letters in the navigation");
    check(await page.locator('form[action="/actions"]').count() === 0, 'the entry offers no write');
    // Lookup by id from the header of any page.
    await page.goto(`${base}/`);
    await page.fill('#lookup', ` ${id} `);
    await page.press('#lookup', 'Enter');
    await page.waitForURL((u) => u.pathname === `/entries/${id}`);
    check((await page.locator('h1').textContent()).includes(id), 'the lookup opens the entry');
    // What is not an entry id is a partition key: its live entries, by status.
    await page.fill('#lookup', 'k2');
    await page.press('#lookup', 'Enter');
    await page.waitForURL((u) => u.pathname === '/keys' && u.searchParams.get('key') === 'k2');
    check(await page.locator('#key-dead_lettered + table tbody tr').count() === 2,
      'the key page lists the two dead letters of key k2');
    check(await page.locator('main code', { hasText: id }).count() === 0, "key k1's entry is not among them");
    await page.fill('#lookup', 'no-such-key');
    await page.press('#lookup', 'Enter');
    await page.waitForURL((u) => u.searchParams.get('key') === 'no-such-key');
    check(await page.locator('#no-live').count() === 1, 'an unknown key says nothing is live under it');
    const blank = await page.goto(`${base}/lookup?q=%20`);
    check(blank.status() === 400, `an empty lookup is refused plainly, not answered ${blank.status()}`);
    const tokened = await post(page, { token: 'x'.repeat(64), action: 'requeue', status: 'dead_lettered', id });
    check(tokened[0] === 403 && tokened[1].includes('--allow-writes'),
      `a write is refused by read-only pages, saying how to allow it: ${tokened}`);
    await page.screenshot({ path: `${shots}/read-only.png`, fullPage: true });
  } else {
    await page.screenshot({ path: `${shots}/writable.png`, clip: { x: 0, y: 0, width: 1200, height: 400 } });
    // One by one: the first dead letter, from its row.
    await rows.first().locator('button.requeue').click();
    await page.waitForURL((u) => u.pathname === `/entries/${id}` && u.searchParams.get('done') === 'requeued');
    const said = await page.locator('#done').textContent();
    check(said.includes('Requeued 1 entry'), `the entry's page says it was requeued: ${said}`);
    check(await page.locator('td:text-is("pending")').count() === 1, 'the entry is pending again');
    check(await page.locator('form[action="/actions"]').count() === 0, 'a pending entry offers no write');
    await page.screenshot({ path: `${shots}/requeued.png`, fullPage: true });

    // In bulk: the other two of hooks, after the page asked; the list is filtered by
    // topic, and so is the purge.
    await page.goto(`${base}/entries?status=dead_lettered&topic=hooks`);
    check(await rows.count() === 2, `two dead letters of hooks are left, not ${await rows.count()}`);
    await page.locator('main > .actions button.purge').click();
    await page.waitForURL((u) => u.searchParams.get('done') === 'purged');
    check(dialogs.length === 1 && dialogs[0].includes('every dead_lettered entry of topic hooks'),
      `the page asked before deleting, naming the topic: ${dialogs}`);
    check(new URL(page.url()).searchParams.get('topic') === 'hooks', 'back to the filtered list');
    const purged = await page.locator('#done').textContent();
    check(purged.includes('Purged 2 dead_lettered entries'), `the list says what went: ${purged}`);
    check(await page.locator('#empty').count() === 1, 'no dead letter of hooks is left');
    await page.goto(`${base}/entries?status=dead_lettered`);
    check(await rows.count() === 2, `the other topic's two dead letters stay, not ${await rows.count()}`);
    // Filtered by key, the bulk buttons would act on more than the list shows: none.
    await page.goto(`${base}/entries?status=dead_lettered&key=k2`);
    check(await rows.count() === 2 && await page.locator('main > .actions').count() === 0
      && await page.locator('#no-bulk').count() === 1, 'a list filtered by key offers no bulk write');
    await page.screenshot({ path: `${shots}/purged.png`, fullPage: true });
  }
  check(errors.length === 0, `no script error (${errors})`);
  console.log(`the ${mode} writes are as they should be`);
} finally {
  await browser.close();
}
