/** Sign-in by email link: the member asks for a link, which the server mails (CONTRACT "Members and the console"). */
import { useEffect, useRef, useState } from "preact/hooks"
import { api } from "../api.ts"
import { Button, ErrorNote, Field, useAction } from "../ui.tsx"

export const SignIn = () => {
  const [email, setEmail] = useState("")
  const [sentTo, setSentTo] = useState<string | null>(null)
  const action = useAction()
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = "Sign in · Switchboard"
    heading.current?.focus({ preventScroll: true })
  }, [sentTo])

  const submit = async (e: Event) => {
    e.preventDefault()
    const address = email.trim()
    if (address === "") return
    const ok = await action.run(() => api.signIn(address))
    if (ok !== undefined) setSentTo(address)
  }

  return (
    <main class="main main-center" id="main">
      <div class="card sign-in">
        <p class="brand-name">Switchboard</p>
        {sentTo === null
          ? (
            <>
              <h1 tabIndex={-1} ref={heading}>
                Sign in
              </h1>
              <p>Enter the email address your workspace knows you by. We will mail you a link that signs you in.</p>
              <form onSubmit={submit} noValidate>
                <Field
                  label="Email address"
                  type="email"
                  autoComplete="email"
                  inputMode="email"
                  required
                  value={email}
                  onValue={setEmail}
                />
                <ErrorNote error={action.error} />
                <Button kind="primary" type="submit" busy={action.busy}>
                  Email me a sign-in link
                </Button>
              </form>
            </>
          )
          : (
            <>
              <h1 tabIndex={-1} ref={heading}>
                Check your mail
              </h1>
              <p role="status">
                If <strong>{sentTo}</strong>{" "}
                belongs to a member of a workspace, a sign-in link is on its way. The link works once, within 15
                minutes.
              </p>
              <Button onClick={() => setSentTo(null)}>Use another address</Button>
            </>
          )}
      </div>
    </main>
  )
}
