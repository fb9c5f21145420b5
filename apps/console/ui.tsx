/** The console's building blocks: loading data, running actions, and the accessible form parts every screen uses. */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks"
import { ApiError } from "./api.ts"

export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: unknown
  readonly loading: boolean
  /** Loads again, keeping what is shown until the answer comes (no flash on a live refresh). */
  readonly reload: () => Promise<void>
  readonly setData: (a: A) => void
}

/**
 * Loads `load()` now and whenever `deps` change; a stale answer (deps changed meanwhile) is dropped.
 * (A function declaration: in a .tsx file an arrow's `<A>(` reads as a JSX element.)
 */
export function useLoad<A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Loaded<A> {
  const [data, setData] = useState<A | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [loading, setLoading] = useState(true)
  const generation = useRef(0)
  const run = useCallback(async () => {
    const mine = ++generation.current
    setLoading(true)
    try {
      const a = await load()
      if (mine === generation.current) {
        setData(a)
        setError(undefined)
      }
    } catch (e) {
      if (mine === generation.current) setError(e)
    } finally {
      if (mine === generation.current) setLoading(false)
    }
  }, deps)
  useEffect(() => {
    setData(undefined)
    void run()
  }, [run])
  return { data, error, loading, reload: run, setData }
}

/** Runs an action (a button's): `busy` while it runs, its failure kept to show. */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  async function run<A>(action: () => Promise<A>): Promise<A | undefined> {
    setBusy(true)
    setError(undefined)
    try {
      return await action()
    } catch (e) {
      setError(e)
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, run, clear: () => setError(undefined) }
}

export const messageOf = (error: unknown): string =>
  error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error)

/** A failure, announced at once to screen readers. */
export const ErrorNote = ({ error, title }: { readonly error: unknown; readonly title?: string }) => {
  if (error === undefined || error === null) return null
  return (
    <div class="note note-error" role="alert">
      {title !== undefined && <strong>{title}</strong>}
      <span>{messageOf(error)}</span>
    </div>
  )
}

/** Good news, announced politely. */
export const Notice = ({ children }: { readonly children: ComponentChildren }) =>
  children === null || children === undefined || children === false ? null : (
    <div class="note note-ok" role="status">
      {children}
    </div>
  )

export const Loading = ({ what }: { readonly what: string }) => (
  <p class="muted" role="status">
    Loading {what}…
  </p>
)

