/**
 * `npm start`: the app on Node's HTTP server (adapters/http/nodeServer.ts). SIGTERM/SIGINT/SIGHUP
 * drain in-flight requests, then close pools; boot and shutdown steps are logged with their times
 * (run.ts, lifecycle.ts). FAST_PATH=false serves on @effect/platform-node's NodeHttpServer instead
 * (adapters/fastPath.ts).
 */
import * as NodeServer from "../../adapters/http/nodeServer.ts"
import { run } from "./run.ts"

run(NodeServer.layer)
