#!/usr/bin/env python3
"""An OTLP profiles decoder of its own, for tests/otlp.sh: reads an ExportProfilesServiceRequest
(opentelemetry-proto v1.11.0, profiles v1development) from the protobuf wire format with the
specification's field numbers, independently of perch's encoder (protobuf-c, report/otlp.proto),
checks what the specification requires of it, and prints each profile's stacks as folded lines.

    otlp_decode.py FILE check          the dictionary's rules (exit 1 and a line per breach)
    otlp_decode.py FILE types          "TYPE UNIT" per profile, in order
    otlp_decode.py FILE folded TYPE    that profile's samples as perch's --format=folded has
                                       them: THREAD;region:R...;outermost;...;leaf VALUE, summed
    otlp_decode.py FILE attrs          each distinct sample attribute key
    otlp_decode.py FILE resource       KEY=VALUE per resource attribute, scope name and version
    otlp_decode.py FILE mappings       "FILE BUILD_ID" per mapping with a file name
    otlp_decode.py FILE span           "TIME_UNIX_NANO DURATION_NANO" per profile, in order
    otlp_decode.py FILE values KEY TYPE  "THREAD VALUE COUNT": that profile's samples summed by
                                       thread.name and KEY's value ("-": no such attribute)
    otlp_decode.py FILE times TYPE     that profile's "TIMED TICKS OUTSIDE UNEVEN FIRST LAST":
                                       timestamps, the ticks (values summed), those outside
                                       [time_unix_nano, + duration_nano), samples whose values
                                       are not one per timestamp, the first and last timestamp

Packed and unpacked repeated scalars are both read, as a protobuf parser must.
"""
import struct
import sys
from collections import defaultdict


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) for each field of a message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def msg(b, spec):
    """A dict of the fields spec names: spec maps number -> (name, kind, repeated);
    kind: 'int', 'sint' (int64 as two's complement), 'fixed64', 'str', 'bytes' or a sub-spec."""
    out = {name: ([] if rep else None) for name, kind, rep in spec.values()}
    for num, wt, v in fields(b):
        if num not in spec:
            continue
        name, kind, rep = spec[num]
        vals = []
        if kind in ("int", "sint"):
            if wt == 2:  # packed
                j = 0
                while j < len(v):
                    x, j = varint(v, j)
                    vals.append(x)
            else:
                vals.append(v)
            if kind == "sint":
                vals = [signed(x) for x in vals]
            else:
                vals = [x if x < 1 << 31 else signed(x) for x in vals]
        elif kind == "fixed64":
            if wt == 2:
                vals = [struct.unpack_from("<Q", v, j)[0] for j in range(0, len(v), 8)]
            else:
                vals = [struct.unpack("<Q", v)[0]]
        elif kind == "str":
            vals = [v.decode("utf-8")]
        elif kind == "bytes":
            vals = [bytes(v)]
        else:
            vals = [msg(v, kind)]
        if rep:
            out[name].extend(vals)
        else:
            out[name] = vals[-1]
    return out


ANY = {1: ("string_value", "str", False), 2: ("bool_value", "int", False),
       3: ("int_value", "sint", False), 4: ("double_value", "bytes", False),
       8: ("string_value_strindex", "int", False)}
KV = {1: ("key", "str", False), 2: ("value", ANY, False)}
RESOURCE = {1: ("attributes", KV, True)}
SCOPE = {1: ("name", "str", False), 2: ("version", "str", False)}
VALUE_TYPE = {1: ("type", "int", False), 2: ("unit", "int", False)}
SAMPLE = {1: ("stack_index", "int", False), 2: ("attribute_indices", "int", True),
          3: ("link_index", "int", False), 4: ("values", "sint", True),
          5: ("timestamps", "fixed64", True)}
PROFILE = {1: ("sample_type", VALUE_TYPE, False), 2: ("samples", SAMPLE, True),
           3: ("time_unix_nano", "fixed64", False), 4: ("duration_nano", "int", False),
           5: ("period_type", VALUE_TYPE, False), 6: ("period", "sint", False)}
