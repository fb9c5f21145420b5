import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    // Bounds for a hung test, not for a slow machine: CI shares its 2 cores, and under a load of 6 or
    // more a PGlite boot or a spawned process takes several times what it takes on a quiet machine.
    testTimeout: 120_000,
    hookTimeout: 180_000,
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
