/**
 * `npm run admin -- <command>`: builds dist/cli.mjs when a source changed (apps/server/build.mjs, a
 * few stat calls when up to date), then runs it in this process. Plain JavaScript, run by Node
 * itself, like the server's start: no TypeScript loader at each command.
 */
import { buildTargets } from "../server/build.mjs"

await buildTargets(["cli"])
await import("../../dist/cli.mjs")
