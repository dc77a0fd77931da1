// `perch diff --format=html` in a real browser (tests/html.sh): the page's functions against
// `perch diff --format=csv` of the same recordings.
//
//   node html_diff_check.js PAGE.html CSV SCREENSHOT.png
//
// Checks: the page loads with no error and no request; its table has every function row of the
// csv with the same counts (self and total, base and new) and significance, in the csv's order
// (perch diff's rank); ordering by d total puts the largest |d total| first; the icicle draws
// the merged tree with a box per node wide enough to see (each top node of the csv's tree among
// them), and clicking one zooms into it. Prints "ok" or the failures.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('fs');
const path = require('path');
const { csvFields } = require('./csv');

const [page_path, csv_path, shot] = process.argv.slice(2);
const failures = [];
const fail = (what) => failures.push(what);

async function main() {
	const lines = fs.readFileSync(csv_path, 'utf8').split('\n').filter(Boolean).slice(1).map(csvFields);
	const funcs = lines.filter((f) => f[0] === 'function');
	const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: process.getuid() === 0 ? ['--no-sandbox'] : [] });
	const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
	page.on('pageerror', (e) => fail('page error: ' + e.message));
	page.on('console', (m) => m.type() === 'error' && fail('console error: ' + m.text()));
	page.on('request', (r) => !r.url().startsWith('file:') && !r.url().startsWith('data:') &&
		fail('request leaving the file: ' + r.url()));
	await page.goto('file://' + path.resolve(page_path));
	await page.waitForSelector('body[data-ready="1"]');
	const rows = await page.$$eval('table.diff tbody tr', (trs) => trs.map((tr) =>
		[tr.dataset.fn, tr.dataset.counts, tr.dataset.sig]));
	if (rows.length !== Math.min(500, funcs.length))
		fail('rows: got ' + rows.length + ', want ' + funcs.length);
	funcs.slice(0, 500).forEach((f, i) => {
		const want = [f[14], [f[1], f[2], f[3], f[4]].join(','), f[13]];
		if (JSON.stringify(rows[i]) !== JSON.stringify(want))
			fail('row ' + i + ': got ' + JSON.stringify(rows[i]) + ', want ' + JSON.stringify(want));
	});
	await page.click('#sort-dtotal');
	const first = await page.$eval('table.diff tbody tr', (tr) => tr.dataset.fn);
	const maxd = Math.max(...funcs.map((f) => Math.abs(Number(f[10]))));
	const best = funcs.filter((f) => Math.abs(Number(f[10])) === maxd).map((f) => f[14]);
	if (!best.includes(first)) fail('by d total: first ' + first + ', want one of ' + best.join(' '));
	await page.click('#tab-diffflame');
	await page.waitForSelector('#flame div');
	const drawn = await page.$$eval('#flame div', (ds) => ds.map((d) => d.dataset.fn));
	const tops = new Set(lines.filter((f) => f[0] === 'node' && !f[14].includes(';')).map((f) => f[14].replace(/_\[k\]$/, '')));
	for (const t of tops) if (!drawn.includes(t)) fail('icicle: no box for the root node ' + t);
	await page.screenshot({ path: shot });
	const node = await page.$$eval('#flame div', (ds) => ds.find((d) => d.dataset.node !== '0').dataset.node);
	await page.click(`#flame div[data-node="${node}"]`);
	await page.waitForFunction((n) => location.hash.includes('zoom=' + n), node);
	const root = await page.$eval('#flame div', (d) => d.dataset.node);
	if (root !== node) fail('zoom: the top box is node ' + root + ', want ' + node);
	await browser.close();
	if (failures.length) {
		failures.slice(0, 20).forEach((f) => console.log('FAIL ' + f));
		process.exit(1);
	}
	console.log('ok functions=' + rows.length + ' icicle_boxes=' + drawn.length);
}

main().catch((e) => {
	console.log('FAIL ' + (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' ') : e));
	process.exit(1);
});
