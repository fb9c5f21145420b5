/**
 * `deno task start`: the app on Deno.serve (adapters/http/denoServer.ts), with the same boot and
 * shutdown as Node (run.ts): SIGTERM/SIGINT stop accepting, let in-flight requests finish, then
 * release the layers (database pools), each step logged; a failed start prints one line. FAST_PATH
 * applies here too (adapters/fastPath.ts): false serves HttpApiBuilder's app on the same Deno.serve.
 */
import * as DenoServer from "../../adapters/http/denoServer.ts"
import { run } from "./run.ts"

run(DenoServer.layer)
