// Run after `npm install` changes package-lock.json: `node scripts/lockfile-platforms.cjs package-lock.json`.
// The registry this project builds against lacks some optional platform packages (@deno/darwin-arm64,
// @rollup/rollup-win32-x64-msvc, ...), so npm leaves them out of the lockfile and `npm ci` then refuses
// it as out of sync. This adds an entry per missing package, with os/cpu/libc read off its name; npm
// skips those where they do not match the machine, and `npm install` keeps them. On a platform that
// does match (macOS, Windows), npm fetches the package by name and version, without an integrity pin.
// Only top-level packages pinned to an exact version are handled; anything else stops the script.
const fs = require("fs")
const path = process.argv[2] ?? "package-lock.json"
const lock = JSON.parse(fs.readFileSync(path, "utf8"))
const pk = lock.packages
let added = 0
for (const entry of Object.values(pk)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const k = "node_modules/" + name
    if (pk[k]) continue
    if (!/^[\^~=]?\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) {
      console.error("not an exact version:", name, spec)
      process.exit(1)
    }
    const parts = name.split("/").pop().split("-")
    const osList = [
      "darwin",
      "linux",
      "win32",
      "android",
      "freebsd",
      "openbsd",
      "openharmony",
      "netbsd",
      "sunos",
      "aix"
    ]
    const i = parts.findIndex((p) => osList.includes(p))
    if (i < 0) {
      console.error("cannot place", name)
      process.exit(1)
    }
    const os = parts[i], cpu = parts[i + 1], rest = parts.slice(i + 2).join("-")
    const e = { version: spec.replace(/^[\^~=]/, ""), cpu: [cpu] }
    if (entry.dev) e.dev = true
    if (os === "linux") {
      if (/musl/.test(rest)) e.libc = ["musl"]
      else if (/gnu|glibc/.test(rest)) e.libc = ["glibc"]
    }
    e.optional = true
    e.os = [os]
    pk[k] = e
    added++
    console.log("added", k, JSON.stringify(e))
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pk).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0))
)
fs.writeFileSync(path, JSON.stringify(lock, null, 2) + "\n")
console.log(added, "entries added")
