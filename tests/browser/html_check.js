// perch report --format=html in a real browser (Debian's chromium, headless, driven by
// playwright-core): the page's numbers against the CLI's on the same recording (tests/html.sh).
//
//   [PERCH_CLI=build/perch] node html_check.js PAGE.html TEXT FOLDED SHOT.png [THREADS]
//   [PERCH_CLI=build/perch] node html_check.js --jobs FILE
//
// --jobs: one browser for many pages, FILE's lines being NAME, then the arguments above, separated
// by tabs; each page's result is printed as "NAME: " and its line (one browser's start-up is most
// of a small page's check).
//
// TEXT is `perch report` (its top-functions tables), FOLDED `perch report --format=folded`. The
// checks: the page loads from file:// with no error and no request leaving the file; its
// functions table sorted by self and by total has the CLI's rows (name, self, total) in the CLI's
// order of numbers; a function's callers and callees (clicked into from the table) equal the ones
// counted from FOLDED and (given PERCH_CLI) the page's CLI lines for them, and clicking a caller opens it with the function selected; an exclude chip added through the form gives the totals of FOLDED without
// the stacks holding it, and so does the page's "CLI:" line run with --format=folded (given
// PERCH_CLI: perch with the query options); the link (location.hash) reproduces that view in a new page;
// removing the chip restores the totals; a fold chip gives folded's stacks without the function
// (self and total), as its CLI line does; a C++ name holding commas, typed as printed into the
// filter box, selects its stacks, as its CLI line does (run through bash), and its function page's
// CLI lines count its callers and callees; a GPU tab's kernels equal the text report's. Prints "ok" and the load time, or the failures.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('fs');
const path = require('path');
const { csvFields } = require('./csv');

let [page_path, text_path, folded_path, shot, threads_path] = process.argv.slice(2);
const { execFileSync } = require('child_process');
const failures = [];
const fail = (what) => failures.push(what);

/* folded lines -> [{frames, count}]: the thread and region: frames dropped, "_[k]" as the tables
 * name kernel functions (without it), "[no stack]" an empty stack. */
function parseFolded(file) {
	return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
		const sp = line.lastIndexOf(' ');
		const frames = line.slice(0, sp).split(';').slice(1)
			.filter((f) => !f.startsWith('region:') && f !== '[no stack]')
			.map((f) => (f.endsWith('_[k]') ? f.slice(0, -4) : f));
		return { frames: frames, count: Number(line.slice(sp + 1)) };
	});
}

function totals(stacks) {
	const self = new Map(), total = new Map();
	let all = 0;
	for (const s of stacks) {
		all += s.count;
		if (s.frames.length) {
			const leaf = s.frames[s.frames.length - 1];
			self.set(leaf, (self.get(leaf) || 0) + s.count);
		}
		for (const f of new Set(s.frames)) total.set(f, (total.get(f) || 0) + s.count);
	}
	return { self: self, total: total, all: all };
}

/* Callers (out false) or callees of f: once per stack per neighbour; "[root]" and "[self]". */
function neighbours(stacks, f, out) {
	const rows = new Map();
	for (const s of stacks) {
		const seen = new Set();
		const fr = s.frames;
		for (let i = 0; i < fr.length; i++) {
			if (fr[i] !== f) continue;
			const y = out ? (i + 1 < fr.length ? fr[i + 1] : null) : i > 0 ? fr[i - 1] : '[root]';
			if (y !== null) seen.add(y);
		}
		if (out && fr.length && fr[fr.length - 1] === f) seen.add('[self]');
		seen.forEach((y) => rows.set(y, (rows.get(y) || 0) + s.count));
	}
	return rows;
}

/* The CLI's top-functions tables: [[self, total, name]] by self, then by total. */
function cliTop(file) {
	const tables = [];
	let cur = null;
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		if (line.startsWith('Top functions by')) {
			cur = [];
			tables.push(cur);
			continue;
		}
		/* "  self% self total% total  NAME (padded to 40) MODULE[ [k]]": the module has no space */
		const m = cur && line.replace(/ \[k\]$/, '').match(/^\s+[\d.]+% +(\d+) +[\d.]+% +(\d+)  (.*) (\S+)$/);
		if (m) cur.push([Number(m[1]), Number(m[2]), m[3].trimEnd()]);
		else if (cur && !line.trim()) cur = null;
	}
	return tables;
}

