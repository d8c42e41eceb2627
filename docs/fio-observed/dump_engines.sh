#!/bin/sh
# Observation-only dump of fio --enghelp (names and types, no prose).
OUT=${1:-/work/main/docs/fio-observed/engines.txt}
{
echo "# fio --version: $(fio --version)"
echo "# \$ fio --enghelp   (stdout verbatim; exit $(fio --enghelp >/dev/null 2>&1; echo $?))"
fio --enghelp
for e in io_uring libaio pvsync2 null; do
  echo
  echo "# \$ fio --enghelp=$e   -> option names + type (from fio --enghelp=$e,OPT); exit status $(fio --enghelp=$e >/dev/null 2>&1; echo $?)"
  out=$(fio --enghelp=$e 2>&1)
  if ! echo "$out" | grep -q ' : '; then echo "$out"; continue; fi
  echo "$out" | sed 's/ *:.*//' | while read -r o; do
    t=$(fio --enghelp=$e,$o | sed -n 's/^ *type: //p')
    d=$(fio --enghelp=$e,$o | sed -n 's/^ *default: //p')
    r=$(fio --enghelp=$e,$o | sed -n 's/^ *range: //p')
    v=$(fio --enghelp=$e,$o | awk -F': ' '/valid values:/{f=1} f&&NF>1{split($2,a," ");printf "%s%s",(n++?",":""),a[1]} /^$/{f=0}')
    printf '%s\ttype=%s\tdefault=%s' "$o" "$t" "$d"
    [ -n "$r" ] && printf '\trange=%s' "$r"
    [ -n "$v" ] && printf '\tvalid=%s' "$v"
    printf '\n'
  done
done
} > "$OUT"