SCOPE_PROFILES = {1: ("scope", SCOPE, False), 2: ("profiles", PROFILE, True)}
RESOURCE_PROFILES = {1: ("resource", RESOURCE, False), 2: ("scope_profiles", SCOPE_PROFILES, True)}
MAPPING = {1: ("memory_start", "int", False), 2: ("memory_limit", "int", False),
           3: ("file_offset", "int", False), 4: ("filename", "int", False),
           5: ("attribute_indices", "int", True)}
LINE = {1: ("function_index", "int", False), 2: ("line", "sint", False),
        3: ("column", "sint", False)}
LOCATION = {1: ("mapping_index", "int", False), 2: ("address", "int", False),
            3: ("lines", LINE, True), 4: ("attribute_indices", "int", True)}
FUNCTION = {1: ("name", "int", False), 2: ("system_name", "int", False),
            3: ("filename", "int", False), 4: ("start_line", "sint", False)}
LINK = {1: ("trace_id", "bytes", False), 2: ("span_id", "bytes", False)}
KVU = {1: ("key", "int", False), 2: ("value", ANY, False), 3: ("unit", "int", False)}
STACK = {1: ("location_indices", "int", True)}
DICTIONARY = {1: ("mappings", MAPPING, True), 2: ("locations", LOCATION, True),
              3: ("functions", FUNCTION, True), 4: ("links", LINK, True),
              5: ("strings", "str", True), 6: ("attributes", KVU, True),
              7: ("stacks", STACK, True)}
REQUEST = {1: ("resource_profiles", RESOURCE_PROFILES, True), 2: ("dictionary", DICTIONARY, False)}


def is_zero(m):
    return all(v in (None, 0, b"", "", []) or (isinstance(v, dict) and is_zero(v))
               for v in m.values())


def check(req):
    d = req["dictionary"]
    bad = []
    if not d:
        return ["no dictionary"]
    for table in ("mappings", "locations", "functions", "links", "attributes", "stacks"):
        if not d[table] or not is_zero(d[table][0]):
            bad.append("%s[0] is not the zero value" % table)
    if not d["strings"] or d["strings"][0] != "":
        bad.append('string_table[0] is not ""')
    ns, nl, nf, na, nm = (len(d[t]) for t in ("strings", "locations", "functions", "attributes",
                                              "mappings"))
    for st in d["stacks"]:
        bad += ["stack location %d of %d" % (i, nl) for i in st["location_indices"]
                if not 0 < i < nl]
    for loc in d["locations"][1:]:
        if not 0 <= (loc["mapping_index"] or 0) < nm:
            bad.append("location mapping %d of %d" % (loc["mapping_index"], nm))
        bad += ["line function %d of %d" % (ln["function_index"], nf) for ln in loc["lines"]
                if not 0 < (ln["function_index"] or 0) < nf]
    for f in d["functions"][1:]:
        bad += ["function string %d of %d" % (f[k], ns) for k in ("name", "filename")
                if not 0 <= (f[k] or 0) < ns]
    for a in d["attributes"][1:]:
        if not 0 < (a["key"] or 0) < ns:
            bad.append("attribute key %d of %d" % (a["key"] or 0, ns))
    for rp in req["resource_profiles"]:
        for sp in rp["scope_profiles"]:
            for p in sp["profiles"]:
                for s in p["samples"]:
                    if not 0 <= (s["stack_index"] or 0) < len(d["stacks"]):
                        bad.append("sample stack %d" % s["stack_index"])
                    keys = [d["attributes"][i]["key"] for i in s["attribute_indices"]
                            if 0 < i < na]
                    if len(keys) != len(s["attribute_indices"]):
                        bad.append("sample attribute index out of the table")
                    if len(set(keys)) != len(keys):
                        bad.append("sample attribute keys repeat")
    return bad


def attr_value(d, a):
    v = a["value"] or {}
    if v.get("string_value") is not None:
        return v["string_value"]
    if v.get("string_value_strindex") is not None:
        return d["strings"][v["string_value_strindex"]]
    return v.get("int_value") or 0


def profiles(req):
    return [p for rp in req["resource_profiles"] for sp in rp["scope_profiles"]
            for p in sp["profiles"]]


def type_of(d, p):
    t = p["sample_type"] or {}
    return d["strings"][t.get("type") or 0], d["strings"][t.get("unit") or 0]


