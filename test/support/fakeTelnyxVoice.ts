/**
 * The voice part of the fake Telnyx (fakeTelnyx.ts; research telnyx.md §5 and "What a faithful
 * fake Telnyx server for tests must implement"): Call Control (`POST /v2/calls` and the `answer`,
 * `transfer`, `hangup`, `speak` and `record_start` actions), AI assistants (create, update with POST, read)
 * conversation transcripts and insights (`GET /v2/ai/conversations/{id}/conversations-insights`, the
 * shape of Telnyx's docs), with Telnyx's validation, and the webhook payloads of a call
 * (`call.initiated`, `call.answered`, `call.hangup`, `call.recording.saved`,
 * `call.recording.transcription.saved`, `call.conversation.ended`, `call.conversation_insights.generated`) built from the fake's own call
 * state, for fakeTelnyx.ts to sign.
 *
 * Telnyx's rules it enforces, each where it is applied, with the page that documents it: a command
 * on a call that has ended is refused; a repeated `command_id` is ignored; a dial `link_to` another
 * call shares its call session; a dialled leg nobody answers ends after `timeout_secs` (`elapse`);
 * `bridge` joins two live legs, and when one of them ends the other is hung up; `speak` sends
 * `call.speak.started` then `call.speak.ended`; a recording started with `transcription: true` sends
 * `call.recording.saved` and then `call.recording.transcription.saved` after the hangup. The webhooks
 * a call's commands and its caller cause are queued (`pending`) for a test to deliver as Telnyx may:
 * late, twice, out of order (https://developers.telnyx.com/docs/voice/programmable-voice/receiving-webhooks).
 *
 * Not documented, so invented here (an adapter must rely on neither): the code of an answer on an
 * answered one (422, 90019), what a repeated
 * `command_id` returns (the first answer again), and the assistant endpoints' error shape (FastAPI's
 * `{detail: [{loc, msg, type}]}`, as the 10DLC ones).
 */
import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { FieldError, TelnyxError } from "./fakeTelnyx.ts"

const E164 = /^\+[1-9]\d{6,14}$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** How the fake answers: a JSON body, or a v2 error envelope. Both return the status. */
export interface Reply {
  readonly send: (res: ServerResponse, status: number, body: unknown) => number
  readonly errors: (res: ServerResponse, status: number, list: ReadonlyArray<TelnyxError>) => number
}

/** One call leg the fake knows, dialled through the API or rung in by `inboundCall`. */
export interface FakeCall {
  readonly callControlId: string
  readonly callLegId: string
  readonly callSessionId: string
  readonly connectionId: string
  readonly direction: "incoming" | "outgoing"
  readonly from: string
  readonly to: string
  readonly callerName: string | null
  /** As sent: base64. */
  clientState: string | null
  assistantId: string | null
  /** `record-from-answer` on the dial or answer, or `record_start`. */
  recording: boolean
  /** `record_start` asked for Telnyx's transcription of the recording. */
  transcribing: boolean
  state: "parked" | "answered" | "ended"
  readonly startTime: string
  answeredAt: string | null
  endedAt: string | null
  /** Where the call went by `transfer`. */
  transferredTo: string | null
  /** The leg a dial was linked to (`link_to`): this leg shares its call session. */
  readonly linkTo: string | null
  /** A dialled leg's ring time (`timeout_secs`, Telnyx's default 30). */
  readonly timeoutSecs: number
  /** Seconds the fake's clock had run (`elapse`) when the leg was dialled. */
  readonly dialedAtSecond: number
  /** The leg it is bridged with. */
  bridgedWith: string | null
  /** The action bodies received, in order (`dial` for the dial itself). */
  readonly commands: Array<{ readonly action: string; readonly body: Record<string, unknown> }>
}

export interface ConversationMessage {
  readonly role: "user" | "assistant" | "tool"
  readonly text: string | null
  readonly sent_at?: string
  readonly created_at?: string
}

/** One insights run of a conversation, as `GET .../conversations-insights` lists it. */
export interface InsightRun {
  readonly status: "pending" | "in_progress" | "completed" | "failed"
  readonly results?: ReadonlyArray<string>
}

export interface InboundCallInput {
  readonly from: string
  readonly to: string
  readonly connectionId?: string
  readonly callerName?: string | null
}

export interface HangupInput {
  /** Default `normal_clearing`. */
  readonly cause?: string
  /** Default `caller`. */
  readonly source?: string
  /** Leave `end_time` out, as the SDK's types do. */
  readonly omitEndTime?: boolean
}

