// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One line of perch's csv as fields: quotes as report/csv.c's put_csv_name writes them. */
function csvFields(line) {
	const out = [];
	let cur = '', q = false;
	for (let i = 0; i < line.length; i++) {
		const c = line[i];
		if (q && c === '"' && line[i + 1] === '"') { cur += '"'; i++; }
		else if (c === '"') q = !q;
		else if (c === ',' && !q) { out.push(cur); cur = ''; }
		else cur += c;
	}
	out.push(cur);
	return out;
}

module.exports = { csvFields };