def folded(req, want):
    d = req["dictionary"]
    S = d["strings"]
    out = defaultdict(int)
    for p in profiles(req):
        if type_of(d, p)[0] != want:
            continue
        for s in p["samples"]:
            attrs = {S[d["attributes"][i]["key"]]: attr_value(d, d["attributes"][i])
                     for i in s["attribute_indices"]}
            names = []
            for li in reversed(d["stacks"][s["stack_index"] or 0]["location_indices"]):
                # lines innermost first: the outermost (the caller) is the last
                loc = d["locations"][li]
                # folded marks the kernel's frames (their mapping "[kernel]", or "[bpf]" for a
                # BPF program's)
                kernel = S[d["mappings"][loc["mapping_index"] or 0]["filename"] or 0] in \
                    ("[kernel]", "[bpf]")
                for ln in reversed(loc["lines"]):
                    names.append(S[d["functions"][ln["function_index"]]["name"] or 0] +
                                 ("_[k]" if kernel else ""))
            regions = ["region:" + r for r in attrs["perch.region_stack"].split(";")] \
                if "perch.region_stack" in attrs else []
            line = ";".join([str(attrs.get("thread.name", "?"))] + regions + names)
            out[line] += sum(s["values"]) if s["values"] else len(s["timestamps"])
    for line in sorted(out):
        print(line, out[line])


def main():
    req = msg(open(sys.argv[1], "rb").read(), REQUEST)
    d = req["dictionary"]
    what = sys.argv[2]
    if what == "check":
        bad = check(req)
        for b in bad:
            print(b)
        sys.exit(1 if bad else 0)
    elif what == "types":
        for p in profiles(req):
            print(*type_of(d, p))
    elif what == "folded":
        folded(req, sys.argv[3])
    elif what == "attrs":
        keys = {d["strings"][d["attributes"][i]["key"]] for p in profiles(req)
                for s in p["samples"] for i in s["attribute_indices"]}
        print("\n".join(sorted(keys)))
    elif what == "resource":
        for rp in req["resource_profiles"]:
            for kv in rp["resource"]["attributes"]:
                print("%s=%s" % (kv["key"], (kv["value"] or {}).get("string_value")))
            for sp in rp["scope_profiles"]:
                print("scope=%s %s" % (sp["scope"]["name"], sp["scope"]["version"]))
    elif what == "times":
        timed = ticks = outside = uneven = 0
        first, last = None, None
        for p in profiles(req):
            if type_of(d, p)[0] != sys.argv[3]:
                continue
            lo, hi = p["time_unix_nano"] or 0, (p["time_unix_nano"] or 0) + (p["duration_nano"] or 0)
            for s in p["samples"]:
                ts = s["timestamps"]
                timed += len(ts)
                ticks += sum(s["values"]) if s["values"] else len(ts)
                outside += sum(1 for t in ts if not lo <= t < hi)
                uneven += 1 if ts and s["values"] and len(s["values"]) != len(ts) else 0
                if ts:
                    first = min(ts) if first is None else min(first, min(ts))
                    last = max(ts) if last is None else max(last, max(ts))
        print(timed, ticks, outside, uneven, first or 0, last or 0)
    elif what == "values":
        out = defaultdict(int)
        for p in profiles(req):
            if type_of(d, p)[0] != sys.argv[4]:
                continue
            for s in p["samples"]:
                attrs = {d["strings"][d["attributes"][i]["key"]]: attr_value(d, d["attributes"][i])
                         for i in s["attribute_indices"]}
                key = (str(attrs.get("thread.name", "?")), str(attrs.get(sys.argv[3], "-")))
                out[key] += sum(s["values"]) if s["values"] else len(s["timestamps"])
        for (t, v), n in sorted(out.items()):
            print(t, v, n)
    elif what == "span":
        for p in profiles(req):
            print(p["time_unix_nano"] or 0, p["duration_nano"] or 0)
    elif what == "mappings":
        for m in d["mappings"][1:]:
            bid = [attr_value(d, d["attributes"][i]) for i in m["attribute_indices"]
                   if d["strings"][d["attributes"][i]["key"]] == "process.executable.build_id.gnu"]
            print(d["strings"][m["filename"] or 0], bid[0] if bid else "-")


if __name__ == "__main__":
    main()