/** A screen: its heading takes focus when the screen opens, so a screen reader announces where the member is. */
export const Page = (
  { title, actions, children, wide }: {
    readonly title: string
    readonly actions?: ComponentChildren
    readonly children: ComponentChildren
    readonly wide?: boolean
  }
) => {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Switchboard`
    heading.current?.focus({ preventScroll: true })
  }, [title])
  return (
    <section class={wide === true ? "page page-wide" : "page"} aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {actions !== undefined && <div class="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  )
}

/** A field's hint and error, under it; their ids are what the field's `aria-describedby` names. */
const Notes = (
  { id, hint, error }: { readonly id: string; readonly hint: string | undefined; readonly error: string | undefined }
) => (
  <>
    {hint !== undefined && (
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
    )}
    {error !== undefined && (
      <p class="field-error" id={`${id}-error`}>
        {error}
      </p>
    )}
  </>
)

/** The input attributes a field may set beside its label and value. */
interface InputProps {
  readonly type?: "text" | "email" | "tel" | "url" | "search" | "datetime-local"
  readonly autoComplete?: string
  readonly inputMode?: "text" | "email" | "tel" | "url" | "numeric" | "search"
  readonly placeholder?: string
  readonly required?: boolean
}

/** A labelled text input; `error` is tied to it (`aria-invalid`, `aria-describedby`). */
export const Field = (
  { label, value, onValue, error, hint, multiline, rows, ...rest }: {
    readonly label: string
    readonly value: string
    readonly onValue: (v: string) => void
    readonly error?: string | undefined
    readonly hint?: string | undefined
    readonly multiline?: boolean
    readonly rows?: number
  } & InputProps
) => {
  const id = useId()
  const described = [hint !== undefined ? `${id}-hint` : "", error !== undefined ? `${id}-error` : ""]
    .filter((s) => s !== "")
    .join(" ")
  const common = {
    id,
    value,
    "aria-invalid": error !== undefined ? ("true" as const) : undefined,
    "aria-describedby": described === "" ? undefined : described
  }
  return (
    <div class={error !== undefined ? "field field-invalid" : "field"}>
      <label for={id}>{label}</label>
      {multiline === true
        ? (
          <textarea
            {...common}
            rows={rows ?? 3}
            required={rest.required}
            placeholder={rest.placeholder}
            onInput={(e) => onValue((e.target as HTMLTextAreaElement).value)}
          />
        )
        : (
          <input
            {...common}
            // Preact's types tie each `type` to its own attributes; these fields share the same few.
            type={(rest.type ?? "text") as "text"}
            autoComplete={rest.autoComplete}
            inputMode={rest.inputMode}
            placeholder={rest.placeholder}
            required={rest.required}
            onInput={(e) => onValue((e.target as HTMLInputElement).value)}
          />
        )}
      <Notes id={id} hint={hint} error={error} />
    </div>
  )
}

/** A labelled select of `options` (value and label). */
export const Select = (
  { label, value, onValue, options, error, hint }: {
    readonly label: string
    readonly value: string
    readonly onValue: (v: string) => void
    readonly options: ReadonlyArray<readonly [value: string, label: string]>
    readonly error?: string | undefined
    readonly hint?: string | undefined
  }
) => {
  const id = useId()
  return (
    <div class={error !== undefined ? "field field-invalid" : "field"}>
      <label for={id}>{label}</label>
      <select
        id={id}
        value={value}
        aria-invalid={error !== undefined ? "true" : undefined}
        aria-describedby={error !== undefined ? `${id}-error` : hint !== undefined ? `${id}-hint` : undefined}
        onChange={(e) => onValue((e.target as HTMLSelectElement).value)}
      >
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
      <Notes id={id} hint={hint} error={error} />
    </div>
  )
}

export const Checkbox = (
  { label, checked, onChecked, hint, error }: {
    readonly label: string
    readonly checked: boolean
    readonly onChecked: (v: boolean) => void
    readonly hint?: string
    readonly error?: string | undefined
  }
) => {
  const id = useId()
  return (
    <div class="check">
      <input
        type="checkbox"
        id={id}
        checked={checked}
        aria-describedby={error !== undefined ? `${id}-error` : hint !== undefined ? `${id}-hint` : undefined}
        aria-invalid={error !== undefined ? "true" : undefined}
        onChange={(e) => onChecked((e.target as HTMLInputElement).checked)}
      />
      <label for={id}>{label}</label>
      <Notes id={id} hint={hint} error={error} />
    </div>
  )
}

/** A button that shows it is working and cannot be pressed twice meanwhile. */
export const Button = (
  { busy, kind, children, type, onClick, disabled, ...aria }: {
    readonly busy?: boolean
    readonly kind?: "primary" | "danger" | "plain"
    readonly children: ComponentChildren
    readonly type?: "button" | "submit"
    readonly onClick?: () => void
    readonly disabled?: boolean
    readonly class?: string
    readonly "aria-label"?: string
    readonly "aria-expanded"?: "true" | "false"
    readonly "aria-controls"?: string
  }
) => (
  <button
    type={type ?? "button"}
    onClick={onClick}
    aria-label={aria["aria-label"]}
    aria-expanded={aria["aria-expanded"]}
    aria-controls={aria["aria-controls"]}
    class={`btn btn-${kind ?? "plain"}${aria.class !== undefined ? ` ${aria.class}` : ""}`}
    disabled={busy === true || disabled === true}
    aria-busy={busy === true ? "true" : undefined}
  >
    {children}
  </button>
)

/** Copies `text` and says so; the text stays selectable for browsers without clipboard access. */
export const CopyButton = ({ text, label }: { readonly text: string; readonly label: string }) => {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied(true)
    } catch {
      setCopied(false)
    }
  }
  return (
    <>
      <Button onClick={copy}>{label}</Button>
      <span class="muted" role="status">
        {copied ? "Copied" : ""}
      </span>
    </>
  )
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: "short" })

/** A time as people read it: today's as a clock time, others with their date. */
export const When = ({ at }: { readonly at: string | null | undefined }) => {
  if (at === null || at === undefined) return null
  const d = new Date(at)
  const today = new Date().toDateString() === d.toDateString()
  return <time dateTime={at}>{today ? timeOnly.format(d) : dateTime.format(d)}</time>
}

export const duration = (seconds: number) => {
  const m = Math.floor(seconds / 60)
  const s = Math.round(seconds % 60)
  return m > 0 ? `${m} min ${s} s` : `${s} s`
}

/** A small label; `tone` picks its colour (always with text, never colour alone). */
export const Badge = (
  { children, tone }: { readonly children: ComponentChildren; readonly tone?: "ok" | "warn" | "bad" | "info" }
) => <span class={`badge badge-${tone ?? "info"}`}>{children}</span>

/** Asks before something that cannot be undone. */
export const confirmed = (question: string) => window.confirm(question)