/* Names the page lists in more than one module (glibc's futex_wait and the kernel's, perch's own
 * main in a launched command's child before its exec and the command's): the page keeps them
 * apart, as the CLI's table does, but folded stacks carry no module, so no per-name figure of
 * theirs can be compared with the folded stacks'. */
const dupNames = new Set();

function sameMap(what, got, want) {
	const keys = new Set([...got.keys(), ...want.keys()]);
	for (const k of keys) {
		if (dupNames.has(k)) continue;
		if ((got.get(k) || 0) !== (want.get(k) || 0))
			fail(what + ': ' + k + ' got ' + (got.get(k) || 0) + ', want ' + (want.get(k) || 0));
	}
}

async function tableRows(page, sel) {
	return page.$$eval(sel + ' tbody tr', (trs) => trs.map((tr) => [tr.dataset.fn,
		...Array.from(tr.children).map((c) => c.textContent)]));
}

/* Page rows by function name, the columns cols summed: a name in two modules (perch's own main in
 * a launched command's child before its exec, the command's main after) is two rows on the page,
 * as in the CLI's table, but one name in folded stacks, which carry no module. */
function sumByName(rows, cols) {
	const m = new Map();
	for (const r of rows) {
		const v = m.get(r[0]) || cols.map(() => 0);
		m.set(r[0], v.map((x, i) => x + Number(r[cols[i]])));
	}
	return m;
}

async function checkTop(page, cli) {
	for (const [k, want] of [['self', cli[0]], ['total', cli[1]]]) {
		await page.click('#sort-' + k);
		await page.waitForSelector('table.funcs');
		const rows = await tableRows(page, 'table.funcs');
		want.forEach(([s, t, name], i) => {
			/* a name in two modules is two rows, here as in the CLI's table: one of them */
			const same = rows.filter((r) => r[0] === name);
			if (!same.some((r) => Number(r[2]) === s && Number(r[4]) === t))
				fail('top by ' + k + ': ' + name + ' got ' + same.map((r) => [r[2], r[4]]).join(' ') + ', want ' + [s, t]);
			const row = rows[i] || [];
			if (Number(row[k === 'self' ? 2 : 4]) !== (k === 'self' ? s : t))
				fail('top by ' + k + ' row ' + i + ': got ' + row[0] + ' ' + row.slice(1, 5) + ', want ' + [s, t, name]);
		});
		if (!want.length) fail('top by ' + k + ': the CLI printed no row');
	}
}

async function pageTotals(page) {
	await page.click('#tab-functions');
	await page.fill('#find', '');
	await page.press('#find', 'Enter');
	if (await page.$('#show-all')) await page.click('#show-all'); /* every row, not the first 500 */
	const rows = await tableRows(page, 'table.funcs');
	const seen = new Set();
	for (const r of rows) (seen.has(r[0]) ? dupNames : seen).add(r[0]);
	return new Map([...sumByName(rows, [4])].map(([n, v]) => [n, v[0]]));
}

/* The function with the most callers and callees (ties: the larger total), clicked into. */
async function checkFunction(page, stacks) {
	const t = totals(stacks);
	let best = null, score = -1;
	for (const [f, tot] of t.total) {
		if (dupNames.has(f)) continue;
		const s = neighbours(stacks, f, false).size + neighbours(stacks, f, true).size;
		if (s > score || (s === score && tot > t.total.get(best))) [best, score] = [f, s];
	}
	if (best === null) return null; /* no sample: nothing to click into */
	return checkFocus(page, stacks, t, best);
}

/* Function best clicked into from the functions table: its callers and callees and their CLI lines
 * against FOLDED, its total, then a click through to a caller. */
