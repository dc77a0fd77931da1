/* perch report --format=html: the viewer. Reads the JSON of #perch-data (userspace/report/html.c)
 * and answers the CLI's queries on it (README, "Queries"): select / exclude / fold applied in order,
 * self and total per function (recursion counted once), callers and callees of a function, the
 * bounded call tree (a caller->callee pair at most once on a path) with merged chains. The view
 * lives in location.hash, so a link reproduces it, and the CLI line says the same query. */
'use strict';

const D = JSON.parse(document.getElementById('perch-data').textContent);
const DIFF = D.diff || null; /* `perch diff --format=html`: two recordings compared (viewDiff) */
/* The function a stack folded to nothing becomes: the data's own when perch's --fold made one. */
const FOLDED_IN = DIFF ? -1 : D.funcs.findIndex((f) => f[0] === '[folded]');
const FOLDED = DIFF ? 0 : FOLDED_IN >= 0 ? FOLDED_IN : D.funcs.length;
const NAMES = DIFF ? [] : D.funcs.map((f) => f[0]).concat(FOLDED_IN >= 0 ? [] : ['[folded]']);
const BASE = DIFF ? [] : baseStacks();
const state = { ops: [], tab: 'functions', fn: null, sort: 'self', find: '', merge: 0, zoom: '', all: 0 };
let view = null; /* the query's result: recomputed when the filters change */
let viewKey = null;

/* Each sample's function ids, root first, from the node tree. */
function baseStacks() {
	const parent = new Int32Array(D.nodes.length / 2 + 1);
	const label = new Int32Array(D.nodes.length / 2 + 1);
	for (let i = 0; i < D.nodes.length; i += 2) {
		parent[i / 2 + 1] = D.nodes[i];
		label[i / 2 + 1] = D.nodes[i + 1];
	}
	const cache = new Map();
	const stackOf = (n) => {
		if (n === 0) return [];
		let s = cache.get(n);
		if (!s) {
			s = stackOf(parent[n]).concat([label[n]]);
			cache.set(n, s);
		}
		return s;
	};
	const out = [];
	for (let i = 0; i < D.samples.length; i += 3)
		out.push({ frames: stackOf(D.samples[i]), rnode: D.samples[i + 1], count: D.samples[i + 2],
			thread: D.sthreads ? D.sthreads[i / 3] : 0 });
	return out;
}

/* A pattern (a list item as splitList gives it): an exact name, its backslash escapes resolved, or
 * /REGEX/ matched anywhere (as regcomp REG_EXTENDED would). */
function matcher(pat) {
	const m = new Uint8Array(NAMES.length);
	const name0 = unescapeItem(pat);
	let test = (name) => name === name0;
	if (isRegex(pat)) {
		let re;
		try {
			re = new RegExp(pat.slice(1, -1));
		} catch (e) {
			re = null;
		}
		test = (name) => (re ? re.test(name) : false);
	}
	NAMES.forEach((name, i) => (m[i] = test(name) ? 1 : 0));
	return m;
}

/* Lists of patterns, as model/query.c splits them (query_item_len): a /REGEX/ item runs to the "/,"
 * (or the "/" at the end) that ends it; a name to the first comma outside (), <>, [] and {}, a C++
 * operator's symbol ("operator<", "operator,") bracketing nothing, and a backslash making the next
 * comma, bracket, slash or backslash plain. */
const isRegex = (pat) => pat.length > 1 && pat[0] === '/' && pat[pat.length - 1] === '/';
const ESCAPABLE = ',\\/()<>[]{}';
const OPENS = '(<[{', CLOSES = ')>]}';
const OP_SYMBOLS = ['->*', '<=>', '<<=', '>>=', '->', '<<', '>>', '<=', '>=', '()', '[]', '<', '>', ','];
function operatorLen(text, i) {
	if (!text.startsWith('operator', i) || (i > 0 && /\w/.test(text[i - 1]))) return 0;
	const sym = OP_SYMBOLS.find((o) => text.startsWith(o, i + 8));
	return 8 + (sym ? sym.length : 0);
}
function itemEnd(text, start) {
	if (text[start] === '/') {
		for (let i = start + 1; i < text.length; i++)
			if (text[i] === '/' && (i + 1 === text.length || text[i + 1] === ',')) return i + 1;
	}
	const open = [];
	let i = start;
	while (i < text.length && (text[i] !== ',' || open.length)) {
		const op = operatorLen(text, i);
		const c = text[i];
		if (op) i += op;
		else if (c === '\\' && i + 1 < text.length && ESCAPABLE.includes(text[i + 1])) i += 2;
		else {
			if (OPENS.includes(c)) open.push(c);
			else if (CLOSES.includes(c) && open.length && open[open.length - 1] === OPENS[CLOSES.indexOf(c)])
				open.pop();
			i++;
		}
	}
	return i;
}
function splitList(text) {
	const out = [];
	for (let i = 0; i <= text.length;) {
		const j = itemEnd(text, i);
		if (j > i) out.push(text.slice(i, j));
		i = j + 1;
	}
	return out;
}
function unescapeItem(item) {
	return isRegex(item) ? item : item.replace(/\\([,\\/()<>[\]{}])/g, '$1');
}
/* A name as one list item that names it exactly: as it is where it splits as one, else with
 * every comma, bracket, slash and backslash escaped. */
function escapeItem(name) {
	const items = splitList(name);
	if (items.length === 1 && items[0] === name && !isRegex(name) && unescapeItem(name) === name) return name;
	return name.replace(/[,\\/()<>[\]{}]/g, '\\$&');
}

