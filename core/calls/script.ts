/**
 * What the simulated carrier plays (test keys, the test helpers, CARRIER=simulated): a short
 * speaker-labelled conversation, its summary, and a small WAV standing in for the recording. Pure
 * and deterministic, so tests can search the transcript for its words.
 */
import type { TranscriptEntry } from "../conversations/model.ts"
import type { CallEnd } from "./voice.ts"

type Entry = typeof TranscriptEntry.Type
export type Transcript = ReadonlyArray<Entry>

export interface Played {
  readonly transcript: Transcript
  readonly summary: string
}

/** Lines spread over the call's duration. */
const spread = (durationSeconds: number, lines: ReadonlyArray<readonly [Entry["speaker"], string]>): Transcript =>
  lines.map(([speaker, text], i) => ({
    speaker,
    text,
    offsetSeconds: Math.floor((durationSeconds * i) / lines.length)
  }))

/** An inbound call answered by the AI agent (with its greeting) or a teammate. */
export const answeredCall = (by: "agent" | "member", durationSeconds: number, greeting: string | null): Played => ({
  transcript: spread(durationSeconds, [
    [by, greeting ?? "Thanks for calling, how can I help?"],
    ["caller", "Hi, I would like to book a table for two tonight at seven."],
    [by, "Seven tonight for two is booked. We will text you a confirmation."],
    ["caller", "Perfect, thank you."]
  ]),
  summary: "The caller booked a table for two tonight at seven; a confirmation text was promised."
})

/** A voicemail left after nobody answered. */
export const voicemailLeft = (durationSeconds: number): Played => ({
  transcript: spread(durationSeconds, [[
    "caller",
    "Hi, this is a voicemail about my reservation tomorrow, please call me back."
  ]]),
  summary: "The caller asked to be called back about their reservation tomorrow."
})

/** An outbound call the AI agent placed, answered by the callee. */
export const placedCall = (durationSeconds: number, greeting: string | null, purpose: string | null): Played => ({
  transcript: spread(durationSeconds, [
    ["agent", greeting ?? "Hello, this is the assistant calling on behalf of the business."],
    ["callee", "Hello, yes?"],
    [
      "agent",
      purpose === null ? "I am calling to confirm your appointment tomorrow." : `I am calling about: ${purpose}`
    ],
    ["callee", "Yes, that works for me. Goodbye."]
  ]),
  summary: purpose === null
    ? "The callee confirmed their appointment tomorrow."
    : `The callee was reached about: ${purpose}`
})

/**
 * A WAV (8 kHz, 8-bit mono PCM) of at most two seconds of a quiet 440 Hz tone: real audio a player
 * accepts, kept small whatever the call's length.
 */
export const recordingWav = (durationSeconds: number): Uint8Array => {
  const rate = 8000
  const samples = rate * Math.min(Math.max(durationSeconds, 1), 2)
  const bytes = new Uint8Array(44 + samples)
  const view = new DataView(bytes.buffer)
  const ascii = (at: number, s: string) => [...s].forEach((c, i) => view.setUint8(at + i, c.charCodeAt(0)))
  ascii(0, "RIFF")
  view.setUint32(4, 36 + samples, true)
  ascii(8, "WAVE")
  ascii(12, "fmt ")
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true) // PCM
  view.setUint16(22, 1, true) // mono
  view.setUint32(24, rate, true)
  view.setUint32(28, rate, true) // bytes per second
  view.setUint16(32, 1, true) // block align
  view.setUint16(34, 8, true) // bits per sample
  ascii(36, "data")
  view.setUint32(40, samples, true)
  for (let i = 0; i < samples; i++) bytes[44 + i] = 128 + Math.round(16 * Math.sin((2 * Math.PI * 440 * i) / rate))
  return bytes
}

/** A simulated call's end: what was said and a WAV of it. */
export const simulatedEnd = (answered: boolean, durationSeconds: number, played: Played): CallEnd => ({
  answered,
  durationSeconds,
  ...played,
  recording: { bytes: recordingWav(durationSeconds), contentType: "audio/wav" }
})

/** How long the simulator's outbound calls last. */
const PLACED_CALL_SECONDS = 45

/** An outbound call the simulator plays: answered by the callee, 45 seconds, recorded. */
export const simulatedPlacedCall = (greeting: string | null, purpose: string | null): CallEnd =>
  simulatedEnd(true, PLACED_CALL_SECONDS, placedCall(PLACED_CALL_SECONDS, greeting, purpose))
