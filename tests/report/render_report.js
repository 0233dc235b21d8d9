// Renders an HTML file in headless Chromium (Debian chromium, driven by
// puppeteer-core), takes a full-page screenshot, and prints a JSON summary:
// console errors and warnings, uncaught page errors, failed requests, and
// the number of SVG figures and cells. Exit status 1 when anything went
// wrong on the page, 2 when the browser could not run.
// Usage: node render_report.js REPORT.html SCREENSHOT.png
const path = require('node:path');
const puppeteer = require('puppeteer-core');

(async () => {
  const [, , html, png] = process.argv;
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn') problems.push(`console.${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    await page.setViewport({ width: 1200, height: 900 });
    await page.goto('file://' + path.resolve(html), { waitUntil: 'load', timeout: 60000 });
    const summary = await page.evaluate(() => ({
      title: document.title,
      svgs: document.querySelectorAll('svg').length,
      cells: document.querySelectorAll('svg rect').length,
      tables: document.querySelectorAll('table').length,
    }));
    await page.screenshot({ path: png, fullPage: true });
    console.log(JSON.stringify({ problems, ...summary }));
  } finally {
    await browser.close();
  }
  process.exit(problems.length ? 1 : 0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