/* The samples the filters keep, each with its stack as the filters leave it. */
function applyOps(ops) {
	const ms = ops.map((op) => splitList(op.arg).map(matcher));
	const out = [];
	for (const s of BASE) {
		let frames = s.frames;
		let keep = true;
		for (let k = 0; keep && k < ops.length; k++) {
			const m = ms[k];
			if (ops[k].kind === 'select') keep = m.every((mm) => frames.some((f) => mm[f]));
			else if (ops[k].kind === 'exclude') keep = !frames.some((f) => m.some((mm) => mm[f]));
			else {
				const before = frames.length;
				frames = frames.filter((f) => !m.some((mm) => mm[f]));
				if (before && !frames.length) frames = [FOLDED];
			}
		}
		if (keep) out.push({ frames: frames, rnode: s.rnode, count: s.count, base: s });
	}
	return out;
}

/* Self and total per function over the kept samples (a function counted once per sample). */
function tally(kept) {
	const self = new Float64Array(NAMES.length);
	const total = new Float64Array(NAMES.length);
	const stamp = new Int32Array(NAMES.length).fill(-1);
	let all = 0;
	kept.forEach((s, i) => {
		all += s.count;
		if (s.frames.length) self[s.frames[s.frames.length - 1]] += s.count;
		for (const f of s.frames) {
			if (stamp[f] === i) continue;
			stamp[f] = i;
			total[f] += s.count;
		}
	});
	return { self: self, total: total, all: all };
}

function currentView() {
	const key = JSON.stringify(state.ops);
	if (key !== viewKey) {
		const kept = applyOps(state.ops);
		view = Object.assign({ kept: kept }, tally(kept));
		viewKey = key;
	}
	return view;
}

/* Callers ("going in": Y->F, -1 for F at the root) or callees ("going out": F->Y) of f, each
 * counted once per sample however often the edge repeats. */
