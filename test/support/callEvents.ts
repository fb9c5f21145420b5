/** SPEC's order of the events of an inbound call the agent or a teammate answered, through its summary ("Order of call events"). */
export const ANSWERED_CALL_EVENTS: ReadonlyArray<string> = [
  "call.ringing",
  "call.answered",
  "call.completed",
  "call.recording.completed",
  "call.transcript.completed",
  "call.summary.completed"
]
