#!/usr/bin/env python3
"""Dump fio's option table (as observed via `fio --cmdhelp`) into options.tsv.

Observation only: runs the installed fio binary and parses its --cmdhelp
output.  Help/description prose is deliberately dropped.

Output columns: name, aliases, type, default, range, valid_values, parent

Notes on the observed --cmdhelp=NAME format (fio 3.33):
  line 1: "%20s: %s" -> option name, help text (names longer than 20 chars
          simply overflow, e.g. "iodepth_batch_complete_min: ...")
  then    "               alias: X"          (optional, at most one)
          "                type: ..."        (always)
          "             default: ..."        ("no default" when none)
          "               range: min=.., max=.."   (optional)
          "        valid values: NAME   description" followed by
          "                    : NAME   description" continuation lines
  then an empty line.
The `fio --cmdhelp` list indents child options by 2 spaces per level.
"no default" is written as an empty default column.
"""
import subprocess
import sys

FIO = sys.argv[1] if len(sys.argv) > 1 else "fio"
OUT = sys.argv[2] if len(sys.argv) > 2 else "/work/main/docs/fio-observed/options.tsv"


def run(args):
    return subprocess.run([FIO] + args, capture_output=True, text=True).stdout


def option_list():
    """(name, parent) for each line of `fio --cmdhelp`, in order."""
    rows = []
    stack = []  # (indent, name)
    for line in run(["--cmdhelp"]).splitlines():
        if not line.strip() or ":" not in line:
            continue
        indent = len(line) - len(line.lstrip(" "))
        name = line.split(":", 1)[0].strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        stack.append((indent, name))
        rows.append((name, parent))
    return rows


def option_detail(name):
    d = {"alias": [], "type": "", "default": "", "range": "", "valid": []}
    lines = run(["--cmdhelp=" + name]).splitlines()
    last_key = None
    for i, line in enumerate(lines):
        if ":" not in line:
            continue
        key, val = line.split(":", 1)
        key = key.strip()
        val = val[1:] if val.startswith(" ") else val
        if i == 0:
            continue  # "name: help text"
        if key == "":
            key = last_key  # continuation line
        else:
            last_key = key
        if key == "alias":
            d["alias"].append(val.strip())
        elif key == "type":
            d["type"] = val.strip()
        elif key == "default":
            v = val.strip()
            d["default"] = "" if v == "no default" else v
        elif key == "range":
            d["range"] = val.strip()
        elif key == "valid values":
            tok = val.split()
            d["valid"].append(tok[0] if tok else "")
    return d


def main():
    rows = option_list()
    with open(OUT, "w") as f:
        f.write("name\taliases\ttype\tdefault\trange\tvalid_values\tparent\n")
        for name, parent in rows:
            d = option_detail(name)
            f.write("\t".join([
                name,
                ",".join(d["alias"]),
                d["type"],
                d["default"],
                d["range"],
                ",".join(d["valid"]),
                parent,
            ]) + "\n")
    print("wrote %d options to %s" % (len(rows), OUT))


if __name__ == "__main__":
    main()
