/**
 * `deno task start`: the app on Deno.serve (adapters/http/denoServer.ts), with the same boot and
 * shutdown as Node (run.ts): SIGTERM/SIGINT stop accepting, let in-flight requests finish, then
 * release the layers (database pools), each step logged; a failed start prints one line.
 */
import * as DenoServer from "../../adapters/http/denoServer.ts"
import { run } from "./run.ts"

run(DenoServer.layer)
