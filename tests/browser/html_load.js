// The HTML report's load time in headless chromium (docs/BENCHMARKS.md, "HTML report: size and
// load time"):
//   node tests/browser/html_load.js PAGE.html [FUNCTION]
// Opens the page five times (navigation start to the viewer's first render, data-ready) and
// prints the median and range and the JS heap; then, on the last, the time to add an exclude of
// FUNCTION (default mid_0, a function of tests/mkrec's recordings) and to draw the icicle.
'use strict';
const { chromium } = require('playwright-core');
const path = require('path');

async function main() {
	const page_path = path.resolve(process.argv[2]);
	const fn = process.argv[3] || 'mid_0';
	const b = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: process.getuid() === 0 ? ['--no-sandbox'] : [] });
	const times = [], heap = [];
	for (let i = 0; i < 5; i++) {
		const p = await b.newPage({ viewport: { width: 1280, height: 900 } });
		const t0 = Date.now();
		await p.goto('file://' + page_path);
		await p.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
		times.push(Date.now() - t0);
		heap.push(await p.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize : 0)));
		if (i === 4) {
			const t1 = Date.now();
			await p.evaluate((f) => { location.hash = '#op=exclude:' + encodeURIComponent(f) + '&tab=functions'; }, fn);
			await p.waitForSelector('.chip');
			const t2 = Date.now();
			await p.click('#tab-flame');
			await p.waitForSelector('#flame div');
			console.log('exclude ' + fn + ': ' + (t2 - t1) + ' ms; icicle: ' + (Date.now() - t2) + ' ms');
		}
		await p.close();
	}
	await b.close();
	const sorted = times.slice().sort((x, y) => x - y);
	heap.sort((x, y) => x - y);
	console.log('load: median ' + sorted[2] + ' ms (' + sorted[0] + '-' + sorted[4] + '); JS heap ' +
		(heap[2] / 1048576).toFixed(1) + ' MB');
}

main().catch((e) => {
	console.log('FAIL ' + e);
	process.exit(1);
});