/** How the caller ends a call: its hangup, then what its recording becomes. */
export interface CallerHangup extends HangupInput {
  /** Where `call.recording.saved` points (default a fake S3 link nobody serves). */
  readonly recordingUrl?: string
  /** The text of `call.recording.transcription.saved` (sent only when the recording asked for it). */
  readonly transcript?: string
  /**
   * The assistant's conversation on an answered call with an assistant: its messages and AI summary
   * are served, and `call.conversation.ended` then `call.conversation_insights.generated` queued
   * after the call's other webhooks.
   */
  readonly conversation?: {
    readonly id: string
    readonly messages: ReadonlyArray<ConversationMessage>
    readonly summary: string
  }
}

/** A webhook the fake queued, with when it happened. */
export interface PendingWebhook {
  readonly eventType: string
  readonly payload: Record<string, unknown>
  readonly occurredAt: string
}

/** How queued webhooks are handed over: in the order they happened or reversed; each once or twice (same event id). */
export interface TakeOptions {
  readonly order?: "sent" | "reversed"
  readonly twice?: boolean
}

export interface FakeVoice {
  readonly calls: ReadonlyMap<string, FakeCall>
  readonly assistants: ReadonlyMap<string, Record<string, unknown>>
  /** AI Insights: insight templates and insight groups (with their assigned insights' ids), by id. */
  readonly insightTemplates: ReadonlyMap<string, Record<string, unknown>>
  readonly insightGroups: ReadonlyMap<string, { readonly name: string; readonly insights: Array<string> }>
  /** A caller rings one of our numbers: a parked incoming leg, to answer through the API. */
  readonly inboundCall: (input: InboundCallInput) => FakeCall
  /** The callee of a dialled call picks up. */
  readonly pickUp: (callControlId: string) => void
  /**
   * The fake's clock runs `seconds` on: a dialled leg still ringing when its `timeout_secs` have
   * passed ends with `call.hangup`, `hangup_cause: timeout` (the dial reference:
   * https://developers.telnyx.com/api-reference/call-commands/dial, `timeout_secs`).
   */
  readonly elapse: (seconds: number) => void
  /**
   * The caller hangs up now: the call ends (commands on it are refused from now on) and its
   * `call.hangup` is queued, then, if it was recorded, `call.recording.saved` and, when the
   * recording asked for it, `call.recording.transcription.saved`; then the assistant's
   * conversation's events when `conversation` is given.
   */
  readonly callerHangsUp: (callControlId: string, input?: CallerHangup) => void
  /** Takes the queued webhooks of every call (the queue is emptied). */
  readonly takePending: (options?: TakeOptions) => ReadonlyArray<PendingWebhook>
  /** Sets the messages `GET /v2/ai/conversations/{id}/messages` returns. */
  readonly setConversation: (conversationId: string, messages: ReadonlyArray<ConversationMessage>) => void
  /** Sets the insights runs `GET /v2/ai/conversations/{id}/conversations-insights` returns. */
  readonly setInsights: (conversationId: string, runs: ReadonlyArray<InsightRun>) => void
  /** The payload Telnyx would send for this event of the call (its state unchanged). */
  readonly callPayload: (
    callControlId: string,
    eventType:
      | "call.initiated"
      | "call.answered"
      | "call.hangup"
      | "call.recording.saved"
      | "call.speak.started"
      | "call.speak.ended"
      | "call.bridged",
    hangup?: HangupInput
  ) => Record<string, unknown>
  /**
   * The events of the call from its start to its end, as Telnyx sends them: initiated, answered
   * (if it was), hangup (ending it now if it is still up), recording.saved (if it was recorded).
   */
  readonly lifecycle: (
    callControlId: string,
    hangup?: HangupInput
  ) => ReadonlyArray<readonly [string, Record<string, unknown>]>
  readonly route: (method: string, path: string, json: unknown, res: ServerResponse) => number | undefined
  readonly reset: () => void
}

type Action = "answer" | "transfer" | "hangup" | "speak" | "record_start" | "bridge"

const fields = (json: unknown) =>
  (typeof json === "object" && json !== null && !Array.isArray(json) ? json : {}) as Record<string, unknown>
const text = (v: unknown): v is string => typeof v === "string" && v.trim() !== ""
const now = () => new Date().toISOString()
const v3 = () => `v3:${randomUUID().replace(/-/g, "")}`

