#!/bin/sh
# `npm start`: bundle the server if a source changed (apps/server/build.mjs), then replace this shell
# with Node running the bundle, so signals reach the server itself. `--built` skips the bundling
# (supervisors and the Dockerfile, which build once with `npm run build`). The V8 flags depend on the
# database (why: docs/operating.md, "Memory and Node flags"; figures: npm run bench:boot,
# docs/benchmarks.md):
# - embedded PGlite (no DATABASE_URL): --liftoff-only leaves PGlite's WebAssembly unoptimised (30 MB);
#   --expose-gc lets the server collect its boot's garbage once it listens (apps/server/lifecycle.ts):
#   a first boot's PGlite initdb otherwise leaves 250-660 MB resident; an 8 MB young generation
#   (V8 keeps less heap committed) leaves a margin under 250 MB that the default did not.
#   First boot idle near 230 MB. (--optimize-for-size, used until 2026-11-24, held it near 200 MB at
#   about twice the CPU per request.)
# - Postgres (DATABASE_URL): throughput first. A 128 MB young generation: fewer scavenges per request.
# MALLOC_MMAP_THRESHOLD_ stops glibc from keeping freed large blocks in its heap (docs/operating.md, "Memory and Node flags").
EMBEDDED_FLAGS="--liftoff-only --max-semi-space-size=8 --expose-gc"
POSTGRES_FLAGS="--max-semi-space-size=128"

if [ "$1" != "--built" ]; then node apps/server/build.mjs || exit 1; fi
export MALLOC_MMAP_THRESHOLD_=131072
if [ -n "$DATABASE_URL" ]; then
  exec node $POSTGRES_FLAGS dist/server.mjs
else
  exec node $EMBEDDED_FLAGS dist/server.mjs
fi
