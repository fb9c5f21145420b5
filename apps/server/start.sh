#!/bin/sh
# `npm start`: bundle the server if a source changed (apps/server/build.mjs), then replace this shell
# with Node running the bundle, so signals reach the server itself. `--built` skips the bundling
# (supervisors and the Dockerfile, which build once with `npm run build`). The V8 flags depend on the
# database (measured in docs/performance.md, "Node flags"):
# - embedded PGlite (no DATABASE_URL): memory first. --optimize-for-size keeps the first boot's
#   idle RSS near 200 MB (PGlite's initdb otherwise leaves V8 and glibc holding 250-650 MB) at about
#   3.4 times the CPU per send (measured on Postgres); --liftoff-only leaves PGlite's WebAssembly unoptimised (30 MB).
# - Postgres (DATABASE_URL): throughput first. A 128 MB young generation: fewer scavenges per request.
# MALLOC_MMAP_THRESHOLD_ stops glibc from keeping freed large blocks in its heap (README "Memory").
EMBEDDED_FLAGS="--optimize-for-size --liftoff-only"
POSTGRES_FLAGS="--max-semi-space-size=128"

if [ "$1" != "--built" ]; then node apps/server/build.mjs || exit 1; fi
export MALLOC_MMAP_THRESHOLD_=131072
if [ -n "$DATABASE_URL" ]; then
  exec node $POSTGRES_FLAGS dist/server.mjs
else
  exec node $EMBEDDED_FLAGS dist/server.mjs
fi