export const makeFakeVoice = (reply: Reply): FakeVoice => {
  const { errors, send } = reply
  const calls = new Map<string, FakeCall>()
  /** Answers already given to a `command_id`, by id: a repeat gets the same answer and does nothing. */
  const commandAnswers = new Map<string, unknown>()
  const assistants = new Map<string, Record<string, unknown>>()
  const conversations = new Map<string, ReadonlyArray<ConversationMessage>>()
  const insights = new Map<string, ReadonlyArray<InsightRun>>()
  const insightTemplates = new Map<string, Record<string, unknown>>()
  const insightGroups = new Map<string, { readonly name: string; readonly insights: Array<string> }>()
  /** Webhooks Telnyx would send, in the order they happened, until a test takes them. */
  const pending: Array<PendingWebhook> = []
  /** The fake's clock (`elapse`), in seconds. */
  let clock = 0
  const queue = (eventType: string, payload: Record<string, unknown>) =>
    void pending.push({ eventType, payload, occurredAt: now() })

  const missing = (field: string): TelnyxError => ({
    code: "10004",
    title: "Missing required parameter",
    detail: `The '${field}' parameter is required.`,
    source: { pointer: `/${field}` }
  })
  const invalid = (field: string, detail: string): TelnyxError => ({
    code: "10015",
    title: "Invalid parameter",
    detail,
    source: { pointer: `/${field}` }
  })
  const notE164 = (field: string): TelnyxError => ({
    code: "10016",
    title: "Phone number must be in +E.164 format",
    detail: `The '${field}' parameter must be in +E.164 format.`,
    source: { pointer: `/${field}` }
  })
  const clientStateError = (b: Record<string, unknown>): ReadonlyArray<TelnyxError> =>
    b["client_state"] === undefined || (typeof b["client_state"] === "string" && BASE64.test(b["client_state"]))
      ? []
      : [invalid("client_state", "The 'client_state' parameter must be a base64 encoded string.")]
  const assistantError = (b: Record<string, unknown>): ReadonlyArray<TelnyxError> => {
    if (b["assistant"] === undefined) return []
    const id = fields(b["assistant"])["id"]
    if (!text(id)) return [missing("assistant/id")]
    return assistants.has(id) ? [] : [invalid("assistant/id", `Assistant ${id} was not found.`)]
  }
  const recordError = (b: Record<string, unknown>): ReadonlyArray<TelnyxError> => [
    ...(b["record"] === undefined || b["record"] === "record-from-answer"
      ? []
      : [invalid("record", "'record' must be 'record-from-answer'.")]),
    ...(b["record_format"] === undefined || b["record_format"] === "mp3" || b["record_format"] === "wav"
      ? []
      : [invalid("record_format", "'record_format' must be wav or mp3.")]),
    ...(b["record_channels"] === undefined || b["record_channels"] === "single" || b["record_channels"] === "dual"
      ? []
      : [invalid("record_channels", "'record_channels' must be single or dual.")])
  ]

  const dialed = (call: FakeCall) => ({
    data: {
      record_type: "call",
      call_control_id: call.callControlId,
      call_leg_id: call.callLegId,
      call_session_id: call.callSessionId,
      is_alive: false,
      ...(call.clientState === null ? {} : { client_state: call.clientState }),
      start_time: call.startTime
    }
  })

  const dial = (res: ServerResponse, json: unknown): number => {
    const b = fields(json)
    const list: Array<TelnyxError> = []
    if (!text(b["connection_id"])) list.push(missing("connection_id"))
    for (const f of ["from", "to"]) {
      if (b[f] === undefined || b[f] === "") list.push(missing(f))
      else if (
        !(typeof b[f] === "string" && (E164.test(b[f] as string) || (f === "to" && /^sips?:/.test(b[f] as string))))
      ) list.push(notE164(f))
    }
    const timeout = b["timeout_secs"]
    if (
      timeout !== undefined &&
      !(typeof timeout === "number" && Number.isInteger(timeout) && timeout >= 5 && timeout <= 600)
    ) {
      list.push(invalid("timeout_secs", "'timeout_secs' must be an integer between 5 and 600."))
    }
    list.push(...clientStateError(b), ...assistantError(b), ...recordError(b))
    // "When bridge_intent is true, link_to becomes required"; "When bridge_on_answer is true, link_to
    // becomes required" (https://developers.telnyx.com/api-reference/call-commands/dial).
    const linkTo = b["link_to"]
    if (linkTo === undefined && (b["bridge_intent"] === true || b["bridge_on_answer"] === true)) {
      list.push(missing("link_to"))
    }
    // link_to names "another call's control id": an unknown one is refused (its code is not documented).
    const linked = typeof linkTo === "string" ? calls.get(linkTo) : undefined
    if (linkTo !== undefined && linked === undefined) {
      list.push(invalid("link_to", "The 'link_to' parameter must be the call_control_id of a call."))
    }
    if (list.length > 0) return errors(res, 422, list)
    const commandId = text(b["command_id"]) ? `dial:${b["command_id"]}` : null
    if (commandId !== null && commandAnswers.has(commandId)) return send(res, 200, commandAnswers.get(commandId))
    const call: FakeCall = {
      callControlId: v3(),
      callLegId: randomUUID(),
      // link_to: "Use another call's control id for sharing the same call session id".
      callSessionId: linked?.callSessionId ?? randomUUID(),
      connectionId: b["connection_id"] as string,
      direction: "outgoing",
      from: b["from"] as string,
      to: b["to"] as string,
      callerName: null,
      clientState: typeof b["client_state"] === "string" ? b["client_state"] : null,
      assistantId: text(fields(b["assistant"])["id"]) ? (fields(b["assistant"])["id"] as string) : null,
      recording: b["record"] === "record-from-answer",
      transcribing: false,
      state: "parked",
      startTime: now(),
      answeredAt: null,
      endedAt: null,
      transferredTo: null,
      linkTo: linked?.callControlId ?? null,
      timeoutSecs: typeof timeout === "number" ? timeout : 30,
      dialedAtSecond: clock,
      bridgedWith: null,
      commands: [{ action: "dial", body: b }]
    }
    calls.set(call.callControlId, call)
    if (commandId !== null) commandAnswers.set(commandId, dialed(call))
    return send(res, 200, dialed(call))
  }

  /** Validates an action's body, applies it; the refusal list when it cannot. */
  const apply = (call: FakeCall, action: Action, b: Record<string, unknown>): ReadonlyArray<TelnyxError> => {
    const list: Array<TelnyxError> = [...clientStateError(b)]
    switch (action) {
      case "answer":
        list.push(...assistantError(b), ...recordError(b))
        if (list.length > 0) return list
        if (call.direction !== "incoming" || call.state !== "parked") {
          return [{ code: "90019", title: "Call already answered", detail: "This call can no longer be answered." }]
        }
        call.state = "answered"
        call.answeredAt = now()
        if (b["record"] === "record-from-answer") call.recording = true
        if (text(fields(b["assistant"])["id"])) call.assistantId = fields(b["assistant"])["id"] as string
        break
      case "transfer": {
        const to = b["to"]
        if (to === undefined || to === "") list.push(missing("to"))
        else if (!(typeof to === "string" && (E164.test(to) || /^sips?:/.test(to)))) list.push(notE164("to"))
        if (list.length > 0) return list
        call.transferredTo = to as string
        break
      }
      case "hangup":
        if (list.length > 0) return list
        call.state = "ended"
        call.endedAt = now()
        break
      case "bridge": {
        // https://developers.telnyx.com/api-reference/call-commands/bridge-calls: `call_control_id`
        // (required) is the call to bridge with; a call that has ended takes no command (above), nor
        // can it be bridged with. "Invalid Call Control ID" (90015) is the v1 reference's example
        // error (https://developers.telnyx.com/api/v1/mission-control/call-control-bridge).
        const other = b["call_control_id"]
        if (!text(other)) list.push(missing("call_control_id"))
        if (list.length > 0) return list
        const with_ = calls.get(other as string)
        if (with_ === undefined || with_ === call) {
          return [{
            code: "90015",
            title: "Invalid Call Control ID",
            detail: "The call_control_id provided was not valid."
          }]
        }
        if (with_.state === "ended") {
          return [{
            code: "90018",
            title: "Call has already ended",
            detail: "This call is no longer active and can't receive commands."
          }]
        }
        call.bridgedWith = with_.callControlId
        with_.bridgedWith = call.callControlId
        break
      }
      case "speak":
        // Required by Telnyx's speak command: `payload` and `voice`
        // (https://developers.telnyx.com/api-reference/call-commands/speak-text).
        if (!text(b["payload"])) list.push(missing("payload"))
        if (!text(b["voice"])) list.push(missing("voice"))
        if (
          b["language"] !== undefined &&
          !(typeof b["language"] === "string" && /^[a-z]{2,3}-[A-Z]{2}$/.test(b["language"]))
        ) {
          list.push(invalid("language", "'language' must be a language code such as en-US."))
        }
        if (list.length > 0) return list
        break
      case "record_start":
        if (b["format"] === undefined) list.push(missing("format"))
        else if (b["format"] !== "mp3" && b["format"] !== "wav") {
          list.push(invalid("format", "'format' must be wav or mp3."))
        }
        if (b["channels"] === undefined) list.push(missing("channels"))
        else if (b["channels"] !== "single" && b["channels"] !== "dual") {
          list.push(invalid("channels", "'channels' must be single or dual."))
        }
        if (b["transcription"] !== undefined && typeof b["transcription"] !== "boolean") {
          list.push(invalid("transcription", "'transcription' must be a boolean."))
        }
        if (list.length > 0) return list
        call.recording = true
        call.transcribing = b["transcription"] === true
        break
    }
    return []
  }

  const act = (res: ServerResponse, callControlId: string, action: Action, json: unknown): number => {
    const call = calls.get(callControlId)
    if (!call) return errors(res, 404, [{ code: "10005", title: "Resource not found", detail: "Call not found." }])
    const b = fields(json)
    const commandId = text(b["command_id"]) ? `${callControlId}:${b["command_id"]}` : null
    // Telnyx ignores a command whose command_id it has seen
    // (https://developers.telnyx.com/docs/voice/programmable-voice/receiving-webhooks).
    if (commandId !== null && commandAnswers.has(commandId)) return send(res, 200, commandAnswers.get(commandId))
    // A call that has ended takes no more commands: 422, code 90018 "Call has already ended". Telnyx's
    // docs list Call Control's commands per live call (https://developers.telnyx.com/docs/v1/call-control/sending-commands)
    // but not this refusal; its words are a real answer quoted in https://github.com/pipecat-ai/pipecat/pull/2054.
    if (call.state === "ended") {
      return errors(res, 422, [{
        code: "90018",
        title: "Call has already ended",
        detail: "This call is no longer active and can't receive commands."
      }])
    }
    const refused = apply(call, action, b)
    if (refused.length > 0) return errors(res, 422, refused)
    // A command's client_state is echoed in the call's later webhooks.
    if (typeof b["client_state"] === "string") call.clientState = b["client_state"]
    call.commands.push({ action, body: b })
    // The webhooks each command documents as its result.
    if (action === "answer") queue("call.answered", callPayload(callControlId, "call.answered"))
    if (action === "speak") {
      // https://developers.telnyx.com/api-reference/call-commands/speak-text: call.speak.started, call.speak.ended.
      queue("call.speak.started", callPayload(callControlId, "call.speak.started"))
      queue("call.speak.ended", { ...callPayload(callControlId, "call.speak.ended"), status: "completed" })
    }
    if (action === "hangup") {
      // Our hangup of a leg still ringing cancels it.
      endedWebhooks(
        call,
        call.answeredAt === null ? { cause: "originator_cancel", source: "caller" } : { source: "callee" }
      )
    }
    if (action === "bridge") {
      // "Expected Webhooks: call.bridged for Leg A, call.bridged for Leg B" (the bridge reference).
      queue("call.bridged", callPayload(callControlId, "call.bridged"))
      queue("call.bridged", callPayload(call.bridgedWith!, "call.bridged"))
    }
    const answer = { data: { result: "ok" } }
    if (commandId !== null) commandAnswers.set(commandId, answer)
    return send(res, 200, answer)
  }

  // ---------------------------------------------------------------------------------- assistants

  const validation = (res: ServerResponse, list: ReadonlyArray<FieldError>) => send(res, 422, { detail: list })
  const assistantFields = (b: Record<string, unknown>, create: boolean): ReadonlyArray<FieldError> =>
    ["name", "instructions"].flatMap((f): ReadonlyArray<FieldError> => {
      if (b[f] === undefined) {
        return create
          ? [{ loc: ["body", f], msg: "field required", type: "value_error.missing" }]
          : []
      }
      return text(b[f])
        ? []
        : [{
          loc: ["body", f],
          msg: "ensure this value has at least 1 characters",
          type: "value_error.any_str.min_length"
        }]
    })

  /** An assistant's settings objects: an insight group must exist, a voice is required in voice_settings. */
  const settingsErrors = (b: Record<string, unknown>): ReadonlyArray<FieldError> => {
    const out: Array<FieldError> = []
    if (b["insight_settings"] !== undefined) {
      const group = fields(b["insight_settings"])["insight_group_id"]
      if (!(typeof group === "string" && insightGroups.has(group))) {
        out.push({
          loc: ["body", "insight_settings", "insight_group_id"],
          msg: "insight group not found",
          type: "value_error"
        })
      }
    }
    if (b["voice_settings"] !== undefined && !text(fields(b["voice_settings"])["voice"])) {
      out.push({ loc: ["body", "voice_settings", "voice"], msg: "field required", type: "value_error.missing" })
    }
    return out
  }

  const createAssistant = (res: ServerResponse, json: unknown): number => {
    const b = fields(json)
    const list = [...assistantFields(b, true), ...settingsErrors(b)]
    if (list.length > 0) return validation(res, list)
    const id = `assistant-${randomUUID()}`
    const assistant = {
      id,
      name: b["name"],
      instructions: b["instructions"],
      // An empty greeting is kept: the assistant then waits for the caller to speak first.
      greeting: typeof b["greeting"] === "string" ? b["greeting"] : null,
      model: "meta-llama/Meta-Llama-3.1-70B-Instruct",
      created_at: now(),
      enabled_features: ["telephony"],
      telephony_settings: { default_texml_app_id: `texml-${randomUUID()}` },
      ...(b["voice_settings"] === undefined ? {} : { voice_settings: b["voice_settings"] }),
      ...(b["transcription"] === undefined ? {} : { transcription: b["transcription"] }),
      ...(b["insight_settings"] === undefined ? {} : { insight_settings: b["insight_settings"] })
    }
    assistants.set(id, assistant)
    return send(res, 200, assistant)
  }

  const updateAssistant = (res: ServerResponse, id: string, json: unknown): number => {
    const known = assistants.get(id)
    if (!known) {
      return errors(res, 404, [{
        code: "10005",
        title: "Resource not found",
        detail: `Assistant ${id} was not found.`
      }])
    }
    const b = fields(json)
    const list = [...assistantFields(b, false), ...settingsErrors(b)]
    if (list.length > 0) return validation(res, list)
    const updated = { ...known, ...b, id }
    assistants.set(id, updated)
    return send(res, 200, updated)
  }

  const route = (method: string, path: string, json: unknown, res: ServerResponse): number | undefined => {
    if (method === "POST" && path === "/v2/calls") return dial(res, json)
    const action = /^\/v2\/calls\/([^/]+)\/actions\/(answer|transfer|hangup|speak|record_start|bridge)$/.exec(path)
    if (method === "POST" && action) return act(res, decodeURIComponent(action[1]!), action[2] as Action, json)
    if (method === "POST" && path === "/v2/ai/assistants") return createAssistant(res, json)
    const assistant = /^\/v2\/ai\/assistants\/([^/]+)$/.exec(path)
    if (assistant && method === "POST") return updateAssistant(res, decodeURIComponent(assistant[1]!), json)
    if (assistant && method === "GET") {
      const known = assistants.get(decodeURIComponent(assistant[1]!))
      return known
        ? send(res, 200, known)
        : errors(res, 404, [{ code: "10005", title: "Resource not found", detail: "Assistant not found." }])
    }
    // AI Insights (https://developers.telnyx.com/docs/inference/ai-insights/insight-groups): a
    // template needs `name` and `instructions`, a group `name`; assigning needs both to exist.
    if (method === "POST" && path === "/v2/ai/conversations/insights") {
      const b = fields(json)
      const list = assistantFields(b, true)
      if (list.length > 0) return validation(res, list)
      const id = randomUUID()
      const template = { id, name: b["name"], instructions: b["instructions"], created_at: now() }
      insightTemplates.set(id, template)
      return send(res, 200, { data: template })
    }
    if (method === "POST" && path === "/v2/ai/conversations/insight-groups") {
      const b = fields(json)
      if (!text(b["name"])) {
        return validation(res, [{ loc: ["body", "name"], msg: "field required", type: "value_error.missing" }])
      }
      const id = randomUUID()
      insightGroups.set(id, { name: b["name"] as string, insights: [] })
      return send(res, 200, { data: { id, name: b["name"], created_at: now(), insights: [] } })
    }
    const assign = /^\/v2\/ai\/conversations\/insight-groups\/([^/]+)\/insights\/([^/]+)\/assign$/.exec(path)
    if (method === "POST" && assign) {
      const group = insightGroups.get(decodeURIComponent(assign[1]!))
      const insight = decodeURIComponent(assign[2]!)
      if (!group || !insightTemplates.has(insight)) {
        return errors(res, 404, [{ code: "10005", title: "Resource not found", detail: "Insight or group not found." }])
      }
      if (!group.insights.includes(insight)) group.insights.push(insight)
      return send(res, 200, {})
    }
    const conversation = /^\/v2\/ai\/conversations\/([^/]+)\/messages$/.exec(path)
    if (conversation && method === "GET") {
      const messages = conversations.get(decodeURIComponent(conversation[1]!))
      return messages
        ? send(res, 200, {
          data: messages,
          meta: { page_number: 1, page_size: messages.length, total_pages: 1, total_results: messages.length }
        })
        : errors(res, 404, [{ code: "10005", title: "Resource not found", detail: "Conversation not found." }])
    }
    const insight = /^\/v2\/ai\/conversations\/([^/]+)\/conversations-insights$/.exec(path)
    if (insight && method === "GET") {
      const runs = insights.get(decodeURIComponent(insight[1]!))
      if (!runs) {
        return errors(res, 404, [{ code: "10005", title: "Resource not found", detail: "Conversation not found." }])
      }
      const data = runs.map((r, i) => ({
        id: `insight-run-${i}`,
        status: r.status,
        created_at: now(),
        conversation_insights: (r.results ?? []).map((result, j) => ({ insight_id: `insight-${j}`, result }))
      }))
      return send(res, 200, {
        data,
        meta: { page_number: 1, page_size: data.length, total_pages: 1, total_results: data.length }
      })
    }
    return undefined
  }

  // ---------------------------------------------------------------------------------- webhooks

  const known = (callControlId: string): FakeCall => {
    const call = calls.get(callControlId)
    if (!call) throw new Error(`the fake knows no call ${callControlId}`)
    return call
  }

  const callPayload: FakeVoice["callPayload"] = (callControlId, eventType, hangup = {}) => {
    const call = known(callControlId)
    const ids = {
      call_control_id: call.callControlId,
      call_leg_id: call.callLegId,
      call_session_id: call.callSessionId,
      connection_id: call.connectionId,
      ...(call.clientState === null ? {} : { client_state: call.clientState })
    }
    switch (eventType) {
      case "call.initiated": {
        // An incoming call rings before we answer it, so before any client_state of ours.
        const { client_state: _sent, ...leg } = ids as typeof ids & { client_state?: string }
        return {
          ...(call.direction === "incoming" ? leg : ids),
          direction: call.direction,
          from: call.from,
          to: call.to,
          ...(call.callerName === null ? {} : { caller_id_name: call.callerName }),
          state: call.direction === "incoming" ? "parked" : "bridging",
          start_time: call.startTime,
          custom_headers: [],
          sip_headers: []
        }
      }
      case "call.answered":
        return { ...ids, from: call.from, to: call.to, state: "answered", start_time: call.startTime }
      case "call.bridged":
        return { ...ids, from: call.from, to: call.to }
      case "call.speak.started":
      case "call.speak.ended":
        return ids
      case "call.hangup":
        return {
          ...ids,
          from: call.from,
          to: call.to,
          state: "hangup",
          hangup_cause: hangup.cause ?? "normal_clearing",
          hangup_source: hangup.source ?? "caller",
          sip_hangup_cause: "200",
          start_time: call.startTime,
          ...(hangup.omitEndTime ? {} : { end_time: call.endedAt ?? now() }),
          call_quality_stats: null
        }
      case "call.recording.saved": {
        const recording = randomUUID()
        const url = (ext: string) =>
          `https://s3.amazonaws.com/telnyx-recordings-fake/${recording}.${ext}?X-Amz-Expires=600`
        return {
          call_leg_id: call.callLegId,
          call_session_id: call.callSessionId,
          connection_id: call.connectionId,
          ...(call.clientState === null ? {} : { client_state: call.clientState }),
          channels: "dual",
          recording_started_at: call.answeredAt ?? call.startTime,
          recording_ended_at: call.endedAt ?? now(),
          recording_urls: { mp3: url("mp3"), wav: url("wav") },
          public_recording_urls: {}
        }
      }
    }
  }

  /**
   * The call ends (if it has not): `call.hangup` queued, then, for a recorded call, `call.recording.saved`
   * (https://developers.telnyx.com/api-reference/callbacks/call-recording-saved) and, when `record_start`
   * asked for it, `call.recording.transcription.saved` with the same `recording_id`
   * (https://developers.telnyx.com/api-reference/call-recordings/list-all-recording-transcriptions);
   * then, given an assistant's conversation, `call.conversation.ended` and its insights' webhook.
   */
  const endedWebhooks = (call: FakeCall, input: CallerHangup = {}) => {
    if (call.state !== "ended") {
      call.state = "ended"
      call.endedAt = now()
    }
    queue("call.hangup", callPayload(call.callControlId, "call.hangup", input))
    recordingWebhooks(call, input)
    // The bridge ends with this leg: the other one is hung up, as no `park_after_unbridge` was sent
    // ("If not set, the default behavior is to hang up the leg", the bridge reference).
    const other = call.bridgedWith === null ? undefined : calls.get(call.bridgedWith)
    if (other !== undefined && other.state !== "ended") endedWebhooks(other, { source: "callee" })
    const conversation = input.conversation
    if (conversation === undefined || call.assistantId === null || call.answeredAt === null) return
    conversations.set(conversation.id, conversation.messages)
    insights.set(conversation.id, [{ status: "completed", results: [conversation.summary] }])
    const ids = {
      conversation_id: conversation.id,
      call_control_id: call.callControlId,
      call_session_id: call.callSessionId,
      ...(call.clientState === null ? {} : { client_state: call.clientState })
    }
    // The payloads telnyxCallWebhooks.ts reads: conversation.ended's SDK type, insights' documented id.
    queue("call.conversation.ended", { ...ids, assistant_id: call.assistantId, duration_sec: 12 })
    queue("call.conversation_insights.generated", ids)
  }

  const recordingWebhooks = (call: FakeCall, input: CallerHangup) => {
    if (!call.recording || call.answeredAt === null) return
    const saved = callPayload(call.callControlId, "call.recording.saved")
    const recordingId = randomUUID()
    queue("call.recording.saved", {
      ...saved,
      recording_id: recordingId,
      ...(input.recordingUrl === undefined ? {} : { recording_urls: { mp3: input.recordingUrl } })
    })
    if (!call.transcribing) return
    queue("call.recording.transcription.saved", {
      call_control_id: call.callControlId,
      call_leg_id: call.callLegId,
      call_session_id: call.callSessionId,
      connection_id: call.connectionId,
      ...(call.clientState === null ? {} : { client_state: call.clientState }),
      recording_id: recordingId,
      recording_transcription_id: randomUUID(),
      status: "completed",
      transcription_text: input.transcript ?? ""
    })
  }

  return {
    calls,
    assistants,
    insightTemplates,
    insightGroups,
    callerHangsUp: (callControlId, input) => endedWebhooks(known(callControlId), input),
    takePending: (options = {}) => {
      const taken = pending.splice(0, pending.length)
      if (options.order === "reversed") taken.reverse()
      return options.twice ? taken.flatMap((w) => [w, w]) : taken
    },
    inboundCall: (input) => {
      const call: FakeCall = {
        callControlId: v3(),
        callLegId: randomUUID(),
        callSessionId: randomUUID(),
        connectionId: input.connectionId ?? "fake-connection",
        direction: "incoming",
        from: input.from,
        to: input.to,
        callerName: input.callerName ?? null,
        clientState: null,
        assistantId: null,
        recording: false,
        transcribing: false,
        state: "parked",
        startTime: now(),
        answeredAt: null,
        endedAt: null,
        transferredTo: null,
        linkTo: null,
        timeoutSecs: 30,
        dialedAtSecond: clock,
        bridgedWith: null,
        commands: []
      }
      calls.set(call.callControlId, call)
      return call
    },
    pickUp: (callControlId) => {
      const call = known(callControlId)
      call.state = "answered"
      call.answeredAt = now()
    },
    elapse: (seconds) => {
      clock += seconds
      for (const call of calls.values()) {
        if (call.direction !== "outgoing" || call.state !== "parked") continue
        if (clock - call.dialedAtSecond >= call.timeoutSecs) endedWebhooks(call, { cause: "timeout", source: "callee" })
      }
    },
    setConversation: (conversationId, messages) => void conversations.set(conversationId, messages),
    setInsights: (conversationId, runs) => void insights.set(conversationId, runs),
    callPayload,
    lifecycle: (callControlId, hangup) => {
      const call = known(callControlId)
      const events: Array<readonly [string, Record<string, unknown>]> = [[
        "call.initiated",
        callPayload(callControlId, "call.initiated")
      ]]
      if (call.answeredAt !== null) events.push(["call.answered", callPayload(callControlId, "call.answered")])
      if (call.state !== "ended") {
        call.state = "ended"
        call.endedAt = now()
      }
      events.push(["call.hangup", callPayload(callControlId, "call.hangup", hangup)])
      if (call.recording && call.answeredAt !== null) {
        events.push(["call.recording.saved", callPayload(callControlId, "call.recording.saved")])
      }
      return events
    },
    route,
    reset: () => {
      calls.clear()
      clock = 0
      commandAnswers.clear()
      pending.length = 0
      assistants.clear()
      insightTemplates.clear()
      insightGroups.clear()
      conversations.clear()
      insights.clear()
    }
  }
}
