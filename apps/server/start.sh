#!/bin/sh
# `npm start`: bundle the server if a source changed (apps/server/build.mjs), then replace this shell
# with Node running the bundle, so signals reach the server itself. `--built` skips the bundling
# (supervisors and the Dockerfile, which build once with `npm run build`). The V8 flags depend on the
# database (why: docs/operating.md, "Memory and Node flags"; figures: npm run bench:boot,
# docs/benchmarks.md):
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

if [ "$1" != "--built" ]; then node apps/server/build.mjs || exit 1; fi
export MALLOC_MMAP_THRESHOLD_=131072
if [ -n "$DATABASE_URL" ]; then
  exec node $POSTGRES_FLAGS dist/server.mjs
else
  exec node $EMBEDDED_FLAGS dist/server.mjs
fi
