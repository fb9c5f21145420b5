/** Contacts: the list with search, and a form to create, edit or delete one. */
import { useState } from "preact/hooks"
import type { ContactDetail, ContactSummary } from "../../../core/contacts/model.ts"
import { fieldErrors, formError, tool } from "../api.ts"
import { Link, match, navigate, useLocation } from "../router.tsx"
import { useSession } from "../session.ts"
import { Button, confirmed, ErrorNote, Field, Loading, Notice, Page, useAction, useLoad } from "../ui.tsx"

interface ContactPage {
  readonly contacts: ReadonlyArray<ContactSummary>
  readonly nextCursor: string | null
}

const nameOf = (c: Pick<ContactSummary, "firstName" | "lastName" | "company">) =>
  [c.firstName, c.lastName].filter((s) => s !== null && s !== "").join(" ") || c.company || "No name"

const lines = (text: string) => text.split(/[\n,]/).map((s) => s.trim()).filter((s) => s !== "")

const FIELDS = ["firstName", "lastName", "company", "phones", "emails", "tags", "phone", "email"]

interface Draft {
  firstName: string
  lastName: string
  company: string
  phones: string
  emails: string
  tags: string
}

const draftOf = (c: ContactDetail | null): Draft => ({
  firstName: c?.firstName ?? "",
  lastName: c?.lastName ?? "",
  company: c?.company ?? "",
  phones: (c?.phones ?? []).map((p) => p.value).join("\n"),
  emails: (c?.emails ?? []).map((e) => e.value).join("\n"),
  tags: (c?.tags ?? []).join(", ")
})

/** Creates (`contact` null) or edits a contact; a cleared name field is sent as null, which clears it. */
const ContactForm = ({ contact }: { readonly contact: ContactDetail | null }) => {
  const session = useSession()
  const [draft, setDraft] = useState<Draft>(() => draftOf(contact))
  const [saved, setSaved] = useState(false)
  const save = useAction()
  const remove = useAction()
  const set = (k: keyof Draft) => (v: string) => {
    setSaved(false)
    setDraft({ ...draft, [k]: v })
  }
  const errors = fieldErrors(save.error, FIELDS)
  const canWrite = session.tools.has(contact === null ? "contacts_create" : "contacts_update")

  const submit = async (e: Event) => {
    e.preventDefault()
    const text = (s: string) => (s.trim() === "" ? null : s.trim())
    const input = {
      firstName: text(draft.firstName),
      lastName: text(draft.lastName),
      company: text(draft.company),
      phones: lines(draft.phones),
      emails: lines(draft.emails),
      tags: lines(draft.tags)
    }
    if (contact === null) {
      // On create, an empty field is left out rather than sent as null.
      const created = await save.run(() =>
        tool<{ contact: ContactDetail }>(
          "contacts_create",
          Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && (!Array.isArray(v) || v.length > 0)))
        )
      )
      if (created !== undefined) navigate(`/contacts/${created.contact.id}`, true)
    } else {
      const updated = await save.run(() =>
        tool<{ contact: ContactDetail }>("contacts_update", { id: contact.id, ...input })
      )
      if (updated !== undefined) {
        setDraft(draftOf(updated.contact))
        setSaved(true)
      }
    }
  }

  const del = async () => {
    if (contact === null || !confirmed(`Delete ${nameOf(contact)}? Their conversations stay in the inbox.`)) return
    const done = await remove.run(() => tool("contacts_delete", { id: contact.id }))
    if (done !== undefined) navigate("/contacts", true)
  }

  return (
    <form onSubmit={submit} class="form">
      <div class="grid-2">
        <Field label="First name" value={draft.firstName} onValue={set("firstName")} error={errors["firstName"]} />
        <Field label="Last name" value={draft.lastName} onValue={set("lastName")} error={errors["lastName"]} />
      </div>
      <Field label="Company" value={draft.company} onValue={set("company")} error={errors["company"]} />
      <Field
        label="Phone numbers"
        multiline
        rows={2}
        hint="One per line, in international form (+14155550100). The first is the main number."
        value={draft.phones}
        onValue={set("phones")}
        error={errors["phones"] ?? errors["phone"]}
      />
      <Field
        label="Email addresses"
        multiline
        rows={2}
        hint="One per line."
        value={draft.emails}
        onValue={set("emails")}
        error={errors["emails"] ?? errors["email"]}
      />
      <Field label="Tags" hint="Separated by commas." value={draft.tags} onValue={set("tags")} error={errors["tags"]} />
      <ErrorNote error={formError(save.error, errors)} />
      <ErrorNote error={remove.error} />
      <Notice>{saved && "Saved."}</Notice>
      <div class="actions">
        {canWrite && (
          <Button kind="primary" type="submit" busy={save.busy}>
            {contact === null ? "Create contact" : "Save changes"}
          </Button>
        )}
        {contact !== null && session.tools.has("contacts_delete") && (
          <Button
            kind="danger"
            busy={remove.busy}
            onClick={() => void del()}
          >
            Delete contact
          </Button>
        )}
      </div>
    </form>
  )
}

