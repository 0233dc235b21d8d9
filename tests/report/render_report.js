// Renders a page in headless Chromium (Debian chromium, driven by
// puppeteer-core), takes a full-page screenshot, and prints a JSON summary:
// console errors and warnings, uncaught page errors, failed requests and
// HTTP error responses, and what the page holds (SVG figures and cells,
// canvases, Key Visualizer sections with their named patterns). Exit status
// 1 when anything went wrong on the page, 2 when the browser could not run.
// Usage: node render_report.js FILE.html|http://... SCREENSHOT.png [--wait-ready SECONDS]
//   --wait-ready: wait until the page sets <body data-ready="1"> (the Key
//   Visualizer does after its first render), at most SECONDS.
const path = require('node:path');
const puppeteer = require('puppeteer-core');

(async () => {
  const [, , target, png, flag, seconds] = process.argv;
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
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    await page.setViewport({ width: 1200, height: 900 });
    const url = /^https?:/.test(target) ? target : 'file://' + path.resolve(target);
    await page.goto(url, { waitUntil: 'load', timeout: 60000 });
    if (flag === '--wait-ready') {
      await page.waitForFunction(() => document.body.dataset.ready === '1', { timeout: Number(seconds) * 1000 });
    }
    const summary = await page.evaluate(() => ({
      title: document.title,
      svgs: document.querySelectorAll('svg').length,
      cells: document.querySelectorAll('svg rect').length,
      tables: document.querySelectorAll('table').length,
      canvases: document.querySelectorAll('canvas').length,
      renders: Number(document.body.dataset.renders || 0),
      keyviz: Array.from(document.querySelectorAll('section[data-table]')).map((s) => ({
        table: s.dataset.table,
        pattern: s.dataset.pattern,
        ddl: (s.querySelector('pre.ddl') || {}).textContent || '',
      })),
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
