#!/usr/bin/env bash
# Remakes the recorded test traces in this folder with `hmsim trace record` (run from the
# repository root after `make build`, as root for the kmem traces; needs valgrind, pigz,
# sqlite3, dbench (with tbench), stress-ng and gcc). The inputs are generated here from a fixed seed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 - <<'PY'
import random
random.seed(1)
words = ["".join(random.choice("abcdefghij") for _ in range(random.randint(3, 9))) for _ in range(500)]
open("words.txt", "w").write("\n".join(random.choice(words) for _ in range(8000)) + "\n")
PY
pigz -k -p 1 words.txt
head -n 1000 words.txt > words.txt.head
hmsim trace record --kind lackey --page-level -o "$here/pigz-d.pages.hmt" -- pigz -d -c -p 1 words.txt.gz >/dev/null
hmsim trace record --kind lackey --page-level -o "$here/sort.pages.hmt" -- sort -S 1M -o sorted.txt words.txt.head

hmsim trace record --kind lackey --page-level -o "$here/sqlite3.pages.hmt" -- sqlite3 :memory: \
  "create table t(a integer, b text); with recursive c(x) as (select 1 union all select x+1 from c where x<300) insert into t select x, hex(x*7919) from c; create index ib on t(b); select count(*), sum(a) from t where b like '1%';"
printf 'int main(void){int s=0;for(int i=0;i<10;i++)s+=i;return s==45?0:1;}\n' > small.c
hmsim trace record --kind kmem -o "$here/gcc.kmem.hmt" -- gcc -O2 -c small.c -o small.o
mkdir -p dbench && hmsim trace record --kind kmem -o "$here/dbench.kmem.hmt" -- dbench -D dbench -t 2 2

# The allocators study's workloads (docs/allocators.md). tbench talks to its own server on
# loopback; the server is part of the traced process tree.
hmsim trace record --kind kmem -o "$here/tbench.kmem.hmt" -- sh -c \
  'tbench_srv >/dev/null 2>&1 & s=$!; sleep 0.5; tbench -t 2 2 127.0.0.1 >/dev/null; kill $s'
# STREAM-like (stream.c in this folder): three 8 MiB arrays, copy/scale/add/triad 5 times.
gcc -O2 "$here/stream.c" -o stream
hmsim trace record --kind kmem -o "$here/stream.kmem.hmt" -- ./stream
# lmbench is not packaged for Debian: its process-creation (lat_proc fork) and mmap
# (lat_mmap) loops, approximated with stress-ng.
hmsim trace record --kind kmem -o "$here/lmbench.kmem.hmt" -- \
  stress-ng --fork 1 --fork-ops 300 --mmap 1 --mmap-ops 5 --mmap-bytes 2M --quiet
# UnixBench's shell-script, pipe and file-copy tests, approximated in sh.
hmsim trace record --kind kmem -o "$here/unixbench.kmem.hmt" -- sh -c \
  'for i in $(seq 60); do echo x | sort | wc -l >/dev/null; done; dd if=/dev/zero of=f bs=4k count=2000 2>/dev/null; cp f g; rm f g'
