#!/bin/sh
# `npm start`: bundle the server if a source changed (apps/server/build.mjs), then replace this shell
# with Node running the bundle, so signals reach the server itself. `--built` skips the bundling
# (supervisors and the Dockerfile, which build once with `npm run build`). `--deno` (first;
# `npm run start:deno`, `deno task start`) does the same with Deno and its own bundle. The V8 flags
# depend on the database, and are the same on both runtimes (why: docs/operating.md, "Memory and
# Node flags"; figures: npm run bench:boot, docs/benchmarks.md):
# - embedded PGlite (no DATABASE_URL): memory first. --liftoff-only leaves PGlite's WebAssembly on V8's
#   baseline compiler (less memory; its queries run slower); --expose-gc lets the server collect its
#   boot's garbage once it listens (apps/server/lifecycle.ts), which a first boot's PGlite initdb
#   otherwise leaves resident; an 8 MB young generation keeps less heap committed.
#   (--optimize-for-size also kept memory down, but V8 optimises less under it and every request cost
#   far more CPU: docs/architecture.md, "Tried and not kept".)
# - Postgres (DATABASE_URL): throughput first. A 128 MB young generation: fewer scavenges per request.
# MALLOC_MMAP_THRESHOLD_ stops glibc from keeping freed large blocks in its heap (docs/operating.md, "Memory and Node flags").
EMBEDDED_FLAGS="--liftoff-only --max-semi-space-size=8 --expose-gc"
POSTGRES_FLAGS="--max-semi-space-size=128"

RUNTIME=node
if [ "$1" = "--deno" ]; then RUNTIME=deno; shift; fi
if [ "$RUNTIME" = deno ]; then BUNDLE=deno; else BUNDLE=server; fi
if [ "$1" != "--built" ]; then node apps/server/build.mjs $BUNDLE console || exit 1; fi
export MALLOC_MMAP_THRESHOLD_=131072
if [ -n "$DATABASE_URL" ]; then FLAGS=$POSTGRES_FLAGS; else FLAGS=$EMBEDDED_FLAGS; fi
if [ "$RUNTIME" = deno ]; then
  # Deno takes V8's flags as one comma-separated list. --no-prompt: a permission the server was not
  # given is refused, never asked for on a terminal (msgpackr asks to load its native addon, and
  # without it uses its JavaScript).
  exec ./node_modules/deno/deno run --v8-flags="$(echo "$FLAGS" | tr ' ' ',')" --no-prompt \
    --allow-env --allow-net --allow-read --allow-write --allow-sys dist/server.deno.mjs
fi
exec node $FLAGS dist/server.mjs
