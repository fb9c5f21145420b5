/**
 * The console's routes are paths under /app, moved through with the History API: the server answers
 * index.html for any of them (adapters/http/console.ts), so a reload or a shared link opens the same screen.
 */
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"

export const BASE = "/app"

const listeners = new Set<() => void>()
const notify = () => listeners.forEach((l) => l())
globalThis.addEventListener?.("popstate", notify)

/** Goes to `path` (under /app), adding a history entry unless `replace`. */
export const navigate = (path: string, replace = false) => {
  const url = path.startsWith(BASE) ? path : BASE + path
  if (url === location.pathname + location.search) return
  if (replace) history.replaceState(null, "", url)
  else history.pushState(null, "", url)
  notify()
}

export interface Location {
  /** The path below /app, starting with `/` (`/inbox/123`). */
  readonly path: string
  readonly query: URLSearchParams
}

const current = (): Location => ({
  path: location.pathname.slice(BASE.length) || "/",
  query: new URLSearchParams(location.search)
})

export const useLocation = (): Location => {
  const [loc, setLoc] = useState(current)
  useEffect(() => {
    const update = () => setLoc(current())
    listeners.add(update)
    // A child's effect (a Redirect) runs before this one: catch a move made before it listened.
    update()
    return () => void listeners.delete(update)
  }, [])
  return loc
}

/** `pattern` like `/inbox/:id`: the named segments, or null when `path` does not match. */
export const match = (pattern: string, path: string): Record<string, string> | null => {
  const p = pattern.split("/")
  const s = path.replace(/\/+$/, "").split("/")
  if (p.length !== s.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(":")) params[p[i]!.slice(1)] = decodeURIComponent(s[i]!)
    else if (p[i] !== s[i]) return null
  }
  return params
}

/** An anchor that moves inside the console without a reload (a modified click still opens a new tab). */
export const Link = (
  { href, children, ...rest }: {
    readonly href: string
    readonly children: ComponentChildren
    readonly class?: string
    readonly "aria-current"?: "page" | undefined
    readonly "aria-label"?: string
  }
) => {
  const url = href.startsWith(BASE) ? href : BASE + href
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(url)
  }
  return (
    <a {...rest} href={url} onClick={onClick}>
      {children}
    </a>
  )
}

/** Replaces the current entry with `to` once rendered (a screen that only sends elsewhere). */
export const Redirect = ({ to }: { readonly to: string }) => {
  useEffect(() => navigate(to, true), [to])
  return null
}