const ContactScreen = ({ id }: { readonly id: string }) => {
  const contact = useLoad(() => tool<{ contact: ContactDetail }>("contacts_get", { id }), [id])
  return (
    <Page title={contact.data === undefined ? "Contact" : nameOf(contact.data.contact)}>
      <Link href="/contacts" class="back">
        All contacts
      </Link>
      {contact.data === undefined
        ? contact.error !== undefined ? <ErrorNote error={contact.error} /> : <Loading what="the contact" />
        : (
          <>
            {contact.data.contact.source === "inbound" && (
              <p class="muted">Created automatically when this number first texted or called.</p>
            )}
            <ContactForm key={contact.data.contact.id} contact={contact.data.contact} />
          </>
        )}
    </Page>
  )
}

const ContactList = () => {
  const session = useSession()
  const { query } = useLocation()
  const [q, setQ] = useState(query.get("q") ?? "")
  const [search, setSearch] = useState(q)
  const list = useLoad(
    () => tool<ContactPage>("contacts_list", search === "" ? { limit: 50 } : { q: search, limit: 50 }),
    [search]
  )
  const more = useAction()
  const [extra, setExtra] = useState<ContactPage | null>(null)
  const submit = (e: Event) => {
    e.preventDefault()
    setExtra(null)
    setSearch(q.trim())
  }
  const items = [...(list.data?.contacts ?? []), ...(extra?.contacts ?? [])]
  const cursor = extra?.nextCursor ?? (extra === null ? list.data?.nextCursor ?? null : null)
  const loadMore = async (c: string) => {
    const page = await more.run(() =>
      tool<ContactPage>("contacts_list", { ...(search === "" ? {} : { q: search }), limit: 50, cursor: c })
    )
    if (page !== undefined) {
      setExtra({ contacts: [...(extra?.contacts ?? []), ...page.contacts], nextCursor: page.nextCursor })
    }
  }
  return (
    <Page
      title="Contacts"
      actions={session.tools.has("contacts_create") && (
        <Link href="/contacts/new" class="btn btn-primary">
          New contact
        </Link>
      )}
    >
      <form role="search" class="search" onSubmit={submit}>
        <Field
          label="Search contacts"
          type="search"
          value={q}
          onValue={setQ}
          hint="Names, company, emails or part of a phone number."
        />
        <Button type="submit">Search</Button>
      </form>
      <ErrorNote error={list.error} />
      {list.data === undefined
        ? list.error === undefined && <Loading what="contacts" />
        : items.length === 0
        ? <p class="empty">{search === "" ? "No contacts yet." : `No contact matches “${search}”.`}</p>
        : (
          <ul class="list" aria-label="Contacts">
            {items.map((c) => (
              <li key={c.id} class="list-item">
                <Link href={`/contacts/${c.id}`}>{nameOf(c)}</Link>
                <span class="muted">
                  {[c.company !== null && c.firstName !== null ? c.company : null, c.phone].filter(Boolean).join(" · ")}
                </span>
              </li>
            ))}
          </ul>
        )}
      {cursor !== null && (
        <Button busy={more.busy} onClick={() => void loadMore(cursor)}>
          Load more
        </Button>
      )}
      <ErrorNote error={more.error} />
    </Page>
  )
}

export const Contacts = () => {
  const { path } = useLocation()
  if (match("/contacts/new", path) !== null) {
    return (
      <Page title="New contact">
        <Link href="/contacts" class="back">
          All contacts
        </Link>
        <ContactForm contact={null} />
      </Page>
    )
  }
  const id = match("/contacts/:id", path)?.id
  return id === undefined ? <ContactList /> : <ContactScreen id={id} />
}
