/**
 * A TCP address that moves, as an operator's failover moves one (a virtual IP, a DNS name, a
 * health-checked HAProxy or PgBouncer in front of a primary and its standby): connections made to
 * `port` go to whichever local port `target` names at the time. `moveTo` ends the connections
 * already made, as moving a virtual IP does (the new host knows none of them and resets them).
 * `moveTo(null)` leads nowhere: connections are taken and held unanswered, as a pooler holds its
 * clients while it has no server (PgBouncer's PAUSE during a failover), or as a client waits on
 * an address whose host is gone.
 */
import { createConnection, createServer, type Socket } from "node:net"

export interface TcpProxy {
  readonly port: number
  readonly moveTo: (port: number | null) => void
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (first: number): Promise<TcpProxy> => {
  let target: number | null = first
  const open = new Set<Socket>()
  const track = (socket: Socket) => {
    open.add(socket)
    socket.once("close", () => open.delete(socket))
  }
  const server = createServer((client) => {
    track(client)
    client.on("error", () => undefined)
    if (target === null) return
    const upstream = createConnection({ host: "127.0.0.1", port: target })
    track(upstream)
    // Either side closing (an error, a reset, the server gone) closes the other: the client sees
    // what it would see without us.
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      a.on("error", () => undefined)
      a.once("close", () => b.destroy())
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as { port: number }).port,
    moveTo: (port) => {
      target = port
      for (const socket of open) socket.destroy()
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy()
        server.close(() => resolve())
      })
  }
}
