#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Strict readers for perch's outputs of a recording with hostile names (tests/mkrec --hostile,
tests/integration/hostile-names.sh): each output must decode as its kind says.

    hostile_check.py KIND FILE NAME [KIND FILE NAME...]    KIND: json, html, pprof, csv, text

json   strict UTF-8, then json.loads
html   strict UTF-8, no name as markup ("<b>" of the names appears nowhere raw)
pprof  gunzip, walk the protobuf wire format; every string of the table (Profile field 6)
       decodes as strict UTF-8, as protobuf's own decoders require
csv    strict UTF-8, csv.reader; no cell starts with = + - @ (a spreadsheet formula)
text   strict UTF-8, no ESC, BEL or C1 control
Prints "ok NAME: what was read" or "FAIL NAME: what is wrong" per file (one python start for
all: the scenario's time); exits 1 when any is wrong.
"""
import csv
import gzip
import io
import json
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def pprof_strings(b):
    """The string table of a Profile message (field 6, length-delimited)."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(b, i)
            if field == 6:
                out.append(b[i:i + n])
            i += n
        else:
            raise ValueError(f"wire type {wire} at byte {i}")
    return out


def check(kind, data):
    if kind == "pprof":
        strs = pprof_strings(gzip.decompress(data))
        for s in strs:
            s.decode("utf-8", errors="strict")
        hostile = [s for s in strs if b"[2J<b>" in s]
        if not hostile:
            raise ValueError("no hostile name left in the string table")
        return f"{len(strs)} strings, all UTF-8 ({len(hostile)} hostile names kept)"
    text = data.decode("utf-8", errors="strict")
    if kind == "json":
        json.loads(text)
        return f"{len(data)} bytes of valid JSON"
    if kind == "html":
        if "<b>" in text:
            raise ValueError("a name is markup: <b> raw in the page")
        return f"{len(data)} bytes, names never markup"
    if kind == "csv":
        rows = list(csv.reader(io.StringIO(text, newline="")))
        for row in rows:
            for cell in row:
                if cell[:1] in ("=", "+", "-", "@"):
                    raise ValueError(f"formula cell {cell[:40]!r}")
        return f"{len(rows)} rows, no formula"
    for bad, what in (("\x1b", "ESC"), ("\x07", "BEL"), ("\x9b", "C1 CSI")):
        if bad in text:
            raise ValueError(f"raw {what}")
    return f"{len(data)} bytes, no control sequence"


def main():
    args, failed = sys.argv[1:], False
    for kind, path, name in zip(args[0::3], args[1::3], args[2::3]):
        try:
            with open(path, "rb") as f:
                print(f"ok {name}: {kind}: {check(kind, f.read())}")
        except (ValueError, IndexError, UnicodeDecodeError, json.JSONDecodeError, csv.Error,
                OSError) as e:
            print(f"FAIL {name}: {kind}: {e}")
            failed = True
    sys.exit(1 if failed else 0)


main()