async function checkFocus(page, stacks, t, best) {
	await page.click('#tab-functions');
	await page.fill('#find', best);
	await page.press('#find', 'Enter');
	await page.click(`table.funcs a.fn[data-fn="${CSS_escape(best)}"]`);
	await page.waitForSelector('table.callers');
	const read = async (sel) => new Map((await tableRows(page, sel)).map((r) => [r[0], Number(r[1])]));
	const callers = await read('table.callers'), callees = await read('table.callees');
	sameMap('callers of ' + best, callers, neighbours(stacks, best, false));
	sameMap('callees of ' + best, callees, neighbours(stacks, best, true));
	for (const [id, got] of [['cli-callers', callers], ['cli-callees', callees]]) {
		const line = await page.textContent('#' + id);
		const cli = cliTable(line);
		if (cli) sameMap(line, got, cli);
	}
	const tot = Number(await page.textContent('#fn-total'));
	if (tot !== t.total.get(best)) fail('total of ' + best + ': got ' + tot + ', want ' + t.total.get(best));
	await clickThrough(page, stacks, best);
	return best;
}

/* Clicking a caller of f opens it with f selected (the path followed as a filter): its total is
 * then that of the stacks holding both. The chip is removed again. */
async function clickThrough(page, stacks, f) {
	const y = (await tableRows(page, 'table.callers')).map((r) => r[0]).find((n) => n !== '[root]');
	if (y === undefined) return;
	await page.click(`table.callers a.fn[data-fn="${CSS_escape(y)}"]`);
	await page.waitForSelector('.chip[data-kind=select]');
	await page.waitForSelector('#fn-total');
	const want = stacks.filter((s) => s.frames.includes(f) && s.frames.includes(y))
		.reduce((a, s) => a + s.count, 0);
	const got = Number(await page.textContent('#fn-total'));
	if (got !== want || (await page.textContent('h2')).indexOf(y) !== 0)
		fail('click-through ' + f + ' -> caller ' + y + ': total ' + got + ', want ' + want);
	await page.click('.chip[data-kind=select] button');
}

