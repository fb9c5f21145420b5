import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30000,
    hookTimeout: 60000,
    pool: "forks",
    // Two files at a time on CI's 2 cores: the end-to-end files mostly wait on the servers they
    // start (child processes), and one worker left a core idle (Node's run took 18 min, 1 worker).
    maxWorkers: 2,
    minWorkers: 1,
    // The JSON report lets .ci/run print a one-line summary (the Deno run, deno.json's vitest task, writes its own).
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-report.json" }
  }
})
