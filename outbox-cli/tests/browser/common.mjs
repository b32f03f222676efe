// What the browser scripts share: chromium launched as the tests run it, and a check
// that ends the script with the reason when a page is not as it should be.
import { chromium } from 'playwright-core';

export const check = (ok, what) => {
  if (!ok) {
    console.error(`not as it should be: ${what}`);
    process.exit(1);
  }
};

export const launch = () => chromium.launch({
  executablePath: process.env.OUTBOX_TEST_CHROMIUM || '/usr/bin/chromium',
  // The tests run as root in CI, where chromium's sandbox cannot start.
  args: ['--no-sandbox'],
});