function CSS_escape(s) {
	return s.replace(/["\\]/g, '\\$&');
}

/* A function to exclude: the one whose total is nearest half the samples, not in every stack. */
function pickExclude(stacks) {
	const t = totals(stacks);
	let best = null;
	for (const [f, tot] of t.total) {
		if (tot >= t.all) continue;
		if (best === null || Math.abs(tot - t.all / 2) < Math.abs(t.total.get(best) - t.all / 2)) best = f;
	}
	return best;
}

/* The view's "CLI:" line run as it reads (perch being PERCH_CLI, in the repository), with
 * --format=folded: its stacks; null when perch has no query options (PERCH_CLI unset). */
function cliView(line) {
	if (!process.env.PERCH_CLI) return null;
	const file = path.join(require('os').tmpdir(), 'perch-html-cli-' + process.pid);
	const cmd = line.replace(/^perch /, "'" + path.resolve('../..', process.env.PERCH_CLI) + "' ") +
		' --format=folded > ' + file;
	execFileSync('bash', ['-c', cmd], { cwd: path.resolve('../..') });
	const st = parseFolded(file);
	fs.unlinkSync(file);
	return st;
}

/* A focus table's CLI line (#cli-callers, #cli-callees) run with --format=csv: name -> samples. */
function cliTable(line) {
	if (!process.env.PERCH_CLI) return null;
	const cmd = line.replace(/^perch /, "'" + path.resolve('../..', process.env.PERCH_CLI) + "' ") +
		' --format=csv';
	const out = execFileSync('bash', ['-c', cmd], { cwd: path.resolve('../..') }).toString();
	return new Map(out.split('\n').slice(1).filter(Boolean).map((l) => {
		const f = csvFields(l);
		return [f[0], Number(f[1])];
	}));
}

/* A C++ name holding commas (the one most samples hold; "f(int, long)", "operator,(A&, int)"),
 * typed as printed into the filter box as a select: the page keeps the stacks holding it (its chip
 * matching), and so does the page's "CLI:" line run through bash; then the function's page and its
 * CLI lines (checkFocus). null when no name has a comma. */
async function checkCommaName(page, stacks) {
	const t = totals(stacks);
	const name = [...t.total.keys()].filter((f) => f.includes(',') && !dupNames.has(f))
		.sort((a, b) => t.total.get(b) - t.total.get(a) || (a < b ? -1 : 1))[0];
	if (name === undefined) return null;
	await page.click('#tab-functions');
	await page.selectOption('#add-kind', 'select');
	await page.fill('#add-pattern', name);
	await page.click('#add-filter button[type=submit]');
	await page.waitForSelector('.chip[data-kind=select]');
	if (await page.$('.chip.nomatch')) fail('select ' + name + ': the chip names no function');
	const want = totals(stacks.filter((s) => s.frames.includes(name)));
	const got = await pageTotals(page);
	sameMap('totals with select ' + name, got, want.total);
	if (got.get(name) !== want.all) fail('select ' + name + ': its total ' + got.get(name) + ', want ' + want.all);
	const line = await page.textContent('#cli');
	const cli = cliView(line);
	if (cli) sameMap('totals with select ' + name + ' (' + line + ')', got, totals(cli).total);
	await page.click('.chip[data-kind=select] button');
	await checkFocus(page, stacks, t, name);
	return name;
}

async function checkExclude(page, browser, stacks, name) {
	await page.click('#tab-functions');
	await page.selectOption('#add-kind', 'exclude');
	await page.fill('#add-pattern', name);
	await page.click('#add-filter button[type=submit]');
	await page.waitForSelector('.chip[data-kind=exclude]');
	const want = totals(stacks.filter((s) => !s.frames.includes(name)));
	const got = await pageTotals(page);
	sameMap('totals with exclude ' + name, got, want.total);
	const line = await page.textContent('#cli');
	const cli = cliView(line);
	if (cli) sameMap('totals with exclude ' + name + ' (' + line + ')', got, totals(cli).total);
	if (!line.includes('--exclude=')) fail('CLI line lacks the exclude: ' + line);
	const link = page.url();
	const other = await browser.newPage();
	await other.goto(link);
	await other.waitForSelector('body[data-ready="1"]');
	if ((await other.textContent('#kept')) !== (await page.textContent('#kept')))
		fail('the link does not reproduce the view: ' + link);
	await other.close();
	return want;
}

/* fold name: its frames leave every stack (a stack left empty is "[folded]"): self and total. */
async function checkFold(page, stacks, name) {
	await page.selectOption('#add-kind', 'fold');
	await page.fill('#add-pattern', name);
	await page.click('#add-filter button[type=submit]');
	await page.waitForSelector('.chip[data-kind=fold]');
	const folded = stacks.map((s) => {
		const fr = s.frames.filter((f) => f !== name);
		return { frames: fr.length || !s.frames.length ? fr : ['[folded]'], count: s.count };
	});
	const want = totals(folded);
	const got = await pageTotals(page);
	sameMap('totals with fold ' + name, got, want.total);
	const line = await page.textContent('#cli');
	const cli = cliView(line);
	if (cli) sameMap('totals with fold ' + name + ' (' + line + ')', got, totals(cli).total);
	const rows = await tableRows(page, 'table.funcs');
	sameMap('self with fold ' + name, new Map([...sumByName(rows, [2])].map(([n, v]) => [n, v[0]])), want.self);
	await page.click('.chip[data-kind=fold] button');
}

/* The text report's GPU kernels (name -> calls), when it has a GPU section. */
function cliKernels(file) {
	const rows = new Map();
	let on = false;
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		if (/^  kernel\s+calls\s+total/.test(line)) on = true;
		else if (on && !/^  \S.*\s\d+\s+[\d.]+ \S+\s/.test(line)) on = false;
		const m = on && line.match(/^  (\S.*?)\s+(\d+)\s+[\d.]+ \S+\s/);
		if (m) rows.set(m[1], Number(m[2]));
	}
	return rows;
}

/* The GPU tab's kernels equal the text report's. */
async function checkGpu(page) {
	const want = cliKernels(text_path);
	if (!(await page.$('#tab-gpu'))) {
		if (want.size) fail('the text report has GPU kernels, the page no GPU tab');
		return 0;
	}
	await page.click('#tab-gpu');
	await page.waitForSelector('table.kernels');
	const rows = await page.$$eval('table.kernels tbody tr', (trs) => trs.map((tr) =>
		[tr.children[0].textContent, Number(tr.children[1].textContent)]));
	sameMap('GPU kernels (calls)', new Map(rows), want);
	return rows.length;
}

/* The Threads tab's rows against `perch report --format=folded --sort=comm,pid,tid` (THREADS):
 * its stacks lead with comm;pid N;tid N, summed per thread. */
async function checkThreads(page) {
	const want = new Map();
	for (const line of fs.readFileSync(threads_path, 'utf8').split('\n').filter(Boolean)) {
		const sp = line.lastIndexOf(' ');
		const f = line.slice(0, sp).split(';');
		if (!f[1].startsWith('pid ') || !f[2].startsWith('tid ')) fail('threads: folded line ' + line);
		const k = [f[0], f[1].slice(4), f[2].slice(4)].join(' ');
		want.set(k, (want.get(k) || 0) + Number(line.slice(sp + 1)));
	}
	await page.click('#tab-threads');
	await page.waitForSelector('table.threads');
	const rows = await page.$$eval('table.threads tbody tr', (trs) => trs.map((tr) => [tr.dataset.thread,
		Number(tr.children[1].textContent)]));
	sameMap('threads', new Map(rows), want);
	for (let i = 1; i < rows.length; i++)
		if (rows[i][1] > rows[i - 1][1]) fail('threads: row ' + i + ' out of order');
	if (!rows.length && want.size) fail('threads: no row');
	return rows.length;
}

/* The checks of one page (the globals above), in a new page of BROWSER: the result line. */
async function checkPage(browser) {
	const stacks = parseFolded(folded_path);
	const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
	try {
		return await checkOpened(browser, page, stacks);
	} finally {
		await page.close();
	}
}

async function checkOpened(browser, page, stacks) {
	page.on('pageerror', (e) => fail('page error: ' + e.message));
	page.on('console', (m) => m.type() === 'error' && fail('console error: ' + m.text()));
	page.on('request', (r) => !r.url().startsWith('file:') && !r.url().startsWith('data:') &&
		fail('request leaving the file: ' + r.url()));
	const t0 = Date.now();
	await page.goto('file://' + path.resolve(page_path));
	await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
	const load_ms = Date.now() - t0;
	/* a page of --per-thread (or --sort=comm,pid,tid) opens on its Threads tab */
	const perThread = await page.evaluate(() => !!D.per_thread);
	if (perThread) {
		if (!(await page.$('#tab-threads.on')) || !(await page.$('table.threads tbody tr')))
			fail('--per-thread: the page does not open on its Threads table');
		await page.click('#tab-functions');
	}
	await pageTotals(page); /* dupNames */
	await checkTop(page, cliTop(text_path));
	const fn = await checkFunction(page, stacks);
	const comma = await checkCommaName(page, stacks);
	const excl = pickExclude(stacks);
	if (excl !== null) {
		await checkExclude(page, browser, stacks, excl);
		await page.screenshot({ path: shot, fullPage: false });
		await page.click('.chip[data-kind=exclude] button');
		sameMap('totals after removing the chip', await pageTotals(page), totals(stacks).total);
		await checkFold(page, stacks, excl);
	} else {
		await page.screenshot({ path: shot, fullPage: false });
	}
	const threads = threads_path ? await checkThreads(page) : 0;
	const kernels = await checkGpu(page);
	await page.click('#tab-flame');
	await page.waitForSelector('#flame div');
	await page.screenshot({ path: shot.replace(/\.png$/, '-flame.png') });
	return 'ok load_ms=' + load_ms + ' function=' + fn + ' exclude=' + excl + (comma ? ' comma=' + JSON.stringify(comma) : '') + (perThread ? ' per_thread=1' : '') + (threads_path ? ' threads=' + threads : '') + (kernels ? ' gpu_kernels=' + kernels : '');
}

async function main() {
	const batch = page_path === '--jobs';
	const jobs = batch ? fs.readFileSync(text_path, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t'))
		: [['', page_path, text_path, folded_path, shot, threads_path]];
	const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [] });
	let bad = 0;
	for (const job of jobs) {
		const name = job[0];
		[page_path, text_path, folded_path, shot, threads_path] = job.slice(1);
		failures.length = 0;
		let line = '';
		try {
			line = await checkPage(browser);
		} catch (e) {
			fail(e && e.stack ? e.stack.split('\n').slice(0, 3).join(' ') : String(e));
		}
		const prefix = batch ? name + ': ' : '';
		if (failures.length) {
			bad++;
			failures.slice(0, 20).forEach((f) => console.log(prefix + 'FAIL ' + f));
		} else {
			console.log(prefix + line);
		}
	}
	await browser.close();
	process.exit(bad ? 1 : 0);
}

main().catch((e) => {
	console.log('FAIL ' + (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' ') : e));
	process.exit(1);
});