function neighbours(kept, f, out) {
	const rows = new Map();
	for (const s of kept) {
		const seen = new Set();
		const fr = s.frames;
		for (let i = 0; i < fr.length; i++) {
			if (fr[i] !== f) continue;
			const y = out ? (i + 1 < fr.length ? fr[i + 1] : null) : i > 0 ? fr[i - 1] : -1;
			if (y === null || seen.has(y)) continue;
			seen.add(y);
			rows.set(y, (rows.get(y) || 0) + s.count);
		}
	}
	return Array.from(rows.entries()).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

/* The bounded path tree of the kept stacks (DESIGN.md): children by label; an edge X->Y already
 * on the path jumps back to its Y node. */
function boundedTree(kept) {
	const nodes = [{ label: -1, parent: -1, kids: new Map(), self: 0, incl: 0 }];
	for (const s of kept) {
		const path = [0];
		const edges = new Map();
		let at = 0;
		for (const f of s.frames) {
			const from = nodes[at].label;
			let next = nodes[at].kids.get(f);
			const key = from + ',' + f;
			if (next === undefined && edges.has(key)) {
				next = path[edges.get(key)];
				path.length = edges.get(key) + 1;
				for (const [k, v] of edges) if (v >= path.length) edges.delete(k);
				at = next;
				continue;
			}
			if (next === undefined) {
				next = nodes.length;
				nodes.push({ label: f, parent: at, kids: new Map(), self: 0, incl: 0 });
				nodes[at].kids.set(f, next);
			}
			edges.set(key, path.length);
			path.push(next);
			at = next;
		}
		nodes[at].self += s.count;
	}
	for (let i = nodes.length - 1; i > 0; i--) {
		nodes[i].incl += nodes[i].self;
		nodes[nodes[i].parent].incl += nodes[i].incl;
	}
	nodes[0].incl += nodes[0].self;
	return nodes;
}

/* ---- state in location.hash ---- */
function readHash() {
	const q = new URLSearchParams(location.hash.slice(1));
	state.ops = q.getAll('op').map((v) => {
		const i = v.indexOf(':');
		return { kind: v.slice(0, i), arg: v.slice(i + 1) };
	}).filter((o) => ['select', 'exclude', 'fold'].includes(o.kind) && o.arg);
	state.tab = q.get('tab') || (!DIFF && D.per_thread ? 'threads' : 'functions');
	state.fn = q.get('fn');
	const sort = q.get('sort');
	if (DIFF) state.sort = ['dself', 'dtotal'].includes(sort) ? sort : 'rank';
	else state.sort = sort === 'total' ? 'total' : 'self';
	state.find = q.get('find') || '';
	state.merge = Number(q.get('merge')) || 0;
	state.zoom = q.get('zoom') || '';
	state.all = q.get('all') ? 1 : 0;
}

function writeHash() {
	const q = new URLSearchParams();
	state.ops.forEach((o) => q.append('op', o.kind + ':' + o.arg));
	q.set('tab', state.tab);
	if (state.fn !== null) q.set('fn', state.fn);
	if (state.sort !== (DIFF ? 'rank' : 'self')) q.set('sort', state.sort);
	if (state.find) q.set('find', state.find);
	if (state.merge) q.set('merge', state.merge);
	if (state.zoom) q.set('zoom', state.zoom);
	if (state.all) q.set('all', 1);
	const h = '#' + q.toString();
	if (location.hash !== h) history.pushState(null, '', h);
	render();
}

function go(change) {
	Object.assign(state, change);
	writeHash();
}

/* ---- helpers ---- */
const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
	const e = document.createElement(tag);
	for (const k in attrs || {}) {
		if (k.startsWith('on')) e.addEventListener(k.slice(2), attrs[k]);
		else e.setAttribute(k, attrs[k]);
	}
	for (const c of kids) if (c !== null && c !== undefined) e.append(c);
	return e;
}
const pct = (part, whole) => (whole ? (100 * part) / whole : 0).toFixed(2) + '%';
function fmtNs(ns) {
	if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
	if (ns >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
	if (ns >= 1e3) return (ns / 1e3).toFixed(3) + ' µs';
	return ns + ' ns';
}
function shellQuote(s) {
	return /^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}
function fnLink(f, extra) {
	if (f < 0) return el('span', { class: 'note' }, '[root]');
	return el('a', { class: 'fn', title: NAMES[f], 'data-fn': NAMES[f],
		onclick: () => { if (extra) extra(); go({ tab: 'function', fn: NAMES[f] }); } }, NAMES[f]);
}
function addOp(kind, name) {
	state.ops.push({ kind: kind, arg: escapeItem(name) });
}
/* select / exclude / fold buttons for function f (shown when its row is hovered). */
function actions(f, cls, tag) {
	return el(tag || 'td', { class: cls || 'act' }, ...['select', 'exclude', 'fold'].map((k) => el('button',
		{ type: 'button', 'data-op': k, onclick: () => { addOp(k, NAMES[f]); writeHash(); } }, k)));
}

function table(head, rows, cls) {
	const t = el('table', cls ? { class: cls } : {});
	t.append(el('thead', {}, el('tr', {}, ...head)));
	const b = el('tbody');
	rows.forEach((r) => b.append(r));
	t.append(b);
	return t;
}
const th = (text, attrs) => el('th', attrs || {}, text);
const td = (text, attrs) => el('td', attrs || {}, text);

/* ---- the CLI line, chips, tabs ---- */
/* The view as a perch report command; focus ('callers' or 'callees') for a function page's table. */
function cliLine(focus) {
	const a = ['perch', 'report', D.file].concat(D.args);
	const given = D.query.map((g) => ' ' + shellQuote(g)).join(''); /* perch's own query, spelled by perch */
	state.ops.forEach((o) => a.push('--' + o.kind + '=' + o.arg));
	if (state.tab === 'function' && state.fn !== null) a.push('--' + (focus || 'callers') + '=' + escapeItem(state.fn));
	if (state.tab === 'tree' && state.merge) a.push('--merge-chains=' + state.merge);
	if (state.sort !== 'self') a.push('--sort=' + state.sort);
	const q = a.map(shellQuote);
	return q.slice(0, 3 + D.args.length).join(' ') + given + (q.length > 3 + D.args.length ? ' ' : '') +
		q.slice(3 + D.args.length).join(' ');
}

function renderChips(v) {
	const chips = $('chips');
	chips.textContent = '';
	state.ops.forEach((o, i) => {
		/* perch report refuses a pattern that names no function; here the chip says so */
		const none = splitList(o.arg).filter((p) => !matcher(p).some((m) => m));
		chips.append(el('span', Object.assign({ class: 'chip' + (none.length ? ' nomatch' : ''), 'data-kind': o.kind },
			none.length ? { title: 'no function matches ' + none.join(', ') } : {}),
			el('b', {}, o.kind), ' ' + o.arg + (none.length ? ' (no such function)' : ''),
			el('button', { type: 'button', title: 'remove', 'aria-label': 'remove ' + o.kind + ' ' + o.arg,
				onclick: () => { state.ops.splice(i, 1); writeHash(); } }, '×')));
	});
	$('kept').textContent = v.all + ' of ' + D.all + ' ' + UNIT + ' (' + pct(v.all, D.all) + ')';
}

/* What a count is: samples, or an event's (perch record -e page-faults: "page-faults samples"). */
const UNIT = !DIFF && D.unit ? D.unit + ' samples' : 'samples';

const TABS = [
	['functions', 'Functions', () => true],
	['threads', 'Threads', () => !!D.threads],
	['flame', 'Flame graph', () => true],
	['tree', 'Call tree', () => true],
	['function', 'Function', () => state.fn !== null],
	['regions', 'Regions', () => !!D.regions],
	['gpu', 'GPU', () => !!D.gpu],
	['timeline', 'Timeline', () => !!D.timeline],
	['metrics', 'Metrics', () => !!D.metrics],
	['steps', 'Steps', () => !!D.steps],
	['models', 'Cost models', () => !!D.models],
];

function renderTabs() {
	const nav = $('tabs');
	nav.textContent = '';
	for (const [id, label, shown] of TABS) {
		if (!shown()) continue;
		nav.append(el('a', { href: '#', id: 'tab-' + id, class: state.tab === id ? 'on' : '',
			onclick: (e) => { e.preventDefault(); go({ tab: id }); } },
			id === 'function' ? 'Function: ' + state.fn : label));
	}
}

/* ---- views ---- */
function viewFunctions(v) {
	const order = [];
	for (let f = 0; f < NAMES.length; f++) if (v.total[f]) order.push(f);
	const key = state.sort === 'total' ? v.total : v.self;
	order.sort((a, b) => key[b] - key[a] || a - b);
	const find = state.find.toLowerCase();
	const shown = order.filter((f) => !find || NAMES[f].toLowerCase().includes(find));
	const limit = state.all ? shown.length : 500;
	const rows = shown.slice(0, limit).map((f) => el('tr', { 'data-fn': NAMES[f] },
		td(pct(v.self[f], v.all)), td(String(v.self[f])), td(pct(v.total[f], v.all)),
		td(String(v.total[f])), el('td', { class: 'name' }, fnLink(f)),
		td(f < D.funcs.length ? D.funcs[f][1] + (D.funcs[f][2] ? ' [k]' : '') : '', { class: 'mod' }),
		actions(f)));
	const sortTh = (k, text) => th(text, { class: 'sort', id: 'sort-' + k, onclick: () => go({ sort: k }) });
	const search = el('input', { id: 'find', type: 'search', placeholder: 'search functions', value: state.find });
	search.addEventListener('change', () => go({ find: search.value }));
	return [el('div', { class: 'toolbar' }, search,
		el('span', { class: 'note' }, 'sorted by ' + state.sort + '; ' + shown.length + ' functions' +
			(shown.length > limit ? ', the first 500 shown' : '')),
		shown.length > limit ? el('button', { type: 'button', id: 'show-all', onclick: () => go({ all: 1 }) },
			'show all ' + shown.length) : null),
		el('p', { class: 'note' }, 'self: samples whose leaf is the function; total: samples in which it ' +
			'appears at least once (recursion counted once). % of the samples the filters keep.'),
		table([sortTh('self', 'self%'), sortTh('self', 'self'), sortTh('total', 'total%'),
			sortTh('total', 'total'), th('function', { class: 'name' }), th('module', { class: 'name' }),
			th('')], rows, 'funcs')];
}

function viewFunction(v) {
	const f = NAMES.indexOf(state.fn);
	if (f < 0 || !v.total[f])
		return [el('p', {}, 'No sample the filters keep has ' + state.fn + '.')];
	const tot = v.total[f];
	const through = () => {
		if (!state.ops.some((o) => o.kind === 'select' && o.arg === escapeItem(state.fn))) addOp('select', state.fn);
	};
	const rows = (list, selfRow) => {
		const r = list.map(([y, n]) => el('tr', { 'data-fn': y < 0 ? '[root]' : NAMES[y] },
			td(String(n)), td(pct(n, tot)), el('td', { class: 'name' }, fnLink(y, through)),
			y < 0 ? td('') : actions(y)));
		if (selfRow !== undefined)
			r.push(el('tr', { 'data-fn': '[self]' }, td(String(selfRow)), td(pct(selfRow, tot)),
				el('td', { class: 'name note' }, '[self]'), td('')));
		return r;
	};
	const head = () => [th('samples'), th('% of total'), th('function', { class: 'name' }), th('')];
	return [el('h2', {}, state.fn, ' ', actions(f, 'act-on', 'span')),
		el('p', {}, 'total ', el('b', { id: 'fn-total' }, String(tot)), ' (' + pct(tot, v.all) + '), self ',
			el('b', { id: 'fn-self' }, String(v.self[f])), ' (' + pct(v.self[f], v.all) + ')'),
		el('p', { class: 'note' }, 'A row counts each sample once however often its edge repeats, so rows ' +
			'may sum to more than the total under recursion. Its share of the total is what removing that ' +
			'call would save. Clicking a function selects ' + state.fn + ' (the path followed) and opens it.'),
		el('h2', {}, 'Callers (going in: Y → ' + state.fn + ')'),
		el('div', { class: 'note' }, 'CLI: ', el('code', { id: 'cli-callers' }, cliLine('callers'))),
		table(head(), rows(neighbours(v.kept, f, false)), 'callers'),
		el('h2', {}, 'Callees (going out: ' + state.fn + ' → Y)'),
		el('div', { class: 'note' }, 'CLI: ', el('code', { id: 'cli-callees' }, cliLine('callees'))),
		table(head(), rows(neighbours(v.kept, f, true), v.self[f]), 'callees')];
}

const COLORS = ['#f2a65a', '#eec170', '#f58549', '#e9c46a', '#f4a261', '#ffb570', '#e7ad52'];
function colorOf(f) {
	if (f < 0) return '#c9d3e6';
	if (f < D.funcs.length && D.funcs[f][2]) return '#9ec5e8';
	let h = 0;
	for (const c of NAMES[f]) h = (h * 31 + c.charCodeAt(0)) >>> 0;
	return COLORS[h % COLORS.length];
}

function zoomNode(nodes) {
	let at = 0;
	for (const part of state.zoom ? state.zoom.split('.') : []) {
		const next = nodes[at].kids.get(Number(part));
		if (next === undefined) return 0;
		at = next;
	}
	return at;
}

function pathOf(nodes, n) {
	const p = [];
	for (; n > 0; n = nodes[n].parent) p.unshift(nodes[n].label);
	return p.join('.');
}

function viewFlame(v) {
	const nodes = boundedTree(v.kept);
	const root = zoomNode(nodes);
	const box = el('div', { id: 'flame' });
	const width = Math.max(400, ($('view').clientWidth || 1000) - 32);
	const tip = $('tip');
	let depthMax = 0;
	const draw = (n, x, depth) => {
		const w = nodes[root].incl ? (nodes[n].incl / nodes[root].incl) * width : 0;
		if (w < 1) return;
		depthMax = Math.max(depthMax, depth);
		const label = n === 0 ? 'all' : NAMES[nodes[n].label];
		const d = el('div', { 'data-fn': label, style: 'left:' + x + 'px;top:' + depth * 18 + 'px;width:' + w +
			'px;background:' + colorOf(n ? nodes[n].label : -1) }, w > 30 ? label : '');
		d.addEventListener('click', () => go({ zoom: n === root && n ? pathOf(nodes, nodes[n].parent) : pathOf(nodes, n) }));
		d.addEventListener('mousemove', (e) => {
			tip.hidden = false;
			tip.style.left = e.clientX + 12 + 'px';
			tip.style.top = e.clientY + 12 + 'px';
			tip.textContent = label + ': ' + nodes[n].incl + ' samples (' + pct(nodes[n].incl, v.all) +
				' of the kept), self ' + nodes[n].self;
		});
		d.addEventListener('mouseleave', () => (tip.hidden = true));
		box.append(d);
		let cx = x;
		const kids = Array.from(nodes[n].kids.values()).sort((a, b) => nodes[b].incl - nodes[a].incl);
		for (const k of kids) {
			draw(k, cx, depth + 1);
			cx += nodes[root].incl ? (nodes[k].incl / nodes[root].incl) * width : 0;
		}
	};
	const path = [];
	for (let n = root; n > 0; n = nodes[n].parent) path.unshift(n);
	draw(root, 0, 0);
	box.style.height = (depthMax + 1) * 18 + 4 + 'px';
	return [el('p', { class: 'note' }, 'Icicle of the bounded call tree (recursion folded: a caller→callee pair ' +
		'at most once on a path), root at the top, width = samples. Click a frame to zoom in, the top frame ' +
		'to zoom out' + (root ? '; zoomed into ' + path.map((n) => NAMES[nodes[n].label]).join(' → ') : '') + '.'),
	box];
}

/* The call tree with chains merged: a node whose one child holds >= merge % of it. */
function viewTree(v) {
	const nodes = boundedTree(v.kept);
	const min = 0.005 * v.all;
	const kidsOf = (n) => Array.from(nodes[n].kids.values()).sort((a, b) => nodes[b].incl - nodes[a].incl);
	const draw = (n, depth) => {
		const names = [NAMES[nodes[n].label]];
		let at = n;
		for (;;) {
			const k = kidsOf(at);
			if (!state.merge || k.length !== 1 || nodes[k[0]].incl * 100 < state.merge * nodes[at].incl) break;
			at = k[0];
			names.push(NAMES[nodes[at].label]);
		}
		const line = el('span', {}, el('span', { class: 'num' }, pct(nodes[n].incl, v.all)),
			el('span', { class: 'num' }, pct(nodes[at].self, v.all)), ' ' + names.join(' > '));
		const kids = kidsOf(at).filter((k) => nodes[k].incl >= min);
		if (!kids.length) return el('div', { class: 'leaf' }, line);
		const d = el('details', depth < 12 ? { open: '' } : {}, el('summary', {}, line));
		kids.forEach((k) => d.append(draw(k, depth + 1)));
		return d;
	};
	const merge = el('input', { id: 'merge', type: 'number', min: 0, max: 100, value: state.merge || '' });
	merge.addEventListener('change', () => go({ merge: Number(merge.value) || 0 }));
	const t = el('div', { class: 'tree' });
	kidsOf(0).filter((k) => nodes[k].incl >= min).forEach((k) => t.append(draw(k, 0)));
	return [el('div', { class: 'toolbar' }, el('label', {}, 'merge chains where one child holds ≥ ', merge, ' %')),
		el('p', { class: 'note' }, 'Bounded path tree (' + (nodes.length - 1) + ' nodes): total, self (% of the ' +
			'kept samples); nodes below 0.5% hidden.'), t];
}

/* Samples per region in the current view: a sample counts for each name on its region stack. */
function regionSamples(v) {
	const per = new Float64Array(D.rnames.length);
	for (const s of v.kept) {
		const seen = new Set();
		for (let n = s.rnode; n > 0; n = D.rnodes[2 * (n - 1)]) seen.add(D.rnodes[2 * (n - 1) + 1]);
		seen.forEach((r) => (per[r] += s.count));
	}
	return per;
}

function viewRegions(v) {
	const R = D.regions;
	const per = regionSamples(v);
	const rows = R.rows.map((r) => el('tr', { 'data-region': r[0] }, el('td', { class: 'name' }, r[0]),
		td(String(r[1])), td(fmtNs(r[3])), td(fmtNs(r[4])), td(r[2] ? fmtNs(r[5]) : '-'),
		td(r[2] ? fmtNs(r[6]) : '-'), td(r[2] ? fmtNs(r[7]) : '-'), td(String(r[8])),
		td(String(per[D.rnames.indexOf(r[0])] || 0)), R.gpu ? td(fmtNs(r[9])) : null));
	const tree = el('div', { class: 'tree' });
	const draw = (n, into) => {
		const node = R.tree[n];
		const line = el('span', {}, el('span', { class: 'num' }, String(node[1])), ' ' + R.rows[node[0]][0] +
			'  total ' + fmtNs(node[2]) + ', self ' + fmtNs(node[3]));
		if (!node[4].length) return into.append(el('div', { class: 'leaf' }, line));
		const d = el('details', { open: '' }, el('summary', {}, line));
		node[4].forEach((k) => draw(k, d));
		into.append(d);
	};
	R.tree[0][4].forEach((k) => draw(k, tree));
	const csv = el('a', { id: 'regions-csv', download: 'regions.csv',
		href: 'data:text/csv;charset=utf-8,' + encodeURIComponent(R.csv) }, 'regions.csv');
	return [el('p', {}, 'Exact per-region counts over all threads (CSV per thread: ', csv,
		', as --format=csv writes it). "samples" counts the CPU samples whose region stack holds the name; ' +
		'"in view" those the filters keep.'),
	table([th('region', { class: 'name' }), th('calls'), th('total'), th('self'), th('mean'), th('min'), th('max'),
		th('samples'), th('in view'), R.gpu ? th('GPU') : null], rows, 'regions'),
	el('h2', {}, 'Region tree (calls, merged by name path over threads)'), tree,
	R.mismatches ? el('p', { class: 'note' }, R.mismatches + ' region ends did not match the open region') : null];
}

function viewGpu() {
	const G = D.gpu;
	const k = G.kernels.map((r) => el('tr', {}, el('td', { class: 'name' }, r[0]), td(String(r[1])),
		td(fmtNs(r[2])), td(fmtNs(r[2] / Math.max(1, r[1]))), td(fmtNs(r[3])), td(fmtNs(r[4]))));
	const l = G.lanes.map((r) => el('tr', {}, td(String(r[0])), td(String(r[1])), td(String(r[2])), td(fmtNs(r[3]))));
	return [el('h2', {}, 'Kernels'),
		table([th('kernel', { class: 'name' }), th('calls'), th('total'), th('mean'), th('min'), th('max')], k, 'kernels'),
		el('h2', {}, 'Busy time by device and stream (union of intervals)'),
		table([th('device'), th('stream'), th('activities'), th('busy')], l),
		el('h2', {}, 'As the text report shows it'), el('pre', {}, G.text)];
}

/* The kept samples per thread (comm, pid, tid): --sort=comm,pid,tid's rows, most samples first. */
function viewThreads(v) {
	const n = new Float64Array(D.threads.length);
	for (const s of v.kept) n[s.base.thread] += s.count;
	const order = D.threads.map((t, i) => i).filter((i) => n[i]);
	order.sort((a, b) => n[b] - n[a] || D.threads[a][1] - D.threads[b][1] || D.threads[a][2] - D.threads[b][2]);
	const rows = order.map((i) => el('tr', { 'data-thread': D.threads[i].join(' ') },
		td(pct(n[i], v.all)), td(String(n[i])), el('td', { class: 'name' }, D.threads[i][0]),
		td(String(D.threads[i][1])), td(String(D.threads[i][2]))));
	return [el('h2', {}, 'Threads by ' + UNIT),
		el('p', { class: 'note' }, 'The ' + UNIT + ' the filters keep per thread, as perch report ' +
			'--sort=comm,pid,tid counts them (--per-thread for each thread\'s functions).'),
		table([th('%'), th(UNIT), th('comm', { class: 'name' }), th('pid'), th('tid')], rows, 'threads')];
}

function viewMetrics() {
	const M = D.metrics;
	const f = (x) => x.toFixed(1);
	const rows = M.rows.map((r) => el('tr', {}, el('td', { class: 'name' }, r[0]), el('td', { class: 'name' }, r[1]),
		td(f(r[3])), td(f(r[4])), td(f(r[5])), el('td', { class: 'name' }, r[2])));
	return [el('h2', {}, 'System metrics, every ' + M.interval_ns / 1e6 + ' ms'),
		M.note ? el('p', {}, 'note: ' + M.note) : null,
		table([th('subject', { class: 'name' }), th('metric', { class: 'name' }), th('min'), th('mean'), th('max'),
			th('unit', { class: 'name' })], rows, 'metrics'),
		el('h2', {}, 'As the text report shows it'), el('pre', {}, M.text)];
}

/* The programs' steps (perch_step): a row per step with its wall time, samples, top functions and
 * (with --timeline) its regions; the text report's section below (metrics per step, pauses). */
function viewSteps() {
	const S = D.steps;
	const sec = (ns) => (ns / 1e9).toFixed(3);
	const rows = S.rows.map((r) => el('tr', { 'data-pid': r[0], 'data-step': r[1] }, td(String(r[0])), td(String(r[1])),
		td(sec(r[2])), td(r[3] < 0 ? 'open' : sec(r[3])), td(r[3] < 0 ? '' : fmtNs(r[3] - r[2])), td(String(r[4])),
		el('td', { class: 'name' }, r[5].map((f) => f[0] + ' ' + pct(f[1], r[4])).join(', ')),
		el('td', { class: 'name steps-regions' }, r[6].map((g) => g[0] + ': ' + g[1] + ' calls, ' + fmtNs(g[2]) +
			' total, ' + fmtNs(g[3]) + ' mean').join('; '))));
	return [el('h2', {}, 'Steps (perch_step)'),
		S.timeline ? null : el('p', {}, 'note: per-step region figures need perch record --timeline'),
		table([th('pid'), th('step'), th('start s'), th('end s'), th('wall'), th('samples'),
			th('top functions (self)', { class: 'name' }), th('regions', { class: 'name' })], rows, 'steps'),
		el('h2', {}, 'As the text report shows it'), el('pre', {}, S.text)];
}

// perch model's plots (an SVG document, shown as an image: nothing in it runs) and its text
function viewModels() {
	const M = D.models;
	return [el('h2', {}, 'Cost models of sized regions (perch model)'),
		el('img', { class: 'models', alt: 'cost model plots', src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(M.svg) }),
		el('h2', {}, 'As perch model prints it'), el('pre', {}, M.text)];
}

function viewTimeline(v) {
	const W = D.timeline.windows;
	const idx = new Map();
	BASE.forEach((s, i) => idx.set(s, i));
	const keptSet = new Uint8Array(BASE.length);
	v.kept.forEach((s) => (keptSet[idx.get(s.base)] = 1));
	const all = W.map((w) => { let n = 0; for (let i = 0; i < w[3].length; i += 2) n += w[3][i + 1]; return n; });
	const kept = W.map((w) => { let n = 0; for (let i = 0; i < w[3].length; i += 2) if (keptSet[w[3][i]]) n += w[3][i + 1]; return n; });
	const end = W.length ? W[W.length - 1][1] : 1;
	const width = Math.max(400, ($('view').clientWidth || 1000) - 40);
	const h = 160;
	const maxN = Math.max(1, ...all);
	const maxG = Math.max(1, ...W.map((w) => w[2] / Math.max(1, w[1] - w[0])));
	const ns = 'http://www.w3.org/2000/svg';
	const svg = document.createElementNS(ns, 'svg');
	svg.setAttribute('width', width);
	svg.setAttribute('height', h + 20);
	const rect = (x, y, w, hh, fill, title) => {
		const r = document.createElementNS(ns, 'rect');
		[['x', x], ['y', y], ['width', Math.max(1, w)], ['height', hh], ['fill', fill]].forEach(([a, b]) => r.setAttribute(a, b));
		const t = document.createElementNS(ns, 'title');
		t.textContent = title;
		r.append(t);
		svg.append(r);
	};
	W.forEach((w, i) => {
		const x = (w[0] / end) * width;
		const ww = ((w[1] - w[0]) / end) * width;
		const title = (w[0] / 1e9).toFixed(3) + '-' + (w[1] / 1e9).toFixed(3) + ' s: ' + kept[i] + ' of ' + all[i] +
			' samples' + (D.gpu ? ', GPU ' + fmtNs(w[2]) : '');
		rect(x, h - (all[i] / maxN) * h, ww, (all[i] / maxN) * h, '#d9dde5', title);
		rect(x, h - (kept[i] / maxN) * h, ww, (kept[i] / maxN) * h, '#2458c6', title);
		if (w[2]) rect(x, h + 4, ww, 10, 'rgba(118,185,0,' + (0.2 + (0.8 * w[2]) / (w[1] - w[0] || 1) / maxG) + ')', title);
	});
	return [el('p', { class: 'note' }, 'Samples per time window (' + W.length + ' windows over ' + (end / 1e9).toFixed(3) +
		' s): grey all, blue those the filters keep' + (D.gpu ? '; green strip: GPU activity time in the window' : '') + '.'), svg];
}

/* ---- diff mode: rows [name, module, kernel, self base, self new, total base, total new, d self,
 * d total, z self, z total, significant]; nodes the same after their parent ---- */
const F_NAME = 0, F_MOD = 1, F_K = 2, F_S0 = 3, F_S1 = 4, F_T0 = 5, F_T1 = 6, F_DS = 7, F_DT = 8,
	F_ZS = 9, F_ZT = 10, F_SIG = 11;
const pts = (d) => (d >= 0 ? '+' : '') + (100 * d).toFixed(2);
const share = (n, side) => (DIFF.samples[side] ? n / DIFF.samples[side] : 0);

function viewDiff() {
	const find = state.find.toLowerCase();
	const key = { dself: (r) => -Math.abs(r[F_DS]), dtotal: (r) => -Math.abs(r[F_DT]) }[state.sort];
	const rows = DIFF.funcs.map((r, i) => [r, i]).filter(([r]) => !find || r[F_NAME].toLowerCase().includes(find));
	if (key) rows.sort((a, b) => key(a[0]) - key(b[0]) || a[1] - b[1]);
	const trs = rows.slice(0, 500).map(([r]) => el('tr', { 'data-fn': r[F_NAME],
		'data-counts': [r[F_S0], r[F_S1], r[F_T0], r[F_T1]].join(','), 'data-sig': r[F_SIG] },
	td(pct(r[F_S0], DIFF.samples[0])), td(pct(r[F_S1], DIFF.samples[1])), td(pts(r[F_DS])), td(r[F_ZS].toFixed(1)),
	td(pct(r[F_T0], DIFF.samples[0])), td(pct(r[F_T1], DIFF.samples[1])), td(pts(r[F_DT])), td(r[F_ZT].toFixed(1)),
	td(r[F_SIG] ? '*' : ''), el('td', { class: 'name' }, r[F_NAME]),
	td(r[F_MOD] + (r[F_K] ? ' [k]' : ''), { class: 'mod' })));
	const sortTh = (k, text) => th(text, { class: 'sort', id: 'sort-' + k, onclick: () => go({ sort: k }) });
	const search = el('input', { id: 'find', type: 'search', placeholder: 'search functions', value: state.find });
	search.addEventListener('change', () => go({ find: search.value }));
	return [el('div', { class: 'toolbar' }, search, el('span', { class: 'note' }, rows.length + ' functions' +
		(rows.length > 500 ? ', the first 500 shown' : '') + '; order: ' +
		(key ? 'the larger |d ' + state.sort.slice(1) + '|' : 'significant first, then the larger |d|'))),
	el('p', { class: 'note' }, 'Shares of each recording\'s samples (base, new); d: new - base in points; z: ' +
		'two-proportion z score; * |z| ≥ ' + DIFF.z + '. Click "d self" or "d total" to order by it, "z" for ' +
		'perch diff\'s own order.'),
	table([th('self base'), th('self new'), sortTh('dself', 'd self'), sortTh('rank', 'z self'), th('total base'),
		th('total new'), sortTh('dtotal', 'd total'), sortTh('rank', 'z total'), th(''),
		th('function', { class: 'name' }), th('module', { class: 'name' })], trs, 'diff')];
}

/* The merged call tree as an icicle: width the mean of a node's two total shares (so children
 * fit their parent), red where its share grew, blue where it shrank, pale when not significant. */
function viewDiffFlame() {
	const N = DIFF.nodes;
	const kids = N.map(() => []);
	N.forEach((n, i) => i && kids[n[0]].push(i));
	const w = (i) => (share(N[i][1 + F_T0], 0) + share(N[i][1 + F_T1], 1)) / 2;
	const root = Number(state.zoom) > 0 && Number(state.zoom) < N.length ? Number(state.zoom) : 0;
	const rootW = root ? w(root) : 1;
	const width = Math.max(400, ($('view').clientWidth || 1000) - 32);
	const maxD = Math.max(1e-9, ...N.map((n) => Math.abs(n[1 + F_DT])));
	const box = el('div', { id: 'flame' });
	const tip = $('tip');
	let depthMax = 0;
	const draw = (i, x, depth) => {
		const px = rootW ? (w(i) / rootW) * width : 0;
		if (px < 1) return;
		depthMax = Math.max(depthMax, depth);
		const n = N[i];
		const d = n[1 + F_DT];
		const a = (0.15 + (0.85 * Math.abs(d)) / maxD) * (n[1 + F_SIG] ? 1 : 0.35);
		const name = i ? n[1 + F_NAME] : 'all';
		const box1 = el('div', { 'data-fn': name, 'data-node': i, style: 'left:' + x + 'px;top:' + depth * 18 +
			'px;width:' + px + 'px;background:' + (d >= 0 ? 'rgba(214,39,40,' : 'rgba(31,119,180,') + a + ')' },
		px > 30 ? name : '');
		box1.addEventListener('click', () => go({ zoom: i === root && i ? String(n[0]) : String(i) }));
		box1.addEventListener('mousemove', (e) => {
			tip.hidden = false;
			tip.style.left = e.clientX + 12 + 'px';
			tip.style.top = e.clientY + 12 + 'px';
			tip.textContent = name + ': total ' + pct(n[1 + F_T0], DIFF.samples[0]) + ' → ' +
				pct(n[1 + F_T1], DIFF.samples[1]) + ' (' + pts(d) + ' points, z ' + n[1 + F_ZT].toFixed(1) + ')';
		});
		box1.addEventListener('mouseleave', () => (tip.hidden = true));
		box.append(box1);
		let cx = x;
		kids[i].slice().sort((p, q) => w(q) - w(p)).forEach((k) => {
			draw(k, cx, depth + 1);
			cx += rootW ? (w(k) / rootW) * width : 0;
		});
	};
	draw(root, 0, 0);
	box.style.height = (depthMax + 1) * 18 + 4 + 'px';
	return [el('p', { class: 'note' }, 'The two call trees merged by path; width: the mean of the node\'s shares ' +
		'in base and new; red: its total share grew, blue: it shrank, pale: |z| < ' + DIFF.z + '. Click to zoom.'),
	box];
}

function renderDiff() {
	$('cli').textContent = ['perch', 'diff', DIFF.files[0], DIFF.files[1]].map(shellQuote).join(' ');
	const nav = $('tabs');
	nav.textContent = '';
	if (state.tab !== 'diffflame') state.tab = 'diff';
	for (const [id, label] of [['diff', 'Functions by change'], ['diffflame', 'Flame graph by change']])
		nav.append(el('a', { href: '#', id: 'tab-' + id, class: state.tab === id ? 'on' : '',
			onclick: (e) => { e.preventDefault(); go({ tab: id }); } }, label));
	const main = $('view');
	main.textContent = '';
	(state.tab === 'diff' ? viewDiff() : viewDiffFlame()).forEach((n) => n && main.append(n));
	document.body.dataset.ready = '1';
}

const VIEWS = { functions: viewFunctions, threads: viewThreads, function: viewFunction, flame: viewFlame, tree: viewTree,
	regions: viewRegions, gpu: viewGpu, timeline: viewTimeline, metrics: viewMetrics, models: viewModels,
	steps: viewSteps };

function render() {
	if (DIFF) return renderDiff();
	const t0 = performance.now();
	const v = currentView();
	if (!TABS.some(([id, , shown]) => id === state.tab && shown())) state.tab = 'functions';
	$('cli').textContent = cliLine();
	renderChips(v);
	renderTabs();
	const main = $('view');
	main.textContent = '';
	VIEWS[state.tab](v).forEach((n) => n && main.append(n));
	document.body.dataset.renderMs = (performance.now() - t0).toFixed(1);
	document.body.dataset.ready = '1';
}

function initDiff() {
	$('file').textContent = DIFF.files[0] + ' → ' + DIFF.files[1];
	$('header').textContent = 'base: ' + DIFF.files[0] + ' (' + DIFF.samples[0] + ' samples)\nnew:  ' +
		DIFF.files[1] + ' (' + DIFF.samples[1] + ' samples)\n';
	$('filters').style.display = 'none'; /* the queries work on one recording's stacks */
	document.querySelector('h1').firstChild.textContent = 'perch diff ';
	document.querySelector('#header-box summary').textContent = 'recordings';
	window.addEventListener('hashchange', () => { readHash(); render(); });
	readHash();
	render();
}

function init() {
	if (DIFF) return initDiff();
	$('file').textContent = D.file;
	$('header').textContent = D.header;
	const names = $('func-names');
	D.funcs.forEach((f) => names.append(el('option', { value: f[0] })));
	$('add-filter').addEventListener('submit', (e) => {
		e.preventDefault();
		const pat = $('add-pattern').value.trim();
		if (!pat) return;
		state.ops.push({ kind: $('add-kind').value, arg: pat });
		$('add-pattern').value = '';
		writeHash();
	});
	$('copy-cli').addEventListener('click', () => navigator.clipboard && navigator.clipboard.writeText(cliLine()));
	window.addEventListener('popstate', () => { readHash(); render(); });
	window.addEventListener('hashchange', () => { readHash(); render(); });
	readHash();
	render();
}

init();
