# Agreement of two symbolizers' `-a -f -i` outputs, for bench/symbolize.sh:
#
#   awk -f bench/symbolize_cmp.awk PERCH_OUT ADDR2LINE_OUT [LLVM_OUT]
#
# Each output is one record per input address, in input order: a line starting with 0x (the
# address), then two lines per frame (function, FILE:LINE). Over the records both have, prints
# "compared differing_addresses differing_lines name_lines position_lines llvm_agrees": a line
# differs when the other output has another line or none at that place; llvm_agrees counts the
# differing lines where llvm-symbolizer (GNU style) printed what perch did, once its ??:0 for
# "no line" and its missing discriminators on caller frames are allowed for.
function load(file, rec,    n, line, cur) {
	n = 0
	cur = ""
	while ((getline line < file) > 0) {
		if (line ~ /^0x/) {
			if (n)
				rec[n] = cur
			n++
			cur = ""
			continue
		}
		cur = cur == "" ? line : cur SUBSEP line
	}
	if (n)
		rec[n] = cur
	close(file)
	return n
}

function norm(s) {
	sub(/ \(discriminator [0-9]+\)$/, "", s)
	sub(/:\?$/, ":0", s)
	return s
}

BEGIN {
	np = load(ARGV[1], P)
	na = load(ARGV[2], A)
	nl = ARGC > 3 ? load(ARGV[3], L) : 0
	n = np < na ? np : na
	for (i = 1; i <= n; i++) {
		kp = split(P[i], p, SUBSEP)
		ka = split(A[i], a, SUBSEP)
		kl = i <= nl ? split(L[i], l, SUBSEP) : -1
		k = kp > ka ? kp : ka
		d = 0
		for (j = 1; j <= k; j++) {
			if (j <= kp && j <= ka && p[j] == a[j])
				continue
			d++
			if (j % 2)
				names++
			else
				positions++
			if (kl == kp && j <= kp && norm(p[j]) == norm(l[j]))
				llvm++
		}
		if (d) {
			addrs++
			lines += d
		}
	}
	printf "%d %d %d %d %d %d\n", n, addrs, lines, names, positions, llvm
	exit
}
