#!/bin/sh
# One-edit weaves of two checkouts, alternated: each run appends a line to one random memory of
# its own copy of the store, then times one whole `kura weave --no-model` (wall, and CPU as user +
# system from GNU time), and prints every figure per checkout. Two copies, because each checkout's
# state folder (its catalog and layer cache) must stay its own.
#
#   bench/edit_weave.sh STORE_A KURA_A STORE_B KURA_B N
#   e.g. bench/edit_weave.sh /tmp/we/d20k-main /work/main/.venv/bin/kura \
#                            /tmp/we/d20k /work/wt-edit/.venv/bin/kura 9
# Stores: `python bench/map_scale.py [--shape distill-kura] --write DIR 20000`, then `cp -a` it.
# HOME and KURA_HOME point at a temporary folder. PYTHONDONTWRITEBYTECODE is dropped: with it,
# a checkout that was never compiled (a fresh worktree, no __pycache__) compiles every module
# in every timed run (~70 ms CPU at 20k) while the other reads its cached bytecode; each
# side's python imports the weave once, untimed, which writes the cache.
set -eu
unset PYTHONDONTWRITEBYTECODE
home=$(mktemp -d)
export HOME="$home" KURA_HOME="$home/kura"
n=$(($(ls "$1" | grep -c '^m[0-9]*\.md$') - 1))
for kura in "$2" "$4"; do
  "$(dirname "$kura")/python" -c "import kura.cli.entry, kura.cli.map, kura.map.weave" 2>/dev/null || true
done
"$2" -s "$1" weave --no-model >/dev/null 2>&1 || true
"$4" -s "$3" weave --no-model >/dev/null 2>&1 || true
i=0
while [ $i -lt "$5" ]; do
  i=$((i + 1))
  pick=$(python3 -c "import random; print(f'm{random.randrange($n):05d}.md')")
  for side in A B; do
    if [ $side = A ]; then store=$1; kura=$2; else store=$3; kura=$4; fi
    echo "edited $i" >> "$store/$pick"
    /usr/bin/time -f "$side %e %U %S" "$kura" -s "$store" weave --no-model 2>&1 >/dev/null | tail -1
  done
done | awk '{cpu[$1] = cpu[$1] " " ($3 + $4); wall[$1] = wall[$1] " " $2}
  END {for (s in cpu) print s, "CPU s:" cpu[s], " wall s:" wall[s]}'
rm -rf "$home"
